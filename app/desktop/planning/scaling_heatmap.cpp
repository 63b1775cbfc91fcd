#include "scaling_heatmap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "chart_style.h"

namespace shardscope::app {

ScalingHeatmap::ScalingHeatmap(ScalingAnnotations::ScalingSource scaling, QWidget* parent)
    : QCustomPlot(parent), scaling_(std::move(scaling)) {
  // Throughput per GPU over world size x M: one cell per grid, the better layout.
  styleBarChart(this, 260);
  setObjectName(QStringLiteral("heatmapPlot"));
  map_ = new QCPColorMap(xAxis, yAxis);
  map_->setInterpolate(false);
  map_->setTightBoundary(false);
  auto* scale = new QCPColorScale(this);
  plotLayout()->addElement(0, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->axis()->setLabel(tr("samples/s per GPU"));
  scale->setBarWidth(12);
  map_->setColorScale(scale);  // adopts the scale's gradient: set ours after
  map_->setGradient(viridisGradient());
  // Per-GPU throughput spans orders of magnitude across grids: a log colour scale.
  map_->setDataScaleType(QCPAxis::stLogarithmic);
  scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  scale->axis()->setNumberFormat(QStringLiteral("eb"));
  scale->axis()->setNumberPrecision(0);
  auto* margins = new QCPMarginGroup(this);
  axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  xAxis->setLabel(tr("world size N (GPUs)"));
  yAxis->setLabel(tr("sharding group size M"));
  yAxis->grid()->setVisible(false);
  yAxis->setSubTicks(false);
  marker_ = new QCPItemRect(this);
  marker_->setPen(QPen(chosenColor(), 2.5));
  marker_->setBrush(Qt::NoBrush);
  marker_->setVisible(false);
  annotations_ = new ScalingAnnotations(this, scaling_);
  connect(this, &QCustomPlot::mousePress, this, &ScalingHeatmap::onMousePress);
}

int ScalingHeatmap::plannedCells() const {
  int n = 0;
  for (const planner::ScalingCell& c : scaling_().cells) n += c.planned ? 1 : 0;
  return n;
}

void ScalingHeatmap::fill() {
  const planner::ScalingResult& scaling = scaling_();
  for (QCPItemText* label : labels_) removeItem(label);
  labels_.clear();
  const auto cols = static_cast<int>(scaling.world_sizes.size());
  const auto rows = static_cast<int>(scaling.group_sizes.size());
  map_->data()->setSize(std::max(cols, 1), std::max(rows, 1));
  map_->data()->setRange(QCPRange(0, std::max(cols - 1, 0)), QCPRange(0, std::max(rows - 1, 0)));
  map_->data()->fill(std::numeric_limits<double>::quiet_NaN());
  const double best = scaling.bestPerGpu();
  fitting_ = 0;
  for (int mi = 0; mi < rows; ++mi) {
    for (int ni = 0; ni < cols; ++ni) {
      const planner::ScalingCell* c = scaling.at(static_cast<std::size_t>(mi), static_cast<std::size_t>(ni));
      if (c == nullptr || !c->planned) continue;
      auto* label = new QCPItemText(this);
      label->position->setCoords(ni, mi);
      QFont small = label->font();
      small.setPointSizeF(small.pointSizeF() * 0.8);
      label->setFont(small);
      if (c->fits) {
        ++fitting_;
        map_->data()->setCell(ni, mi, c->samples_per_second_per_gpu);
        const double efficiency = best > 0 ? c->samples_per_second_per_gpu / best : 0;
        // Two significant digits below 10%, so 0.4% and 0.04% stay apart.
        const double percent = efficiency * 100.0;
        label->setText(percent >= 9.95    ? QString::number(percent, 'f', 0)
                       : percent >= 0.995 ? QString::number(percent, 'f', 1)
                                          : QString::number(percent, 'g', 2));
        label->setColor(efficiency > 0.6 ? Qt::black : Qt::white);
      } else {
        label->setText(tr("OOM"));
        label->setColor(problemColor());
      }
      labels_.push_back(label);
    }
  }
  auto x_ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int ni = 0; ni < cols; ++ni)
    x_ticker->addTick(ni, QString::number(scaling.world_sizes[static_cast<std::size_t>(ni)]));
  auto y_ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int mi = 0; mi < rows; ++mi)
    y_ticker->addTick(mi, QString::number(scaling.group_sizes[static_cast<std::size_t>(mi)]));
  xAxis->setTicker(x_ticker);
  yAxis->setTicker(y_ticker);
  xAxis->setRange(-0.5, std::max(cols, 1) - 0.5);
  yAxis->setRange(-0.5, std::max(rows, 1) - 0.5);
  xAxis->setTickLabelRotation(cols > 8 ? -45 : 0);
  // Log colours: from 1/1000 of the best cell (darkest) to the best.
  if (best > 0) map_->setDataRange(QCPRange(best / 1000.0, best));
  annotations_->update();
}

void ScalingHeatmap::setChosen(const planner::GridResult* grid) {
  const planner::ScalingResult& scaling = scaling_();
  bool marked = false;
  if (grid != nullptr) {
    const auto n = std::find(scaling.world_sizes.begin(), scaling.world_sizes.end(), grid->grid.world_size);
    const auto m = std::find(scaling.group_sizes.begin(), scaling.group_sizes.end(), grid->grid.group_size);
    if (n != scaling.world_sizes.end() && m != scaling.group_sizes.end()) {
      const double x = static_cast<double>(n - scaling.world_sizes.begin());
      const double y = static_cast<double>(m - scaling.group_sizes.begin());
      marker_->topLeft->setCoords(x - 0.5, y + 0.5);
      marker_->bottomRight->setCoords(x + 0.5, y - 0.5);
      marked = true;
    }
  }
  marker_->setVisible(marked);
  replot(rpQueuedReplot);
}

void ScalingHeatmap::onMousePress(QMouseEvent* event) {
  if (!axisRect()->rect().contains(event->pos())) return;
  const long ni = std::lround(xAxis->pixelToCoord(event->pos().x()));
  const long mi = std::lround(yAxis->pixelToCoord(event->pos().y()));
  if (ni < 0 || mi < 0) return;
  emit cellClicked(static_cast<std::size_t>(mi), static_cast<std::size_t>(ni));
}

}  // namespace shardscope::app
