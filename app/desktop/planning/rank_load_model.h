// The ranks of a sharding group as rows of a read-only Qt item model: what
// each group rank computes, serves and holds, for the Plan page's rank table.
// SortRole gives raw numbers so a QSortFilterProxyModel sorts numerically.
#pragma once

#include <QAbstractTableModel>
#include <memory>

#include "shardscope/report/plan_snapshot.h"

namespace shardscope::app {

class RankLoadModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { GroupRank, GlobalRanks, Fwd, Bwd, Comm, Sync, Load, Memory, Embedding, Usable, Shards, ColumnCount };
  enum Role { SortRole = Qt::UserRole + 1 };

  explicit RankLoadModel(QObject* parent = nullptr);

  // Shows the ranks of `snapshot` (nullptr: none). A model reset.
  void setSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot);

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const report::PlanSnapshot> snapshot_;
};

}  // namespace shardscope::app
