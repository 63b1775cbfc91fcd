#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>

#include "about.h"
#include "grid_explorer_page.h"
#include "project_document.h"
#include "project_files.h"
#include "project_overview_page.h"
#include "recent_projects.h"

// Q_INIT_RESOURCE must be used outside any namespace. The resources live in
// this static library, so whoever makes a window makes sure they are loaded.
static void initShardScopeResources() { Q_INIT_RESOURCE(shardscope); }

namespace shardscope::app {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      document_(new ProjectDocument(this)),
      recent_(new RecentProjects(this)),
      pages_(new QStackedWidget),
      sidebar_(new QListWidget),
      overview_page_(new ProjectOverviewPage(document_)),
      grid_page_(new GridExplorerPage(document_)),
      status_project_(new QLabel),
      status_world_(new QLabel),
      status_grid_(new QLabel) {
  initShardScopeResources();
  setObjectName(QStringLiteral("ShardScopeMainWindow"));
  setWindowIcon(QIcon(QStringLiteral(":/icons/shardscope.svg")));
  pages_->addWidget(overview_page_);
  pages_->addWidget(grid_page_);

  // Sidebar: one entry per page, in the order of Page.
  sidebar_->setObjectName(QStringLiteral("sidebar"));
  sidebar_->addItem(tr("Model"));
  sidebar_->addItem(tr("Grid Explorer"));
  sidebar_->setFrameShape(QFrame::NoFrame);
  sidebar_->setStyleSheet(QStringLiteral("QListWidget#sidebar::item { padding: 6px 10px; }"));
  sidebar_->setFixedWidth(sidebar_->sizeHintForColumn(0) + 48);
  sidebar_->setCurrentRow(0);
  connect(sidebar_, &QListWidget::currentRowChanged, pages_, &QStackedWidget::setCurrentIndex);

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
  statusBar()->addPermanentWidget(status_grid_);
  statusBar()->addPermanentWidget(status_world_);

  createActions();

  connect(document_, &ProjectDocument::projectChanged, this, &MainWindow::updateTitle);
  connect(document_, &ProjectDocument::projectChanged, this, &MainWindow::updateStatus);
  connect(document_, &ProjectDocument::filePathChanged, this, &MainWindow::updateTitle);
  connect(document_, &ProjectDocument::filePathChanged, this, &MainWindow::updateStatus);
  connect(document_, &ProjectDocument::modifiedChanged, this, &QWidget::setWindowModified);
  connect(grid_page_, &GridExplorerPage::gridChosen, status_grid_, &QLabel::setText);
  // A new sweep forgets the grid chosen from the old one.
  connect(grid_page_, &GridExplorerPage::sweepFinished, status_grid_, &QLabel::clear);
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
  addMenuAction(file, tr("&New from Default"), this, &MainWindow::newFromDefault, QKeySequence::New);
  addMenuAction(file, tr("&Open\u2026"), this, &MainWindow::onOpen, QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  file->addSeparator();
  addMenuAction(file, tr("&Save"), this, &MainWindow::onSave, QKeySequence::Save);
  addMenuAction(file, tr("Save &As\u2026"), this, &MainWindow::onSaveAs, QKeySequence::SaveAs);
  file->addSeparator();
  // Explicit Ctrl+Q: QKeySequence::Quit is empty on some platforms.
  addMenuAction(file, tr("&Quit"), this, &QWidget::close, QKeySequence(Qt::CTRL | Qt::Key_Q))
      ->setMenuRole(QAction::QuitRole);

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
  core::Status saved = document_->saveAs(path);
  if (saved) recent_->add(document_->filePath());
  return saved;
}

void MainWindow::showPage(Page page) { sidebar_->setCurrentRow(static_cast<int>(page)); }

void MainWindow::newFromDefault() { document_->resetToDefault(); }

void MainWindow::openProjectInteractive(const QString& path) {
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

void MainWindow::onSave() {
  if (document_->filePath().isEmpty()) {
    onSaveAs();
    return;
  }
  core::Status saved = saveProject();
  if (!saved) showError(tr("Could not save the project."), saved.error());
}

void MainWindow::onSaveAs() {
  QString suggestion = document_->filePath();
  if (suggestion.isEmpty()) {
    suggestion = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation) + QLatin1Char('/') +
                 document_->displayName() + QStringLiteral(".shardscope");
  }
  QString path = QFileDialog::getSaveFileName(this, tr("Save Project As"), suggestion, projectFileFilter());
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QStringLiteral(".shardscope");
  core::Status saved = saveProjectAs(path);
  if (!saved) showError(tr("Could not save the project as %1.").arg(QFileInfo(path).fileName()), saved.error());
}

void MainWindow::onAbout() { showAboutDialog(this); }

void MainWindow::showError(const QString& what, const core::Error& error) {
  QMessageBox box(QMessageBox::Critical, tr("ShardScope"), what, QMessageBox::Ok, this);
  box.setInformativeText(QString::fromStdString(error.message));
  box.exec();
}

void MainWindow::updateTitle() {
  // "[*]" is where Qt shows the modified marker.
  setWindowTitle(tr("%1[*] \u2014 ShardScope").arg(document_->displayName()));
  setWindowModified(document_->isModified());
}

void MainWindow::updateStatus() {
  const auto& cluster = document_->project().cluster;
  const QString file = document_->filePath().isEmpty() ? tr("not saved") : document_->filePath();
  status_project_->setText(tr("Project: %1 (%2)").arg(document_->displayName(), file));
  status_world_->setText(tr("N = %1 GPUs (%2 \u00d7 %3)")
                             .arg(cluster.worldSize())
                             .arg(cluster.nodes)
                             .arg(cluster.gpus_per_node));
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
