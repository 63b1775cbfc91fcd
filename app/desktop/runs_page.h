// The Runs page: every run of the project's trace store (engine runs and
// imported traces) in a sortable table; rename in place, delete with
// confirmation. The store is read and written off the GUI thread through a
// JobTracker; a store that cannot be opened is said on the page, and nothing
// in it is touched but the run that was renamed or deleted. Jobs on agents
// (RemoteJobs) are rows too, above the runs, until their run is fetched into
// the store: their state and progress live, Cancel Remote Job, a failed
// job's error and stderr tail when selected.
#pragma once

#include <QString>
#include <QWidget>

#include "shardscope/core/result.h"

class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableWidget;
class QTableView;

namespace shardscope::app {

class ComparisonView;
class JobTracker;
class RunListModel;
class RemoteJobs;
struct RemoteRow;

class RunsPage : public QWidget {
  Q_OBJECT

 public:
  explicit RunsPage(QWidget* parent = nullptr);
  ~RunsPage() override;

  // Shows the runs of the store at `path`; a missing file is created when
  // `create`, else the page says the store comes with the first run. "" shows none.
  void setStorePath(const QString& path, bool create = true);
  [[nodiscard]] const QString& storePath() const { return store_path_; }
  // Lists the store again (after a profile or an import wrote to it).
  void refresh();

  // Without dialogs: the page's buttons ask first. Both refresh when done.
  void renameRun(qint64 run, const QString& label);
  void deleteRun(qint64 run);
  // Shows runs `a` and `b` side by side below the list (ComparisonView):
  // the step by phase and every matched rank's embedding load as charts and a table.
  void compareRuns(qint64 a, qint64 b);
  [[nodiscard]] ComparisonView* comparisonView() const { return comparison_; }
  [[nodiscard]] QTableWidget* comparisonTable() const;
  // Imports trace files (or folders of them) of one format as one run of the
  // store, with progress and a Cancel button on the page; errors name the file.
  // `format`: "kineto" (PyTorch profiler JSON, .json or .json.gz) or "nsys"
  // (Nsight Systems SQLite export).
  void importTraces(const QString& format, const QStringList& inputs);
  // Writes run `run`'s measured access per table (shardscope.access/1) to
  // `path`, off the GUI thread; the page's Export Access button asks for the file.
  void exportAccess(qint64 run, const QString& path);
  void cancelImport();

  // Shows `jobs` as rows and refreshes the list when one's run is fetched.
  void setRemoteJobs(RemoteJobs* jobs);
  // The selected remote job's action: cancel (active), fetch again (fetch
  // failed) or dismiss (ended); the button's text says which.
  void actOnSelectedRemoteJob();
  [[nodiscard]] QPushButton* remoteButton() const { return remote_; }
  // The remote job selected alone, nullptr when none.
  [[nodiscard]] const RemoteRow* selectedRemoteRow() const;
  [[nodiscard]] QString messageText() const;

  [[nodiscard]] RunListModel* model() const { return model_; }
  [[nodiscard]] QTableView* view() const { return table_; }
  // The runs selected in the table, in view order.
  [[nodiscard]] QList<qint64> selectedRuns() const;

 signals:
  // A listing arrived (`runs` rows) or failed (`message`).
  void listed(int runs);
  void failed(const QString& message);
  // A rename or delete was written (or was refused: `message` says why).
  void edited(const QString& message);
  // A comparison is shown (or `message` says why not).
  void compared(const QString& message);
  // The user asked for a run's measured-vs-predicted view.
  void openRequested(qint64 run);
  // The user asked for a run's timeline or its collectives' bandwidth.
  void timelineRequested(qint64 run);
  void collectivesRequested(qint64 run);
  // An access export finished: `message` empty on success.
  void accessExported(const QString& path, const QString& message);
  // An import finished: its run (> 0), or 0 and `message` (failed or cancelled).
  void imported(qint64 run, const QString& message);

 private:
  void onDeleteClicked();
  void onCompareClicked();
  void connectExport();
  void setUpSecondaryWidgets();  // the views' and the remote job's buttons
  void setUpTable();
  void showMessage(const QString& text, bool error);
  void updateButtons();
  void showRemoteRows();

  QString store_path_;
  bool create_ = true;
  QString after_listing_;  // said once the next listing arrives, instead of the run count
  RunListModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QLabel* header_;
  QLabel* message_;
  QPushButton* refresh_;
  QPushButton* delete_;
  QPushButton* compare_;
  QPushButton* open_;
  QPushButton* timeline_;
  QPushButton* collectives_;
  QPushButton* export_access_;
  QPushButton* cancel_import_;
  QPushButton* remote_;
  RemoteJobs* remote_jobs_ = nullptr;
  ComparisonView* comparison_;
  JobTracker* list_jobs_;
  JobTracker* edit_jobs_;
  JobTracker* compare_jobs_;
  JobTracker* import_jobs_;
  JobTracker* export_jobs_;
};

}  // namespace shardscope::app
