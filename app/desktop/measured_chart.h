// Measured vs predicted step per rank: for every measured rank two bars side
// by side, measured (solid) on the left and the prediction of the plan it ran
// (pale, dashed outline) on the right. Like for like (the prediction priced
// for the run's device) the bars stack the phases the run measured, in ms, in
// the phase palette; phases it did not measure are not drawn. Across devices
// they show each rank's share of its sharding group's embedding work. The
// slowest rank (or the widest share gap) and the stragglers are named.
#pragma once

#include <qcustomplot.h>

#include <vector>

#include "rank_ticker.h"
#include "shardscope/profiler/analysis/measured_vs_predicted.h"
#include "shardscope/profiler/analysis/run_analysis.h"

namespace shardscope::app {

class MeasuredChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit MeasuredChart(QWidget* parent = nullptr);

  // Draws `v` (nullptr: empty, `message` in the title).
  void setComparison(const profiler::MeasuredVsPredicted* v, const QString& message = {});
  // Without a prediction: what the run measured per rank (embedding forward and
  // backward, ms), `why` in the title. Nothing to compare, so nothing else.
  void setMeasuredOnly(const profiler::RunAnalysis& a, const QString& why);

  // Per phase: the measured and the predicted series.
  [[nodiscard]] const std::vector<QCPBars*>& measuredSeries() const { return measured_; }
  [[nodiscard]] const std::vector<QCPBars*>& predictedSeries() const { return predicted_; }
  [[nodiscard]] QString titleText() const { return title_->text(); }
  // True when the bars are shares (the run ran on another kind of device).
  [[nodiscard]] bool showsShares() const { return shares_; }

 private:
  void clearBars();
  void showTimes(const profiler::MeasuredVsPredicted& v);
  void showShares(const profiler::MeasuredVsPredicted& v);

  QCPTextElement* title_;
  std::vector<QCPBars*> measured_;
  std::vector<QCPBars*> predicted_;
  QCPItemText* slowest_;
  QSharedPointer<RankTicker> ticker_;
  bool shares_ = false;
};

}  // namespace shardscope::app
