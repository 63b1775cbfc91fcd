// The embedding tables of a model as rows of a Qt item model: one row per
// table, read-only. Display text comes from display_format.h; SortRole gives
// raw numbers so a QSortFilterProxyModel sorts sizes and counts numerically.
#pragma once

#include <QAbstractTableModel>

#include "shardscope/core/model.h"

namespace shardscope::app {

class TableListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Rows, Dim, DType, Pooling, Access, SizeGB, ColumnCount };
  enum Role { SortRole = Qt::UserRole + 1 };

  explicit TableListModel(QObject* parent = nullptr);

  // Replaces all rows (a model reset: tables come and go as a whole).
  void setTables(std::vector<core::TableSpec> tables);
  [[nodiscard]] const std::vector<core::TableSpec>& tables() const { return tables_; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  [[nodiscard]] QVariant displayText(const core::TableSpec& t, int column) const;
  [[nodiscard]] QVariant sortValue(const core::TableSpec& t, int column) const;

  std::vector<core::TableSpec> tables_;
};

}  // namespace shardscope::app
