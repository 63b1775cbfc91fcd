#include "runs_page.h"

#include <QFile>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "job_tracker.h"
#include "run_list_model.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/workflow/run_catalog.h"

namespace shardscope::app {

namespace st = core::store;

namespace {

std::string localPath(const QString& path) { return QFile::encodeName(path).toStdString(); }

}  // namespace

RunsPage::RunsPage(QWidget* parent)
    : QWidget(parent),
      model_(new RunListModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView),
      header_(new QLabel),
      message_(new QLabel),
      refresh_(new QPushButton(tr("Refresh"))),
      delete_(new QPushButton(tr("Delete\u2026"))),
      list_jobs_(new JobTracker(planningPool(), this)),
      edit_jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("RunsPage"));
  header_->setObjectName(QStringLiteral("runsHeader"));
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setObjectName(QStringLiteral("runsMessage"));
  message_->setWordWrap(true);
  refresh_->setObjectName(QStringLiteral("runsRefresh"));
  delete_->setObjectName(QStringLiteral("runsDelete"));

  proxy_->setSourceModel(model_);
  proxy_->setSortRole(RunListModel::kSortRole);
  table_->setObjectName(QStringLiteral("runsTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(RunListModel::Id, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  table_->setAlternatingRowColors(true);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(false);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(RunListModel::Name, QHeaderView::Stretch);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(header_, 1);
  buttons->addWidget(refresh_);
  buttons->addWidget(delete_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(table_, 1);
  layout->addWidget(message_);

  connect(refresh_, &QPushButton::clicked, this, &RunsPage::refresh);
  connect(delete_, &QPushButton::clicked, this, &RunsPage::onDeleteClicked);
  connect(model_, &RunListModel::renameRequested, this, &RunsPage::renameRun);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPage::updateButtons);
  connect(list_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    model_->setRows({});
    showMessage(message, true);
    updateButtons();
    emit failed(message);
  });
  connect(edit_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    showMessage(message, true);
    refresh();  // the table shows what the store holds, not the edit that failed
    emit edited(message);
  });
  setStorePath({});
}

RunsPage::~RunsPage() = default;

void RunsPage::setStorePath(const QString& path, bool create) {
  store_path_ = path;
  create_ = create;
  header_->setText(path.isEmpty() ? tr("No trace store: open one with File \u203a Open Trace Store\u2026, or save "
                                       "the project to get one next to it.")
                                  : tr("Trace store: %1").arg(path));
  refresh();
}

void RunsPage::refresh() {
  if (store_path_.isEmpty()) {
    list_jobs_->supersede();
    model_->setRows({});
    updateButtons();
    return;
  }
  if (!create_ && !QFile::exists(store_path_)) {
    list_jobs_->supersede();
    model_->setRows({});
    showMessage(tr("No runs yet: the store is created next to the project at its first profile or import."), false);
    updateButtons();
    emit listed(0);
    return;
  }
  showMessage(tr("Reading the store\u2026"), false);
  const std::string path = localPath(store_path_);
  list_jobs_->start(
      [path](JobContext&) -> core::Result<std::vector<profiler::RunRow>> {
        auto store = st::openStore(path, st::OpenMode::Create);
        if (!store) return store.error();
        return profiler::listRunRows(*store);
      },
      [this](std::vector<profiler::RunRow> rows) {
        const int n = static_cast<int>(rows.size());
        model_->setRows(std::move(rows));
        showMessage(n == 0 ? tr("No runs yet: profile a plan or import traces.") : tr("%n run(s).", nullptr, n), false);
        updateButtons();
        emit listed(n);
      });
}

void RunsPage::renameRun(qint64 run, const QString& label) {
  const std::string path = localPath(store_path_);
  const std::string text = label.toStdString();
  edit_jobs_->start(
      [path, run, text](JobContext&) -> core::Status {
        auto store = st::openStore(path, st::OpenMode::ReadWrite);
        if (!store) return store.error();
        return store->renameRun(st::RunId{run}, text);
      },
      [this, run](core::Ok) {
        showMessage(tr("Run %1 renamed.").arg(run), false);
        emit edited({});
      });
}

void RunsPage::deleteRun(qint64 run) {
  const std::string path = localPath(store_path_);
  edit_jobs_->start(
      [path, run](JobContext&) -> core::Status {
        auto store = st::openStore(path, st::OpenMode::ReadWrite);
        if (!store) return store.error();
        return store->deleteRun(st::RunId{run});
      },
      [this, run](core::Ok) {
        refresh();
        showMessage(tr("Run %1 deleted.").arg(run), false);
        emit edited({});
      });
}

QList<qint64> RunsPage::selectedRuns() const {
  QList<qint64> runs;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
    if (const profiler::RunRow* r = model_->runAt(proxy_->mapToSource(index).row()))
      runs.append(static_cast<qint64>(r->id));
  }
  return runs;
}

void RunsPage::onDeleteClicked() {
  const QList<qint64> runs = selectedRuns();
  if (runs.size() != 1) return;
  const profiler::RunRow* r = model_->runAt(model_->rowOf(runs.front()));
  if (r == nullptr) return;
  const auto answer = QMessageBox::question(
      this, tr("Delete run"),
      tr("Delete run %1 (%2) and everything recorded for it from %3? Other runs are not touched. This cannot be "
         "undone.")
          .arg(runs.front())
          .arg(QString::fromStdString(r->label.empty() ? r->kind : r->label))
          .arg(store_path_),
      QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
  if (answer == QMessageBox::Yes) deleteRun(runs.front());
}

void RunsPage::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #c02020;") : QString());
}

void RunsPage::updateButtons() {
  refresh_->setEnabled(!store_path_.isEmpty());
  delete_->setEnabled(selectedRuns().size() == 1);
}

}  // namespace shardscope::app
