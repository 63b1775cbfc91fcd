// The ShardScope main window: menus, a sidebar switching a stack of pages
// (Model overview and Grid Explorer today; Cluster, Plan and Export come
// later) and a status bar. File operations have a non-interactive form returning a Status
// (used by tests and the command line) and a menu slot that adds the dialogs.
#pragma once

#include <QMainWindow>

#include "shardscope/core/result.h"

class QLabel;
class QListWidget;
class QMenu;
class QStackedWidget;

namespace shardscope::app {

class GridExplorerPage;
class ProjectDocument;
class ProjectOverviewPage;
class RecentProjects;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);

  [[nodiscard]] ProjectDocument* document() const { return document_; }
  [[nodiscard]] ProjectOverviewPage* overviewPage() const { return overview_page_; }
  [[nodiscard]] GridExplorerPage* gridExplorerPage() const { return grid_page_; }
  [[nodiscard]] QStackedWidget* pages() const { return pages_; }
  [[nodiscard]] QListWidget* sidebar() const { return sidebar_; }

  // The pages, in sidebar order.
  enum class Page { Model = 0, GridExplorer = 1 };
  void showPage(Page page);

  // No dialogs: on failure the loaded project stays as it was.
  [[nodiscard]] core::Status openProject(const QString& path);
  [[nodiscard]] core::Status saveProject();
  [[nodiscard]] core::Status saveProjectAs(const QString& path);
  void newFromDefault();

  // openProject, and on failure a message box naming the problem.
  void openProjectInteractive(const QString& path);

 private slots:
  void onOpen();
  void onSave();
  void onSaveAs();
  void onAbout();
  void updateTitle();
  void updateStatus();
  void rebuildRecentMenu();

 private:
  void createActions();
  void showError(const QString& what, const core::Error& error);

  ProjectDocument* document_;
  RecentProjects* recent_;
  QStackedWidget* pages_;
  QListWidget* sidebar_;
  ProjectOverviewPage* overview_page_;
  GridExplorerPage* grid_page_;
  QMenu* recent_menu_ = nullptr;
  QLabel* status_project_;
  QLabel* status_world_;
  QLabel* status_grid_;
};

}  // namespace shardscope::app
