// The tables of a plan as rows of a read-only Qt item model: how each is
// sharded, where it lives, what it costs and which constraints the project
// puts on it. The Plan page lists every table here (the charts show only
// the heaviest), filters by name and offers the constraint menu per row.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "shardscope/report/plan_snapshot.h"
#include "shardscope/core/constraints.h"

namespace shardscope::app {

class TableLoadModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Table, Type, Shards, Ranks, Load, MaxRank, StateGiB, Constraint, ColumnCount };
  enum Role { SortRole = Qt::UserRole + 1, TableNameRole };

  explicit TableLoadModel(QObject* parent = nullptr);

  // Shows the tables of `snapshot` (nullptr: none). A model reset.
  void setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot);
  // The constraints column follows the project's current constraints (dataChanged only).
  void setConstraints(core::Constraints constraints);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  [[nodiscard]] QString constraintText(const std::string& table) const;

  std::shared_ptr<const report::PlanSnapshot> snapshot_;
  core::Constraints constraints_;
};

}  // namespace shardscope::app
