// The ShardScope main window: menus, a sidebar switching a stack of pages
// (Model, Cluster, Grid Explorer, Plan, Export) and a status bar with the
// project, N, the chosen grid and its predicted step time. The window owns
// the ProjectDocument (the project and its undo history) and the
// PlanningSession (sweeps, the chosen grid) every page shares. File
// operations have a non-interactive form returning a Status (used by tests
// and the command line) and a menu slot that adds the dialogs.
#pragma once

#include <QMainWindow>
#include <optional>

#include "shardscope/core/result.h"

class QLabel;
class QListWidget;
class QMenu;
class QStackedWidget;

namespace shardscope::app {

class ClusterPage;
class ExportPage;
class GridExplorerPage;
class ModelPage;
class PageWarmer;
class PlanningSession;
class PlanPage;
class JobTracker;
class MeasuredPage;
class RunsPage;
class TimelinePage;
class CollectivesPage;
class ProjectDocument;
class RecentProjects;
class ConnectionsDialog;
class ProfileDialog;
class RemoteAgents;
class RemoteJobs;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  [[nodiscard]] ProjectDocument* document() const { return document_; }
  [[nodiscard]] PlanningSession* session() const { return session_; }
  [[nodiscard]] ModelPage* modelPage() const { return model_page_; }
  [[nodiscard]] ClusterPage* clusterPage() const { return cluster_page_; }
  [[nodiscard]] GridExplorerPage* gridExplorerPage() const { return grid_page_; }
  [[nodiscard]] PlanPage* planPage() const { return plan_page_; }
  [[nodiscard]] ExportPage* exportPage() const { return export_page_; }
  [[nodiscard]] RunsPage* runsPage() const { return runs_page_; }
  [[nodiscard]] MeasuredPage* measuredPage() const { return measured_page_; }
  [[nodiscard]] TimelinePage* timelinePage() const { return timeline_page_; }
  [[nodiscard]] CollectivesPage* collectivesPage() const { return collectives_page_; }
  [[nodiscard]] QStackedWidget* pages() const { return pages_; }
  // Lays out the hidden pages while the GUI is idle.
  [[nodiscard]] PageWarmer* pageWarmer() const { return page_warmer_; }
  [[nodiscard]] QListWidget* sidebar() const { return sidebar_; }
  [[nodiscard]] QString statusGridText() const;
  // The connections to agents (one per agent) and the project's jobs on them.
  [[nodiscard]] RemoteAgents* remoteAgents() const { return remote_agents_; }
  [[nodiscard]] RemoteJobs* remoteJobs() const { return remote_jobs_; }
  // Run › Connections: the one dialog, shown (made at first use).
  ConnectionsDialog* showConnections();
  // Run › Profile: the dialog (nullptr when the project has no store yet; a box says why).
  ProfileDialog* showProfileDialog();

  // The pages, in sidebar order.
  enum class Page {
    Model = 0,
    Cluster = 1,
    GridExplorer = 2,
    Plan = 3,
    Export = 4,
    Runs = 5,
    Measured = 6,
    Timeline = 7,
    Collectives = 8
  };
  static constexpr int kPageCount = 9;
  void showPage(Page page);
  [[nodiscard]] Page currentPage() const;
  // The run the Measured, Timeline and Collectives pages show: the newest
  // complete run of the store until the user picks one (openRun, openTimeline,
  // openCollectives or selectRun); 0 when the store has none.
  [[nodiscard]] qint64 currentRun() const { return current_run_; }
  // Makes `run` the run those pages show (the shown one of them loads it now).
  void selectRun(qint64 run);
  // Waits in the event loop until the shown page (Measured, Timeline or
  // Collectives) shows the current run, for headless screenshots; true at once
  // on other pages or without a run; false after `timeout_ms`.
  bool waitUntilRunShown(int timeout_ms);
  // The measured-vs-predicted view of run `run` of the project's store.
  void openRun(qint64 run);
  // The timeline of run `run` of the project's store.
  void openTimeline(qint64 run);
  // Bus bandwidth of run `run`'s collective calls against the planner's model.
  void openCollectives(qint64 run);
  // "model", "cluster", "grid", "plan", "export", "runs", "measured", "timeline", "collectives".
  [[nodiscard]] static std::optional<Page> pageFromName(const QString& name);

  // No dialogs: on failure the loaded project stays as it was.
  [[nodiscard]] core::Status openProject(const QString& path);
  [[nodiscard]] core::Status saveProject();
  [[nodiscard]] core::Status saveProjectAs(const QString& path);
  // The project's trace store: `path` is opened (created when missing) and
  // stays the store until another is opened. Without one, a saved project's
  // store is <project>.runs.sqlite next to it, created at its first run.
  void openStore(const QString& path);
  [[nodiscard]] QString storePath() const;
  void newFromDefault();
  // Reads a shardscope.access/1 file off the GUI thread and applies its
  // measured histograms to the model's tables of the same name and rows, as
  // one undoable edit that also records the file in the project; the status
  // bar (and accessAttached) says which tables took it and why others did not.
  void attachAccessFile(const QString& path);

  // openProject, and on failure a message box naming the problem.
  void openProjectInteractive(const QString& path);

  // Asks to save unsaved changes; true when it is fine to discard the
  // project (saved, discarded or unmodified), false when the user cancelled.
  // Tests replace the question with setUnsavedChangesAnswer.
  bool maybeSave();
  enum class UnsavedAnswer { Ask, Save, Discard, Cancel };
  void setUnsavedChangesAnswer(UnsavedAnswer answer) { unsaved_answer_ = answer; }

 signals:
  // An access file was attached (`message` names the measured tables) or not (`ok` false).
  void accessAttached(bool ok, const QString& message);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private slots:
  void onNew();
  void onOpen();
  bool onSave();
  bool onSaveAs();
  void onAbout();
  void onOpenStore();
  void onProfile();
  void onConnections();
  void onRenameProject();
  void onImportTraces();
  void onImportTraceFolder();
  void onAttachAccess();
  void followProjectStore();
  void updateTitle();
  void updateStatus();
  void rebuildRecentMenu();

 private:
  void createActions();
  void showError(const QString& what, const core::Error& error);
  // main_window_runs.cpp: the run the measured pages follow.
  void findNewestRun();
  void followCurrentRun(Page page);
  void trackShownRuns();

  ProjectDocument* document_;
  PlanningSession* session_;
  RecentProjects* recent_;
  QStackedWidget* pages_;
  PageWarmer* page_warmer_ = nullptr;
  QListWidget* sidebar_;
  ModelPage* model_page_;
  ClusterPage* cluster_page_;
  GridExplorerPage* grid_page_;
  PlanPage* plan_page_;
  ExportPage* export_page_;
  RunsPage* runs_page_;
  MeasuredPage* measured_page_;
  TimelinePage* timeline_page_;
  CollectivesPage* collectives_page_;
  qint64 current_run_ = 0;     // the run the measured pages show (0: none yet)
  bool run_chosen_ = false;    // the user picked current_run_ (else it is the store's newest complete run)
  QString run_store_;          // the store current_run_ belongs to
  JobTracker* run_jobs_;       // the newest complete run, read off the GUI thread
  bool store_listed_ = false;  // the Runs page listed the store (or failed to)
  qint64 measured_shown_ = 0;  // the run each page last showed (or failed to)
  qint64 timeline_shown_ = 0;
  qint64 collectives_shown_ = 0;
  QMenu* recent_menu_ = nullptr;
  QLabel* status_project_;
  QLabel* status_world_;
  QLabel* status_grid_;
  QLabel* status_store_;
  UnsavedAnswer unsaved_answer_ = UnsavedAnswer::Ask;
  JobTracker* access_jobs_;
  RemoteAgents* remote_agents_;
  RemoteJobs* remote_jobs_;
  ConnectionsDialog* connections_ = nullptr;
};

}  // namespace shardscope::app
