// Per-rank load of a plan as stacked bars: group ranks 0..M-1 on x, one
// coloured series per heavy table (the kStackedTables heaviest), one grey
// "other" series and the replica sync on top (the phase palette's hatch),
// the mean load and the slowest rank marked. With more
// than kMaxBars ranks in view, a bar stands for a power of two of ranks and
// shows the heaviest of them (the envelope and the slowest rank stay exact);
// zooming in (wheel, drag along x) shows every rank. Hovering a
// segment shows the table, its shards on that rank and their cost; a
// right-click on a table's segment asks for the table's constraint menu.
// A QCustomPlot, so the Export page renders it with toPixmap.
#pragma once

#include <qcustomplot.h>

#include <memory>
#include <optional>
#include <vector>

#include "shardscope/report/plan_snapshot.h"

namespace shardscope::app {

class RankLoadChart : public QCustomPlot {
  Q_OBJECT

 public:
  explicit RankLoadChart(QWidget* parent = nullptr);

  // Draws `snapshot` (nullptr: empty, with `message` in the title).
  void setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot, const QString& message = {});

  // Overlays a run's measured embedding compute per group rank (NaN: not
  // measured) as markers named `label`; an empty vector removes them. Kept
  // until replaced: the page sets it for the plan shown.
  void setMeasured(std::vector<double> compute_ms, const QString& label);
  [[nodiscard]] const QCPGraph* measuredGraph() const { return measured_; }

  static constexpr std::uint32_t kMaxBars = 512;

  // The stacked series, bottom first: the heavy tables, then "other".
  [[nodiscard]] const std::vector<QCPBars*>& series() const { return bars_; }
  // The replica sync segment on top of each rank's tables.
  [[nodiscard]] const QCPBars* syncSeries() const { return sync_bars_; }
  [[nodiscard]] int rankCount() const;
  // Ranks each bar stands for at the current zoom (1: one bar per rank).
  [[nodiscard]] std::uint32_t ranksPerBar() const { return ranks_per_bar_; }
  // The segment under plot coordinates (key = group rank, value = ms):
  // rank and series index, the plan table for a table's segment.
  struct Hit {
    std::uint32_t group_rank = 0;
    std::size_t series = 0;
    std::optional<std::uint32_t> table;  // nullopt: the "other" series, or the replica sync
    bool sync = false;                   // the rank's replica sync segment
  };
  [[nodiscard]] std::optional<Hit> hitAt(double key, double value) const;
  [[nodiscard]] std::optional<Hit> hitAtPixel(const QPointF& pixel) const;
  // Hover text of the segment at (key, value); empty when there is none.
  [[nodiscard]] QString hoverText(double key, double value) const;

 signals:
  // A right-click on a table's segment.
  void tableMenuRequested(const QString& table, const QPoint& global_pos);

 private:
  void rebin();                                                  // bars for the visible range
  [[nodiscard]] std::uint32_t barRank(std::uint32_t bar) const;  // the heaviest rank of a bar
  void onMouseMove(QMouseEvent* event);
  void onContextMenu(const QPoint& pos);

  std::shared_ptr<const report::PlanSnapshot> snapshot_;
  QCPTextElement* title_;
  std::vector<QCPBars*> bars_;
  QCPBars* sync_bars_ = nullptr;
  QCPGraph* mean_line_;  // a graph, so the legend names it
  QCPGraph* measured_;   // the measured overlay (markers, no line)
  std::vector<double> measured_ms_;
  double bars_top_ = 0.0;  // the tallest bar, for the y range
  QCPItemRect* critical_box_;
  QCPItemText* critical_label_;
  std::uint32_t ranks_per_bar_ = 0;  // 0: no data
};

}  // namespace shardscope::app
