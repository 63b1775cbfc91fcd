#include "grid_explorer_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "calibration_bar.h"
#include "chart_style.h"
#include "planning_session.h"
#include "project_document.h"
#include "shardscope/core/device.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/decision_report.h"
#include "shardscope/report/grid_choice.h"
#include "sync_interval_chart.h"

namespace shardscope::app {

namespace {

// The sweep's grids in the order the bar charts draw them: M ascending, strided before contiguous.
std::vector<int> barOrder(const planner::SweepResult& result) {
  std::vector<int> order(result.grids.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&result](int a, int b) {
    const auto& ga = result.grids[static_cast<std::size_t>(a)].grid;
    const auto& gb = result.grids[static_cast<std::size_t>(b)].grid;
    if (ga.group_size != gb.group_size) return ga.group_size < gb.group_size;
    return ga.layout == core::RankLayout::Strided && gb.layout != core::RankLayout::Strided;
  });
  return order;
}

const core::Calibration* calibrationOf(const core::Project& project) {
  return project.calibration ? &*project.calibration : nullptr;
}

}  // namespace

GridExplorerPage::GridExplorerPage(PlanningSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      progress_(new QProgressBar),
      cancel_button_(new QPushButton(tr("Cancel"))),
      message_(new QLabel),
      step_units_(new QComboBox),
      sync_interval_(new QSpinBox),
      target_(new QComboBox),
      step_plot_(new StepTimeChart),
      decision_(new QLabel),
      memory_plot_(new MemoryChart),
      imbalance_plot_(new ImbalanceChart),
      heatmap_plot_(new ScalingHeatmap([session]() -> const planner::ScalingResult& { return session->scaling(); })),
      sync_plot_(new SyncIntervalChart),
      heatmap_status_(new QLabel),
      side_tabs_(new QTabWidget),
      table_(new GridTable),
      calibration_bar_(new CalibrationBar(session)) {
  setObjectName(QStringLiteral("gridExplorerPage"));
  buildControls();
  heatmap_status_->setObjectName(QStringLiteral("heatmapStatus"));
  heatmap_status_->setWordWrap(true);
  chosen_markers_ = {step_plot_->chosenMarker(), memory_plot_->chosenMarker(), imbalance_plot_->chosenMarker()};
  connect(memory_plot_, &GridBarsChart::gridClicked, session_, &PlanningSession::choose);
  connect(imbalance_plot_, &GridBarsChart::gridClicked, session_, &PlanningSession::choose);
  connect(step_plot_, &StepTimeChart::gridClicked, session_, &PlanningSession::choose);
  connect(table_, &GridTable::gridClicked, session_, &PlanningSession::choose);
  connect(heatmap_plot_, &ScalingHeatmap::cellClicked, this, &GridExplorerPage::chooseHeatmapCell);
  buildDecision();

  auto* bar = new QHBoxLayout;
  bar->addWidget(message_, 1);
  bar->addWidget(target_);
  bar->addWidget(sync_interval_);
  bar->addWidget(step_units_);
  bar->addWidget(progress_);
  bar->addWidget(cancel_button_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(decision_);
  layout->addWidget(calibration_bar_);
  layout->addWidget(buildLayout(), 1);

  connect(session_, &PlanningSession::sweepStarted, this, &GridExplorerPage::onSweepStarted);
  connect(session_, &PlanningSession::sweepProgress, this, &GridExplorerPage::onProgress);
  connect(session_, &PlanningSession::sweepFinished, this, &GridExplorerPage::onFinished);
  connect(session_, &PlanningSession::sweepCancelled, this, [this] {
    cancel_button_->setEnabled(false);
    progress_->setVisible(false);
    message_->setText(tr("Cancelled; the grids shown are for the project before the last change."));
  });
  connect(session_, &PlanningSession::chosenChanged, this, &GridExplorerPage::showChosen);
  connect(session_, &PlanningSession::scalingStarted, this,
          [this] { heatmap_status_->setText(tr("Planning world sizes 8 to 4,096 for the heatmap\u2026")); });
  connect(session_, &PlanningSession::scalingProgress, this, [this](int done, int total) {
    heatmap_status_->setText(tr("Planning world sizes for the heatmap: %1 of %2\u2026").arg(done).arg(total));
  });
  connect(session_, &PlanningSession::scalingFinished, this, &GridExplorerPage::fillHeatmap);
  if (session_->hasResult()) onFinished(session_->shownJobId());
}

void GridExplorerPage::buildControls() {
  progress_->setObjectName(QStringLiteral("sweepProgress"));
  progress_->setTextVisible(true);
  progress_->setFormat(tr("planning grid %v of %m"));
  progress_->setVisible(false);
  cancel_button_->setObjectName(QStringLiteral("sweepCancel"));
  cancel_button_->setEnabled(false);
  connect(cancel_button_, &QPushButton::clicked, this, &GridExplorerPage::cancel);
  message_->setObjectName(QStringLiteral("sweepMessage"));
  message_->setWordWrap(true);
  step_units_->setObjectName(QStringLiteral("stepUnits"));
  step_units_->addItem(tr("Step time, zoomed on the best"));
  step_units_->addItem(tr("Step time, full range"));
  step_units_->addItem(tr("Share of step (%)"));
  step_units_->setToolTip(
      tr("Step times can span orders of magnitude: zoom on the best grids (taller bars are cut and their totals "
         "written on top), show the full range, or show each part's share of the step"));
  connect(step_units_, &QComboBox::currentIndexChanged, this,
          [this](int index) { step_plot_->setScale(static_cast<StepTimeChart::Scale>(index)); });
  sync_interval_->setObjectName(QStringLiteral("syncInterval"));
  sync_interval_->setRange(1, 1000000);
  sync_interval_->setPrefix(tr("replica sync every "));
  sync_interval_->setSuffix(tr(" step"));
  // "every step", "every 4 steps": the suffix follows the number.
  connect(sync_interval_, &QSpinBox::valueChanged, this,
          [this](int k) { sync_interval_->setSuffix(k == 1 ? tr(" step") : tr(" steps")); });
  sync_interval_->setKeyboardTracking(false);
  sync_interval_->setToolTip(
      tr("TorchRec's dmp_collection_sync_interval_batches: replicas all-reduce their embedding "
         "weights and optimizer state every k steps; the sync cost is amortised over k."));
  sync_interval_->setValue(static_cast<int>(session_->document()->project().sync_interval));
  connect(sync_interval_, &QSpinBox::valueChanged, this, &GridExplorerPage::setSyncInterval);
  target_->setObjectName(QStringLiteral("planTarget"));
  target_->addItem(tr("plans for TorchRec"), static_cast<int>(core::PlanTarget::TorchRec));
  target_->addItem(tr("plans for ShardScope's engine"), static_cast<int>(core::PlanTarget::ShardScope));
  target_->setToolTip(
      tr("TorchRec runs row blocks only in its own order (block k on group rank k, table_row_wise "
         "and grid blocks in order on one node group); plans for it keep that layout, so the "
         "trainer runs exactly what is priced. ShardScope's engine runs any placement, which can "
         "balance better."));
  auto showProject = [this] {
    const core::Project& project = session_->document()->project();
    const QSignalBlocker block_sync(sync_interval_);
    sync_interval_->setValue(static_cast<int>(project.sync_interval));
    const QSignalBlocker block_target(target_);
    target_->setCurrentIndex(target_->findData(static_cast<int>(project.target)));
  };
  showProject();
  connect(target_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setTarget(static_cast<core::PlanTarget>(target_->itemData(index).toInt())); });
  connect(session_->document(), &ProjectDocument::projectChanged, this, showProject);
}

void GridExplorerPage::buildDecision() {
  decision_->setObjectName(QStringLiteral("gridDecision"));
  decision_->setWordWrap(true);
  // Plain text in a bold font: a rich-text label is laid out again on every resize of the page.
  decision_->setTextFormat(Qt::PlainText);
  QFont bold = decision_->font();
  bold.setBold(true);
  decision_->setFont(bold);
  decision_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Two lines kept for the sentence, one or two long: the charts below do not
  // move (and replot) each time the answer changes.
  decision_->setMinimumHeight(2 * QFontMetrics(bold).lineSpacing() + 2 * decision_->margin());
}

QWidget* GridExplorerPage::buildLayout() {
  side_tabs_->setObjectName(QStringLiteral("gridSideTabs"));
  side_tabs_->addTab(memory_plot_, tr("Memory per GPU"));
  side_tabs_->addTab(imbalance_plot_, tr("Imbalance"));
  side_tabs_->addTab(sync_plot_, tr("Sync interval"));
  auto* plots = new QSplitter(Qt::Horizontal);
  plots->setChildrenCollapsible(false);
  plots->addWidget(step_plot_);
  plots->addWidget(side_tabs_);
  plots->setStretchFactor(0, 3);
  plots->setStretchFactor(1, 2);

  auto* heatmap_box = new QWidget;
  auto* heatmap_layout = new QVBoxLayout(heatmap_box);
  heatmap_layout->setContentsMargins(0, 0, 0, 0);
  heatmap_layout->addWidget(heatmap_plot_, 1);
  heatmap_layout->addWidget(heatmap_status_);
  auto* lower = new QSplitter(Qt::Horizontal);
  lower->setChildrenCollapsible(false);
  lower->addWidget(table_);
  lower->addWidget(heatmap_box);
  lower->setStretchFactor(0, 3);
  lower->setStretchFactor(1, 2);
  lower->setSizes({600, 400});
  // The table scrolls; it must not claim the width the heatmap needs.
  table_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Expanding);
  heatmap_plot_->setMinimumWidth(360);

  auto* vertical = new QSplitter(Qt::Vertical);
  vertical->setChildrenCollapsible(false);
  vertical->addWidget(plots);
  vertical->addWidget(lower);
  vertical->setStretchFactor(0, 1);
  vertical->setStretchFactor(1, 1);
  table_->setMinimumHeight(140);
  return vertical;
}

const planner::SweepResult& GridExplorerPage::result() const { return session_->result(); }
bool GridExplorerPage::isRunning() const { return session_->isRunning(); }
quint64 GridExplorerPage::currentJobId() const { return session_->currentJobId(); }
quint64 GridExplorerPage::shownJobId() const { return session_->shownJobId(); }
void GridExplorerPage::rerun() { session_->rerun(); }
void GridExplorerPage::cancel() { session_->cancel(); }

int GridExplorerPage::stepBarCount() const { return step_plot_->parts().front()->dataCount(); }

int GridExplorerPage::memoryBarCount() const { return memory_plot_->barCount(); }

int GridExplorerPage::heatmapCellCount() const { return heatmap_plot_->plannedCells(); }

QString GridExplorerPage::messageText() const { return message_->text(); }

void GridExplorerPage::setSyncInterval(int steps) {
  ProjectDocument* document = session_->document();
  if (steps < 1 || static_cast<std::uint32_t>(steps) == document->project().sync_interval) return;
  core::Project edited = document->project();
  edited.sync_interval = static_cast<std::uint32_t>(steps);
  document->edit(std::move(edited), tr("Set replica sync interval to %1 steps").arg(steps));
}

void GridExplorerPage::setTarget(core::PlanTarget target) {
  ProjectDocument* document = session_->document();
  if (target == document->project().target) return;
  core::Project edited = document->project();
  edited.target = target;
  document->edit(std::move(edited),
                 target == core::PlanTarget::TorchRec ? tr("Plan for TorchRec") : tr("Plan for ShardScope's engine"));
}

void GridExplorerPage::setStepShares(bool shares) {
  setStepScale(shares ? StepTimeChart::Scale::Shares : StepTimeChart::Scale::ZoomedOnBest);
}

void GridExplorerPage::setStepScale(StepTimeChart::Scale scale) {
  step_units_->setCurrentIndex(static_cast<int>(scale));  // the combo box's signal sets the chart's scale
  step_plot_->setScale(scale);
}

void GridExplorerPage::onSweepStarted() {
  cancel_button_->setEnabled(true);
  progress_->setRange(0, 0);  // busy until the first grid is done
  progress_->setVisible(true);
  message_->setText(
      tr("Planning every grid of %1 GPUs\u2026").arg(session_->document()->project().cluster.worldSize()));
}

void GridExplorerPage::onProgress(int done, int total) {
  progress_->setRange(0, std::max(total, 1));
  progress_->setValue(done);
}

void GridExplorerPage::onFinished(quint64 job_id) {
  cancel_button_->setEnabled(false);
  progress_->setVisible(false);
  const planner::SweepResult& result = session_->result();
  const std::size_t fitting = report::fittingCount(result);
  if (!session_->error().isEmpty()) {
    message_->setText(tr("Nothing to plan: %1.").arg(session_->error()));
  } else if (result.cancelled) {
    message_->setText(tr("Cancelled: %1 grids planned, %2 fit.").arg(result.grids.size()).arg(fitting));
  } else if (const planner::GridResult* best = result.best()) {
    message_->setText(tr("%1 grids of N = %2 GPUs, %3 fit. Click a row, a bar or a heatmap cell to choose a grid.")
                          .arg(result.grids.size())
                          .arg(best->grid.world_size)
                          .arg(fitting));
  } else {
    const std::uint64_t hbm = session_->plannedProject().cluster.gpu.hbm_bytes;
    message_->setText(tr("%1 grids planned; none fits in %2 of HBM.")
                          .arg(result.grids.size())
                          .arg(QString::fromStdString(core::formatBytes(hbm, {.unit = core::ByteUnit::GiB}))));
  }
  table_->setGrids(result, calibrationOf(session_->plannedProject()));
  fillPlots();
  showChosen();
  emit sweepFinished(job_id);
}

void GridExplorerPage::fillPlots() {
  const planner::SweepResult& result = session_->result();
  const core::Project& project = session_->plannedProject();
  const std::vector<int> every = barOrder(result);
  std::vector<int> fitting;
  for (const int index : every)
    if (result.grids[static_cast<std::size_t>(index)].fits) fitting.push_back(index);
  const core::Calibration* cal = calibrationOf(project);
  step_plot_->setGrids(result, std::move(fitting), report::calibratedFigures(cal),
                       QString::fromStdString(core::calibratedOnText(cal)));
  step_plot_->replot(QCustomPlot::rpQueuedReplot);
  memory_plot_->setGrids(result, every, project.cluster.gpu.hbm_bytes);
  imbalance_plot_->setGrids(result, every);
}

void GridExplorerPage::fillHeatmap() {
  const planner::ScalingResult& scaling = session_->scaling();
  heatmap_plot_->fill();
  if (!scaling.error.empty()) {
    heatmap_status_->setText(tr("No heatmap: %1.").arg(QString::fromStdString(scaling.error)));
  } else {
    heatmap_status_->setText(
        tr("%1 grids at %2 world sizes, %3 fit%4. Cell text: % of the best cell's throughput "
           "per GPU. %5 Hover for figures; click a cell to choose it (another N rescales the "
           "cluster).")
            .arg(heatmapCellCount())
            .arg(static_cast<int>(scaling.world_sizes.size()))
            .arg(heatmap_plot_->fittingCells())
            .arg(scaling.cancelled ? tr(" (cancelled)") : QString(), scalingAnnotations()->legendText()));
    // Every cell is priced with the calibration when there is one: say so beside the figures it changed.
    const core::Project& planned = session_->plannedProject();
    if (planned.calibration && report::calibratedFigures(&*planned.calibration).any())
      heatmap_status_->setText(
          heatmap_status_->text() +
          tr(" \u2020 %1.").arg(QString::fromStdString(core::calibratedOnText(&*planned.calibration))));
  }
  showChosen();
}

void GridExplorerPage::showChosen() {
  const planner::SweepResult& result = session_->result();
  const int chosen = session_->chosenIndex();
  const planner::GridResult* grid = chosen >= 0 ? &result.grids[static_cast<std::size_t>(chosen)] : nullptr;
  chosen_text_ = grid != nullptr ? PlanningSession::describe(*grid) : QString();
  table_->selectGrid(chosen);
  heatmap_plot_->setChosen(grid);
  step_plot_->setChosen(chosen);
  memory_plot_->setChosen(chosen);
  imbalance_plot_->setChosen(chosen);
  showDecision(chosen);
  sync_plot_->setGrid(session_->planGrid());
  if (!chosen_text_.isEmpty()) emit gridChosen(chosen_text_);
}

void GridExplorerPage::showDecision(int chosen) {
  const planner::SweepResult& result = session_->result();
  if (!session_->error().isEmpty() || result.grids.empty()) {
    decision_->clear();
    decision_->setVisible(false);
    return;
  }
  const planner::GridResult* best = result.best();
  std::optional<std::size_t> decision;
  if (chosen >= 0)
    decision = static_cast<std::size_t>(chosen);
  else if (best != nullptr)
    decision = static_cast<std::size_t>(best - result.grids.data());
  const QString text = QString::fromStdString(
      report::decisionSentence(result, decision, chosen >= 0, session_->plannedProject().cluster.gpu.hbm_bytes));
  const bool slower = chosen >= 0 && best != nullptr && &result.grids[static_cast<std::size_t>(chosen)] != best;
  decision_->setText(text);
  QPalette colours = palette();
  if (slower) colours.setColor(QPalette::WindowText, problemColor());
  decision_->setPalette(colours);
  decision_->setVisible(true);
}

QString GridExplorerPage::decisionText() const { return decision_->text(); }

void GridExplorerPage::chooseRow(int row) {
  const int grid = table_->gridAt(row);
  if (grid >= 0) session_->choose(grid);
}

void GridExplorerPage::chooseHeatmapCell(std::size_t m_index, std::size_t n_index) {
  const planner::ScalingResult& scaling = session_->scaling();
  const planner::ScalingCell* c = scaling.at(m_index, n_index);
  if (c == nullptr || !c->planned) return;
  ProjectDocument* document = session_->document();
  const core::Project& project = document->project();
  if (c->world_size == project.cluster.worldSize()) {
    document->chooseGrid(c->group_size, c->layout);
    return;
  }
  core::Project scaled = project;
  scaled.cluster = core::resizedCluster(project.cluster, c->world_size);
  scaled.chosen_group_size = c->group_size;
  scaled.chosen_layout = c->layout;
  document->edit(std::move(scaled), tr("Scale to %1 GPUs and choose M = %2").arg(c->world_size).arg(c->group_size));
}

}  // namespace shardscope::app
