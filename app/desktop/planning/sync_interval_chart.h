// What staleness buys: one grid's predicted step time with the replicas
// syncing every k = 1, 2, 4, 8, 16 steps (and the plan's own k, in the
// darker colour): the same placement with its amortised sync re-priced
// (planner::stepMsAtSyncInterval). The Grid Explorer's Sync interval tab.
#pragma once

#include <qcustomplot.h>

#include "shardscope/planner/grid_result.h"

namespace shardscope::app {

class SyncIntervalChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit SyncIntervalChart(QWidget* parent = nullptr);
  // nullptr: nothing planned.
  void setGrid(const planner::GridResult* grid);
  [[nodiscard]] QString titleText() const { return title_->text(); }

 private:
  QCPTextElement* title_;
  QCPBars* others_;   // plottable 0
  QCPBars* current_;  // plottable 1: the plan's k
};

}  // namespace shardscope::app
