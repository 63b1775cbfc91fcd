#include "grid_table.h"

#include <QHeaderView>
#include <QStandardItemModel>
#include <cmath>
#include <iterator>

#include "chart_style.h"
#include "shardscope/core/device.h"
#include "shardscope/core/summary.h"
#include "shardscope/report/display_format.h"
#include "shardscope/report/grid_choice.h"

namespace shardscope::app {

namespace {

QStandardItem* cell(const QString& text, double sort_value, Qt::Alignment align = Qt::AlignRight | Qt::AlignVCenter) {
  auto* item = new QStandardItem(text);
  item->setData(sort_value, GridTable::kSortRole);
  item->setData(QVariant::fromValue(static_cast<int>(align)), Qt::TextAlignmentRole);
  item->setEditable(false);
  return item;
}

QString ms(double v) { return QString::number(v, 'f', 2); }

}  // namespace

GridTable::GridTable(QWidget* parent) : QTableView(parent), model_(new QStandardItemModel(this)) {
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
  setObjectName(QStringLiteral("gridTable"));
  setModel(model_);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setSelectionMode(QAbstractItemView::SingleSelection);
  setAlternatingRowColors(true);
  setWordWrap(false);
  verticalHeader()->setVisible(false);
  horizontalHeader()->setHighlightSections(false);
  horizontalHeader()->setStretchLastSection(false);
  // The step and its parts first, so the breakdown is in view without
  // scrolling at 1280x800 (the model's column order stays the enum's).
  const Column visual_order[] = {ColRank,        ColM,     ColR,       ColLayout, ColStep, ColEmbedding, ColAllToAll,
                                 ColReplicaSync, ColDense, ColSamples, ColMemory, ColFits, ColMaxMean,   ColGap};
  static_assert(std::size(visual_order) == ColumnCount);
  for (int i = 0; i < ColumnCount; ++i)
    horizontalHeader()->moveSection(horizontalHeader()->visualIndex(visual_order[i]), i);
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  setSortingEnabled(true);
  sortByColumn(ColRank, Qt::AscendingOrder);
  connect(this, &QTableView::clicked, this, [this](const QModelIndex& index) {
    const int grid = gridAt(index.row());
    if (grid >= 0) emit gridClicked(grid);
  });
}

void GridTable::setGrids(const planner::SweepResult& sweep, const core::Calibration* calibration) {
  setSortingEnabled(false);
  model_->removeRows(0, model_->rowCount());
  for (std::size_t i = 0; i < sweep.grids.size(); ++i) {
    const planner::GridResult& g = sweep.grids[i];
    const double memory = static_cast<double>(report::peakMemory(g));
    QList<QStandardItem*> row;
    QStandardItem* rank = cell(QString::number(i + 1), static_cast<double>(i));
    rank->setData(static_cast<int>(i), kGridIndexRole);
    row << rank << cell(QString::number(g.grid.group_size), g.grid.group_size)
        << cell(QString::number(g.grid.replicas), g.grid.replicas)
        << cell(QString::fromLatin1(core::toString(g.grid.layout)), g.grid.layout == core::RankLayout::Strided ? 0 : 1,
                Qt::AlignLeft | Qt::AlignVCenter)
        << cell(ms(g.step.step_ms), g.step.step_ms) << cell(ms(g.step.embedding_ms), g.step.embedding_ms)
        << cell(ms(g.step.all_to_all_ms), g.step.all_to_all_ms)
        << cell(ms(g.step.replica_sync_ms), g.step.replica_sync_ms) << cell(ms(g.step.dense_ms), g.step.dense_ms)
        << cell(QString::fromStdString(report::formatScaledCount(g.samples_per_second)), g.samples_per_second)
        << cell(QString::fromStdString(core::formatBytes(memory, {.unit = core::ByteUnit::GiB, .unit_name = false})),
                std::ldexp(memory, -30))
        << cell(QString::number(g.imbalance.max_over_mean, 'f', 3), g.imbalance.max_over_mean)
        << cell(QString::number(std::abs(g.gap) < 5e-4 ? 0.0 : g.gap * 100.0, 'f', 1), g.gap)
        << cell(g.fits ? tr("yes") : tr("no"), g.fits ? 1 : 0, Qt::AlignCenter);
    if (!g.fits) {
      for (QStandardItem* item : row) item->setForeground(problemColor());
      row.back()->setToolTip(QString::fromStdString(g.problems.empty() ? std::string() : g.problems.front()));
    }
    model_->appendRow(row);
  }
  setSortingEnabled(true);
  markCalibratedColumns(calibration);
  resizeColumnsToContents();
}

void GridTable::markCalibratedColumns(const core::Calibration* calibration) {
  const report::CalibratedFigures changed = report::calibratedFigures(calibration);
  const QString mark = QStringLiteral("\u2020");
  const QString on = QString::fromStdString(core::calibratedOnText(calibration));
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

void GridTable::selectGrid(int grid_index) {
  if (grid_index < 0) {
    clearSelection();
    return;
  }
  for (int row = 0; row < model_->rowCount(); ++row) {
    if (model_->item(row, ColRank)->data(kGridIndexRole).toInt() == grid_index) {
      if (currentIndex().row() != row) selectRow(row);
      return;
    }
  }
}

int GridTable::gridAt(int row) const {
  if (row < 0 || row >= model_->rowCount()) return -1;
  const QVariant index = model_->item(row, ColRank)->data(kGridIndexRole);
  return index.isValid() ? index.toInt() : -1;
}

}  // namespace shardscope::app
