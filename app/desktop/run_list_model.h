// The runs of a trace store as a Qt item model (the Runs page's table): one
// row per profiler::RunRow. The name column is editable; an edit asks for a
// rename (renameRequested) and shows the new name at once.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "shardscope/profiler/workflow/run_catalog.h"

namespace shardscope::app {

class RunListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Id, Name, Kind, Model, Grid, Mode, Status, Created, Steps, MedianStep, ColumnCount };
  // Numbers and times as numbers, for QSortFilterProxyModel::setSortRole.
  static constexpr int kSortRole = Qt::UserRole + 1;

  explicit RunListModel(QObject* parent = nullptr);

  void setRows(std::vector<profiler::RunRow> rows);
  [[nodiscard]] const std::vector<profiler::RunRow>& rows() const { return rows_; }
  // The run shown in `row`, nullptr outside the model.
  [[nodiscard]] const profiler::RunRow* runAt(int row) const;
  // The model row of run `id`, -1 when it is not listed.
  [[nodiscard]] int rowOf(qint64 id) const;

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;
  [[nodiscard]] Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

 signals:
  void renameRequested(qint64 run, const QString& label);

 private:
  [[nodiscard]] QVariant display(const profiler::RunRow& r, int column) const;
  [[nodiscard]] QVariant sortKey(const profiler::RunRow& r, int column) const;

  std::vector<profiler::RunRow> rows_;
};

}  // namespace shardscope::app
