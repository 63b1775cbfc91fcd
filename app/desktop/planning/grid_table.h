// The Grid Explorer's table of every grid, in ranked order (fitting grids
// first) until a header is clicked: M, R, layout, the predicted step and its
// parts, throughput, memory, imbalance, the gap to the lower bound and
// whether it fits; the grids that do not fit in red; the columns a
// calibration changed marked †. Clicking a row emits its grid.
#pragma once

#include <QTableView>

#include "shardscope/core/calibration.h"
#include "shardscope/planner/sweep.h"

class QStandardItemModel;

namespace shardscope::app {

class GridTable : public QTableView {
  Q_OBJECT

 public:
  // Columns of the model (the view shows the step and its parts first).
  enum Column {
    ColRank,
    ColM,
    ColR,
    ColLayout,
    ColStep,
    ColEmbedding,
    ColAllToAll,
    ColReplicaSync,
    ColDense,
    ColSamples,
    ColMemory,
    ColMaxMean,
    ColGap,
    ColFits,
    ColumnCount
  };
  static constexpr int kGridIndexRole = Qt::UserRole + 1;  // index into the sweep's grids, on ColRank
  static constexpr int kSortRole = Qt::UserRole + 2;

  explicit GridTable(QWidget* parent = nullptr);

  // Every grid of `sweep`; `calibration` (may be null) marks the figures it changed.
  void setGrids(const planner::SweepResult& sweep, const core::Calibration* calibration);
  // Selects the row of grid `grid_index` wherever the table is sorted; -1 clears the selection.
  void selectGrid(int grid_index);
  // The grid in row `row` as sorted in the view; -1 for none.
  [[nodiscard]] int gridAt(int row) const;
  [[nodiscard]] QStandardItemModel* gridModel() const { return model_; }

 signals:
  void gridClicked(int grid_index);

 private:
  void markCalibratedColumns(const core::Calibration* calibration);

  QStandardItemModel* model_;
};

}  // namespace shardscope::app
