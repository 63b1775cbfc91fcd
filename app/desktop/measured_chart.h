// Measured vs predicted step per rank: for every measured rank two stacked
// bars side by side, the measured phases (solid) on the left and the
// prediction of the plan it ran (pale, outlined) on the right, one colour per
// phase (embedding forward, backward, all-to-all, replica sync, dense). The
// slowest measured rank and the stragglers are named; phases the run did not
// measure are drawn for the prediction only.
#pragma once

#include <qcustomplot.h>

#include <vector>

#include "shardscope/profiler/analysis/measured_vs_predicted.h"

namespace shardscope::app {

class MeasuredChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit MeasuredChart(QWidget* parent = nullptr);

  // Draws `v` (nullptr: empty, `message` in the title).
  void setComparison(const profiler::MeasuredVsPredicted* v, const QString& message = {});

  // Per phase: the measured and the predicted series.
  [[nodiscard]] const std::vector<QCPBars*>& measuredSeries() const { return measured_; }
  [[nodiscard]] const std::vector<QCPBars*>& predictedSeries() const { return predicted_; }
  [[nodiscard]] QString titleText() const { return title_->text(); }

 private:
  QCPTextElement* title_;
  std::vector<QCPBars*> measured_;
  std::vector<QCPBars*> predicted_;
  QCPItemText* slowest_;
};

}  // namespace shardscope::app
