// Tick labels that name grids under their bars ("M=16 R=4" over "strided")
// while each bar has room for them, and one short turned line ("16×4 s")
// when it does not; chosen again whenever the plot is resized, so the labels
// never run into each other at 1280 pixels or on a narrow side tab.
#pragma once

#include <QObject>
#include <QString>
#include <vector>

#include "shardscope/planner/grid_result.h"

class QCustomPlot;

namespace shardscope::app {

class GridTickLabels : public QObject {
  Q_OBJECT

 public:
  // `title` names the bars ("fitting grids", "every grid"); the axis label says how to read the ticks.
  GridTickLabels(QCustomPlot* plot, QString title);

  // The grids under keys 0, 1, ... (pointers into a sweep that outlives the next call).
  void setGrids(std::vector<const planner::GridResult*> grids);
  [[nodiscard]] bool turned() const { return turned_; }

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void apply(int plot_width);

  QCustomPlot* plot_;
  QString title_;
  std::vector<const planner::GridResult*> grids_;
  bool turned_ = false;
};

}  // namespace shardscope::app
