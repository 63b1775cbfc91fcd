// Bus bandwidth against message size, log-log: every collective call of a run
// as a point, one colour per (op, group) and one marker shape per group, with
// the planner's alpha-beta curve of that op and group in the same colour
// (dashed: default constants, solid: the calibration's) and the calls far
// below their curve ringed. What it draws comes from
// profiler::collectiveBandwidth (collective_bandwidth.h).
#pragma once

#include <qcustomplot.h>

#include <optional>
#include <string>
#include <vector>

#include "shardscope/profiler/analysis/collective_bandwidth.h"

namespace shardscope::app {

class CollectivesChart : public QCustomPlot {
  Q_OBJECT

 public:
  // The graphs of one (op, group) series; model and calibrated are null
  // where the planner prices no such call (or no calibration is given).
  struct SeriesGraphs {
    std::string op;
    profiler::CollectiveGroup group = profiler::CollectiveGroup::Other;
    QCPGraph* points = nullptr;
    QCPGraph* model = nullptr;
    QCPGraph* calibrated = nullptr;
  };

  explicit CollectivesChart(QWidget* parent = nullptr);

  // Draws the series of `r` that pass the filters (`op` empty: every op;
  // `group` nullopt: every group). nullptr: nothing, `message` as the title.
  void setBandwidth(const profiler::CollectiveBandwidth* r, const std::string& op = {},
                    std::optional<profiler::CollectiveGroup> group = std::nullopt, const QString& message = {});

  [[nodiscard]] const std::vector<SeriesGraphs>& series() const { return series_; }
  // The drawn series of (op, group), nullptr when filtered out or absent.
  [[nodiscard]] const SeriesGraphs* find(const std::string& op, profiler::CollectiveGroup group) const;
  // The rings around the drawn outliers.
  [[nodiscard]] QCPGraph* outlierGraph() const { return outliers_; }
  [[nodiscard]] QString titleText() const { return title_->text(); }

  // The drawn call whose point is nearest `pos` (widget pixels), within 8 px; nullptr when none.
  [[nodiscard]] const profiler::CallBandwidth* callAtPixel(const QPointF& pos) const;
  // What hovering a point shows: the call's op, group, ranks, step, size, time, bus bandwidth against the
  // model, and the rank that started last.
  [[nodiscard]] static QString callToolTip(const profiler::CallBandwidth& call);

 private:
  void onMouseMove(QMouseEvent* event);
  void addSeries(const profiler::CollectiveBandwidth& r, std::size_t index, double& lo, double& hi);
  void addLegendKeys(const profiler::CollectiveBandwidth& r);

  QCPTextElement* title_;
  std::vector<SeriesGraphs> series_;
  std::vector<profiler::CallBandwidth> drawn_;  // the calls of the drawn series, for hovering
  QCPGraph* outliers_ = nullptr;
};

}  // namespace shardscope::app
