#include "placement_heatmap.h"

#include <QToolTip>
#include <cmath>
#include <limits>

#include "chart_style.h"
#include "rank_ticker.h"

namespace shardscope::app {

namespace {

// Table names on the rows, every k-th one when the rows are too tight to
// label each. The height comes from the plot's viewport, which toPixmap sets
// before it lays out, so exported images are thinned for their own size.
class RowLabelTicker : public QCPAxisTicker {
 public:
  explicit RowLabelTicker(QCPAxis* axis) : axis_(axis) {}
  void setLabels(QStringList labels) { labels_ = std::move(labels); }

 protected:
  double getTickStep(const QCPRange& /*range*/) override {
    if (labels_.isEmpty()) return 1;
    const QFontMetrics metrics(axis_->tickLabelFont());
    // The map's share of the plot's height: the title and the rank axis take the rest.
    const double pixels = std::max(40.0, axis_->parentPlot()->viewport().height() - 4.5 * metrics.height() - 30.0);
    const double per_label = metrics.height() + 1.0;
    const double fit = std::max(1.0, std::floor(pixels / per_label));
    return std::max(1.0, std::ceil(labels_.size() / fit));
  }
  int getSubTickCount(double /*step*/) override { return 0; }
  QVector<double> createTickVector(double step, const QCPRange& range) override {
    QVector<double> ticks;
    const auto k = static_cast<qsizetype>(step);
    for (qsizetype i = 0; i < labels_.size(); i += std::max<qsizetype>(1, k))
      if (range.contains(static_cast<double>(i))) ticks.append(static_cast<double>(i));
    return ticks;
  }
  QString getTickLabel(double tick, const QLocale& /*locale*/, QChar /*format*/, int /*precision*/) override {
    const auto i = static_cast<qsizetype>(std::lround(tick));
    return i >= 0 && i < labels_.size() ? labels_[i] : QString();
  }

 private:
  QCPAxis* axis_;
  QStringList labels_;
};

}  // namespace

PlacementHeatmap::PlacementHeatmap(QWidget* parent)
    : QCustomPlot(parent), title_(new QCPTextElement(this)), map_(nullptr), scale_(new QCPColorScale(this)) {
  setObjectName(QStringLiteral("placementPlot"));
  setBackground(palette().base());
  setMinimumSize(400, 260);
  QFont title_font = font();
  title_font.setBold(true);
  title_->setFont(title_font);
  plotLayout()->insertRow(0);
  plotLayout()->addElement(0, 0, title_);

  map_ = new QCPColorMap(xAxis, yAxis);
  map_->setInterpolate(false);
  map_->setTightBoundary(false);
  plotLayout()->addElement(1, 1, scale_);
  scale_->setType(QCPAxis::atRight);
  scale_->setBarWidth(12);
  scale_->axis()->setLabel(tr("load on the rank (ms, log)"));
  map_->setColorScale(scale_);           // adopts the scale's gradient: set ours after
  map_->setGradient(viridisGradient());  // blank (transparent) where a table has nothing
  map_->setDataScaleType(QCPAxis::stLogarithmic);
  scale_->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  scale_->axis()->setNumberFormat(QStringLiteral("gb"));
  auto* margins = new QCPMarginGroup(this);
  axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale_->setMarginGroup(QCP::msBottom | QCP::msTop, margins);

  xAxis->setLabel(tr("group rank"));
  // Table names and the colour scale take about this much of the width.
  xAxis->setTicker(QSharedPointer<RankTicker>::create(xAxis, 170));
  xAxis->grid()->setVisible(false);
  xAxis->setSubTicks(false);
  yAxis->grid()->setVisible(false);
  yAxis->setSubTicks(false);
  yAxis->setTickLength(0, 0);
  yAxis->setRangeReversed(true);  // the heaviest table on top
  QFont row_font = font();
  row_font.setPointSizeF(row_font.pointSizeF() * 0.9);
  yAxis->setTickLabelFont(row_font);
  auto ticker = QSharedPointer<RowLabelTicker>::create(yAxis);
  row_ticker_ = ticker;
  yAxis->setTicker(ticker);

  setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  axisRect()->setRangeDrag(Qt::Horizontal);
  axisRect()->setRangeZoom(Qt::Horizontal);
  setMouseTracking(true);
  connect(this, &QCustomPlot::mouseMove, this, &PlacementHeatmap::onMouseMove);
  setContextMenuPolicy(Qt::CustomContextMenu);
  connect(this, &QWidget::customContextMenuRequested, this, &PlacementHeatmap::onContextMenu);
  setSnapshot(nullptr);
}

int PlacementHeatmap::rowCount() const { return snapshot_ ? static_cast<int>(snapshot_->matrix.tables.size()) : 0; }
int PlacementHeatmap::columnCount() const { return snapshot_ ? static_cast<int>(snapshot_->matrix.ranks) : 0; }
int PlacementHeatmap::rankColumns() const { return snapshot_ ? static_cast<int>(snapshot_->matrix.columns) : 0; }
QString PlacementHeatmap::titleText() const { return title_->text(); }

std::optional<std::uint32_t> PlacementHeatmap::tableOfRow(int row) const {
  if (row < 0 || row >= rowCount()) return std::nullopt;
  return snapshot_->matrix.tables[static_cast<std::size_t>(row)];
}

void PlacementHeatmap::setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot, const QString& message) {
  snapshot_ = std::move(snapshot);
  auto ticker = qSharedPointerCast<RowLabelTicker>(row_ticker_);
  if (!snapshot_ || snapshot_->breakdown.cancelled || snapshot_->matrix.tables.empty() ||
      snapshot_->matrix.ranks == 0) {
    snapshot_.reset();
    title_->setText(message.isEmpty() ? tr("Placement: nothing planned") : message);
    map_->data()->setSize(1, 1);
    map_->data()->fill(std::numeric_limits<double>::quiet_NaN());
    ticker->setLabels({});
    xAxis->setRange(0, 1);
    yAxis->setRange(0, 1);
    replot(rpQueuedReplot);
    return;
  }
  const report::PlanSnapshot& s = *snapshot_;
  const planner::PlacementMatrix& m = s.matrix;
  const int cols = static_cast<int>(m.columns);
  const int rows = static_cast<int>(m.tables.size());
  // Cell centres in rank coordinates: a column of k ranks sits in their middle.
  const double k = m.ranks_per_column;
  const double first = (k - 1) / 2;
  // QCPColorMapData spans a range with two cells at least: a lone column or row gets a blank neighbour.
  const int key_cells = std::max(cols, 2);
  const int value_cells = std::max(rows, 2);
  map_->data()->setSize(key_cells, value_cells);
  map_->data()->setRange(QCPRange(first, first + (key_cells - 1) * k), QCPRange(0, value_cells - 1));
  map_->data()->fill(std::numeric_limits<double>::quiet_NaN());
  for (int row = 0; row < rows; ++row)
    for (int col = 0; col < cols; ++col) {
      const double v = m.at(static_cast<std::size_t>(row), static_cast<std::uint32_t>(col));
      // Log colours: a shard that costs nothing gets the lowest colour, not a blank.
      if (!std::isnan(v)) map_->data()->setCell(col, row, std::max(v, m.min_load_ms));
    }
  const double high = m.max_load_ms > 0 ? m.max_load_ms : 1.0;
  double low = m.min_load_ms > 0 ? std::max(m.min_load_ms, high / 1e4) : high / 10.0;
  if (low >= high) low = high / 10.0;
  map_->setDataRange(QCPRange(low, high));

  QStringList labels;
  for (std::uint32_t t : m.tables) labels << QString::fromStdString(s.grid.plan.tables[t].name);
  ticker->setLabels(labels);
  const std::size_t total = s.grid.plan.tables.size();
  const QLocale locale;
  const QString what = static_cast<std::size_t>(rows) < total
                           ? tr("Placement of the %1 heaviest of %2 tables")
                                 .arg(rows)
                                 .arg(locale.toString(static_cast<qulonglong>(total)))
                           : tr("Placement of %1 tables").arg(rows);
  const QString how =
      m.ranks_per_column > 1
          ? tr("\u00d7 %1 group ranks, %2 per column (max)").arg(locale.toString(m.ranks)).arg(m.ranks_per_column)
          : tr("\u00d7 %1 group ranks; blank: no shard").arg(locale.toString(m.ranks));
  title_->setText(what + QLatin1Char('\n') + how);
  const auto ranks = static_cast<double>(m.ranks);
  xAxis->setRange(-0.5, ranks - 0.5);
  yAxis->setRange(-0.5, rows - 0.5);
  replot(rpQueuedReplot);
}

std::optional<PlacementHeatmap::Cell> PlacementHeatmap::cellAtPixel(const QPointF& pixel) const {
  if (!snapshot_) return std::nullopt;
  const QRect rect = axisRect()->rect();
  if (pixel.y() < rect.top() || pixel.y() > rect.bottom() || pixel.x() > rect.right()) return std::nullopt;
  const long row = std::lround(yAxis->pixelToCoord(pixel.y()));
  if (row < 0 || row >= rowCount()) return std::nullopt;
  Cell cell;
  cell.row = static_cast<int>(row);
  if (pixel.x() < rect.left()) return cell;  // the row's label
  const long rank = std::lround(xAxis->pixelToCoord(pixel.x()));
  if (rank < 0 || rank >= columnCount()) return std::nullopt;
  cell.group_rank = static_cast<std::uint32_t>(rank);
  return cell;
}

QString PlacementHeatmap::hoverText(int row, std::uint32_t group_rank) const {
  const std::optional<std::uint32_t> table = tableOfRow(row);
  if (!table || group_rank >= static_cast<std::uint32_t>(columnCount())) return {};
  const planner::PlacementMatrix& m = snapshot_->matrix;
  if (m.ranks_per_column == 1) return QString::fromStdString(report::tableOnRankText(*snapshot_, *table, group_rank));
  // A column of several ranks: describe the table's heaviest rank among them.
  const std::uint32_t column = m.columnOf(group_rank);
  std::uint32_t heaviest = group_rank;
  double most = -1;
  for (std::uint32_t r = m.firstRank(column); r <= m.lastRank(column); ++r) {
    const double load = snapshot_->breakdown.loadOf(*table, r);
    if (load > most) {
      most = load;
      heaviest = r;
    }
  }
  const QString bin = tr("group ranks %1\u2013%2 share this column").arg(m.firstRank(column)).arg(m.lastRank(column));
  if (most <= 0) {
    return tr("%1 has no shard on %2").arg(QString::fromStdString(snapshot_->grid.plan.tables[*table].name), bin);
  }
  return QString::fromStdString(report::tableOnRankText(*snapshot_, *table, heaviest)) + QLatin1Char('\n') + bin;
}

void PlacementHeatmap::onMouseMove(QMouseEvent* event) {
  if (event->buttons() != Qt::NoButton) return;  // dragging
  const std::optional<Cell> cell = cellAtPixel(event->position());
  QString text;
  if (cell && cell->group_rank) {
    text = hoverText(cell->row, *cell->group_rank);
  } else if (cell) {
    const std::uint32_t t = *tableOfRow(cell->row);
    const report::TableSummary& summary = snapshot_->tables[t];
    const core::TablePlacement& tp = snapshot_->grid.plan.tables[t];
    text = tr("%1: %2 on group ranks %3, %4 ms in all (right-click for constraints)")
               .arg(QString::fromStdString(tp.name), QString::fromLatin1(core::toString(tp.sharding_type)),
                    QString::fromStdString(report::rankSpanText(summary.ranks)))
               .arg(summary.load_ms, 0, 'f', 3);
  }
  if (text.isEmpty()) {
    QToolTip::hideText();
    return;
  }
  QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void PlacementHeatmap::onContextMenu(const QPoint& pos) {
  const std::optional<Cell> cell = cellAtPixel(pos);
  if (!cell) return;
  const std::optional<std::uint32_t> table = tableOfRow(cell->row);
  if (!table) return;
  emit tableMenuRequested(QString::fromStdString(snapshot_->grid.plan.tables[*table].name), mapToGlobal(pos));
}

}  // namespace shardscope::app
