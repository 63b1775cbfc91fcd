#include "plan_page.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QShortcut>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <vector>

#include "job_tracker.h"
#include "project_files.h"
#include "placement_heatmap.h"
#include "planning_session.h"
#include "project_document.h"
#include "rank_load_chart.h"
#include "rank_load_model.h"
#include "shardscope/core/device.h"
#include "shardscope/planner/scaling_sweep.h"
#include "shardscope/report/constraint_edits.h"
#include "table_load_model.h"

namespace shardscope::app {

namespace {

// Plans up to this many shard prices are broken down on the GUI thread (a few
// milliseconds at most); bigger ones on a pool thread.
constexpr std::size_t kInlineWork = 5000;
// Ranks listed one by one in the "Pin to group rank" menu; more get a dialog.
constexpr std::uint32_t kPinMenuRanks = 32;
constexpr int kProblemLines = 5;

void styleTable(QTableView* view) {
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setSelectionMode(QAbstractItemView::SingleSelection);
  view->setAlternatingRowColors(true);
  view->setWordWrap(false);
  view->verticalHeader()->setVisible(false);
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  // Column widths from the first rows only: every one of 4,096 ranks would take 100 ms.
  view->horizontalHeader()->setResizeContentsPrecision(50);
  view->horizontalHeader()->setHighlightSections(false);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setContextMenuPolicy(Qt::CustomContextMenu);
}

}  // namespace

PlanPage::PlanPage(PlanningSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      header_(new QLabel),
      problems_(new QLabel),
      status_(new QLabel),
      rank_chart_(new RankLoadChart),
      heatmap_(new PlacementHeatmap),
      tabs_(new QTabWidget),
      rank_model_(new RankLoadModel(this)),
      rank_proxy_(new QSortFilterProxyModel(this)),
      rank_table_(new QTableView),
      table_model_(new TableLoadModel(this)),
      table_proxy_(new QSortFilterProxyModel(this)),
      table_list_(new QTableView),
      table_filter_(new QLineEdit),
      imbalance_(new QLabel),
      critical_tables_(new QTableWidget),
      constraint_list_(new QListWidget),
      remove_constraint_(new QPushButton(tr("Remove"))),
      inline_work_(kInlineWork),
      measured_note_(new QLabel),
      measured_jobs_(new JobTracker(planningPool(), this)),
      pricing_jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("planPage"));

  header_->setObjectName(QStringLiteral("planHeader"));
  header_->setWordWrap(true);
  header_->setTextFormat(Qt::RichText);
  // Two lines kept, "Planning…" or a grid's: the charts below stay put (and
  // are not replotted) while a re-plan runs.
  header_->setMinimumHeight(2 * header_->fontMetrics().lineSpacing());
  problems_->setObjectName(QStringLiteral("planProblems"));
  problems_->setWordWrap(true);
  problems_->setTextFormat(Qt::RichText);
  problems_->setVisible(false);
  measured_note_->setObjectName(QStringLiteral("planMeasuredNote"));
  measured_note_->setWordWrap(true);
  measured_note_->setStyleSheet(QStringLiteral("color: #5b6673;"));
  measured_note_->setVisible(false);
  status_->setObjectName(QStringLiteral("planStatus"));
  status_->setStyleSheet(QStringLiteral("color: #666;"));

  connect(rank_chart_, &RankLoadChart::tableMenuRequested, this, &PlanPage::openTableMenu);
  connect(heatmap_, &PlacementHeatmap::tableMenuRequested, this, &PlanPage::openTableMenu);

  buildTabs();

  QGroupBox* imbalance_box = buildImbalanceBox();
  QGroupBox* constraints_box = buildConstraintsBox();

  auto* side = new QSplitter(Qt::Vertical);
  side->setChildrenCollapsible(false);
  side->addWidget(imbalance_box);
  side->addWidget(constraints_box);
  auto* lower = new QSplitter(Qt::Horizontal);
  lower->setChildrenCollapsible(false);
  lower->addWidget(tabs_);
  lower->addWidget(side);
  lower->setStretchFactor(0, 3);
  lower->setStretchFactor(1, 2);
  lower->setSizes({600, 340});
  tabs_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Expanding);
  tabs_->setMinimumWidth(280);
  side->setMinimumWidth(310);

  auto* left = new QSplitter(Qt::Vertical);
  left->setChildrenCollapsible(false);
  left->addWidget(rank_chart_);
  left->addWidget(lower);
  left->setStretchFactor(0, 1);
  left->setStretchFactor(1, 1);
  left->setSizes({340, 400});
  auto* columns = new QSplitter(Qt::Horizontal);
  columns->setChildrenCollapsible(false);
  columns->addWidget(left);
  columns->addWidget(heatmap_);
  columns->setStretchFactor(0, 3);
  columns->setStretchFactor(1, 2);

  auto* top = new QHBoxLayout;
  top->addWidget(header_, 1);
  top->addWidget(status_, 0, Qt::AlignTop);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(problems_);
  layout->addWidget(measured_note_);
  layout->addWidget(columns, 1);

  connect(session_, &PlanningSession::chosenChanged, this, &PlanPage::refresh);
  connect(session_, &PlanningSession::sweepFinished, this, &PlanPage::refresh);
  connect(session_, &PlanningSession::sweepStarted, this, &PlanPage::showStatus);
  connect(session_, &PlanningSession::sweepCancelled, this, &PlanPage::showStatus);
  connect(session_->document(), &ProjectDocument::projectChanged, this, [this] {
    showConstraints();
    showStatus();
  });
  showConstraints();
  showSnapshot(nullptr, Key{});
  if (session_->hasResult()) refresh();
}

void PlanPage::buildTabs() {
  // Ranks, sortable by number.
  rank_proxy_->setSourceModel(rank_model_);
  rank_proxy_->setSortRole(RankLoadModel::SortRole);
  rank_table_->setObjectName(QStringLiteral("rankTable"));
  rank_table_->setModel(rank_proxy_);
  styleTable(rank_table_);
  rank_table_->setContextMenuPolicy(Qt::NoContextMenu);
  rank_table_->setSortingEnabled(true);
  rank_table_->sortByColumn(RankLoadModel::GroupRank, Qt::AscendingOrder);
  // The step's parts (sync included) in view at 1280 pixels; the long list of global ranks last.
  QHeaderView* rank_header = rank_table_->horizontalHeader();
  rank_header->moveSection(rank_header->visualIndex(RankLoadModel::GlobalRanks), RankLoadModel::ColumnCount - 1);

  // Every table, filtered by name.
  table_proxy_->setSourceModel(table_model_);
  table_proxy_->setSortRole(TableLoadModel::SortRole);
  table_proxy_->setFilterKeyColumn(TableLoadModel::Table);
  table_proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  table_list_->setObjectName(QStringLiteral("tableLoadList"));
  table_list_->setModel(table_proxy_);
  styleTable(table_list_);
  table_list_->setSortingEnabled(true);
  table_list_->sortByColumn(TableLoadModel::Load, Qt::DescendingOrder);
  table_list_->horizontalHeader()->setStretchLastSection(true);  // the constraints
  table_filter_->setObjectName(QStringLiteral("tableFilter"));
  table_filter_->setPlaceholderText(tr("Filter tables by name"));
  table_filter_->setClearButtonEnabled(true);
  connect(table_filter_, &QLineEdit::textChanged, table_proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(table_list_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    const QModelIndex index = table_list_->indexAt(pos);
    if (!index.isValid()) return;
    openTableMenu(index.data(TableLoadModel::TableNameRole).toString(), table_list_->viewport()->mapToGlobal(pos));
  });
  auto* table_box = new QWidget;
  auto* table_layout = new QVBoxLayout(table_box);
  table_layout->setContentsMargins(0, 4, 0, 0);
  table_layout->addWidget(table_filter_);
  table_layout->addWidget(table_list_, 1);

  tabs_->setObjectName(QStringLiteral("planTabs"));
  tabs_->addTab(rank_table_, tr("Ranks"));
  tabs_->addTab(table_box, tr("Tables"));
}

QGroupBox* PlanPage::buildImbalanceBox() {
  // Imbalance and the tables behind the slowest rank.
  imbalance_->setObjectName(QStringLiteral("imbalanceStats"));
  imbalance_->setTextFormat(Qt::RichText);
  imbalance_->setWordWrap(true);
  imbalance_->setToolTip(
      tr("TorchRec's statistics over the per-rank loads normalised to shares p (k ranks): "
         "max/mean; total variation max|p - 1/k|; total distance \u03a3|p - 1/k|; "
         "chi-divergence k\u03a3(p - 1/k)\u00b2; KL divergence \u03a3p ln(kp) / ln k. "
         "0 (1 for max/mean) is perfectly balanced."));
  critical_tables_->setObjectName(QStringLiteral("criticalTables"));
  critical_tables_->setColumnCount(3);
  critical_tables_->setHorizontalHeaderLabels({tr("Table"), tr("Load (ms)"), tr("Share")});
  styleTable(critical_tables_);
  critical_tables_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  connect(critical_tables_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    const QModelIndex index = critical_tables_->indexAt(pos);
    if (!index.isValid()) return;
    openTableMenu(critical_tables_->item(index.row(), 0)->text(), critical_tables_->viewport()->mapToGlobal(pos));
  });
  auto* imbalance_box = new QGroupBox(tr("Imbalance"));
  auto* imbalance_layout = new QVBoxLayout(imbalance_box);
  imbalance_layout->addWidget(imbalance_);
  imbalance_layout->addWidget(critical_tables_, 1);
  return imbalance_box;
}

QGroupBox* PlanPage::buildConstraintsBox() {
  // The project's constraints, each removable.
  constraint_list_->setObjectName(QStringLiteral("constraintList"));
  constraint_list_->setSelectionMode(QAbstractItemView::SingleSelection);
  remove_constraint_->setObjectName(QStringLiteral("removeConstraint"));
  remove_constraint_->setEnabled(false);
  remove_constraint_->setToolTip(tr("Remove the selected constraint (Delete); the plan is redone"));
  connect(constraint_list_, &QListWidget::currentRowChanged, this,
          [this](int row) { remove_constraint_->setEnabled(row >= 0); });
  connect(remove_constraint_, &QPushButton::clicked, this,
          [this] { removeConstraint(constraint_list_->currentRow()); });
  auto* remove_key = new QShortcut(QKeySequence::Delete, constraint_list_, nullptr, nullptr, Qt::WidgetShortcut);
  connect(remove_key, &QShortcut::activated, this, [this] { removeConstraint(constraint_list_->currentRow()); });
  auto* constraints_box = new QGroupBox(tr("Constraints"));
  auto* constraints_layout = new QVBoxLayout(constraints_box);
  auto* hint = new QLabel(tr("Right-click a table in a chart or list to pin it or force/forbid a sharding type."));
  hint->setWordWrap(true);
  hint->setStyleSheet(QStringLiteral("color: #666;"));
  constraints_layout->addWidget(hint);
  constraints_layout->addWidget(constraint_list_, 1);
  auto* remove_row = new QHBoxLayout;
  remove_row->addStretch(1);
  remove_row->addWidget(remove_constraint_);
  constraints_layout->addLayout(remove_row);
  return constraints_box;
}

// pricing_jobs_ cancels its job and waits for it (bounded by one table's pricing).
PlanPage::~PlanPage() = default;

QCustomPlot* PlanPage::rankLoadPlot() const { return rank_chart_; }
QCustomPlot* PlanPage::placementPlot() const { return heatmap_; }

const planner::GridResult* PlanPage::currentGrid() const {
  if (const planner::GridResult* g = session_->planGrid()) return g;
  // None fits: show the fastest grid anyway, with its problems.
  const auto& grids = session_->result().grids;
  return grids.empty() ? nullptr : &grids.front();
}

PlanPage::Key PlanPage::currentKey() const {
  Key key;
  if (!session_->hasResult()) return key;
  key.job = session_->shownJobId();
  if (const planner::GridResult* g = currentGrid()) {
    key.group_size = g->grid.group_size;
    key.layout = static_cast<int>(g->grid.layout);
    key.chosen = session_->planGridIsChosen();
  }
  return key;
}

void PlanPage::refresh() {
  const Key key = currentKey();
  if (pricing_ ? key == pending_key_ : key == shown_key_) return;
  pricing_jobs_->supersede();
  pricing_ = false;
  const bool chosen = session_->planGridIsChosen();
  const planner::GridResult* grid = session_->hasResult() ? currentGrid() : nullptr;
  if (grid == nullptr) {
    showSnapshot(nullptr, key);
    return;
  }
  const core::Project& project = session_->plannedProject();
  const planner::SweepOptions options = planner::sweepOptionsOf(project);
  if (report::snapshotWork(*grid) <= inline_work_) {
    auto snapshot = std::make_shared<report::PlanSnapshot>(report::makePlanSnapshot(*grid, project, options));
    snapshot->sweep_job = key.job;
    snapshot->chosen = chosen;
    showSnapshot(std::move(snapshot), key);
    return;
  }
  pricing_ = true;
  pending_key_ = key;
  // Copies in (the session replaces its result on the next sweep), a value out.
  // The sweep result is shared and immutable: the worker keeps it alive and
  // reads the grid in place (copying a 4,096-rank plan here would stall the GUI).
  pricing_jobs_->start(
      [key, chosen, results = session_->resultPtr(), grid, project, options](JobContext& job) {
        auto snapshot =
            std::make_shared<report::PlanSnapshot>(report::makePlanSnapshot(*grid, project, options, job.cancelFlag()));
        snapshot->sweep_job = key.job;
        snapshot->chosen = chosen;
        return std::shared_ptr<const report::PlanSnapshot>(std::move(snapshot));
      },
      [this, key](std::shared_ptr<const report::PlanSnapshot> snapshot) {
        if (snapshot->breakdown.cancelled) return;
        pricing_ = false;
        showSnapshot(std::move(snapshot), key);
      });
  showStatus();
}

void PlanPage::showSnapshot(std::shared_ptr<const report::PlanSnapshot> snapshot, const Key& key) {
  shown_ = std::move(snapshot);
  shown_key_ = key;
  QString empty;
  if (!shown_) {
    if (!session_->error().isEmpty())
      empty = tr("Nothing to plan: %1").arg(session_->error());
    else if (!session_->hasResult())
      empty = tr("Planning\u2026");
    else
      empty = tr("No grid was planned");
  }
  rank_chart_->setSnapshot(shown_, empty);
  heatmap_->setSnapshot(shown_, empty);
  rank_model_->setSnapshot(shown_);
  table_model_->setSnapshot(shown_);
  table_model_->setConstraints(session_->document()->project().constraints);
  // Widths once, from the first plan: later plans keep them (and what the user set).
  if (!columns_sized_ && shown_) {
    rank_table_->resizeColumnsToContents();
    table_list_->resizeColumnsToContents();
    columns_sized_ = true;
  }
  showHeader();
  showImbalance();
  showStatus();
  refreshMeasured();
  emit planShown();
}

void PlanPage::setStorePath(const QString& path) {
  if (path == store_path_) return;
  store_path_ = path;
  refreshMeasured();
}

void PlanPage::setMeasuredSource(MeasuredSource source) {
  measured_source_ = std::move(source);
  if (shown_) refreshMeasured();
}

void PlanPage::refreshMeasured() {
  rank_chart_->setMeasured({}, {});
  if (!measured_source_) {  // nothing to measure with: no overlay, nothing to say
    measured_jobs_->supersede();
    showMeasuredNote({});
    emit measuredShown(0);
    return;
  }
  if (!shown_ || store_path_.isEmpty()) {
    measured_jobs_->supersede();
    showMeasuredNote(shown_ ? tr("Measured overlay: none, the project has no trace store yet (Run \u203a Profile "
                                 "makes one).")
                            : QString());
    emit measuredShown(0);
    return;
  }
  measured_jobs_->start(
      [source = measured_source_, path = localPath(store_path_), plan = shown_->grid.plan](JobContext& job) {
        return source(path, plan, job.cancelFlag());
      },
      [this](std::optional<MeasuredLoad> load) {
        if (!load) {
          showMeasuredNote(
              tr("Measured overlay: none, no complete run of this plan in the store (Run \u203a Profile "
                 "runs it)."));
          emit measuredShown(0);
          return;
        }
        const qint64 run = load->run;
        const core::Project& project = session_->plannedProject();
        const core::DeviceComparison devices =
            core::compareDevices(load->device, project.cluster, project.calibration ? &*project.calibration : nullptr);
        if (devices.absolute) {
          rank_chart_->setMeasured(std::move(load->compute_ms), tr("measured embedding, run %1").arg(run));
          showMeasuredNote(tr("Measured overlay: run %1's embedding compute per group rank, on %2.")
                               .arg(run)
                               .arg(QString::fromStdString(core::describeDevice(load->device))));
        } else {
          // Another device: its shares of the group's work, on the prediction's scale, never its milliseconds.
          rank_chart_->setMeasured(scaledToPrediction(load->compute_ms), tr("measured shares, run %1").arg(run));
          showMeasuredNote(tr("Measured overlay: run %1's share of the group's embedding work per rank, scaled to the "
                              "predicted total: %2.")
                               .arg(run)
                               .arg(QString::fromStdString(devices.reason)));
        }
        emit measuredShown(run);
      });
}

std::vector<double> PlanPage::scaledToPrediction(const std::vector<double>& measured) const {
  double measured_total = 0.0, predicted_total = 0.0;
  const auto& ranks = shown_->grid.ranks;
  for (std::size_t r = 0; r < measured.size() && r < ranks.size(); ++r) {
    if (std::isnan(measured[r])) continue;
    measured_total += measured[r];
    predicted_total += ranks[r].fwd_ms + ranks[r].bwd_ms;
  }
  std::vector<double> scaled = measured;
  for (double& v : scaled)
    if (!std::isnan(v)) v = measured_total > 0 ? v / measured_total * predicted_total : 0.0;
  return scaled;
}

QString PlanPage::measuredNoteText() const { return measured_note_->text(); }

void PlanPage::showMeasuredNote(const QString& text) {
  measured_note_->setText(text);
  measured_note_->setVisible(!text.isEmpty());
}

void PlanPage::showHeader() {
  QStringList problems;
  if (!shown_) {
    header_plain_ = !session_->error().isEmpty() ? tr("Nothing to plan: %1.").arg(session_->error())
                    : session_->hasResult()      ? tr("No grid was planned.")
                                                 : tr("Planning\u2026");
    header_->setText(header_plain_.toHtmlEscaped());
  } else {
    const planner::GridResult& g = shown_->grid;
    const QString which = shown_->chosen ? tr("Chosen grid")
                          : g.fits       ? tr("Best grid (none chosen)")
                                         : tr("No grid fits; the fastest");
    const QString grid = tr("M = %1 \u00d7 R = %2 (%3) on N = %4 GPUs")
                             .arg(g.grid.group_size)
                             .arg(g.grid.replicas)
                             .arg(QString::fromLatin1(core::toString(g.grid.layout)))
                             .arg(g.grid.world_size);
    const QString fits = g.fits ? tr("fits in memory") : tr("does not fit in memory");
    const QString details =
        tr("step %1 ms \u00b7 %2 \u00b7 algorithm %3 \u00b7 slowest rank %4: %5 ms, lower bound %6 ms (gap %7%)")
            .arg(g.step.step_ms, 0, 'f', 3)
            .arg(fits, QString::fromStdString(g.algorithm))
            .arg(g.critical_rank)
            .arg(g.max_load_ms, 0, 'f', 3)
            .arg(g.lower_bound_ms, 0, 'f', 3)
            .arg(std::abs(g.gap) < 5e-4 ? 0.0 : g.gap * 100.0, 0, 'f', 1);
    header_plain_ = which + QStringLiteral(": ") + grid + QStringLiteral("\n") + details;
    header_->setText(QStringLiteral("<b>%1</b>: %2<br>%3")
                         .arg(which.toHtmlEscaped(), grid.toHtmlEscaped(),
                              g.fits ? details.toHtmlEscaped()
                                     : details.toHtmlEscaped().replace(
                                           fits, QStringLiteral("<span style='color:#b03030'>%1</span>").arg(fits))));
    for (const std::string& p : g.problems) problems << QString::fromStdString(p);
    for (const std::string& p : shown_->breakdown.problems) problems << QString::fromStdString(p);
  }
  if (problems.isEmpty()) {
    problems_->clear();
    problems_->setToolTip({});
    problems_->setVisible(false);
    return;
  }
  header_plain_ += QStringLiteral("\n") + problems.join(QLatin1Char('\n'));
  QStringList shown;
  for (int i = 0; i < std::min<int>(kProblemLines, static_cast<int>(problems.size())); ++i)
    shown << problems[i].toHtmlEscaped();
  if (problems.size() > kProblemLines)
    shown << tr("\u2026 and %1 more (hover to see all)").arg(problems.size() - kProblemLines);
  problems_->setText(QStringLiteral("<span style='color:#b03030'>%1</span>").arg(shown.join(QStringLiteral("<br>"))));
  problems_->setToolTip(problems.mid(0, 60).join(QLatin1Char('\n')));
  problems_->setVisible(true);
}

QString PlanPage::headerText() const { return header_plain_; }

void PlanPage::showImbalance() {
  critical_tables_->setRowCount(0);
  if (!shown_) {
    imbalance_->setText(tr("No plan."));
    return;
  }
  const planner::GridResult& g = shown_->grid;
  const planner::ImbalanceStats& s = g.imbalance;
  imbalance_->setText(tr("<table cellspacing='0' cellpadding='1'>"
                         "<tr><td>max / mean</td><td align='right'>&nbsp;%1</td>"
                         "<td>&nbsp;&nbsp;total variation</td><td align='right'>&nbsp;%2</td></tr>"
                         "<tr><td>KL divergence</td><td align='right'>&nbsp;%5</td>"
                         "<td>&nbsp;&nbsp;total distance</td><td align='right'>&nbsp;%3</td></tr>"
                         "<tr><td></td><td></td>"
                         "<td>&nbsp;&nbsp;chi-divergence</td><td align='right'>&nbsp;%4</td></tr></table>"
                         "Tables on the slowest rank, group rank %6 (%7 ms):")
                          .arg(s.max_over_mean, 0, 'f', 3)
                          .arg(s.total_variation, 0, 'f', 4)
                          .arg(s.total_distance, 0, 'f', 4)
                          .arg(s.chi_divergence, 0, 'f', 4)
                          .arg(s.kl_divergence, 0, 'f', 4)
                          .arg(g.critical_rank)
                          .arg(g.max_load_ms, 0, 'f', 3));
  const double critical = g.max_load_ms;
  const int rows = static_cast<int>(std::min<std::size_t>(g.critical_tables.size(), 50));
  critical_tables_->setRowCount(rows);
  for (int i = 0; i < rows; ++i) {
    const planner::TableLoad& t = g.critical_tables[static_cast<std::size_t>(i)];
    auto* name = new QTableWidgetItem(QString::fromStdString(t.table));
    auto* load = new QTableWidgetItem(QString::number(t.load_ms, 'f', 3));
    auto* share =
        new QTableWidgetItem(QStringLiteral("%1%").arg(critical > 0 ? t.load_ms / critical * 100.0 : 0.0, 0, 'f', 1));
    load->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    share->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    name->setToolTip(tr("Right-click to pin %1 elsewhere or change its sharding type").arg(name->text()));
    critical_tables_->setItem(i, 0, name);
    critical_tables_->setItem(i, 1, load);
    critical_tables_->setItem(i, 2, share);
  }
  critical_tables_->resizeColumnToContents(1);
  critical_tables_->resizeColumnToContents(2);
}

QString PlanPage::imbalanceText() const {
  if (!shown_) return {};
  const planner::ImbalanceStats& s = shown_->grid.imbalance;
  return QStringLiteral("max/mean %1, total variation %2, total distance %3, chi-divergence %4, KL %5")
      .arg(s.max_over_mean, 0, 'f', 3)
      .arg(s.total_variation, 0, 'f', 4)
      .arg(s.total_distance, 0, 'f', 4)
      .arg(s.chi_divergence, 0, 'f', 4)
      .arg(s.kl_divergence, 0, 'f', 4);
}

void PlanPage::showConstraints() {
  const int current = constraint_list_->currentRow();
  constraint_list_->clear();
  for (const report::ConstraintEntry& e : report::constraintEntries(session_->document()->project().constraints))
    constraint_list_->addItem(QString::fromStdString(e.text));
  if (current >= 0 && constraint_list_->count() > 0)
    constraint_list_->setCurrentRow(std::min(current, constraint_list_->count() - 1));
  remove_constraint_->setEnabled(constraint_list_->currentRow() >= 0);
  table_model_->setConstraints(session_->document()->project().constraints);
}

void PlanPage::showStatus() {
  QString text;
  if (session_->isRunning())
    text = tr("re-planning\u2026");
  else if (pricing_)
    text = tr("pricing shards\u2026");
  else if (shown_ && !shown_->chosen && session_->hasResult())
    text = tr("choose a grid on the Grid Explorer");
  status_->setText(text);
}

bool PlanPage::waitUntilShown(int timeout_ms) {
  QElapsedTimer timer;
  timer.start();
  if (!session_->waitUntilIdle(timeout_ms, false)) return false;
  refresh();  // in case the session's signals are still queued
  while (pricing_) {
    const qint64 left = timeout_ms - timer.elapsed();
    if (left <= 0) return false;
    QEventLoop loop;
    connect(this, &PlanPage::planShown, &loop, &QEventLoop::quit);
    QTimer::singleShot(std::min<qint64>(left, 50), &loop, &QEventLoop::quit);
    loop.exec();
  }
  return true;
}

bool PlanPage::hasTable(const std::string& table) const {
  const auto& tables = session_->document()->project().model.tables;
  return std::any_of(tables.begin(), tables.end(), [&](const auto& t) { return t.name == table; });
}

void PlanPage::editConstraints(const core::Constraints& constraints, const std::string& description) {
  core::Project project = session_->document()->project();
  project.constraints = constraints;
  session_->document()->edit(std::move(project), QString::fromStdString(description));
}

void PlanPage::pinTable(const QString& table, std::uint32_t group_rank) {
  const std::string name = table.toStdString();
  if (!hasTable(name)) return;
  editConstraints(report::withPin(session_->document()->project().constraints, name, group_rank),
                  report::pinDescription(name, group_rank));
}

void PlanPage::forceShardingType(const QString& table, core::ShardingType type) {
  const std::string name = table.toStdString();
  if (!hasTable(name)) return;
  editConstraints(report::withForced(session_->document()->project().constraints, name, type),
                  report::forceDescription(name, type));
}

void PlanPage::forbidShardingType(const QString& table, core::ShardingType type) {
  const std::string name = table.toStdString();
  if (!hasTable(name)) return;
  editConstraints(report::withForbidden(session_->document()->project().constraints, name, type),
                  report::forbidDescription(name, type));
}

void PlanPage::clearTableConstraints(const QString& table) {
  const std::string name = table.toStdString();
  const core::Constraints& c = session_->document()->project().constraints;
  if (c.find(name) == nullptr) return;
  editConstraints(report::withoutTable(c, name), report::clearDescription(name));
}

void PlanPage::removeConstraint(int row) {
  const core::Constraints& c = session_->document()->project().constraints;
  const std::vector<report::ConstraintEntry> entries = report::constraintEntries(c);
  if (row < 0 || static_cast<std::size_t>(row) >= entries.size()) return;
  const report::ConstraintEntry& e = entries[static_cast<std::size_t>(row)];
  editConstraints(report::without(c, e), report::removeDescription(e));
}

QMenu* PlanPage::tableMenu(const QString& table, QWidget* parent) {
  auto* menu = new QMenu(parent);
  menu->setObjectName(QStringLiteral("tableMenu"));
  const std::string name = table.toStdString();
  const bool known = hasTable(name);
  const core::TableConstraint* constraint = session_->document()->project().constraints.find(name);
  // What the table is now, as a disabled title line.
  QString title = table;
  const int index = shown_ ? shown_->tableIndex(name) : -1;
  if (index >= 0) {
    const auto i = static_cast<std::size_t>(index);
    title += tr(": %1 on group ranks %2")
                 .arg(QString::fromLatin1(core::toString(shown_->grid.plan.tables[i].sharding_type)),
                      QString::fromStdString(report::rankSpanText(shown_->tables[i].ranks)));
  }
  if (!known) title += tr(" (not in the model)");
  menu->addAction(title)->setEnabled(false);
  menu->addSeparator();

  QMenu* pin = menu->addMenu(tr("Pin to group rank"));
  pin->setObjectName(QStringLiteral("pinMenu"));
  const std::uint32_t M = shown_ ? shown_->groupSize() : 0;
  pin->setEnabled(known && M > 0);
  auto pinned = [constraint](std::uint32_t r) {
    return constraint &&
           std::find(constraint->pin_ranks.begin(), constraint->pin_ranks.end(), r) != constraint->pin_ranks.end();
  };
  if (M <= kPinMenuRanks) {
    for (std::uint32_t r = 0; r < M; ++r) {
      QAction* a = pin->addAction(tr("%1  (load %2 ms)").arg(r).arg(shown_->breakdown.rank_load_ms[r], 0, 'f', 3));
      a->setData(r);
      a->setCheckable(true);
      a->setChecked(pinned(r));
      connect(a, &QAction::triggered, this, [this, table, r] { pinTable(table, r); });
    }
  } else {
    const auto least = static_cast<std::uint32_t>(
        std::min_element(shown_->breakdown.rank_load_ms.begin(), shown_->breakdown.rank_load_ms.end()) -
        shown_->breakdown.rank_load_ms.begin());
    QAction* a = pin->addAction(
        tr("Least-loaded rank: %1 (%2 ms)").arg(least).arg(shown_->breakdown.rank_load_ms[least], 0, 'f', 3));
    a->setData(least);
    connect(a, &QAction::triggered, this, [this, table, least] { pinTable(table, least); });
    QAction* other = pin->addAction(tr("Group rank\u2026"));
    connect(other, &QAction::triggered, this, [this, table, M] {
      bool ok = false;
      const int r = QInputDialog::getInt(this, tr("Pin %1").arg(table), tr("Group rank (0 to %1):").arg(M - 1), 0, 0,
                                         static_cast<int>(M - 1), 1, &ok);
      if (ok) pinTable(table, static_cast<std::uint32_t>(r));
    });
  }

  QMenu* force = menu->addMenu(tr("Force sharding type"));
  force->setObjectName(QStringLiteral("forceMenu"));
  force->setEnabled(known);
  QMenu* forbid = menu->addMenu(tr("Forbid sharding type"));
  forbid->setObjectName(QStringLiteral("forbidMenu"));
  forbid->setEnabled(known);
  for (core::ShardingType type : report::offeredShardingTypes()) {
    const QString type_name = QString::fromLatin1(core::toString(type));
    QAction* f = force->addAction(type_name);
    f->setCheckable(true);
    f->setChecked(constraint && constraint->force && *constraint->force == type);
    connect(f, &QAction::triggered, this, [this, table, type] { forceShardingType(table, type); });
    QAction* b = forbid->addAction(type_name);
    b->setCheckable(true);
    b->setChecked(constraint &&
                  std::find(constraint->forbid.begin(), constraint->forbid.end(), type) != constraint->forbid.end());
    connect(b, &QAction::triggered, this, [this, table, type] { forbidShardingType(table, type); });
  }
  menu->addSeparator();
  QAction* clear = menu->addAction(tr("Clear constraints of %1").arg(table));
  clear->setObjectName(QStringLiteral("clearConstraints"));
  clear->setEnabled(constraint != nullptr);
  connect(clear, &QAction::triggered, this, [this, table] { clearTableConstraints(table); });
  return menu;
}

void PlanPage::openTableMenu(const QString& table, const QPoint& global_pos) {
  QMenu* menu = tableMenu(table, this);
  menu->setAttribute(Qt::WA_DeleteOnClose);
  menu->popup(global_pos);
}

}  // namespace shardscope::app
