// What the Grid Explorer's charts of every grid (memory per GPU, load
// imbalance) share: one bar per grid in the order the page gives (M order,
// strided before contiguous), tick labels that name the grids, the chosen
// grid's own bar outlined, and a click on a bar choosing its grid.
#pragma once

#include <qcustomplot.h>

#include <vector>

#include "shardscope/planner/sweep.h"

namespace shardscope::app {

class GridTickLabels;

class GridBarsChart : public QCustomPlot {
  Q_OBJECT

 public:
  // Outlines the bar of grid `grid_index` (-1: none).
  void setChosen(int grid_index);
  [[nodiscard]] QCPItemRect* chosenMarker() const { return chosen_; }

 signals:
  void gridClicked(int grid_index);

 protected:
  explicit GridBarsChart(QWidget* parent = nullptr);

  // A set of bars in the charts' one style.
  QCPBars* addBars(const QString& name, const QColor& colour);
  // The last step of a chart's constructor, after its bars and items (the
  // outline is drawn over them): the bars the outline is drawn around.
  void addChosenMarker(std::vector<QCPBars*> bars);
  // The grids under bar keys 0, 1, ... (`keys[k]` indexes `sweep.grids`):
  // their tick labels and the x range.
  void setKeys(const planner::SweepResult& sweep, std::vector<int> keys);
  [[nodiscard]] const std::vector<int>& keys() const { return keys_; }

 private:
  void onBarClick(QCPAbstractPlottable* plottable, int data_index);

  std::vector<QCPBars*> bars_;
  std::vector<int> keys_;  // bar key -> grid index
  QCPItemRect* chosen_ = nullptr;
  GridTickLabels* ticks_ = nullptr;
};

}  // namespace shardscope::app
