#include "scaling_annotations.h"

#include <QEvent>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <qcustomplot.h>

#include "chart_style.h"
#include "shardscope/report/weak_scaling_text.h"

namespace shardscope::app {

namespace {

constexpr int kCellGap = 3;      // px between a label and the cells under it
constexpr int kLabelGap = 2;     // px kept between two labels side by side
constexpr int kMarginSlack = 2;  // px the plot's top margin keeps above the tallest label

QString text(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

// The label's colour: the phase's, darkened to read as text on the plot's ground; memory in the problem colour.
QColor causeColor(planner::StepPhase cause) {
  switch (cause) {
    case planner::StepPhase::Embedding:
      return phaseColor(report::Phase::Embedding).darker(115);
    case planner::StepPhase::AllToAll:
      return phaseColor(report::Phase::AllToAll).darker(140);
    case planner::StepPhase::ReplicaSync:
      return phaseColor(report::Phase::ReplicaSync).darker(150);
    case planner::StepPhase::Dense:
      return phaseColor(report::Phase::Dense).darker(125);
    case planner::StepPhase::Memory:
      break;
  }
  return problemColor();
}

// What a label stands for in the legend: "sync: replica sync", "memory: no grid fits".
QString causeMeaning(planner::StepPhase cause) {
  const QString label = text(report::stepPhaseLabel(cause));
  if (cause == planner::StepPhase::Memory) return ScalingAnnotations::tr("%1: no grid fits in HBM").arg(label);
  const QString full = text(planner::toString(cause));
  return label == full ? label : ScalingAnnotations::tr("%1: %2").arg(label, full);
}

}  // namespace

ScalingAnnotations::ScalingAnnotations(QCustomPlot* plot, ScalingSource scaling)
    : QObject(plot), plot_(plot), scaling_(std::move(scaling)) {
  plot_->installEventFilter(this);
  // The labels' fit depends on the columns' width: decided again after every layout.
  connect(plot_, &QCustomPlot::afterLayout, this, &ScalingAnnotations::layOutLabels);
}

void ScalingAnnotations::clear() {
  for (QCPItemRect* marker : best_markers_) plot_->removeItem(marker);
  for (QCPItemText* label : labels_) plot_->removeItem(label);
  best_markers_.clear();
  labels_.clear();
  columns_.clear();
  label_of_column_.clear();
}

void ScalingAnnotations::update() {
  clear();
  const planner::ScalingResult& scaling = scaling_();
  const std::size_t cols = scaling.world_sizes.size();
  const std::vector<planner::WeakScalingPoint> points = scaling.weakScaling();
  const double top = scaling.bestPerGpu();
  columns_.assign(cols, Column{});
  label_of_column_.assign(cols, -1);
  for (std::size_t ni = 0; ni < points.size() && ni < cols; ++ni) {
    const planner::WeakScalingPoint& p = points[ni];
    Column& column = columns_[ni];
    column.label = QString::fromStdString(report::weakScalingLabel(p));
    column.cause = p.best == nullptr ? planner::StepPhase::Memory : p.cause;
    column.description = QString::fromStdString(report::weakScalingDescription(points, ni));
    if (p.best == nullptr) continue;
    column.best_row = static_cast<int>(static_cast<std::size_t>(p.best - scaling.cells.data()) / cols);
    // Inside the cell, so the chosen grid's frame on the cell's edge stays visible around it.
    auto* marker = new QCPItemRect(plot_);
    const double x = static_cast<double>(ni);
    const double y = column.best_row;
    constexpr double kInset = 0.12;
    marker->topLeft->setCoords(x - 0.5 + kInset, y + 0.5 - kInset);
    marker->bottomRight->setCoords(x + 0.5 - kInset, y - 0.5 + kInset);
    // Dark on the bright cells, white on the dark ones: the cell text's rule (grid_explorer_page.cpp).
    const bool bright = top > 0 && p.best->samples_per_second_per_gpu / top > 0.6;
    marker->setPen(QPen(bright ? chosenColor() : QColor(Qt::white), 2.0));
    marker->setBrush(Qt::NoBrush);
    marker->setSelectable(false);
    best_markers_.push_back(marker);
  }
  const QString memory = text(report::stepPhaseLabel(planner::StepPhase::Memory));
  for (std::size_t first = 0; first < cols;) {
    if (columns_[first].label.isEmpty()) {
      ++first;
      continue;
    }
    // Neighbouring world sizes where nothing fits share one label.
    std::size_t last = first;
    while (columns_[first].label == memory && last + 1 < cols && columns_[last + 1].label == memory) ++last;
    addLabel(first, last);
    first = last + 1;
  }
  layOutLabels();
}

void ScalingAnnotations::addLabel(std::size_t first, std::size_t last) {
  const Column& column = columns_[first];
  auto* label = new QCPItemText(plot_);
  label->setClipToAxisRect(false);
  label->setSelectable(false);
  label->position->setTypeX(QCPItemPosition::ptPlotCoords);
  label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
  label->position->setAxes(plot_->xAxis, plot_->yAxis);
  label->position->setAxisRect(plot_->axisRect());
  label->position->setCoords((static_cast<double>(first) + static_cast<double>(last)) / 2.0, 0.0);
  QFont font = plot_->font();
  font.setBold(true);
  label->setFont(font);
  label->setColor(causeColor(column.cause));
  label->setText(column.label);
  for (std::size_t ni = first; ni <= last; ++ni) label_of_column_[ni] = static_cast<int>(labels_.size());
  labels_.push_back(label);
}

void ScalingAnnotations::layOutLabels() {
  int needed = 0;
  if (!labels_.empty()) {
    // The text's rectangle as QCPItemText measures it when it draws.
    const QFontMetrics metrics(labels_.front()->font());
    const auto textSize = [&metrics](const QString& text) {
      return metrics.boundingRect(0, 0, 0, 0, Qt::TextDontClip | Qt::AlignTop | Qt::AlignHCenter, text).size();
    };
    // Side by side when no two labels come closer than kLabelGap and none leaves the plot; else upright.
    bool fits = true;
    double right = -kLabelGap;
    int widest = 0;
    int tallest = 0;
    for (const QCPItemText* label : labels_) {
      const QSize size = textSize(label->text());
      const double centre = plot_->xAxis->coordToPixel(label->position->key());
      widest = std::max(widest, size.width());
      tallest = std::max(tallest, size.height());
      fits = fits && centre - size.width() / 2.0 >= right + kLabelGap && centre + size.width() / 2.0 <= plot_->width();
      right = centre + size.width() / 2.0;
    }
    upright_ = !fits;
    for (QCPItemText* label : labels_) {
      // Upright text reads upwards: its left end stands kCellGap above the cells.
      label->setRotation(upright_ ? -90 : 0);
      label->setPositionAlignment(upright_ ? (Qt::AlignLeft | Qt::AlignVCenter) : (Qt::AlignHCenter | Qt::AlignBottom));
      label->setPadding(upright_ ? QMargins(kCellGap, 0, 0, 0) : QMargins(0, 0, 0, kCellGap));
    }
    needed = (upright_ ? widest : tallest) + kCellGap + kMarginSlack;
  }
  QCPAxisRect* rect = plot_->axisRect();
  QMargins margins = rect->minimumMargins();
  if (margins.top() == needed) return;
  margins.setTop(needed);
  rect->setMinimumMargins(margins);
  // Lay the plot out again now, so this frame draws with the room the labels need. The
  // columns keep their width (only the top margin changed): the labels' fit stays decided.
  for (const auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
    plot_->plotLayout()->update(phase);
}

QString ScalingAnnotations::labelOver(std::size_t n_index) const {
  if (n_index >= label_of_column_.size() || label_of_column_[n_index] < 0) return {};
  return labels_[static_cast<std::size_t>(label_of_column_[n_index])]->text();
}

std::vector<QRectF> ScalingAnnotations::labelRects() const {
  std::vector<QRectF> rects;
  for (const QCPItemText* label : labels_) {
    const QPointF corners[] = {label->topLeft->pixelPosition(), label->topRight->pixelPosition(),
                               label->bottomLeft->pixelPosition(), label->bottomRight->pixelPosition()};
    QPointF low = corners[0];
    QPointF high = corners[0];
    for (const QPointF& p : corners) {
      low = QPointF(std::min(low.x(), p.x()), std::min(low.y(), p.y()));
      high = QPointF(std::max(high.x(), p.x()), std::max(high.y(), p.y()));
    }
    rects.emplace_back(low, high);
  }
  return rects;
}

QString ScalingAnnotations::legendText() const {
  if (columns_.empty()) return {};
  QString legend = best_markers_.empty() ? QString() : tr("Outlined inside: each N's best grid.");
  QStringList meanings;
  for (const Column& column : columns_) {
    if (column.label.isEmpty()) continue;
    const QString meaning = causeMeaning(column.cause);
    if (!meanings.contains(meaning)) meanings << meaning;
  }
  if (!meanings.isEmpty())
    legend += tr(" Above: what grew most where throughput per GPU fell \u2265 5% from the N before (%1).")
                  .arg(meanings.join(QStringLiteral(", ")));
  return legend.trimmed();
}

int ScalingAnnotations::columnAt(double x) const {
  const double key = plot_->xAxis->pixelToCoord(x);
  const long ni = std::lround(key);
  if (key < -0.5 || ni < 0 || static_cast<std::size_t>(ni) >= columns_.size()) return -1;
  return static_cast<int>(ni);
}

QString ScalingAnnotations::toolTipAt(QPointF pos) const {
  const int ni = columnAt(pos.x());
  if (ni < 0) return {};
  const Column& column = columns_[static_cast<std::size_t>(ni)];
  const QRect rect = plot_->axisRect()->rect();
  if (pos.y() < rect.top() || pos.y() > rect.bottom()) return column.description;
  const planner::ScalingResult& scaling = scaling_();
  const long mi = std::lround(plot_->yAxis->pixelToCoord(pos.y()));
  if (mi < 0 || static_cast<std::size_t>(mi) >= scaling.group_sizes.size() ||
      static_cast<std::size_t>(ni) >= scaling.world_sizes.size())
    return {};
  const planner::ScalingCell* cell = scaling.at(static_cast<std::size_t>(mi), static_cast<std::size_t>(ni));
  if (cell == nullptr || !cell->planned) return {};
  QString tip = QString::fromStdString(report::scalingCellDescription(*cell, scaling.bestPerGpu()));
  if (column.best_row == mi) tip += tr("\nThe best grid at N = %1 (outlined).").arg(cell->world_size);
  return tip;
}

bool ScalingAnnotations::eventFilter(QObject* watched, QEvent* event) {
  if (watched != plot_ || event->type() != QEvent::ToolTip) return QObject::eventFilter(watched, event);
  const auto* help = static_cast<QHelpEvent*>(event);
  const QString tip = toolTipAt(help->pos());
  if (tip.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(help->globalPos(), tip, plot_);
  return true;
}

}  // namespace shardscope::app
