#include "runs_page.h"

#include <QFile>
#include <QHBoxLayout>
#include <QFileDialog>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>

#include "shardscope/core/json_io.h"
#include "shardscope/profiler/workflow/stored_runs.h"
#include "comparison_view.h"
#include "job_tracker.h"
#include "project_files.h"
#include "remote_jobs.h"
#include "remote_rows.h"
#include "run_list_model.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/workflow/run_catalog.h"
#include "shardscope/profiler/workflow/run_comparison.h"
#include "shardscope/profiler/workflow/trace_import_job.h"

namespace shardscope::app {

namespace st = core::store;

RunsPage::RunsPage(QWidget* parent)
    : QWidget(parent),
      model_(new RunListModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView),
      header_(new QLabel),
      message_(new QLabel),
      refresh_(new QPushButton(tr("Refresh"))),
      delete_(new QPushButton(tr("Delete\u2026"))),
      compare_(new QPushButton(tr("Compare"))),
      open_(new QPushButton(tr("Measured vs Predicted"))),
      timeline_(new QPushButton(tr("Timeline"))),
      collectives_(new QPushButton(tr("Collectives"))),
      export_access_(new QPushButton(tr("Export Access\u2026"))),
      cancel_import_(new QPushButton(tr("Cancel Import"))),
      remote_(new QPushButton(tr("Cancel Remote Job"))),
      comparison_(new ComparisonView),
      list_jobs_(new JobTracker(planningPool(), this)),
      edit_jobs_(new JobTracker(planningPool(), this)),
      compare_jobs_(new JobTracker(planningPool(), this)),
      import_jobs_(new JobTracker(planningPool(), this)),
      export_jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("RunsPage"));
  header_->setObjectName(QStringLiteral("runsHeader"));
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setObjectName(QStringLiteral("runsMessage"));
  message_->setWordWrap(true);
  refresh_->setObjectName(QStringLiteral("runsRefresh"));
  delete_->setObjectName(QStringLiteral("runsDelete"));
  compare_->setObjectName(QStringLiteral("runsCompare"));
  compare_->setToolTip(tr("Select two runs to see them side by side"));
  open_->setObjectName(QStringLiteral("runsOpen"));
  open_->setToolTip(tr("Each rank's measured step beside the prediction of its plan (or double-click the run)"));
  setUpSecondaryWidgets();

  setUpTable();

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(header_, 1);
  cancel_import_->setObjectName(QStringLiteral("runsCancelImport"));
  cancel_import_->hide();
  buttons->addWidget(cancel_import_);
  buttons->addWidget(remote_);
  buttons->addWidget(refresh_);
  buttons->addWidget(open_);
  buttons->addWidget(timeline_);
  buttons->addWidget(collectives_);
  buttons->addWidget(export_access_);
  buttons->addWidget(compare_);
  buttons->addWidget(delete_);
  // The list above the comparison, the split movable: a long list or a close look at the charts.
  auto* split = new QSplitter(Qt::Vertical);
  split->setObjectName(QStringLiteral("runsSplit"));
  split->setChildrenCollapsible(false);
  split->addWidget(table_);
  split->addWidget(comparison_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(split, 1);
  layout->addWidget(message_);

  connect(refresh_, &QPushButton::clicked, this, &RunsPage::refresh);
  connect(delete_, &QPushButton::clicked, this, &RunsPage::onDeleteClicked);
  connect(compare_, &QPushButton::clicked, this, &RunsPage::onCompareClicked);
  connectExport();
  connect(open_, &QPushButton::clicked, this, [this] {
    if (const auto runs = selectedRuns(); runs.size() == 1) emit openRequested(runs.front());
  });
  connect(timeline_, &QPushButton::clicked, this, [this] {
    if (const auto runs = selectedRuns(); runs.size() == 1) emit timelineRequested(runs.front());
  });
  connect(collectives_, &QPushButton::clicked, this, [this] {
    if (const auto runs = selectedRuns(); runs.size() == 1) emit collectivesRequested(runs.front());
  });
  connect(table_, &QAbstractItemView::doubleClicked, this, [this](const QModelIndex& index) {
    if (index.flags() & Qt::ItemIsEditable) return;  // the label: renamed in place
    if (const auto runs = selectedRuns(); runs.size() == 1) emit openRequested(runs.front());
  });
  connect(cancel_import_, &QPushButton::clicked, this, &RunsPage::cancelImport);
  connect(import_jobs_, &JobTracker::progress, this, [this](quint64, int done, int total) {
    showMessage(tr("Importing\u2026 %1%").arg(total > 0 ? 100 * done / total : 0), false);
  });
  connect(import_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    cancel_import_->hide();
    showMessage(message, true);
    refresh();  // a run the import began is kept, marked failed
    emit imported(0, message);
  });
  connect(compare_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    showMessage(message, true);
    emit compared(message);
  });
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
        if (!after_listing_.isEmpty())
          showMessage(std::exchange(after_listing_, QString()), false);
        else
          showMessage(n == 0 ? tr("No runs yet: profile a plan or import traces.") : tr("%n run(s).", nullptr, n),
                      false);
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
        after_listing_ = tr("Run %1 deleted.").arg(run);
        refresh();
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

void RunsPage::importTraces(const QString& format, const QStringList& inputs) {
  profiler::TraceImportRequest request;
  request.format = format == QStringLiteral("nsys")   ? profiler::TraceFormat::Nsys
                   : format == QStringLiteral("nccl") ? profiler::TraceFormat::Nccl
                                                      : profiler::TraceFormat::Kineto;
  for (const QString& input : inputs) request.inputs.push_back(localPath(input));
  request.store = localPath(store_path_);
  request.progress_min_bytes = 0;
  cancel_import_->show();
  showMessage(tr("Importing %n file(s)\u2026", nullptr, static_cast<int>(inputs.size())), false);
  import_jobs_->start(
      [request](JobContext& job) -> core::Result<profiler::TraceImportOutcome> {
        // Progress in thousandths: the importer counts bytes, which overflow an int.
        const profiler::TraceImportProgress progress = [&job](std::uint64_t done, std::uint64_t total,
                                                              std::string_view) {
          if (total > 0) job.reportProgress(static_cast<int>(1000 * done / total), 1000);
        };
        return profiler::importTraces(request, progress, job.cancelFlag());
      },
      [this](profiler::TraceImportOutcome outcome) {
        cancel_import_->hide();
        create_ = true;
        const qint64 run = static_cast<qint64>(outcome.run);
        QString text = tr("Imported run %1: %n rank(s)", nullptr, static_cast<int>(outcome.ranks.size())).arg(run);
        if (!outcome.warnings.empty())
          text += tr("; %n warning(s), the first: %1", nullptr, static_cast<int>(outcome.warnings.size()))
                      .arg(QString::fromStdString(outcome.warnings.front()));
        after_listing_ = text;
        refresh();
        emit imported(run, {});
      });
}

void RunsPage::cancelImport() {
  if (import_jobs_->isRunning()) import_jobs_->cancel();
}

void RunsPage::onCompareClicked() {
  const QList<qint64> runs = selectedRuns();
  if (runs.size() == 2) compareRuns(std::min(runs[0], runs[1]), std::max(runs[0], runs[1]));
}

void RunsPage::compareRuns(qint64 a, qint64 b) {
  const std::string path = localPath(store_path_);
  showMessage(tr("Comparing runs %1 and %2\u2026").arg(a).arg(b), false);
  compare_jobs_->start(
      [path, a, b](JobContext&) -> core::Result<profiler::RunComparison> {
        auto store = st::openStore(path, st::OpenMode::ReadOnly);
        if (!store) return store.error();
        return profiler::compareRuns(*store, st::RunId{a}, st::RunId{b});
      },
      [this](const profiler::RunComparison& c) {
        comparison_->setComparison(c);
        comparison_->show();
        showMessage(c.warnings.empty() ? QString() : QString::fromStdString(c.warnings.front()), false);
        emit compared({});
      });
}

QTableWidget* RunsPage::comparisonTable() const { return comparison_->table(); }

QString RunsPage::messageText() const { return message_->text(); }

void RunsPage::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #c02020;") : QString());
}

void RunsPage::setUpTable() {
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
}

void RunsPage::setUpSecondaryWidgets() {
  comparison_->hide();
  timeline_->setObjectName(QStringLiteral("runsTimeline"));
  timeline_->setToolTip(tr("Every rank's spans on one time axis"));
  collectives_->setObjectName(QStringLiteral("runsCollectives"));
  collectives_->setToolTip(tr("Bus bandwidth of each collective call against the planner's model"));
  // The remote job's action (shown when one is selected) sits with the buttons.
  remote_->setObjectName(QStringLiteral("runsRemoteAction"));
  remote_->hide();
  connect(remote_, &QPushButton::clicked, this, &RunsPage::actOnSelectedRemoteJob);
}

void RunsPage::connectExport() {
  export_access_->setObjectName(QStringLiteral("runsExportAccess"));
  export_access_->setToolTip(
      tr("Save the ids the run looked up per table (shardscope.access/1): attach it to a project to plan from it"));
  connect(export_access_, &QPushButton::clicked, this, [this] {
    const auto runs = selectedRuns();
    if (runs.size() != 1) return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export Access"), QStringLiteral("run%1.access.json").arg(runs.front()), tr("Access files (*.json)"));
    if (!path.isEmpty()) exportAccess(runs.front(), path);
  });
  connect(export_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    showMessage(message, true);
    emit accessExported({}, message.isEmpty() ? tr("export failed") : message);
  });
}

void RunsPage::exportAccess(qint64 run, const QString& path) {
  export_jobs_->start(
      [store = localPath(store_path_), run, file = localPath(path)](JobContext&) -> core::Result<int> {
        auto access = profiler::runAccess(store, st::RunId{run});
        if (!access) return access.error();
        if (auto s = core::writeJsonFile(file, core::toJson(*access)); !s) return s.error();
        return static_cast<int>(access->tables.size());
      },
      [this, path, run](int tables) {
        showMessage(tr("Run %1: measured access of %2 tables written to %3").arg(run).arg(tables).arg(path), false);
        emit accessExported(path, {});
      });
}

void RunsPage::updateButtons() {
  refresh_->setEnabled(!store_path_.isEmpty());
  const auto selected = selectedRuns().size();
  delete_->setEnabled(selected == 1);
  open_->setEnabled(selected == 1);
  timeline_->setEnabled(selected == 1);
  collectives_->setEnabled(selected == 1);
  export_access_->setEnabled(selected == 1);
  compare_->setEnabled(selected == 2);
  const RemoteRow* remote = selectedRemoteRow();
  remote_->setVisible(remote != nullptr);
  if (remote == nullptr) return;
  const auto* job = remote_jobs_ != nullptr ? remote_jobs_->find(remote->address, remote->job) : nullptr;
  const auto phase = job != nullptr ? job->phase : RemoteJobs::Phase::Ended;
  remote_->setText(phase == RemoteJobs::Phase::Active        ? tr("Cancel Remote Job")
                   : phase == RemoteJobs::Phase::FetchFailed ? tr("Fetch Again")
                   : phase == RemoteJobs::Phase::Ended       ? tr("Dismiss")
                                                             : tr("Cancel Remote Job"));
  remote_->setEnabled(phase == RemoteJobs::Phase::Active || phase == RemoteJobs::Phase::FetchFailed ||
                      phase == RemoteJobs::Phase::Ended);
  if (remote->failed) showMessage(remote->detail, true);
}

const RemoteRow* RunsPage::selectedRemoteRow() const {
  const QModelIndexList rows = table_->selectionModel()->selectedRows();
  if (rows.size() != 1) return nullptr;
  return model_->remoteAt(proxy_->mapToSource(rows.front()).row());
}

void RunsPage::setRemoteJobs(RemoteJobs* jobs) {
  remote_jobs_ = jobs;
  connect(jobs, &RemoteJobs::changed, this, &RunsPage::showRemoteRows);
  connect(jobs, &RemoteJobs::problem, this, [this](const QString& message) { showMessage(message, true); });
  connect(jobs, &RemoteJobs::fetched, this, [this](qint64, const QString& message) {
    create_ = true;
    after_listing_ = message;
    refresh();
  });
  showRemoteRows();
}

void RunsPage::showRemoteRows() {
  std::vector<RemoteRow> rows;
  if (remote_jobs_ != nullptr)
    for (const RemoteJobs::Job& job : remote_jobs_->jobs()) rows.push_back(remoteRow(job));
  model_->setRemoteRows(std::move(rows));
  updateButtons();
}

void RunsPage::actOnSelectedRemoteJob() {
  const RemoteRow* row = selectedRemoteRow();
  if (row == nullptr || remote_jobs_ == nullptr) return;
  const RemoteJobs::Job* job = remote_jobs_->find(row->address, row->job);
  if (job == nullptr) return;
  const QString address = row->address;
  const QString id = row->job;
  switch (job->phase) {
    case RemoteJobs::Phase::Active:
      showMessage(tr("Asking %1 to cancel job %2\u2026").arg(job->agent, id), false);
      remote_jobs_->cancelJob(address, id);
      break;
    case RemoteJobs::Phase::FetchFailed:
      remote_jobs_->fetchAgain(address, id);
      break;
    case RemoteJobs::Phase::Ended:
      remote_jobs_->dismiss(address, id);
      break;
    default:
      break;
  }
}

}  // namespace shardscope::app
