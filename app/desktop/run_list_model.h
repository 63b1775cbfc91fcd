// The runs of a trace store as a Qt item model (the Runs page's table): one
// row per profiler::RunRow, the columns that tell runs apart (source, model,
// layout, batch, device, ranks) and the run's step time. The name column is editable; an edit asks for a
// rename (renameRequested) and shows the new name at once. Jobs on agents
// that are not in the store yet follow as RemoteRows (setRemoteRows): the
// job id, its label, "on <agent>", its state and progress; never editable.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <vector>

#include "shardscope/profiler/workflow/run_catalog.h"

namespace shardscope::app {

// A job on an agent, as the Runs page shows it until its run is in the store.
struct RemoteRow {
  QString address;  // the agent's
  QString job;      // the agent's job id ("j3")
  QString label;
  QString model;    // the model's name ("" from an agent that does not say)
  QString kind;     // "on gpu01 (cluster, 16 GPUs)": where it runs, in the Device column
  QString mode;     // "emulate", "mpi": the Source column
  QString status;   // "running 3/6", "fetching 40%", "failed"
  QString created;  // ISO 8601 UTC
  QString grid;     // "M=2 × R=2" or "": the Layout column
  QString detail;   // the tooltip: progress text, error, stderr tail
  int done = 0;     // progress (steps, or a fetch's thousandths)
  int total = 0;
  bool failed = false;
  bool active = false;  // queued, running or fetching
};

class RunListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  // Source: the run's kind as stored (emulate, mpi, cuda, import-kineto, ...);
  // Layout: "M=4 × R=2 strided"; Batch: samples per GPU; Ranks: measured / world.
  enum Column { Id, Name, Source, Model, Layout, Batch, Device, Ranks, Status, Created, Steps, StepTime, ColumnCount };
  // Numbers and times as numbers, for QSortFilterProxyModel::setSortRole.
  static constexpr int kSortRole = Qt::UserRole + 1;

  explicit RunListModel(QObject* parent = nullptr);

  void setRows(std::vector<profiler::RunRow> rows);
  [[nodiscard]] const std::vector<profiler::RunRow>& rows() const { return rows_; }
  // Jobs on agents, listed after the store's runs.
  void setRemoteRows(std::vector<RemoteRow> rows);
  [[nodiscard]] const std::vector<RemoteRow>& remoteRows() const { return remote_; }
  // The remote job shown in `row`, nullptr for a run of the store.
  [[nodiscard]] const RemoteRow* remoteAt(int row) const;
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
  [[nodiscard]] QVariant toolTip(const profiler::RunRow& r, int column) const;
  [[nodiscard]] QVariant remoteData(const RemoteRow& r, int row, int column, int role) const;

  std::vector<profiler::RunRow> rows_;
  std::vector<RemoteRow> remote_;
};

}  // namespace shardscope::app
