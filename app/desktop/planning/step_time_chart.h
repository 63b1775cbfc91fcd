// The Grid Explorer's step-time chart: one stacked bar per fitting grid
// (embedding, all-to-all, replica sync, dense: the phase palette, the
// all-reduces hatched) with its step time on top. Step times of a sweep span
// orders of magnitude (the best grid can be 400x shorter than the worst), so
// by default the axis is zoomed on the best grids: bars past the zoom are cut
// with a break mark and their total written at the top, and the best grid is
// labelled, so the answer is visible at a glance. Full range and shares of
// the step are the other views. The chosen grid is outlined.
#pragma once

#include <qcustomplot.h>

#include <vector>

#include "shardscope/planner/sweep.h"
#include "shardscope/report/grid_choice.h"

namespace shardscope::app {

class GridTickLabels;

class StepTimeChart : public QCustomPlot {
  Q_OBJECT

 public:
  enum class Scale { ZoomedOnBest = 0, FullRange = 1, Shares = 2 };
  // The zoom shows up to this many times the best grid's step.
  static constexpr double kZoom = 5.0;

  explicit StepTimeChart(QWidget* parent = nullptr);

  // The grids to draw (indices into `sweep.grids`, in bar order) and what a
  // calibration changed (marked † with `calibrated_on` in the title).
  void setGrids(const planner::SweepResult& sweep, std::vector<int> keys, report::CalibratedFigures calibrated,
                const QString& calibrated_on);
  void setScale(Scale scale);
  [[nodiscard]] Scale scale() const { return scale_; }
  // Outlines the bar of grid `grid_index` (-1: none).
  void setChosen(int grid_index);

  [[nodiscard]] const std::vector<QCPBars*>& parts() const { return parts_; }
  [[nodiscard]] int barCount() const { return static_cast<int>(keys_.size()); }
  // The best grid's bar height in pixels as last laid out (0 without one).
  [[nodiscard]] double bestBarPixels() const;
  // Bars cut by the zoom.
  [[nodiscard]] int clippedBars() const { return clipped_; }
  [[nodiscard]] QCPItemRect* chosenMarker() const { return chosen_; }
  [[nodiscard]] bool ticksTurned() const;

 signals:
  void gridClicked(int grid_index);

 private:
  void fill();
  void addTotals(const std::vector<double>& totals, double top, double best);

  const planner::SweepResult* sweep_ = nullptr;
  std::vector<int> keys_;
  report::CalibratedFigures calibrated_;
  QString calibrated_on_;
  Scale scale_ = Scale::ZoomedOnBest;
  std::vector<QCPBars*> parts_;
  std::vector<QCPAbstractItem*> labels_;
  QCPItemRect* chosen_;
  QCPTextElement* title_;
  GridTickLabels* ticks_;
  int chosen_key_ = -1;
  int best_key_ = -1;
  double best_total_ = 0.0;
  int clipped_ = 0;
};

}  // namespace shardscope::app
