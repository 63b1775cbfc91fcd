#include "grid_explorer_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <qcustomplot.h>

#include "calibration_bar.h"
#include "chart_style.h"
#include "grid_tick_labels.h"
#include "step_time_chart.h"
#include "shardscope/core/device.h"
#include "shardscope/report/decision_report.h"
#include "shardscope/report/display_format.h"
#include "sync_interval_chart.h"
#include "planning_session.h"
#include "project_document.h"
#include "scaling_annotations.h"
#include "shardscope/report/grid_choice.h"

namespace shardscope::app {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

QStandardItem* cell(const QString& text, double sort_value, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QStandardItem(text);
  item->setData(sort_value, GridExplorerPage::kSortRole);
  item->setData(QVariant::fromValue(static_cast<int>(align)), Qt::TextAlignmentRole);
  item->setEditable(false);
  return item;
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
      memory_plot_(new QCustomPlot),
      imbalance_plot_(new QCustomPlot),
      heatmap_plot_(new QCustomPlot),
      sync_plot_(new SyncIntervalChart),
      heatmap_status_(new QLabel),
      side_tabs_(new QTabWidget),
      memory_bars_(nullptr),
      memory_over_bars_(nullptr),
      imbalance_bars_(nullptr),
      hbm_line_(nullptr),
      hbm_label_(nullptr),
      heatmap_(nullptr),
      heatmap_marker_(nullptr),
      model_(new QStandardItemModel(this)),
      table_(new QTableView),
      calibration_bar_(new CalibrationBar(session)) {
  setObjectName(QStringLiteral("gridExplorerPage"));
  buildControls();
  buildMemoryPlot();
  buildImbalancePlot();
  buildHeatmap();
  chosen_markers_.push_back(step_plot_->chosenMarker());
  for (QCustomPlot* plot : {memory_plot_, imbalance_plot_}) {
    addChosenMarker(plot);
    connect(plot, &QCustomPlot::plottableClick, this, &GridExplorerPage::onPlottableClick);
  }
  connect(step_plot_, &StepTimeChart::gridClicked, session_, &PlanningSession::choose);
  memory_ticks_ = new GridTickLabels(memory_plot_, tr("every grid"));
  imbalance_ticks_ = new GridTickLabels(imbalance_plot_, tr("every grid"));
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
  buildTable();

  auto* bar = new QHBoxLayout;
  bar->addWidget(message_, 1);
  bar->addWidget(target_);
  bar->addWidget(sync_interval_);
  bar->addWidget(step_units_);
  bar->addWidget(progress_);
  bar->addWidget(cancel_button_);

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

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(decision_);
  layout->addWidget(calibration_bar_);
  layout->addWidget(vertical, 1);

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

QCPItemRect* GridExplorerPage::addChosenMarker(QCustomPlot* plot) {
  // An outline around the chosen grid's own bar, in plot coordinates: a taller
  // frame would read as a bar of its own (a memory "over HBM" that is not).
  auto* marker = new QCPItemRect(plot);
  marker->setPen(QPen(chosenColor(), 2.0, Qt::DashLine));
  marker->setBrush(Qt::NoBrush);
  marker->setSelectable(false);
  marker->setVisible(false);
  chosen_markers_.push_back(marker);
  return marker;
}

void GridExplorerPage::markChosen(QCPItemRect* marker, const std::vector<QCPBars*>& bars, const std::vector<int>& keys,
                                  int chosen) {
  const auto it = std::find(keys.begin(), keys.end(), chosen);
  marker->setVisible(chosen >= 0 && it != keys.end());
  if (!marker->visible()) return;
  const auto key = static_cast<double>(it - keys.begin());
  double base = 0.0;
  double top = 0.0;
  for (const QCPBars* b : bars) {
    const auto found = b->data()->findBegin(key, false);
    if (found == b->data()->constEnd() || std::abs(found->key - key) > 1e-9) continue;
    base = b->baseValue();
    top = std::max(top, base + found->value);
  }
  const double half = 0.7 / 2.0 + 0.06;  // the bars' width is 0.7
  marker->topLeft->setCoords(key - half, top);
  marker->bottomRight->setCoords(key + half, base);
}

void GridExplorerPage::buildMemoryPlot() {
  // Memory per GPU with the HBM line.
  styleBarChart(memory_plot_, 260);
  memory_plot_->setObjectName(QStringLiteral("memoryPlot"));
  memory_bars_ = new QCPBars(memory_plot_->xAxis, memory_plot_->yAxis);
  memory_bars_->setName(tr("fits"));
  memory_over_bars_ = new QCPBars(memory_plot_->xAxis, memory_plot_->yAxis);
  memory_over_bars_->setName(tr("does not fit"));
  for (QCPBars* bars : {memory_bars_, memory_over_bars_}) {
    bars->setWidthType(QCPBars::wtPlotCoords);
    bars->setWidth(0.7);
    bars->setPen(Qt::NoPen);
  }
  memory_bars_->setBrush(quantityColor());
  memory_over_bars_->setBrush(problemColor());
  hbm_line_ = new QCPItemStraightLine(memory_plot_);
  hbm_line_->setPen(QPen(problemColor(), 1.5, Qt::DashLine));
  hbm_label_ = new QCPItemText(memory_plot_);
  hbm_label_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
  hbm_label_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
  hbm_label_->position->setTypeY(QCPItemPosition::ptPlotCoords);
  hbm_label_->setColor(problemColor());
  hbm_label_->setPadding(QMargins(0, 0, 4, 2));
  memory_plot_->yAxis->setLabel(tr("max memory per GPU (GiB)"));
  memory_plot_->xAxis->setLabel(tr("every grid: M = sharding group size, R = replicas"));
}

void GridExplorerPage::buildImbalancePlot() {
  // Load imbalance (max/mean of the per-rank loads) of every grid.
  styleBarChart(imbalance_plot_, 260);
  imbalance_plot_->setObjectName(QStringLiteral("imbalancePlot"));
  imbalance_bars_ = new QCPBars(imbalance_plot_->xAxis, imbalance_plot_->yAxis);
  imbalance_bars_->setName(tr("max / mean load"));
  imbalance_bars_->setWidthType(QCPBars::wtPlotCoords);
  imbalance_bars_->setWidth(0.7);
  imbalance_bars_->setPen(Qt::NoPen);
  imbalance_bars_->setBrush(quantityColor());
  imbalance_bars_->setBaseValue(1.0);
  imbalance_plot_->yAxis->setLabel(tr("imbalance (max / mean load)"));
  imbalance_plot_->xAxis->setLabel(tr("every grid: M = sharding group size, R = replicas"));
}

void GridExplorerPage::buildHeatmap() {
  // Throughput per GPU over world size x M: one cell per grid, the better layout.
  styleBarChart(heatmap_plot_, 260);
  heatmap_plot_->setObjectName(QStringLiteral("heatmapPlot"));
  heatmap_ = new QCPColorMap(heatmap_plot_->xAxis, heatmap_plot_->yAxis);
  heatmap_->setInterpolate(false);
  heatmap_->setTightBoundary(false);
  auto* scale = new QCPColorScale(heatmap_plot_);
  heatmap_plot_->plotLayout()->addElement(0, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->axis()->setLabel(tr("samples/s per GPU"));
  scale->setBarWidth(12);
  heatmap_->setColorScale(scale);  // adopts the scale's gradient: set ours after
  heatmap_->setGradient(viridisGradient());
  // Per-GPU throughput spans orders of magnitude across grids: a log colour scale.
  heatmap_->setDataScaleType(QCPAxis::stLogarithmic);
  scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  scale->axis()->setNumberFormat(QStringLiteral("eb"));
  scale->axis()->setNumberPrecision(0);
  auto* margins = new QCPMarginGroup(heatmap_plot_);
  heatmap_plot_->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
  heatmap_plot_->xAxis->setLabel(tr("world size N (GPUs)"));
  heatmap_plot_->yAxis->setLabel(tr("sharding group size M"));
  heatmap_plot_->yAxis->grid()->setVisible(false);
  heatmap_plot_->yAxis->setSubTicks(false);
  heatmap_marker_ = new QCPItemRect(heatmap_plot_);
  heatmap_marker_->setPen(QPen(chosenColor(), 2.5));
  heatmap_marker_->setBrush(Qt::NoBrush);
  heatmap_marker_->setVisible(false);
  scaling_annotations_ = new ScalingAnnotations(
      heatmap_plot_, [session = session_]() -> const planner::ScalingResult& { return session->scaling(); });
  heatmap_status_->setObjectName(QStringLiteral("heatmapStatus"));
  heatmap_status_->setWordWrap(true);
  connect(heatmap_plot_, &QCustomPlot::mousePress, this, &GridExplorerPage::onHeatmapClick);
}

void GridExplorerPage::buildTable() {
  // The table of every grid, in ranked order until a header is clicked.
  model_->setColumnCount(ColumnCount);
  model_->setHorizontalHeaderLabels({tr("Rank"), tr("M"), tr("R"), tr("Layout"), tr("Step\n(ms)"), tr("Embed\n(ms)"),
                                     tr("A2A\n(ms)"), tr("Sync\n(ms)"), tr("Dense\n(ms)"), tr("Samples/s"),
                                     tr("Mem (GiB)"), tr("Max/mean"), tr("Gap (%)"), tr("Fits")});
  const QStringList header_tips = {tr("Rank by predicted step time (fitting grids first)"),
                                   tr("Sharding group size"),
                                   tr("Replicas (N / M)"),
                                   tr("Rank layout of the sharding groups"),
                                   tr("Predicted step time"),
                                   tr("Embedding forward + backward on the critical rank"),
                                   tr("All-to-alls of the critical rank"),
                                   tr("Replica weight + optimizer sync (amortised)"),
                                   tr("Dense compute + exposed dense all-reduce"),
                                   tr("Predicted training throughput"),
                                   tr("Memory per GPU, max over ranks"),
                                   tr("Load imbalance: max over mean of the per-rank loads"),
                                   tr("Gap of the slowest rank's load to the lower bound"),
                                   tr("Every rank's memory fits its capacity")};
  for (int c = 0; c < header_tips.size(); ++c) model_->horizontalHeaderItem(c)->setToolTip(header_tips[c]);
  model_->setSortRole(kSortRole);
  table_->setObjectName(QStringLiteral("gridTable"));
  table_->setModel(model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->setVisible(false);
  table_->horizontalHeader()->setHighlightSections(false);
  table_->horizontalHeader()->setStretchLastSection(false);
  // The step and its parts first, so the breakdown is in view without
  // scrolling at 1280x800 (the model's column order stays the enum's).
  const Column visual_order[] = {ColRank,        ColM,     ColR,       ColLayout, ColStep, ColEmbedding, ColAllToAll,
                                 ColReplicaSync, ColDense, ColSamples, ColMemory, ColFits, ColMaxMean,   ColGap};
  static_assert(std::size(visual_order) == ColumnCount);
  for (int i = 0; i < ColumnCount; ++i)
    table_->horizontalHeader()->moveSection(table_->horizontalHeader()->visualIndex(visual_order[i]), i);
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  table_->setSortingEnabled(true);
  table_->sortByColumn(ColRank, Qt::AscendingOrder);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) { chooseRow(index.row()); });
}

const planner::SweepResult& GridExplorerPage::result() const { return session_->result(); }
bool GridExplorerPage::isRunning() const { return session_->isRunning(); }
quint64 GridExplorerPage::currentJobId() const { return session_->currentJobId(); }
quint64 GridExplorerPage::shownJobId() const { return session_->shownJobId(); }
void GridExplorerPage::rerun() { session_->rerun(); }
void GridExplorerPage::cancel() { session_->cancel(); }

int GridExplorerPage::stepBarCount() const { return step_plot_->parts().front()->dataCount(); }

int GridExplorerPage::memoryBarCount() const { return memory_bars_->dataCount() + memory_over_bars_->dataCount(); }

int GridExplorerPage::heatmapCellCount() const {
  int n = 0;
  for (const planner::ScalingCell& c : session_->scaling().cells) n += c.planned ? 1 : 0;
  return n;
}

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
  hbm_gib_ = static_cast<double>(session_->plannedProject().cluster.gpu.hbm_bytes) / kGiB;

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
    message_->setText(
        tr("%1 grids planned; none fits in %2 GiB of HBM.").arg(result.grids.size()).arg(hbm_gib_, 0, 'f', 1));
  }
  fillTable();
  fillPlots();
  showChosen();
  emit sweepFinished(job_id);
}

void GridExplorerPage::fillTable() {
  const planner::SweepResult& result = session_->result();
  table_->setSortingEnabled(false);
  model_->removeRows(0, model_->rowCount());
  for (std::size_t i = 0; i < result.grids.size(); ++i) {
    const planner::GridResult& g = result.grids[i];
    const double memory = static_cast<double>(report::peakMemory(g)) / kGiB;
    QList<QStandardItem*> row;
    QStandardItem* rank = cell(QString::number(i + 1), static_cast<double>(i));
    rank->setData(static_cast<int>(i), kGridIndexRole);
    row << rank << cell(QString::number(g.grid.group_size), g.grid.group_size)
        << cell(QString::number(g.grid.replicas), g.grid.replicas)
        << cell(QString::fromLatin1(core::toString(g.grid.layout)), g.grid.layout == core::RankLayout::Strided ? 0 : 1,
                Qt::AlignLeft | Qt::AlignVCenter)
        << cell(QString::number(g.step.step_ms, 'f', 2), g.step.step_ms)
        << cell(QString::number(g.step.embedding_ms, 'f', 2), g.step.embedding_ms)
        << cell(QString::number(g.step.all_to_all_ms, 'f', 2), g.step.all_to_all_ms)
        << cell(QString::number(g.step.replica_sync_ms, 'f', 2), g.step.replica_sync_ms)
        << cell(QString::number(g.step.dense_ms, 'f', 2), g.step.dense_ms)
        << cell(QString::fromStdString(report::formatScaledCount(g.samples_per_second)), g.samples_per_second)
        << cell(QString::number(memory, 'f', 1), memory)
        << cell(QString::number(g.imbalance.max_over_mean, 'f', 3), g.imbalance.max_over_mean)
        << cell(QString::number(std::abs(g.gap) < 5e-4 ? 0.0 : g.gap * 100.0, 'f', 1), g.gap)
        << cell(g.fits ? tr("yes") : tr("no"), g.fits ? 1 : 0, Qt::AlignCenter);
    if (!g.fits) {
      for (QStandardItem* item : row) item->setForeground(problemColor());
      row.back()->setToolTip(QString::fromStdString(g.problems.empty() ? std::string() : g.problems.front()));
    }
    model_->appendRow(row);
  }
  table_->setSortingEnabled(true);
  markCalibratedColumns();
  table_->resizeColumnsToContents();
}

void GridExplorerPage::markCalibratedColumns() {
  const core::Project& project = session_->plannedProject();
  const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
  const report::CalibratedFigures changed = report::calibratedFigures(cal);
  const QString mark = QStringLiteral("\u2020");
  const QString on = QString::fromStdString(core::calibratedOnText(cal));
  const struct {
    int column;
    QString title;
    bool calibrated;
  } columns[] = {
      {ColStep, tr("Step\n(ms)"), changed.any()},         {ColEmbedding, tr("Embed\n(ms)"), changed.embedding},
      {ColAllToAll, tr("A2A\n(ms)"), changed.all_to_all}, {ColReplicaSync, tr("Sync\n(ms)"), changed.replica_sync},
      {ColDense, tr("Dense\n(ms)"), changed.dense},       {ColSamples, tr("Samples/s"), changed.any()}};
  for (const auto& c : columns) {
    QStandardItem* header = model_->horizontalHeaderItem(c.column);
    header->setText(c.calibrated ? c.title + mark : c.title);
    header->setData(c.calibrated ? on : QVariant(), Qt::StatusTipRole);
  }
}

void GridExplorerPage::fillPlots() {
  const planner::SweepResult& result = session_->result();
  // Grids in M order, strided before contiguous.
  std::vector<int> order(result.grids.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&result](int a, int b) {
    const auto& ga = result.grids[static_cast<std::size_t>(a)].grid;
    const auto& gb = result.grids[static_cast<std::size_t>(b)].grid;
    if (ga.group_size != gb.group_size) return ga.group_size < gb.group_size;
    return ga.layout == core::RankLayout::Strided && gb.layout != core::RankLayout::Strided;
  });
  step_keys_.clear();
  memory_keys_.clear();
  for (int index : order) {
    memory_keys_.push_back(index);
    if (result.grids[static_cast<std::size_t>(index)].fits) step_keys_.push_back(index);
  }
  fillStepPlot();

  QVector<double> fit_k;
  QVector<double> fit_v;
  QVector<double> over_k;
  QVector<double> over_v;
  QVector<double> imb_k;
  QVector<double> imb_v;
  std::vector<const planner::GridResult*> grids;
  double memory_max = hbm_gib_;
  double imbalance_max = 1.0;
  for (std::size_t k = 0; k < memory_keys_.size(); ++k) {
    const planner::GridResult& g = result.grids[static_cast<std::size_t>(memory_keys_[k])];
    const auto key = static_cast<double>(k);
    const double gib = static_cast<double>(report::peakMemory(g)) / kGiB;
    (g.fits ? fit_k : over_k).append(key);
    (g.fits ? fit_v : over_v).append(gib);
    imb_k.append(key);
    imb_v.append(g.imbalance.max_over_mean - 1.0);  // bars stand on the base value 1.0: their value is the excess
    memory_max = std::max(memory_max, gib);
    imbalance_max = std::max(imbalance_max, g.imbalance.max_over_mean);
    grids.push_back(&g);
  }
  memory_bars_->setData(fit_k, fit_v, true);
  memory_over_bars_->setData(over_k, over_v, true);
  imbalance_bars_->setData(imb_k, imb_v, true);
  memory_ticks_->setGrids(grids);
  imbalance_ticks_->setGrids(grids);
  const double x_max = std::max(static_cast<double>(memory_keys_.size()) - 0.4, 0.4);
  for (QCustomPlot* plot : {memory_plot_, imbalance_plot_}) plot->xAxis->setRange(-0.6, x_max);
  memory_plot_->yAxis->setRange(0, memory_max > 0 ? memory_max * 1.15 : 1.0);
  hbm_line_->point1->setCoords(0, hbm_gib_);
  hbm_line_->point2->setCoords(1, hbm_gib_);
  hbm_label_->position->setCoords(1.0, hbm_gib_);
  hbm_label_->setText(tr("HBM %1 GiB").arg(hbm_gib_, 0, 'f', 1));
  hbm_line_->setVisible(hbm_gib_ > 0);
  hbm_label_->setVisible(hbm_gib_ > 0);
  memory_plot_->replot(QCustomPlot::rpQueuedReplot);
  imbalance_plot_->yAxis->setRange(1.0, 1.0 + std::max(imbalance_max - 1.0, 0.01) * 1.2);
  imbalance_plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GridExplorerPage::fillStepPlot() {
  const core::Project& project = session_->plannedProject();
  const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
  step_plot_->setGrids(session_->result(), step_keys_, report::calibratedFigures(cal),
                       QString::fromStdString(core::calibratedOnText(cal)));
  step_plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GridExplorerPage::fillHeatmap() {
  const planner::ScalingResult& scaling = session_->scaling();
  for (QCPItemText* label : heatmap_labels_) heatmap_plot_->removeItem(label);
  heatmap_labels_.clear();
  const auto cols = static_cast<int>(scaling.world_sizes.size());
  const auto rows = static_cast<int>(scaling.group_sizes.size());
  heatmap_->data()->setSize(std::max(cols, 1), std::max(rows, 1));
  heatmap_->data()->setRange(QCPRange(0, std::max(cols - 1, 0)), QCPRange(0, std::max(rows - 1, 0)));
  heatmap_->data()->fill(std::numeric_limits<double>::quiet_NaN());
  const double best = scaling.bestPerGpu();
  int fitting = 0;
  for (int mi = 0; mi < rows; ++mi) {
    for (int ni = 0; ni < cols; ++ni) {
      const planner::ScalingCell* c = scaling.at(static_cast<std::size_t>(mi), static_cast<std::size_t>(ni));
      if (c == nullptr || !c->planned) continue;
      auto* label = new QCPItemText(heatmap_plot_);
      label->position->setCoords(ni, mi);
      QFont small = label->font();
      small.setPointSizeF(small.pointSizeF() * 0.8);
      label->setFont(small);
      if (c->fits) {
        ++fitting;
        heatmap_->data()->setCell(ni, mi, c->samples_per_second_per_gpu);
        const double efficiency = best > 0 ? c->samples_per_second_per_gpu / best : 0;
        // Two significant digits below 10%, so 0.4% and 0.04% stay apart.
        const double percent = efficiency * 100.0;
        label->setText(percent >= 9.95    ? QString::number(percent, 'f', 0)
                       : percent >= 0.995 ? QString::number(percent, 'f', 1)
                                          : QString::number(percent, 'g', 2));
        label->setColor(efficiency > 0.6 ? Qt::black : Qt::white);
      } else {
        label->setText(tr("OOM"));
        label->setColor(problemColor());
      }
      heatmap_labels_.push_back(label);
    }
  }
  auto x_ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int ni = 0; ni < cols; ++ni)
    x_ticker->addTick(ni, QString::number(scaling.world_sizes[static_cast<std::size_t>(ni)]));
  auto y_ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int mi = 0; mi < rows; ++mi)
    y_ticker->addTick(mi, QString::number(scaling.group_sizes[static_cast<std::size_t>(mi)]));
  heatmap_plot_->xAxis->setTicker(x_ticker);
  heatmap_plot_->yAxis->setTicker(y_ticker);
  heatmap_plot_->xAxis->setRange(-0.5, std::max(cols, 1) - 0.5);
  heatmap_plot_->yAxis->setRange(-0.5, std::max(rows, 1) - 0.5);
  heatmap_plot_->xAxis->setTickLabelRotation(cols > 8 ? -45 : 0);
  // Log colours: from 1/1000 of the best cell (darkest) to the best.
  if (best > 0) heatmap_->setDataRange(QCPRange(best / 1000.0, best));
  scaling_annotations_->update();
  if (!scaling.error.empty()) {
    heatmap_status_->setText(tr("No heatmap: %1.").arg(QString::fromStdString(scaling.error)));
  } else {
    heatmap_status_->setText(
        tr("%1 grids at %2 world sizes, %3 fit%4. Cell text: % of the best cell's throughput "
           "per GPU. %5 Hover for figures; click a cell to choose it (another N rescales the "
           "cluster).")
            .arg(heatmapCellCount())
            .arg(cols)
            .arg(fitting)
            .arg(scaling.cancelled ? tr(" (cancelled)") : QString(), scaling_annotations_->legendText()));
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
  chosen_text_.clear();
  if (chosen >= 0) {
    const planner::GridResult& g = result.grids[static_cast<std::size_t>(chosen)];
    chosen_text_ = PlanningSession::describe(g);
    // Select the grid's row wherever the table is sorted.
    for (int row = 0; row < model_->rowCount(); ++row) {
      if (model_->item(row, ColRank)->data(kGridIndexRole).toInt() == chosen) {
        if (table_->currentIndex().row() != row) table_->selectRow(row);
        break;
      }
    }
  } else {
    table_->clearSelection();
  }
  // Mark the chosen grid's heatmap cell.
  const planner::ScalingResult& scaling = session_->scaling();
  const planner::GridResult* grid = chosen >= 0 ? &result.grids[static_cast<std::size_t>(chosen)] : nullptr;
  bool marked = false;
  if (grid != nullptr) {
    const auto n = std::find(scaling.world_sizes.begin(), scaling.world_sizes.end(), grid->grid.world_size);
    const auto m = std::find(scaling.group_sizes.begin(), scaling.group_sizes.end(), grid->grid.group_size);
    if (n != scaling.world_sizes.end() && m != scaling.group_sizes.end()) {
      const double x = static_cast<double>(n - scaling.world_sizes.begin());
      const double y = static_cast<double>(m - scaling.group_sizes.begin());
      heatmap_marker_->topLeft->setCoords(x - 0.5, y + 0.5);
      heatmap_marker_->bottomRight->setCoords(x + 0.5, y - 0.5);
      marked = true;
    }
  }
  heatmap_marker_->setVisible(marked);
  heatmap_plot_->replot(QCustomPlot::rpQueuedReplot);
  step_plot_->setChosen(chosen);
  markChosen(chosen_markers_[1], {memory_bars_, memory_over_bars_}, memory_keys_, chosen);
  markChosen(chosen_markers_[2], {imbalance_bars_}, memory_keys_, chosen);
  for (QCustomPlot* plot : {memory_plot_, imbalance_plot_}) plot->replot(QCustomPlot::rpQueuedReplot);
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
  if (row < 0 || row >= model_->rowCount()) return;
  const QVariant index = model_->item(row, ColRank)->data(kGridIndexRole);
  if (index.isValid()) session_->choose(index.toInt());
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

void GridExplorerPage::onHeatmapClick(QMouseEvent* event) {
  if (!heatmap_plot_->axisRect()->rect().contains(event->pos())) return;
  const double x = heatmap_plot_->xAxis->pixelToCoord(event->pos().x());
  const double y = heatmap_plot_->yAxis->pixelToCoord(event->pos().y());
  const long ni = std::lround(x);
  const long mi = std::lround(y);
  if (ni < 0 || mi < 0) return;
  chooseHeatmapCell(static_cast<std::size_t>(mi), static_cast<std::size_t>(ni));
}

void GridExplorerPage::onPlottableClick(QCPAbstractPlottable* plottable, int data_index, QMouseEvent* /*event*/) {
  auto* bars = qobject_cast<QCPBars*>(plottable);
  if (bars == nullptr || data_index < 0 || data_index >= bars->dataCount()) return;
  const auto key = static_cast<std::size_t>((bars->data()->constBegin() + data_index)->key);
  if (key < memory_keys_.size()) session_->choose(memory_keys_[key]);
}

}  // namespace shardscope::app
