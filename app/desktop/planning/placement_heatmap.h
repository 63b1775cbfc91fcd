// Where the heaviest tables live: a tables x group ranks heatmap, the
// kHeatmapTables heaviest tables as rows (heaviest on top, names as tick
// labels, thinned when rows are too tight to label each), colour = the
// table's load on that rank (log scale), blank where it has nothing. Over
// kHeatmapColumns ranks, consecutive ranks share a column showing the largest.
// Hovering a cell names the table and its shards there; a right-click on a
// cell or a row label asks for the table's constraint menu. A QCustomPlot,
// so the Export page renders it with toPixmap.
#pragma once

#include <qcustomplot.h>

#include <memory>
#include <optional>

#include "shardscope/report/plan_snapshot.h"

namespace shardscope::app {

class PlacementHeatmap : public QCustomPlot {
  Q_OBJECT

 public:
  explicit PlacementHeatmap(QWidget* parent = nullptr);

  // Draws `snapshot` (nullptr: empty, with `message` in the title).
  void setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot, const QString& message = {});

  [[nodiscard]] QCPColorMap* colorMap() const { return map_; }
  [[nodiscard]] int rowCount() const;     // tables shown
  [[nodiscard]] int columnCount() const;  // group ranks
  [[nodiscard]] int rankColumns() const;  // columns drawn: one per rank, or per kHeatmapColumns-th of them
  // Plan table of heatmap row `row` (0 = heaviest, drawn on top).
  [[nodiscard]] std::optional<std::uint32_t> tableOfRow(int row) const;
  [[nodiscard]] QString titleText() const;

  struct Cell {
    int row = 0;
    std::optional<std::uint32_t> group_rank;  // nullopt: the row's label, left of the map
  };
  [[nodiscard]] std::optional<Cell> cellAtPixel(const QPointF& pixel) const;
  // Hover text of (row, group rank); empty when out of range.
  [[nodiscard]] QString hoverText(int row, std::uint32_t group_rank) const;

 signals:
  void tableMenuRequested(const QString& table, const QPoint& global_pos);

 private:
  void onMouseMove(QMouseEvent* event);
  void onContextMenu(const QPoint& pos);

  std::shared_ptr<const report::PlanSnapshot> snapshot_;
  QCPTextElement* title_;
  QCPColorMap* map_;
  QCPColorScale* scale_;
  QSharedPointer<QCPAxisTicker> row_ticker_;
};

}  // namespace shardscope::app
