#include "main_window.h"

#include <QAction>
#include <memory>
#include <QCloseEvent>
#include <QUndoStack>
#include <QApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QAbstractButton>
#include <QPushButton>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>

#include "about.h"
#include "shardscope/core/access.h"
#include "cluster_page.h"
#include "export_page.h"
#include "grid_explorer_page.h"
#include "model_page.h"
#include "page_warmer.h"
#include "plan_page.h"
#include "planning_session.h"
#include "profile_dialog.h"
#include "project_document.h"
#include "project_files.h"
#include "recent_projects.h"
#include "job_tracker.h"
#include "measured_page.h"
#include "measurement_sources.h"
#include "timeline_page.h"
#include "collectives_page.h"
#include "connections_dialog.h"
#include "remote_agents.h"
#include "remote_jobs.h"
#include "runs_page.h"

// Q_INIT_RESOURCE must be used outside any namespace. The resources live in
// this static library, so whoever makes a window makes sure they are loaded.
static void initShardScopeResources() { Q_INIT_RESOURCE(shardscope); }

namespace shardscope::app {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new ProjectDocument(this)),
      session_(new PlanningSession(document_, this)),
      recent_(new RecentProjects(this)),
      pages_(new QStackedWidget),
      sidebar_(new QListWidget),
      model_page_(new ModelPage(document_)),
      cluster_page_(new ClusterPage(document_)),
      grid_page_(new GridExplorerPage(session_)),
      plan_page_(new PlanPage(session_)),
      export_page_(new ExportPage(session_)),
      runs_page_(new RunsPage),
      measured_page_(new MeasuredPage(document_, session_)),
      timeline_page_(new TimelinePage),
      collectives_page_(new CollectivesPage(document_)),
      status_project_(new QLabel),
      status_world_(new QLabel),
      status_grid_(new QLabel),
      status_store_(new QLabel),
      remote_agents_(new RemoteAgents(this)),
      remote_jobs_(new RemoteJobs(remote_agents_, this)) {
  initShardScopeResources();
  setObjectName(QStringLiteral("ShardScopeMainWindow"));
  cluster_page_->setLocalClusterSource(localGpusSource());
  plan_page_->setMeasuredSource(storedPlanRunSource());
  access_jobs_ = new JobTracker(planningPool(), this);
  run_jobs_ = new JobTracker(planningPool(), this);
  connect(access_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    emit accessAttached(false, tr("Could not attach the access file: %1").arg(message));
  });
  setWindowIcon(QIcon(QStringLiteral(":/icons/shardscope.svg")));
  // Sidebar: one entry per page, in the order of Page.
  sidebar_->setObjectName(QStringLiteral("sidebar"));
  const std::pair<QWidget*, QString> pages[] = {
      {model_page_, tr("Model")},       {cluster_page_, tr("Cluster")},   {grid_page_, tr("Grid Explorer")},
      {plan_page_, tr("Plan")},         {export_page_, tr("Export")},     {runs_page_, tr("Runs")},
      {measured_page_, tr("Measured")}, {timeline_page_, tr("Timeline")}, {collectives_page_, tr("Collectives")}};
  for (const auto& [page, title] : pages) {
    pages_->addWidget(page);
    sidebar_->addItem(title);
  }
  sidebar_->setFrameShape(QFrame::NoFrame);
  sidebar_->setStyleSheet(QStringLiteral("QListWidget#sidebar::item { padding: 6px 10px; }"));
  sidebar_->setFixedWidth(sidebar_->sizeHintForColumn(0) + 48);
  sidebar_->setCurrentRow(0);
  connect(sidebar_, &QListWidget::currentRowChanged, pages_, &QStackedWidget::setCurrentIndex);
  page_warmer_ = new PageWarmer(pages_);  // hidden pages laid out while idle: a page switch is a paint
  runs_page_->setRemoteJobs(remote_jobs_);
  connect(runs_page_, &RunsPage::openRequested, this, &MainWindow::openRun);
  connect(runs_page_, &RunsPage::timelineRequested, this, &MainWindow::openTimeline);
  connect(runs_page_, &RunsPage::collectivesRequested, this, &MainWindow::openCollectives);
  // A measured page opened from the sidebar shows the current run (read when first shown, not before).
  connect(sidebar_, &QListWidget::currentRowChanged, this,
          [this](int row) { followCurrentRun(static_cast<Page>(row)); });
  // Every listing of the store: its newest complete run, unless the user picked one.
  connect(runs_page_, &RunsPage::listed, this, &MainWindow::findNewestRun);
  trackShownRuns();

  auto* central = new QWidget;
  auto* central_layout = new QHBoxLayout(central);
  central_layout->setContentsMargins(0, 0, 0, 0);
  central_layout->setSpacing(0);
  central_layout->addWidget(sidebar_);
  central_layout->addWidget(pages_, 1);
  setCentralWidget(central);

  status_project_->setObjectName(QStringLiteral("statusProject"));
  status_world_->setObjectName(QStringLiteral("statusWorldSize"));
  status_grid_->setObjectName(QStringLiteral("statusGrid"));
  statusBar()->addWidget(status_project_, 1);
  status_store_->setObjectName(QStringLiteral("statusStore"));
  statusBar()->addPermanentWidget(status_store_);
  statusBar()->addPermanentWidget(status_grid_);
  statusBar()->addPermanentWidget(status_world_);

  createActions();
  // The charts the Export page saves and puts in the HTML report.
  export_page_->setCharts(
      {{QStringLiteral("step"), tr("Step time per grid"), grid_page_->stepPlot()},
       {QStringLiteral("memory"), tr("Memory per GPU"), grid_page_->memoryPlot()},
       {QStringLiteral("imbalance"), tr("Load imbalance"), grid_page_->imbalancePlot()},
       {QStringLiteral("heatmap"), tr("Throughput per GPU over N \u00d7 M"), grid_page_->heatmapPlot()},
       {QStringLiteral("rank-load"), tr("Load per group rank"), plan_page_->rankLoadPlot()},
       {QStringLiteral("placement"), tr("Placement: tables \u00d7 group ranks"), plan_page_->placementPlot()}});

  connect(document_, &ProjectDocument::projectChanged, this, &MainWindow::updateTitle);
  connect(document_, &ProjectDocument::projectChanged, this, &MainWindow::updateStatus);
  connect(document_, &ProjectDocument::filePathChanged, this, &MainWindow::updateTitle);
  connect(document_, &ProjectDocument::filePathChanged, this, &MainWindow::updateStatus);
  connect(document_, &ProjectDocument::modifiedChanged, this, &QWidget::setWindowModified);
  connect(session_, &PlanningSession::chosenChanged, this, &MainWindow::updateStatus);
  connect(session_, &PlanningSession::sweepStarted, this, &MainWindow::updateStatus);
  connect(document_, &ProjectDocument::filePathChanged, this, &MainWindow::followProjectStore);
  connect(document_, &ProjectDocument::projectChanged, this, &MainWindow::followProjectStore);
  connect(recent_, &RecentProjects::changed, this, &MainWindow::rebuildRecentMenu);
  updateTitle();
  updateStatus();
  rebuildRecentMenu();
}

namespace {

// One menu entry; shortcuts are set explicitly (Qt 6.4 deprecates the
// addAction overloads that take them last).
template <class Receiver, class Slot>
QAction* addMenuAction(QMenu* menu, const QString& text, const Receiver* receiver, Slot slot,
                       const QKeySequence& shortcut = {}) {
  auto* action = new QAction(text, menu);
  action->setShortcut(shortcut);
  QObject::connect(action, &QAction::triggered, receiver, slot);
  menu->addAction(action);
  return action;
}

}  // namespace

void MainWindow::createActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  addMenuAction(file, tr("&New from Default"), this, &MainWindow::onNew, QKeySequence::New);
  addMenuAction(file, tr("&Open\u2026"), this, &MainWindow::onOpen, QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  addMenuAction(file, tr("&Save"), this, &MainWindow::onSave, QKeySequence::Save);
  // QKeySequence::SaveAs is empty on some platforms (and offscreen): Ctrl+Shift+S there.
  const QKeySequence save_as =
      QKeySequence::keyBindings(QKeySequence::SaveAs).value(0, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  addMenuAction(file, tr("Save &As\u2026"), this, &MainWindow::onSaveAs, save_as)
      ->setObjectName(QStringLiteral("actionSaveAs"));
  file->addSeparator();
  addMenuAction(file, tr("Open Trace S&tore\u2026"), this, &MainWindow::onOpenStore)
      ->setObjectName(QStringLiteral("actionOpenStore"));
  addMenuAction(file, tr("&Import Traces\u2026"), this, &MainWindow::onImportTraces, QKeySequence(Qt::CTRL | Qt::Key_I))
      ->setObjectName(QStringLiteral("actionImportTraces"));
  addMenuAction(file, tr("Attach Access &File\u2026"), this, &MainWindow::onAttachAccess)
      ->setObjectName(QStringLiteral("actionAttachAccess"));
  addMenuAction(file, tr("Import Trace &Folder\u2026"), this, &MainWindow::onImportTraceFolder)
      ->setObjectName(QStringLiteral("actionImportTraceFolder"));
  file->addSeparator();
  // Explicit Ctrl+Q: QKeySequence::Quit is empty on some platforms.
  addMenuAction(file, tr("&Quit"), this, &QWidget::close, QKeySequence(Qt::CTRL | Qt::Key_Q))
      ->setMenuRole(QAction::QuitRole);

  QMenu* edit = menuBar()->addMenu(tr("&Edit"));
  QAction* undo = document_->undoStack()->createUndoAction(edit, tr("&Undo"));
  undo->setShortcut(QKeySequence::Undo);
  undo->setObjectName(QStringLiteral("actionUndo"));
  QAction* redo = document_->undoStack()->createRedoAction(edit, tr("&Redo"));
  redo->setShortcut(QKeySequence::Redo);
  redo->setObjectName(QStringLiteral("actionRedo"));
  edit->addAction(undo);
  edit->addAction(redo);
  edit->addSeparator();
  addMenuAction(edit, tr("Re&name Project\u2026"), this, &MainWindow::onRenameProject)
      ->setObjectName(QStringLiteral("actionRenameProject"));

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (int i = 0; i < kPageCount; ++i) {
    auto* action = new QAction(sidebar_->item(i)->text(), view);
    action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    connect(action, &QAction::triggered, this, [this, i] { sidebar_->setCurrentRow(i); });
    view->addAction(action);
  }
  view->addSeparator();
  addMenuAction(view, tr("Plan &Again"), session_, &PlanningSession::rerun, QKeySequence(Qt::Key_F5));
  addMenuAction(view, tr("&Cancel Planning"), session_, &PlanningSession::cancel, QKeySequence(Qt::Key_Escape));

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  addMenuAction(run, tr("&Profile\u2026"), this, &MainWindow::onProfile, QKeySequence(Qt::CTRL | Qt::Key_R))
      ->setObjectName(QStringLiteral("actionProfile"));
  addMenuAction(run, tr("&Connections\u2026"), this, &MainWindow::onConnections)
      ->setObjectName(QStringLiteral("actionConnections"));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  addMenuAction(help, tr("&About ShardScope"), this, &MainWindow::onAbout)->setMenuRole(QAction::AboutRole);
  addMenuAction(help, tr("About &Qt"), qApp, &QApplication::aboutQt)->setMenuRole(QAction::AboutQtRole);
}

core::Status MainWindow::openProject(const QString& path) {
  core::Status opened = document_->open(path);
  if (opened) recent_->add(document_->filePath());
  return opened;
}

core::Status MainWindow::saveProject() {
  core::Status saved = document_->save();
  if (saved) recent_->add(document_->filePath());
  return saved;
}

core::Status MainWindow::saveProjectAs(const QString& path) {
  // A recorded store stays the same file: its relative path is rewritten for the new folder.
  const QString recorded = QString::fromStdString(document_->project().trace_store);
  if (!recorded.isEmpty() && !QFileInfo(recorded).isAbsolute() && !storePath().isEmpty()) {
    core::Project p = document_->project();
    p.trace_store = QFileInfo(path).absoluteDir().relativeFilePath(storePath()).toStdString();
    if (p.trace_store != document_->project().trace_store) document_->edit(std::move(p), tr("Keep trace store"));
  }
  core::Status saved = document_->saveAs(path);
  if (saved) recent_->add(document_->filePath());
  return saved;
}

void MainWindow::showPage(Page page) { sidebar_->setCurrentRow(static_cast<int>(page)); }

MainWindow::Page MainWindow::currentPage() const { return static_cast<Page>(sidebar_->currentRow()); }

void MainWindow::newFromDefault() { document_->resetToDefault(); }

std::optional<MainWindow::Page> MainWindow::pageFromName(const QString& name) {
  static const char* const names[] = {"model", "cluster",  "grid",     "plan",       "export",
                                      "runs",  "measured", "timeline", "collectives"};
  static_assert(std::size(names) == kPageCount);
  for (int i = 0; i < kPageCount; ++i)
    if (name == QLatin1String(names[i])) return static_cast<Page>(i);
  return std::nullopt;
}

QString MainWindow::statusGridText() const { return status_grid_->text(); }

bool MainWindow::maybeSave() {
  if (!document_->isModified()) return true;
  UnsavedAnswer answer = unsaved_answer_;
  if (answer == UnsavedAnswer::Ask) {
    QMessageBox box(QMessageBox::Warning, tr("ShardScope"),
                    tr("The project \u201c%1\u201d has unsaved changes.").arg(document_->displayName()),
                    QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, this);
    box.setInformativeText(tr("Save them before continuing?"));
    box.setDefaultButton(QMessageBox::Save);
    const int button = box.exec();
    answer = button == QMessageBox::Save      ? UnsavedAnswer::Save
             : button == QMessageBox::Discard ? UnsavedAnswer::Discard
                                              : UnsavedAnswer::Cancel;
  }
  switch (answer) {
    case UnsavedAnswer::Save:
      return onSave();
    case UnsavedAnswer::Discard:
      return true;
    default:
      return false;
  }
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (maybeSave()) {
    event->accept();
  } else {
    event->ignore();
  }
}

void MainWindow::onNew() {
  if (maybeSave()) newFromDefault();
}

void MainWindow::openProjectInteractive(const QString& path) {
  if (!maybeSave()) return;
  core::Status opened = openProject(path);
  if (!opened) showError(tr("Could not open the project %1.").arg(QFileInfo(path).fileName()), opened.error());
}

void MainWindow::onOpen() {
  const QString dir = document_->filePath().isEmpty()
                          ? QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                          : QFileInfo(document_->filePath()).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Open Project"), dir, projectFileFilter());
  if (!path.isEmpty()) openProjectInteractive(path);
}

bool MainWindow::onSave() {
  if (document_->filePath().isEmpty()) return onSaveAs();
  core::Status saved = saveProject();
  if (!saved) showError(tr("Could not save the project."), saved.error());
  return saved.ok();
}

bool MainWindow::onSaveAs() {
  QString suggestion = document_->filePath();
  if (suggestion.isEmpty()) {
    suggestion = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation) + QLatin1Char('/') +
                 document_->displayName() + QStringLiteral(".shardscope");
  }
  QString path = QFileDialog::getSaveFileName(this, tr("Save Project As"), suggestion, projectFileFilter());
  if (path.isEmpty()) return false;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".shardscope");
  core::Status saved = saveProjectAs(path);
  if (!saved) showError(tr("Could not save the project as %1.").arg(QFileInfo(path).fileName()), saved.error());
  return saved.ok();
}

void MainWindow::onAbout() { showAboutDialog(this); }

void MainWindow::openStore(const QString& path) {
  // Recorded in the project (relative to its folder when it has one), so reopening it finds the store again.
  const QString project = document_->filePath();
  const QString given = project.isEmpty()
                            ? QFileInfo(path).absoluteFilePath()
                            : QFileInfo(project).absoluteDir().relativeFilePath(QFileInfo(path).absoluteFilePath());
  core::Project p = document_->project();
  p.trace_store = given.toStdString();
  store_listed_ = false;
  runs_page_->setStorePath(QFileInfo(path).absoluteFilePath(), /*create=*/true);
  document_->edit(std::move(p), tr("Use trace store %1").arg(QFileInfo(path).fileName()));
  followProjectStore();
}

QString MainWindow::storePath() const { return runs_page_->storePath(); }

void MainWindow::followProjectStore() {
  // The project's store: the one it records (relative to its folder), else <project>.runs.sqlite next to it.
  const QString project = document_->filePath();
  const QString recorded = QString::fromStdString(document_->project().trace_store);
  QString store;
  if (!recorded.isEmpty())
    store = project.isEmpty() || QFileInfo(recorded).isAbsolute()
                ? recorded
                : QDir::cleanPath(QFileInfo(project).absoluteDir().filePath(recorded));
  else if (!project.isEmpty())
    store = QFileInfo(project).absoluteDir().filePath(QFileInfo(project).completeBaseName() +
                                                      QStringLiteral(".runs.sqlite"));
  if (store != runs_page_->storePath()) {
    store_listed_ = false;
    runs_page_->setStorePath(store, /*create=*/!recorded.isEmpty());
  }
  measured_page_->setStorePath(storePath());
  timeline_page_->setStorePath(storePath());
  collectives_page_->setStorePath(storePath());
  plan_page_->setStorePath(storePath());
  remote_jobs_->setStorePath(storePath());
  updateStatus();
  updateTitle();
}

void MainWindow::onRenameProject() {
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Rename Project"), tr("Project name:"), QLineEdit::Normal,
                                             document_->displayName(), &ok)
                           .trimmed();
  if (!ok || name.isEmpty()) return;
  core::Project renamed = document_->project();
  renamed.name = name.toStdString();
  document_->edit(std::move(renamed), tr("Rename project"));
}

void MainWindow::openTimeline(qint64 run) {
  current_run_ = run;
  run_chosen_ = true;
  run_store_ = storePath();
  timeline_page_->setStorePath(storePath());
  timeline_page_->showRun(run);
  showPage(Page::Timeline);
}

void MainWindow::openCollectives(qint64 run) {
  current_run_ = run;
  run_chosen_ = true;
  run_store_ = storePath();
  collectives_page_->setStorePath(storePath());
  collectives_page_->showRun(run);
  showPage(Page::Collectives);
}

void MainWindow::openRun(qint64 run) {
  current_run_ = run;
  run_chosen_ = true;
  run_store_ = storePath();
  measured_page_->setStorePath(storePath());
  measured_page_->showRun(run);
  plan_page_->refreshMeasured();
  showPage(Page::Measured);
}

void MainWindow::onAttachAccess() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Attach Access File"), {},
                                                    tr("Access files, shardscope.access/1 (*.json);;All files (*)"));
  if (file.isEmpty()) return;
  // Say how it went once it is done (a window-modal box that does not block the GUI thread).
  auto connection = std::make_shared<QMetaObject::Connection>();
  *connection = connect(this, &MainWindow::accessAttached, this, [this, connection](bool ok, const QString& message) {
    disconnect(*connection);
    auto* box = new QMessageBox(ok ? QMessageBox::Information : QMessageBox::Warning, tr("Attach Access File"), message,
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
  });
  attachAccessFile(file);
}

void MainWindow::attachAccessFile(const QString& path) {
  access_jobs_->start(
      [file = localPath(path)](JobContext&) { return core::loadAccessFile(file); },
      [this, path](core::AccessFile access) {
        auto attached = core::attachAccess(document_->project(), access, localPath(path));
        const QString name = QFileInfo(path).fileName();
        QString message = tr("%1: measured access for %n table(s)", "", attached.measured.size()).arg(name);
        if (!attached.problems.empty())
          message +=
              tr("; not applied: %1").arg(QString::fromStdString(attached.problems.front())) +
              (attached.problems.size() > 1 ? tr(" (and %1 more)").arg(attached.problems.size() - 1) : QString());
        document_->edit(std::move(attached.project), tr("Attach measured access from %1").arg(name));
        emit accessAttached(true, message);
      });
}

void MainWindow::onProfile() { showProfileDialog(); }

ProfileDialog* MainWindow::showProfileDialog() {
  if (storePath().isEmpty()) {
    QMessageBox::information(this, tr("Profile"),
                             tr("Runs go into the project's trace store: save the project (its store is created "
                                "next to it) or open one with File \u203a Open Trace Store\u2026 first."));
    return nullptr;
  }
  std::optional<core::ShardPlan> shown;
  if (const planner::GridResult* grid = session_->planGrid()) shown = grid->plan;
  auto* dialog = new ProfileDialog(session_->hasResult() ? session_->plannedProject() : document_->project(), shown,
                                   storePath(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setRemoteTargets(remote_agents_, remote_jobs_);
  connect(dialog, &ProfileDialog::profiled, this, [this](qint64 run) {
    runs_page_->setStorePath(storePath(), /*create=*/true);
    openRun(run);
  });
  connect(dialog, &ProfileDialog::failed, runs_page_, &RunsPage::refresh);
  connect(dialog, &ProfileDialog::submitted, this, [this] { showPage(Page::Runs); });
  dialog->show();
  return dialog;
}

void MainWindow::onConnections() { showConnections(); }

ConnectionsDialog* MainWindow::showConnections() {
  if (connections_ == nullptr) connections_ = new ConnectionsDialog(remote_agents_, this);
  connections_->show();
  connections_->raise();
  return connections_;
}

void MainWindow::onImportTraces() {
  if (storePath().isEmpty()) {
    QMessageBox::information(this, tr("Import Traces"),
                             tr("Imports go into the project's trace store: save the project or open a store with "
                                "File \u203a Open Trace Store\u2026 first."));
    return;
  }
  const QString kineto = tr("PyTorch profiler / Kineto traces (*.json *.json.gz)");
  const QString nsys = tr("Nsight Systems SQLite exports (*.sqlite *.db)");
  const QString nccl = tr("NCCL profiler-plugin traces (*.jsonl)");
  QString filter;
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Import Traces (one file per rank)"), QFileInfo(storePath()).absolutePath(),
      kineto + QStringLiteral(";;") + nsys + QStringLiteral(";;") + nccl, &filter);
  if (files.isEmpty()) return;
  showPage(Page::Runs);
  runs_page_->importTraces(filter == nsys   ? QStringLiteral("nsys")
                           : filter == nccl ? QStringLiteral("nccl")
                                            : QStringLiteral("kineto"),
                           files);
}

void MainWindow::onImportTraceFolder() {
  if (storePath().isEmpty()) {
    onImportTraces();  // says why not
    return;
  }
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Import a Folder of Traces (one file per rank)"),
                                                           QFileInfo(storePath()).absolutePath());
  if (folder.isEmpty()) return;
  QMessageBox ask(QMessageBox::Question, tr("Import Trace Folder"), tr("Which traces does the folder hold?"),
                  QMessageBox::Cancel, this);
  QAbstractButton* kineto = ask.addButton(tr("PyTorch profiler (Kineto)"), QMessageBox::AcceptRole);
  QAbstractButton* nsys = ask.addButton(tr("Nsight Systems exports"), QMessageBox::AcceptRole);
  QAbstractButton* nccl = ask.addButton(tr("NCCL plugin traces"), QMessageBox::AcceptRole);
  ask.exec();
  const QAbstractButton* chosen = ask.clickedButton();
  if (chosen != kineto && chosen != nsys && chosen != nccl) return;
  showPage(Page::Runs);
  runs_page_->importTraces(chosen == nsys   ? QStringLiteral("nsys")
                           : chosen == nccl ? QStringLiteral("nccl")
                                            : QStringLiteral("kineto"),
                           {folder});
}

void MainWindow::onOpenStore() {
  const QString dir = storePath().isEmpty() ? (document_->filePath().isEmpty()
                                                   ? QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                                                   : QFileInfo(document_->filePath()).absolutePath())
                                            : QFileInfo(storePath()).absolutePath();
  // A save dialog that does not ask about overwriting: pick a store, or name a new one.
  const QString path = QFileDialog::getSaveFileName(this, tr("Open or Create a Trace Store"), dir,
                                                    tr("Trace stores (*.sqlite *.db);;All files (*)"), nullptr,
                                                    QFileDialog::DontConfirmOverwrite);
  if (!path.isEmpty()) openStore(path);
}

void MainWindow::showError(const QString& what, const core::Error& error) {
  QMessageBox box(QMessageBox::Critical, tr("ShardScope"), what, QMessageBox::Ok, this);
  box.setInformativeText(QString::fromStdString(error.message));
  box.exec();
}

void MainWindow::updateTitle() {
  // "[*]" is where Qt shows the modified marker.
  const QString store =
      storePath().isEmpty() ? QString() : QStringLiteral(" \u2014 ") + QFileInfo(storePath()).fileName();
  setWindowTitle(tr("%1[*]%2 \u2014 ShardScope").arg(document_->displayName(), store));
  setWindowModified(document_->isModified());
}

void MainWindow::updateStatus() {
  const auto& cluster = document_->project().cluster;
  const QString file = document_->filePath().isEmpty() ? tr("not saved") : document_->filePath();
  status_project_->setText(tr("Project: %1 (%2)").arg(document_->displayName(), file));
  status_world_->setText(
      tr("N = %1 GPUs (%2 \u00d7 %3)").arg(cluster.worldSize()).arg(cluster.nodes).arg(cluster.gpus_per_node));
  const QString store = runs_page_->storePath();
  status_store_->setText(store.isEmpty() ? tr("no trace store") : tr("Store: %1").arg(QFileInfo(store).fileName()));
  status_store_->setToolTip(store);
  if (session_->isRunning()) {
    status_grid_->setText(tr("planning\u2026"));
  } else if (const planner::GridResult* grid = session_->planGrid()) {
    status_grid_->setText((session_->planGridIsChosen() ? tr("Chosen grid: %1") : tr("Best grid (none chosen): %1"))
                              .arg(PlanningSession::describe(*grid)));
  } else {
    status_grid_->setText(session_->hasResult() ? tr("no grid fits") : QString());
  }
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList paths = recent_->paths();
  for (const QString& path : paths) {
    QAction* action = recent_menu_->addAction(QFileInfo(path).fileName());
    connect(action, &QAction::triggered, this, [this, path] { openProjectInteractive(path); });
    action->setToolTip(path);
    action->setStatusTip(path);
  }
  if (!paths.isEmpty()) recent_menu_->addSeparator();
  QAction* clear = addMenuAction(recent_menu_, tr("Clear List"), recent_, &RecentProjects::clear);
  clear->setEnabled(!paths.isEmpty());
}

}  // namespace shardscope::app
