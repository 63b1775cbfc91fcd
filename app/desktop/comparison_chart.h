// Two runs compared as charts (the Runs page's Compare): the step by phase,
// A beside B per phase in the phase's colour (A pale and outlined, B solid,
// as the Measured page draws prediction and measurement), with B's change
// above each pair; and every matched rank's embedding load, A beside B, with
// the imbalance (max/mean) of both in the title. Across kinds of device both
// show shares instead of milliseconds (profiler::RunComparison::shares).
#pragma once

#include <QWidget>

#include "shardscope/profiler/workflow/run_comparison.h"

class QCustomPlot;

namespace shardscope::app {

class ComparisonChart : public QWidget {
  Q_OBJECT

 public:
  explicit ComparisonChart(QWidget* parent = nullptr);

  // Draws `c`; nullptr clears both charts.
  void setComparison(const profiler::RunComparison* c);

  [[nodiscard]] QCustomPlot* phasePlot() const { return phases_; }
  [[nodiscard]] QCustomPlot* rankPlot() const { return ranks_; }

 private:
  void drawPhases(const profiler::RunComparison& c);
  void drawRanks(const profiler::RunComparison& c);

  QCustomPlot* phases_;
  QCustomPlot* ranks_;
};

}  // namespace shardscope::app
