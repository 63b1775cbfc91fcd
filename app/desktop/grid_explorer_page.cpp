#include "grid_explorer_page.h"

#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <exception>
#include <qcustomplot.h>

#include "project_document.h"

namespace shardscope::app {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

QString layoutName(core::RankLayout layout) {
  return layout == core::RankLayout::Strided ? QStringLiteral("strided") : QStringLiteral("contiguous");
}

double maxMemoryGiB(const planner::GridResult& grid) {
  std::uint64_t most = 0;
  for (const auto& rank : grid.ranks) most = std::max(most, rank.memory_bytes);
  return static_cast<double>(most) / kGiB;
}

QString gridLabel(const planner::GridResult& g) {
  return QStringLiteral("M=%1 R=%2\n%3")
      .arg(g.grid.group_size)
      .arg(g.grid.replicas)
      .arg(g.grid.layout == core::RankLayout::Strided ? QStringLiteral("strided") : QStringLiteral("contig"));
}

// Runs on a pool thread: copies in, a plain value out.
SweepOutcome runSweep(const core::Project& project, const std::shared_ptr<std::atomic<bool>>& cancel,
                      const planner::SweepProgress& progress) {
  SweepOutcome outcome;
  if (project.cluster.worldSize() == 0) {
    outcome.error = "the cluster has no GPUs (N = 0)";
    return outcome;
  }
  if (project.model.tables.empty()) {
    outcome.error = "the model has no embedding tables";
    return outcome;
  }
  try {
    const core::Calibration* cal = project.calibration ? &*project.calibration : nullptr;
    outcome.result = planner::sweep(project.model, project.cluster, cal, project.constraints, planner::SweepOptions{},
                                    progress, cancel.get());
  } catch (const std::exception& e) {
    outcome.error = "planning failed: ";
    outcome.error += e.what();
  } catch (...) {
    outcome.error = "planning failed";
  }
  return outcome;
}

QStandardItem* cell(const QString& text, double sort_value, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QStandardItem(text);
  item->setData(sort_value, GridExplorerPage::kSortRole);
  item->setData(QVariant::fromValue(static_cast<int>(align)), Qt::TextAlignmentRole);
  item->setEditable(false);
  return item;
}

void stylePlot(QCustomPlot* plot, const QPalette& palette) {
  plot->setBackground(palette.base());
  plot->xAxis->grid()->setVisible(false);
  plot->xAxis->setSubTicks(false);
  plot->xAxis->setTickLength(0, 3);
  plot->yAxis->grid()->setSubGridVisible(false);
  plot->setMinimumHeight(260);
}

}  // namespace

GridExplorerPage::GridExplorerPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      debounce_(new QTimer(this)),
      progress_(new QProgressBar),
      cancel_button_(new QPushButton(tr("Cancel"))),
      message_(new QLabel),
      step_plot_(new QCustomPlot),
      memory_plot_(new QCustomPlot),
      memory_bars_(nullptr),
      memory_over_bars_(nullptr),
      hbm_line_(nullptr),
      hbm_label_(nullptr),
      model_(new QStandardItemModel(this)),
      table_(new QTableView) {
  setObjectName(QStringLiteral("gridExplorerPage"));
  debounce_->setSingleShot(true);
  debounce_->setInterval(150);
  connect(debounce_, &QTimer::timeout, this, &GridExplorerPage::rerun);

  progress_->setObjectName(QStringLiteral("sweepProgress"));
  progress_->setTextVisible(true);
  progress_->setFormat(tr("planning grid %v of %m"));
  cancel_button_->setObjectName(QStringLiteral("sweepCancel"));
  cancel_button_->setEnabled(false);
  connect(cancel_button_, &QPushButton::clicked, this, &GridExplorerPage::cancel);
  message_->setObjectName(QStringLiteral("sweepMessage"));

  // Step time: four stacked bar series, one per part of the step.
  stylePlot(step_plot_, palette());
  step_plot_->setObjectName(QStringLiteral("stepPlot"));
  const struct {
    QString name;
    QColor color;
  } parts[] = {{tr("embedding"), QColor(0x3a, 0x7c, 0xc2)},
               {tr("all-to-all"), QColor(0xe0, 0x8a, 0x2e)},
               {tr("replica sync"), QColor(0x7a, 0x5c, 0xb8)},
               {tr("dense"), QColor(0x4c, 0xa5, 0x5a)}};
  for (const auto& part : parts) {
    auto* bars = new QCPBars(step_plot_->xAxis, step_plot_->yAxis);
    bars->setName(part.name);
    bars->setWidthType(QCPBars::wtPlotCoords);
    bars->setWidth(0.7);
    bars->setPen(Qt::NoPen);
    bars->setBrush(part.color);
    if (!step_bars_.empty()) bars->moveAbove(step_bars_.back());
    step_bars_.push_back(bars);
  }
  step_plot_->yAxis->setLabel(tr("predicted step time (ms)"));
  step_plot_->xAxis->setLabel(tr("fitting grids: M = sharding group size, R = replicas"));
  step_plot_->legend->setVisible(true);
  step_plot_->legend->setBrush(QColor(255, 255, 255, 220));
  step_plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

  // Memory per GPU with the HBM line.
  stylePlot(memory_plot_, palette());
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
  memory_bars_->setBrush(QColor(0x3a, 0x7c, 0xc2));
  memory_over_bars_->setBrush(QColor(0xc8, 0x3c, 0x3c));
  hbm_line_ = new QCPItemStraightLine(memory_plot_);
  hbm_line_->setPen(QPen(QColor(0xc8, 0x3c, 0x3c), 1.5, Qt::DashLine));
  hbm_label_ = new QCPItemText(memory_plot_);
  hbm_label_->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
  hbm_label_->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
  hbm_label_->position->setTypeY(QCPItemPosition::ptPlotCoords);
  hbm_label_->setColor(QColor(0xc8, 0x3c, 0x3c));
  hbm_label_->setPadding(QMargins(0, 0, 4, 2));
  memory_plot_->yAxis->setLabel(tr("memory per GPU, max over ranks (GiB)"));
  memory_plot_->xAxis->setLabel(tr("every grid: M = sharding group size, R = replicas"));

  for (QCustomPlot* plot : {step_plot_, memory_plot_}) {
    connect(plot, &QCustomPlot::plottableClick, this, &GridExplorerPage::onPlottableClick);
  }

  // The table of every grid, in ranked order until a header is clicked.
  model_->setColumnCount(ColumnCount);
  model_->setHorizontalHeaderLabels({tr("Rank"), tr("M"), tr("R"), tr("Layout"), tr("Step (ms)"),
                                     tr("Embed (ms)"), tr("A2A (ms)"), tr("Sync (ms)"),
                                     tr("Dense (ms)"), tr("Samples/s"), tr("Mem (GiB)"), tr("Max/mean"),
                                     tr("Gap (%)"), tr("Fits")});
  const QStringList header_tips = {
      tr("Rank by predicted step time (fitting grids first)"), tr("Sharding group size"),
      tr("Replicas (N / M)"), tr("Rank layout of the sharding groups"), tr("Predicted step time"),
      tr("Embedding forward + backward on the critical rank"), tr("All-to-alls of the critical rank"),
      tr("Replica weight + optimizer sync (amortised)"), tr("Dense compute + exposed dense all-reduce"),
      tr("Predicted training throughput"), tr("Memory per GPU, max over ranks"),
      tr("Load imbalance: max over mean of the per-rank loads"),
      tr("Gap of the slowest rank's load to the lower bound"), tr("Every rank's memory fits its capacity")};
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
  table_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  table_->setSortingEnabled(true);
  table_->sortByColumn(ColRank, Qt::AscendingOrder);
  connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) { chooseRow(index.row()); });

  auto* bar = new QHBoxLayout;
  bar->addWidget(message_, 1);
  bar->addWidget(progress_);
  bar->addWidget(cancel_button_);

  auto* plots = new QSplitter(Qt::Horizontal);
  plots->setChildrenCollapsible(false);
  plots->addWidget(step_plot_);
  plots->addWidget(memory_plot_);
  plots->setStretchFactor(0, 3);
  plots->setStretchFactor(1, 2);

  auto* vertical = new QSplitter(Qt::Vertical);
  vertical->setChildrenCollapsible(false);
  vertical->addWidget(plots);
  vertical->addWidget(table_);
  vertical->setStretchFactor(0, 3);
  vertical->setStretchFactor(1, 2);
  table_->setMinimumHeight(140);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(vertical, 1);

  connect(document_, &ProjectDocument::projectChanged, this, &GridExplorerPage::scheduleRerun);
  rerun();
}

GridExplorerPage::~GridExplorerPage() {
  // Stop every run and wait for it (bounded by one grid): the runs post to this object.
  if (cancel_flag_) cancel_flag_->store(true);
  for (QFuture<SweepOutcome>& future : futures_) future.waitForFinished();
}

int GridExplorerPage::stepBarCount() const { return step_bars_.front()->dataCount(); }

int GridExplorerPage::memoryBarCount() const { return memory_bars_->dataCount() + memory_over_bars_->dataCount(); }

QString GridExplorerPage::messageText() const { return message_->text(); }

void GridExplorerPage::scheduleRerun() {
  // Stop the stale run at once; start a new one when the edits settle.
  // The run in flight is stale now: its result will be dropped.
  if (cancel_flag_) cancel_flag_->store(true);
  ++job_id_;
  running_ = true;
  cancel_button_->setEnabled(true);
  progress_->setRange(0, 0);
  progress_->setVisible(true);
  message_->setText(tr("The project changed; planning again\u2026"));
  debounce_->start();
}

void GridExplorerPage::rerun() {
  debounce_->stop();
  if (cancel_flag_) cancel_flag_->store(true);
  futures_.erase(std::remove_if(futures_.begin(), futures_.end(),
                                [](const QFuture<SweepOutcome>& f) { return f.isFinished(); }),
                 futures_.end());

  const quint64 id = ++job_id_;
  auto flag = std::make_shared<std::atomic<bool>>(false);
  cancel_flag_ = flag;
  running_ = true;
  cancel_button_->setEnabled(true);
  progress_->setRange(0, 0);  // busy until the first grid is done
  progress_->setVisible(true);
  message_->setText(tr("Planning every grid of %1 GPUs\u2026").arg(document_->project().cluster.worldSize()));

  // The progress callback runs on the pool thread; it only posts to this
  // object (which waits for its runs before it goes away).
  planner::SweepProgress progress = [this, id](std::size_t done, std::size_t total) {
    QMetaObject::invokeMethod(
        this, [this, id, done, total] { onProgress(id, static_cast<int>(done), static_cast<int>(total)); },
        Qt::QueuedConnection);
    return true;
  };
  QFuture<SweepOutcome> future =
      QtConcurrent::run([project = document_->project(), flag, progress] { return runSweep(project, flag, progress); });
  futures_.push_back(future);
  auto* watcher = new QFutureWatcher<SweepOutcome>(this);
  connect(watcher, &QFutureWatcher<SweepOutcome>::finished, this, [this, watcher, id] {
    onFinished(id, watcher->result());
    watcher->deleteLater();
  });
  watcher->setFuture(future);
}

void GridExplorerPage::cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
  if (debounce_->isActive()) {
    // Cancelled before the rerun started: keep the (older) grids shown.
    debounce_->stop();
    running_ = false;
    cancel_button_->setEnabled(false);
    progress_->setVisible(false);
    message_->setText(tr("Cancelled; the grids shown are for the project before the last change."));
  }
}

void GridExplorerPage::onProgress(quint64 job_id, int done, int total) {
  if (job_id != job_id_ || !running_) return;  // an older run
  progress_->setRange(0, std::max(total, 1));
  progress_->setValue(done);
}

void GridExplorerPage::onFinished(quint64 job_id, const SweepOutcome& outcome) {
  if (job_id != job_id_) return;  // an older run: dropped
  running_ = false;
  cancel_button_->setEnabled(false);
  progress_->setVisible(false);
  shown_job_id_ = job_id;
  result_ = outcome.result;
  hbm_gib_ = static_cast<double>(document_->project().cluster.gpu.hbm_bytes) / kGiB;
  chosen_text_.clear();

  const std::size_t fitting = static_cast<std::size_t>(
      std::count_if(result_.grids.begin(), result_.grids.end(), [](const auto& g) { return g.fits; }));
  if (!outcome.error.empty()) {
    message_->setText(tr("Nothing to plan: %1.").arg(QString::fromStdString(outcome.error)));
  } else if (result_.cancelled) {
    message_->setText(tr("Cancelled: %1 grids planned, %2 fit.").arg(result_.grids.size()).arg(fitting));
  } else if (const planner::GridResult* best = result_.best()) {
    message_->setText(tr("%1 grids of N = %2 GPUs, %3 fit. Best: M = %4 \u00d7 R = %5 (%6), %7 ms per step. "
                         "Click a row or a bar to choose a grid.")
                          .arg(result_.grids.size())
                          .arg(best->grid.world_size)
                          .arg(fitting)
                          .arg(best->grid.group_size)
                          .arg(best->grid.replicas)
                          .arg(layoutName(best->grid.layout))
                          .arg(best->step.step_ms, 0, 'f', 2));
  } else {
    message_->setText(tr("%1 grids planned; none fits in %2 GiB of HBM.").arg(result_.grids.size()).arg(hbm_gib_, 0, 'f', 1));
  }
  showResult();
  emit sweepFinished(job_id);
}

void GridExplorerPage::showResult() {
  fillTable();
  fillPlots();
}

void GridExplorerPage::fillTable() {
  table_->setSortingEnabled(false);
  model_->removeRows(0, model_->rowCount());
  for (std::size_t i = 0; i < result_.grids.size(); ++i) {
    const planner::GridResult& g = result_.grids[i];
    const double memory = maxMemoryGiB(g);
    QList<QStandardItem*> row;
    QStandardItem* rank = cell(QString::number(i + 1), static_cast<double>(i));
    rank->setData(static_cast<int>(i), kGridIndexRole);
    row << rank << cell(QString::number(g.grid.group_size), g.grid.group_size)
        << cell(QString::number(g.grid.replicas), g.grid.replicas)
        << cell(layoutName(g.grid.layout), g.grid.layout == core::RankLayout::Strided ? 0 : 1,
                Qt::AlignLeft | Qt::AlignVCenter)
        << cell(QString::number(g.step.step_ms, 'f', 2), g.step.step_ms)
        << cell(QString::number(g.step.embedding_ms, 'f', 2), g.step.embedding_ms)
        << cell(QString::number(g.step.all_to_all_ms, 'f', 2), g.step.all_to_all_ms)
        << cell(QString::number(g.step.replica_sync_ms, 'f', 2), g.step.replica_sync_ms)
        << cell(QString::number(g.step.dense_ms, 'f', 2), g.step.dense_ms)
        << cell(QString::number(g.samples_per_second, 'f', 0), g.samples_per_second)
        << cell(QString::number(memory, 'f', 1), memory)
        << cell(QString::number(g.imbalance.max_over_mean, 'f', 3), g.imbalance.max_over_mean)
        << cell(QString::number(std::abs(g.gap) < 5e-4 ? 0.0 : g.gap * 100.0, 'f', 1), g.gap)
        << cell(g.fits ? tr("yes") : tr("no"), g.fits ? 1 : 0, Qt::AlignCenter);
    if (!g.fits) {
      for (QStandardItem* item : row) item->setForeground(QColor(0xb0, 0x30, 0x30));
      row.back()->setToolTip(QString::fromStdString(g.problems.empty() ? std::string() : g.problems.front()));
    }
    model_->appendRow(row);
  }
  table_->setSortingEnabled(true);
  table_->resizeColumnsToContents();
}

void GridExplorerPage::fillPlots() {
  // Grids in M order, strided before contiguous.
  std::vector<int> order(result_.grids.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
    const auto& ga = result_.grids[static_cast<std::size_t>(a)].grid;
    const auto& gb = result_.grids[static_cast<std::size_t>(b)].grid;
    if (ga.group_size != gb.group_size) return ga.group_size < gb.group_size;
    return ga.layout == core::RankLayout::Strided && gb.layout != core::RankLayout::Strided;
  });

  step_keys_.clear();
  memory_keys_.clear();
  QVector<double> step_k;
  QVector<double> parts[4];
  auto step_ticker = QSharedPointer<QCPAxisTickerText>::create();
  double step_max = 0;
  for (int index : order) {
    const planner::GridResult& g = result_.grids[static_cast<std::size_t>(index)];
    if (!g.fits) continue;
    const double key = static_cast<double>(step_keys_.size());
    step_keys_.push_back(index);
    step_k.append(key);
    parts[0].append(g.step.embedding_ms);
    parts[1].append(g.step.all_to_all_ms);
    parts[2].append(g.step.replica_sync_ms);
    parts[3].append(g.step.dense_ms);
    step_max = std::max(step_max, g.step.embedding_ms + g.step.all_to_all_ms + g.step.replica_sync_ms + g.step.dense_ms);
    step_ticker->addTick(key, gridLabel(g));
  }
  for (std::size_t p = 0; p < step_bars_.size(); ++p) step_bars_[p]->setData(step_k, parts[p], true);
  // The total above each bar: the small parts are hard to see on a linear
  // axis; the table has every number.
  for (QCPItemText* label : step_totals_) step_plot_->removeItem(label);
  step_totals_.clear();
  for (std::size_t k = 0; k < step_keys_.size(); ++k) {
    const planner::GridResult& g = result_.grids[static_cast<std::size_t>(step_keys_[k])];
    auto* label = new QCPItemText(step_plot_);
    label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
    label->position->setCoords(static_cast<double>(k), step_k.isEmpty() ? 0.0 :
        parts[0][static_cast<qsizetype>(k)] + parts[1][static_cast<qsizetype>(k)] +
        parts[2][static_cast<qsizetype>(k)] + parts[3][static_cast<qsizetype>(k)]);
    label->setText(QString::number(g.step.step_ms, 'f', g.step.step_ms >= 100 ? 0 : 1));
    QFont small = label->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    label->setFont(small);
    label->setPadding(QMargins(0, 0, 0, 2));
    step_totals_.push_back(label);
  }
  step_plot_->xAxis->setTicker(step_ticker);
  step_plot_->xAxis->setRange(-0.6, std::max(static_cast<double>(step_keys_.size()) - 0.4, 0.4));
  step_plot_->yAxis->setRange(0, step_max > 0 ? step_max * 1.25 : 1.0);
  step_plot_->replot(QCustomPlot::rpQueuedReplot);

  QVector<double> fit_k;
  QVector<double> fit_v;
  QVector<double> over_k;
  QVector<double> over_v;
  auto memory_ticker = QSharedPointer<QCPAxisTickerText>::create();
  double memory_max = hbm_gib_;
  for (int index : order) {
    const planner::GridResult& g = result_.grids[static_cast<std::size_t>(index)];
    const double key = static_cast<double>(memory_keys_.size());
    const double gib = maxMemoryGiB(g);
    memory_keys_.push_back(index);
    (g.fits ? fit_k : over_k).append(key);
    (g.fits ? fit_v : over_v).append(gib);
    memory_max = std::max(memory_max, gib);
    memory_ticker->addTick(key, gridLabel(g));
  }
  memory_bars_->setData(fit_k, fit_v, true);
  memory_over_bars_->setData(over_k, over_v, true);
  memory_plot_->xAxis->setTicker(memory_ticker);
  memory_plot_->xAxis->setRange(-0.6, std::max(static_cast<double>(memory_keys_.size()) - 0.4, 0.4));
  memory_plot_->yAxis->setRange(0, memory_max > 0 ? memory_max * 1.15 : 1.0);
  hbm_line_->point1->setCoords(0, hbm_gib_);
  hbm_line_->point2->setCoords(1, hbm_gib_);
  hbm_label_->position->setCoords(1.0, hbm_gib_);
  hbm_label_->setText(tr("HBM %1 GiB").arg(hbm_gib_, 0, 'f', 1));
  hbm_line_->setVisible(hbm_gib_ > 0);
  hbm_label_->setVisible(hbm_gib_ > 0);
  // Many grids: turn the labels so they do not overlap.
  const int rotation = memory_keys_.size() > 10 ? -90 : 0;
  memory_plot_->xAxis->setTickLabelRotation(rotation);
  step_plot_->xAxis->setTickLabelRotation(step_keys_.size() > 6 ? -90 : 0);
  memory_plot_->replot(QCustomPlot::rpQueuedReplot);
}

void GridExplorerPage::chooseRow(int row) {
  if (row < 0 || row >= model_->rowCount()) return;
  const QVariant index = model_->item(row, ColRank)->data(kGridIndexRole);
  if (index.isValid()) chooseGrid(index.toInt());
}

void GridExplorerPage::chooseGrid(int grid_index) {
  if (grid_index < 0 || static_cast<std::size_t>(grid_index) >= result_.grids.size()) return;
  const planner::GridResult& g = result_.grids[static_cast<std::size_t>(grid_index)];
  // Select the grid's row wherever the table is sorted.
  for (int row = 0; row < model_->rowCount(); ++row) {
    if (model_->item(row, ColRank)->data(kGridIndexRole).toInt() == grid_index) {
      table_->selectRow(row);
      break;
    }
  }
  chosen_text_ = tr("Grid %1 \u00d7 %2 (%3): step %4 ms")
                     .arg(g.grid.group_size)
                     .arg(g.grid.replicas)
                     .arg(layoutName(g.grid.layout))
                     .arg(g.step.step_ms, 0, 'f', 2);
  if (!g.fits) chosen_text_ += tr(" \u2014 does not fit");
  document_->chooseGroupSize(g.grid.group_size);
  emit gridChosen(chosen_text_);
}

void GridExplorerPage::onPlottableClick(QCPAbstractPlottable* plottable, int data_index, QMouseEvent* /*event*/) {
  auto* bars = qobject_cast<QCPBars*>(plottable);
  if (bars == nullptr || data_index < 0 || data_index >= bars->dataCount()) return;
  const auto key = static_cast<std::size_t>((bars->data()->constBegin() + data_index)->key);
  const std::vector<int>& keys = bars->parentPlot() == step_plot_ ? step_keys_ : memory_keys_;
  if (key < keys.size()) chooseGrid(keys[key]);
}

}  // namespace shardscope::app
