// The embedding tables of a model as rows of an editable Qt item model, and
// the delegate that gives each column its editor. Display text comes from
// display_format.h; SortRole gives raw numbers so a QSortFilterProxyModel
// sorts sizes and counts numerically. Edits are checked with the rules of
// shardscope.model/1 (core::checkTable) and, when accepted, announced with
// tableEdited so the page records them as an undoable project edit.
#pragma once

#include <QAbstractTableModel>
#include <QStyledItemDelegate>

#include "shardscope/core/model.h"
#include "shardscope/core/result.h"

namespace shardscope::app {

class TableListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Rows, Dim, DType, Pooling, Access, SizeGiB, ColumnCount };
  enum Role { SortRole = Qt::UserRole + 1 };

  explicit TableListModel(QObject* parent = nullptr);

  // Follows a new list of tables with the smallest change signal: nothing
  // when equal, dataChanged over the rows that differ when the count is the
  // same, rowsInserted/rowsRemoved for one contiguous block added or removed,
  // a reset otherwise. Cheap for 1,000 tables.
  void setTables(std::vector<core::TableSpec> tables);
  [[nodiscard]] const std::vector<core::TableSpec>& tables() const { return tables_; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;
  // EditRole only. Values: Name a string; Rows a number or text ("40M",
  // "40,000,000"); Dim a number; DType "fp16" or a DType index; Pooling a
  // number or text ("3", "20 ± 5"); Access text ("zipf 1.05", "hot:0.1:0.9").
  // A rejected value leaves the table as it was, sets lastError() and emits
  // editRejected; an accepted one emits dataChanged then tableEdited.
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  // The table `value` would make of `row`, or why it cannot
  // ("Dim of t3: expected a positive multiple of 4, got 6").
  [[nodiscard]] core::Result<core::TableSpec> editedTable(int row, int column, const QVariant& value) const;
  [[nodiscard]] const QString& lastError() const { return last_error_; }

  [[nodiscard]] static QString columnName(int column);  // "rows", "dim": for edit descriptions

 signals:
  void tableEdited(int row, int column);
  void editRejected(const QString& message);

 private:
  [[nodiscard]] QVariant displayText(const core::TableSpec& t, int column) const;
  [[nodiscard]] QVariant editValue(const core::TableSpec& t, int column) const;
  [[nodiscard]] QVariant sortValue(const core::TableSpec& t, int column) const;

  std::vector<core::TableSpec> tables_;
  QString last_error_;
};

// Editors for TableListModel cells, also through proxies: a line edit for
// names, rows (64-bit counts, "40M"), pooling and access; a spin box stepping
// by 4 for dim; a combo box for dtype. Line edits check as you type and show
// why a value would be rejected in their tooltip, framed in red.
class TableItemDelegate : public QStyledItemDelegate {
  Q_OBJECT

 public:
  explicit TableItemDelegate(QObject* parent = nullptr);

  QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
  void setEditorData(QWidget* editor, const QModelIndex& index) const override;
  void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

}  // namespace shardscope::app
