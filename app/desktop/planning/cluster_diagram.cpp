#include "cluster_diagram.h"

#include <QEvent>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "shardscope/report/display_format.h"

namespace shardscope::app {

namespace {

constexpr int kMargin = 8;
// GPU cells shrink from kMaxCell until every node fits; below kMinCell a
// cell stops reading as a box, so the diagram draws the first nodes instead.
constexpr int kMaxCell = 44;
constexpr int kMinCell = 5;
// Above this many GPUs the per-rank group tables (8 bytes a rank) are not
// worth building: no real cluster is this large.
constexpr std::uint32_t kMaxColouredRanks = 1u << 22;
// Colour keys for more groups than this stop helping; the legend text and
// tooltips say the rest.
constexpr int kMaxSwatches = 16;

const QColor kUngroupedGpu(0x6f, 0x8f, 0xb5);

// Tableau 10 plus two: distinct hues that stay apart for the usual R <= 12.
constexpr std::array<QRgb, 12> kGroupColours = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f, 0xedc948,
                                                0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac, 0x2f9e9e, 0xa0cbe8};

QString countText(std::uint64_t n) { return QString::fromStdString(report::formatCount(n)); }

QString plural(std::uint64_t n, const QString& one, const QString& many) {
  return countText(n) + QLatin1Char(' ') + (n == 1 ? one : many);
}

bool isDark(const QColor& c) { return 299 * c.red() + 587 * c.green() + 114 * c.blue() < 140250; }  // luma < 0.55

// How one sharding group lies on the nodes: "one GPU per node per group",
// "each group inside one node (2 per node)", "groups straddle nodes".
QString describePlacement(const core::RankGroups& groups, std::uint32_t gpus_per_node, std::uint32_t nodes) {
  const std::size_t replicas = groups.size();
  const std::size_t group_size = groups.empty() ? 0 : groups.front().size();
  if (replicas == 1) return ClusterDiagram::tr("the whole cluster");
  if (group_size == 1) return ClusterDiagram::tr("one GPU each, pure data parallelism");
  std::uint32_t per_node_min = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t per_node_max = 0;
  std::uint32_t span_min = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t span_max = 0;
  std::vector<std::uint32_t> members;
  for (const auto& group : groups) {
    members.assign(group.begin(), group.end());
    std::sort(members.begin(), members.end());
    std::uint32_t span = 0;
    for (std::size_t i = 0; i < members.size();) {
      const std::uint32_t node = members[i] / gpus_per_node;
      std::size_t j = i;
      while (j < members.size() && members[j] / gpus_per_node == node) ++j;
      const auto on_node = static_cast<std::uint32_t>(j - i);
      per_node_min = std::min(per_node_min, on_node);
      per_node_max = std::max(per_node_max, on_node);
      ++span;
      i = j;
    }
    span_min = std::min(span_min, span);
    span_max = std::max(span_max, span);
  }
  if (per_node_min != per_node_max || span_min != span_max)
    return ClusterDiagram::tr("groups straddle node boundaries");
  const std::uint32_t k = per_node_max;
  const std::uint32_t span = span_max;
  if (span == 1) {
    const std::uint32_t per_node = gpus_per_node / k;
    return per_node == 1 ? ClusterDiagram::tr("one node per group")
                         : ClusterDiagram::tr("each group inside one node, %1 groups per node").arg(per_node);
  }
  if (k == 1)
    return span == nodes ? ClusterDiagram::tr("one GPU per node per group")
                         : ClusterDiagram::tr("one GPU on each of %1 nodes per group").arg(countText(span));
  if (k == gpus_per_node) return ClusterDiagram::tr("%1 whole nodes per group").arg(countText(span));
  if (span == nodes) return ClusterDiagram::tr("%1 GPUs per node per group, on every node").arg(k);
  return ClusterDiagram::tr("%1 GPUs on each of %2 nodes per group").arg(k).arg(countText(span));
}

}  // namespace

ClusterDiagram::ClusterDiagram(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("clusterDiagram"));
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  setMouseTracking(true);  // hovering a GPU highlights its group
  updateGroups();
}

void ClusterDiagram::setCluster(std::uint32_t nodes, std::uint32_t gpus_per_node) {
  if (nodes == nodes_ && gpus_per_node == gpus_per_node_) return;
  nodes_ = nodes;
  gpus_per_node_ = gpus_per_node;
  updateGroups();
  invalidateLayout();
  cache_ = QPixmap();
  update();
}

void ClusterDiagram::setGrid(std::optional<std::uint32_t> group_size, std::optional<core::RankLayout> layout) {
  if (!group_size) layout.reset();
  if (group_size == group_size_ && layout == layout_) return;
  group_size_ = group_size;
  layout_ = layout;
  updateGroups();
  invalidateLayout();  // the colour key may appear or go
  cache_ = QPixmap();
  update();
}

int ClusterDiagram::groupOfGpu(std::uint32_t global_rank) const {
  return global_rank < group_of_.size() ? static_cast<int>(group_of_[global_rank]) : -1;
}

int ClusterDiagram::groupRankOfGpu(std::uint32_t global_rank) const {
  return global_rank < group_rank_of_.size() ? static_cast<int>(group_rank_of_[global_rank]) : -1;
}

QColor ClusterDiagram::groupColor(int group) const {
  if (group < 0) return kUngroupedGpu;
  if (group_count_ <= static_cast<int>(kGroupColours.size()))
    return QColor(kGroupColours[static_cast<std::size_t>(group) % kGroupColours.size()]);
  // Many groups: golden-ratio hue steps keep neighbouring groups apart.
  const double hue = std::fmod(0.58 + group * 0.6180339887, 1.0);
  const double value = group % 2 == 0 ? 0.86 : 0.70;
  return QColor::fromHsvF(static_cast<float>(hue), 0.55f, static_cast<float>(value));
}

void ClusterDiagram::setHighlightedGroup(int group) {
  if (group < 0 || group >= group_count_) group = -1;
  if (group == highlighted_group_) return;
  highlighted_group_ = group;
  cache_ = QPixmap();
  update();
}

void ClusterDiagram::mouseMoveEvent(QMouseEvent* event) {
  const std::optional<std::uint32_t> gpu = gpuAt(event->position().toPoint());
  setHighlightedGroup(gpu ? groupOfGpu(*gpu) : -1);
  QWidget::mouseMoveEvent(event);
}

void ClusterDiagram::leaveEvent(QEvent* event) {
  setHighlightedGroup(-1);
  QWidget::leaveEvent(event);
}

void ClusterDiagram::updateGroups() {
  highlighted_group_ = -1;
  group_of_.clear();
  group_rank_of_.clear();
  group_count_ = 0;
  const std::uint32_t n = worldSize();
  if (!group_size_) {
    legend_ = tr("No grid chosen: pick one in the Grid Explorer to colour each GPU by its sharding group.");
    return;
  }
  const std::uint32_t m = *group_size_;
  if (n == 0) {
    legend_ = tr("The cluster has no GPUs.");
    return;
  }
  if (m == 0 || n % m != 0) {
    legend_ = tr("The chosen grid M = %1 does not divide the %2 GPUs.").arg(m).arg(countText(n));
    return;
  }
  const std::uint32_t r = n / m;
  const QString head =
      tr("%1 of %2").arg(plural(r, tr("sharding group"), tr("sharding groups")), plural(m, tr("GPU"), tr("GPUs")));
  if (n > kMaxColouredRanks) {
    legend_ = tr("%1 (too many GPUs to colour).").arg(head);
    return;
  }
  const core::RankLayout layout = layout_.value_or(core::RankLayout::Strided);
  const core::RankGroups groups = core::shardingGroups(n, m, layout);
  group_of_.assign(n, 0);
  group_rank_of_.assign(n, 0);
  for (std::uint32_t g = 0; g < groups.size(); ++g)
    for (std::uint32_t i = 0; i < groups[g].size(); ++i) {
      group_of_[groups[g][i]] = g;
      group_rank_of_[groups[g][i]] = i;
    }
  group_count_ = static_cast<int>(r);
  legend_ =
      tr("%1 (%2: %3)")
          .arg(head, QString::fromLatin1(core::toString(layout)), describePlacement(groups, gpus_per_node_, nodes_));
  if (!layout_) legend_ += tr("; layout left open by the project, drawn strided (TorchRec's default)");
}

bool ClusterDiagram::drawsSwatches() const { return group_count_ > 1 && group_count_ <= kMaxSwatches; }

QString ClusterDiagram::toolTipFor(std::uint32_t global_rank) const {
  const std::uint32_t node = global_rank / gpus_per_node_;
  QString text = tr("GPU %1: node %2, local GPU %3")
                     .arg(countText(global_rank), countText(node))
                     .arg(global_rank % gpus_per_node_);
  const int group = groupOfGpu(global_rank);
  if (group >= 0)
    text += QLatin1Char('\n') + tr("sharding group %1, group rank %2 of %3")
                                    .arg(countText(static_cast<std::uint64_t>(group)))
                                    .arg(groupRankOfGpu(global_rank))
                                    .arg(*group_size_);
  return text;
}

QSize ClusterDiagram::sizeHint() const { return {640, 420}; }
QSize ClusterDiagram::minimumSizeHint() const { return {240, 160}; }

void ClusterDiagram::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  invalidateLayout();
}

void ClusterDiagram::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::FontChange) {
    invalidateLayout();
    cache_ = QPixmap();
    update();
  } else if (event->type() == QEvent::PaletteChange) {
    cache_ = QPixmap();
    update();
  }
}

bool ClusterDiagram::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    if (const std::optional<std::uint32_t> gpu = gpuAt(help->pos())) {
      QToolTip::showText(help->globalPos(), toolTipFor(*gpu), this, gpuRect(*gpu));
    } else {
      QToolTip::hideText();
      event->ignore();
    }
    return true;
  }
  return QWidget::event(event);
}

const ClusterDiagram::Geometry& ClusterDiagram::geometry() const {
  if (layout_size_ != size()) {
    geometry_ = computeGeometry();
    layout_size_ = size();
  }
  return geometry_;
}

ClusterDiagram::Geometry ClusterDiagram::computeGeometry() const {
  Geometry geo;
  const QRect area = rect().adjusted(kMargin, kMargin, -kMargin, -kMargin);
  if (nodes_ == 0 || gpus_per_node_ == 0 || area.width() < 20 || area.height() < 20) return geo;
  const QFontMetrics fm(font());
  const int line = fm.height();

  int top = area.top();
  if (drawsSwatches()) {
    // The key wraps like text: swatch, "group g", space.
    const int item_w = line + 4 + fm.horizontalAdvance(tr("group %1").arg(group_count_ - 1)) + 14;
    const int per_row = std::max(1, area.width() / item_w);
    const int rows = (group_count_ + per_row - 1) / per_row;
    geo.swatch_rect = QRect(area.left(), top, area.width(), rows * (line + 4));
    top += geo.swatch_rect.height() + 8;
  }
  const QRect body(area.left(), top, area.width(), area.bottom() - top + 1);
  if (body.height() < 10) return geo;

  // Arrangements of the GPU cells inside a node box, widest first: a tray of
  // 8 reads best; squarer boxes pack more nodes.
  const auto g = static_cast<int>(gpus_per_node_);
  std::vector<int> inner;
  for (int ci : {g, (g + 1) / 2, (g + 3) / 4, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(g))))})
    if (ci >= 1 && std::find(inner.begin(), inner.end(), ci) == inner.end()) inner.push_back(ci);

  const int node_label_w = fm.horizontalAdvance(tr("node %1").arg(countText(nodes_ - 1)));
  // Lays out cells of side s with ci cells per row in `avail_h`; returns how many nodes fit.
  const auto fit = [&](int s, int ci, int avail_h, Geometry& out) -> std::uint64_t {
    out.cell = s;
    out.inner_cols = ci;
    out.inner_rows = (g + ci - 1) / ci;
    out.gap_in = s >= 12 ? 2 : 1;
    out.pad = std::max(2, s / 5);
    out.gap_out = std::max(4, s / 3);
    out.tile_w = ci * s + (ci - 1) * out.gap_in + 2 * out.pad;
    out.label_h = (s >= 12 && node_label_w + 2 * out.pad <= out.tile_w) ? line + 2 : 0;
    out.tile_h = out.inner_rows * s + (out.inner_rows - 1) * out.gap_in + 2 * out.pad + out.label_h;
    out.gutter = out.label_h == 0 && nodes_ > 1 ? node_label_w + 10 : 0;
    const int cols = (body.width() - out.gutter + out.gap_out) / (out.tile_w + out.gap_out);
    const int rows = (avail_h + out.gap_out) / (out.tile_h + out.gap_out);
    out.cols = std::max(cols, 0);
    return static_cast<std::uint64_t>(std::max(cols, 0)) * static_cast<std::uint64_t>(std::max(rows, 0));
  };

  // Largest cell that fits every node, per arrangement; the widest
  // arrangement wins unless a squarer one gets clearly larger cells.
  std::vector<Geometry> best(inner.size());
  int best_cell = 0;
  for (std::size_t k = 0; k < inner.size(); ++k)
    for (int s = kMaxCell; s >= kMinCell; --s) {
      Geometry trial = geo;
      if (fit(s, inner[k], body.height(), trial) >= nodes_) {
        best[k] = trial;
        best_cell = std::max(best_cell, s);
        break;
      }
    }
  bool all_fit = false;
  for (const Geometry& candidate : best)
    if (candidate.cell > 0 && candidate.cell * 100 >= best_cell * 85) {
      geo = candidate;
      all_fit = true;
      break;
    }
  std::uint64_t capacity = nodes_;
  const int more_h = line + 6;
  if (!all_fit) {
    // Too many nodes to draw legibly: the first ones, and a line for the rest.
    capacity = 0;
    for (int ci : inner) {
      Geometry trial = geo;
      const std::uint64_t c = fit(kMinCell, ci, body.height() - more_h, trial);
      if (c > capacity || capacity == 0) {
        capacity = c;
        geo = trial;
      }
    }
  }
  geo.shown = static_cast<std::uint32_t>(std::min<std::uint64_t>(capacity, nodes_));
  if (geo.shown == 0 || geo.cols == 0) {
    geo.shown = 0;
    return geo;
  }

  const int cols_used = static_cast<int>(std::min<std::uint32_t>(static_cast<std::uint32_t>(geo.cols), geo.shown));
  const int rows_used =
      static_cast<int>((geo.shown + static_cast<std::uint32_t>(geo.cols) - 1) / static_cast<std::uint32_t>(geo.cols));
  if (rows_used <= 1) geo.gutter = 0;  // one row: the boxes count themselves
  geo.row_label_every = std::max(1, (line + 2 + geo.tile_h + geo.gap_out - 1) / (geo.tile_h + geo.gap_out));
  const int grid_w = geo.gutter + cols_used * geo.tile_w + (cols_used - 1) * geo.gap_out;
  const bool truncated = geo.shown < nodes_;
  const int grid_h = rows_used * geo.tile_h + (rows_used - 1) * geo.gap_out + (truncated ? more_h : 0);
  geo.origin = QPoint(body.left() + std::max(0, (body.width() - grid_w) / 2) + geo.gutter,
                      body.top() + std::max(0, (body.height() - grid_h) / 2));
  if (truncated)
    geo.more_rect = QRect(body.left(), geo.origin.y() + rows_used * (geo.tile_h + geo.gap_out), body.width(), more_h);
  return geo;
}

QRect ClusterDiagram::nodeRect(std::uint32_t node) const {
  const Geometry& geo = geometry();
  if (node >= geo.shown || geo.cols <= 0) return {};
  const auto cols = static_cast<std::uint32_t>(geo.cols);
  const int col = static_cast<int>(node % cols);
  const int row = static_cast<int>(node / cols);
  return {geo.origin.x() + col * (geo.tile_w + geo.gap_out), geo.origin.y() + row * (geo.tile_h + geo.gap_out),
          geo.tile_w, geo.tile_h};
}

QRect ClusterDiagram::gpuRect(std::uint32_t global_rank) const {
  const Geometry& geo = geometry();
  if (gpus_per_node_ == 0 || global_rank >= worldSize()) return {};
  const QRect node = nodeRect(global_rank / gpus_per_node_);
  if (node.isEmpty()) return {};
  const int local = static_cast<int>(global_rank % gpus_per_node_);
  const int col = local % geo.inner_cols;
  const int row = local / geo.inner_cols;
  return {node.left() + geo.pad + col * (geo.cell + geo.gap_in),
          node.top() + geo.pad + geo.label_h + row * (geo.cell + geo.gap_in), geo.cell, geo.cell};
}

std::optional<std::uint32_t> ClusterDiagram::gpuAt(QPoint pos) const {
  const Geometry& geo = geometry();
  if (geo.shown == 0 || geo.cols <= 0) return std::nullopt;
  const QPoint d = pos - geo.origin;
  if (d.x() < 0 || d.y() < 0) return std::nullopt;
  const int col = d.x() / (geo.tile_w + geo.gap_out);
  const int row = d.y() / (geo.tile_h + geo.gap_out);
  if (col >= geo.cols) return std::nullopt;
  const std::uint64_t node =
      static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(geo.cols) + static_cast<std::uint64_t>(col);
  if (node >= geo.shown) return std::nullopt;
  const QRect tile = nodeRect(static_cast<std::uint32_t>(node));
  const int x = pos.x() - tile.left() - geo.pad;
  const int y = pos.y() - tile.top() - geo.pad - geo.label_h;
  if (x < 0 || y < 0) return std::nullopt;
  const int cx = x / (geo.cell + geo.gap_in);
  const int cy = y / (geo.cell + geo.gap_in);
  if (cx >= geo.inner_cols || x % (geo.cell + geo.gap_in) >= geo.cell || y % (geo.cell + geo.gap_in) >= geo.cell)
    return std::nullopt;
  const int local = cy * geo.inner_cols + cx;
  if (local >= static_cast<int>(gpus_per_node_)) return std::nullopt;
  return static_cast<std::uint32_t>(node) * gpus_per_node_ + static_cast<std::uint32_t>(local);
}

void ClusterDiagram::paintEvent(QPaintEvent* /*event*/) {
  // Thousands of GPU cells: drawn once into a pixmap, repainted from it
  // (exposes, page switches) until the cluster, grid, highlight or size changes.
  const qreal dpr = devicePixelRatioF();
  const QSize pixels = size() * dpr;
  if (cache_.size() != pixels) {
    cache_ = QPixmap(pixels);
    cache_.setDevicePixelRatio(dpr);
    QPainter painter(&cache_);
    render(painter);
  }
  QPainter p(this);
  p.drawPixmap(0, 0, cache_);
}

void ClusterDiagram::render(QPainter& p) const {
  p.fillRect(rect(), palette().base());
  const Geometry& geo = geometry();
  const QFontMetrics fm(font());
  const QColor text = palette().color(QPalette::Text);
  const QColor muted = palette().color(QPalette::PlaceholderText);
  if (geo.shown == 0) {
    p.setPen(muted);
    p.drawText(rect(), Qt::AlignCenter, nodes_ == 0 || gpus_per_node_ == 0 ? tr("No GPUs") : tr("Too small to draw"));
    return;
  }

  if (!geo.swatch_rect.isEmpty()) {
    const int line = fm.height();
    int x = geo.swatch_rect.left();
    int y = geo.swatch_rect.top();
    for (int g = 0; g < group_count_; ++g) {
      const QString label = tr("group %1").arg(g);
      const int w = line + 4 + fm.horizontalAdvance(label) + 14;
      if (x > geo.swatch_rect.left() && x + w > geo.swatch_rect.right()) {
        x = geo.swatch_rect.left();
        y += line + 4;
      }
      p.fillRect(QRect(x, y + 2, line - 2, line - 2), groupColor(g));
      p.setPen(text);
      p.drawText(QRect(x + line + 2, y, w, line + 2), Qt::AlignLeft | Qt::AlignVCenter, label);
      x += w;
    }
  }

  const QColor tile_fill = palette().color(QPalette::Window);
  const QColor tile_border = palette().color(QPalette::Mid);
  const int rank_text_w = fm.horizontalAdvance(countText(worldSize() - 1));
  const bool rank_text = geo.cell >= fm.height() && rank_text_w + 4 <= geo.cell;
  // Every node box is the same antialiased rounded rectangle: drawn once and
  // copied per node (drawing 512 of them costs 14 ms, copying them under 1).
  const qreal dpr = p.device() != nullptr ? p.device()->devicePixelRatioF() : 1.0;
  QPixmap tile_pixmap(QSize(geo.tile_w, geo.tile_h) * dpr);
  tile_pixmap.setDevicePixelRatio(dpr);
  tile_pixmap.fill(Qt::transparent);
  {
    QPainter tp(&tile_pixmap);
    tp.setRenderHint(QPainter::Antialiasing, true);
    tp.setPen(tile_border);
    tp.setBrush(tile_fill);
    tp.drawRoundedRect(QRectF(0, 0, geo.tile_w, geo.tile_h).adjusted(0.5, 0.5, -0.5, -0.5), 3, 3);
  }
  for (std::uint32_t node = 0; node < geo.shown; ++node) {
    const QRect tile = nodeRect(node);
    p.drawPixmap(tile.topLeft(), tile_pixmap);
    if (geo.label_h > 0) {
      // At a baseline, not in a rectangle: a rectangle lays the text out with alignment each time, and a
      // cluster has hundreds of nodes. The label fits the tile (label_h is 0 when the widest does not).
      p.setPen(text);
      const int baseline = tile.top() + geo.pad / 2 + (geo.label_h + fm.ascent() - fm.descent()) / 2;
      p.drawText(QPoint(tile.left() + geo.pad, baseline), tr("node %1").arg(countText(node)));
    }
    for (std::uint32_t local = 0; local < gpus_per_node_; ++local) {
      const std::uint32_t rank = node * gpus_per_node_ + local;
      const QRect cell = gpuRect(rank);
      const int group = groupOfGpu(rank);
      QColor fill = groupColor(group);
      if (highlighted_group_ >= 0 && group != highlighted_group_) {
        // Faded towards the background, keeping a trace of the hue.
        const QColor base = palette().color(QPalette::Base);
        fill = QColor((fill.red() + 3 * base.red()) / 4, (fill.green() + 3 * base.green()) / 4,
                      (fill.blue() + 3 * base.blue()) / 4);
      }
      p.fillRect(cell, fill);
      if (geo.cell >= 10) {
        p.setPen(fill.darker(135));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.adjusted(0, 0, -1, -1));
      }
      if (rank_text) {
        p.setPen(isDark(fill) ? Qt::white : Qt::black);
        p.drawText(cell, Qt::AlignCenter, countText(rank));
      }
    }
  }

  if (geo.gutter > 0) {
    p.setPen(muted);
    const auto cols = static_cast<std::uint32_t>(geo.cols);
    const std::uint32_t rows = (geo.shown + cols - 1) / cols;
    for (std::uint32_t row = 0; row < rows; row += static_cast<std::uint32_t>(geo.row_label_every)) {
      const QRect first = nodeRect(row * cols);
      p.drawText(QRect(first.left() - geo.gutter, first.top(), geo.gutter - 8, std::max(first.height(), fm.height())),
                 Qt::AlignRight | Qt::AlignTop, tr("node %1").arg(countText(row * cols)));
    }
  }

  if (!geo.more_rect.isEmpty()) {
    const std::uint32_t hidden = nodes_ - geo.shown;
    p.setPen(text);
    p.drawText(geo.more_rect, Qt::AlignCenter,
               tr("\u2026 %1 more %2 (%3) not drawn: nodes %4\u2013%5")
                   .arg(countText(hidden), hidden == 1 ? tr("node") : tr("nodes"),
                        plural(static_cast<std::uint64_t>(hidden) * gpus_per_node_, tr("GPU"), tr("GPUs")),
                        countText(geo.shown), countText(nodes_ - 1)));
  }
}

}  // namespace shardscope::app
