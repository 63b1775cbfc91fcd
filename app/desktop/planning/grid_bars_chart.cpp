#include "grid_bars_chart.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "chart_style.h"
#include "grid_tick_labels.h"

namespace shardscope::app {

namespace {

constexpr double kBarWidth = 0.7;  // in keys

}  // namespace

GridBarsChart::GridBarsChart(QWidget* parent) : QCustomPlot(parent) {
  styleBarChart(this, 260);
  connect(this, &QCustomPlot::plottableClick, this,
          [this](QCPAbstractPlottable* plottable, int data_index, QMouseEvent* /*event*/) {
            onBarClick(plottable, data_index);
          });
}

QCPBars* GridBarsChart::addBars(const QString& name, const QColor& colour) {
  auto* bars = new QCPBars(xAxis, yAxis);
  bars->setName(name);
  bars->setWidthType(QCPBars::wtPlotCoords);
  bars->setWidth(kBarWidth);
  bars->setPen(Qt::NoPen);
  bars->setBrush(colour);
  return bars;
}

void GridBarsChart::addChosenMarker(std::vector<QCPBars*> bars) {
  bars_ = std::move(bars);
  // An outline around the chosen grid's own bar, in plot coordinates: a taller
  // frame would read as a bar of its own (a memory "over HBM" that is not).
  chosen_ = new QCPItemRect(this);
  chosen_->setPen(QPen(chosenColor(), 2.0, Qt::DashLine));
  chosen_->setBrush(Qt::NoBrush);
  chosen_->setSelectable(false);
  chosen_->setVisible(false);
  ticks_ = new GridTickLabels(this, tr("every grid"));
}

void GridBarsChart::setKeys(const planner::SweepResult& sweep, std::vector<int> keys) {
  keys_ = std::move(keys);
  std::vector<const planner::GridResult*> grids;
  for (const int index : keys_) grids.push_back(&sweep.grids[static_cast<std::size_t>(index)]);
  ticks_->setGrids(std::move(grids));
  xAxis->setRange(-0.6, std::max(static_cast<double>(keys_.size()) - 0.4, 0.4));
}

void GridBarsChart::setChosen(int grid_index) {
  const auto it = std::find(keys_.begin(), keys_.end(), grid_index);
  chosen_->setVisible(grid_index >= 0 && it != keys_.end());
  if (chosen_->visible()) {
    const auto key = static_cast<double>(it - keys_.begin());
    double base = 0.0;
    double top = 0.0;
    for (const QCPBars* b : bars_) {
      const auto found = b->data()->findBegin(key, false);
      if (found == b->data()->constEnd() || std::abs(found->key - key) > 1e-9) continue;
      base = b->baseValue();
      top = std::max(top, base + found->value);
    }
    const double half = kBarWidth / 2.0 + 0.06;
    chosen_->topLeft->setCoords(key - half, top);
    chosen_->bottomRight->setCoords(key + half, base);
  }
  replot(rpQueuedReplot);
}

void GridBarsChart::onBarClick(QCPAbstractPlottable* plottable, int data_index) {
  auto* bars = qobject_cast<QCPBars*>(plottable);
  if (bars == nullptr || data_index < 0 || data_index >= bars->dataCount()) return;
  const auto key = static_cast<std::size_t>((bars->data()->constBegin() + data_index)->key);
  if (key < keys_.size()) emit gridClicked(keys_[key]);
}

}  // namespace shardscope::app
