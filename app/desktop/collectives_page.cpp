#include "collectives_page.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <set>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/core/summary.h"
#include "collectives_chart.h"
#include "job_tracker.h"
#include "project_document.h"

namespace shardscope::app {

namespace st = core::store;
using profiler::CollectiveGroup;

namespace {

QTableWidgetItem* number(double v, int decimals) {
  auto* item = new QTableWidgetItem(QString::number(v, 'f', decimals));
  item->setData(Qt::UserRole, v);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QTableWidgetItem* text(const QString& s) { return new QTableWidgetItem(s); }

QString callCount(std::size_t n) {
  return n == 1 ? QCoreApplication::translate("CollectivesPage", "1 call")
                : QCoreApplication::translate("CollectivesPage", "%1 calls").arg(n);
}

QString groupName(CollectiveGroup g) { return QString::fromUtf8(profiler::toString(g)); }

}  // namespace

CollectivesPage::CollectivesPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      header_(new QLabel),
      op_box_(new QComboBox),
      group_box_(new QComboBox),
      summary_(new QLabel),
      message_(new QLabel),
      stack_(new QStackedWidget),
      empty_(new QLabel),
      chart_(new CollectivesChart),
      outlier_title_(new QLabel),
      outliers_(new QTableWidget),
      jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("collectivesPage"));
  header_->setObjectName(QStringLiteral("collectivesHeader"));
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  op_box_->setObjectName(QStringLiteral("collectivesOp"));
  op_box_->setToolTip(tr("Show the calls of one collective op"));
  group_box_->setObjectName(QStringLiteral("collectivesGroup"));
  // The widest entry sets the width: "All groups" and group names are never cut.
  for (QComboBox* box : {op_box_, group_box_}) box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  group_box_->setToolTip(
      tr("Show the calls of one process group: sharding (the all-to-alls), replica (the weight sync), world (the "
         "dense all-reduce), or other"));
  summary_->setObjectName(QStringLiteral("collectivesSummary"));
  summary_->setWordWrap(true);
  message_->setObjectName(QStringLiteral("collectivesMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->hide();
  empty_->setObjectName(QStringLiteral("collectivesEmpty"));
  empty_->setWordWrap(true);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  empty_->setMargin(40);
  outlier_title_->setObjectName(QStringLiteral("collectivesOutlierTitle"));
  outliers_->setObjectName(QStringLiteral("collectivesOutliers"));
  outliers_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  outliers_->setSelectionBehavior(QAbstractItemView::SelectRows);
  outliers_->verticalHeader()->hide();
  outliers_->setColumnCount(kColumns);
  outliers_->setHorizontalHeaderLabels({tr("Op"), tr("Group"), tr("Step"), tr("Seq"), tr("Size"), tr("Bus bw (GB/s)"),
                                        tr("Model (GB/s)"), tr("Measured / model"), tr("Slowest rank")});
  outliers_->horizontalHeaderItem(Size)->setToolTip(tr("NCCL-tests message size"));
  outliers_->horizontalHeaderItem(ModelBusBw)
      ->setToolTip(tr("The planner's bus bandwidth at this size (calibrated when the project has a calibration)"));
  outliers_->horizontalHeaderItem(SlowestRank)
      ->setToolTip(
          tr("The rank that arrived last: the others waited for it (unknown when one rank recorded the call)"));
  outliers_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  outliers_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);

  auto* bar = new QHBoxLayout;
  bar->addWidget(header_, 1);
  bar->addWidget(new QLabel(tr("Op:")));
  bar->addWidget(op_box_);
  bar->addWidget(new QLabel(tr("Group:")));
  bar->addWidget(group_box_);
  auto* lower = new QWidget;
  auto* lower_layout = new QVBoxLayout(lower);
  lower_layout->setContentsMargins(0, 0, 0, 0);
  lower_layout->addWidget(outlier_title_);
  lower_layout->addWidget(outliers_, 1);
  auto* split = new QSplitter(Qt::Vertical);
  split->setChildrenCollapsible(false);
  split->addWidget(chart_);
  split->addWidget(lower);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  stack_->addWidget(split);
  stack_->addWidget(empty_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(summary_);
  layout->addWidget(message_);
  layout->addWidget(stack_, 1);

  connect(op_box_, &QComboBox::currentIndexChanged, this, &CollectivesPage::applyFilters);
  connect(group_box_, &QComboBox::currentIndexChanged, this, &CollectivesPage::applyFilters);
  connect(jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    const QString why = message.isEmpty() ? tr("the analysis failed") : message;
    showEmpty(why);
    emit runShown(run_, why);
  });
  // The calibrated curves follow the project's calibration (loaded, fitted or unloaded).
  connect(document_, &ProjectDocument::projectChanged, this, [this] {
    if (run_ > 0 && shown_ && document_->project().calibration != shown_calibration_) showRun(run_);
  });
  showNoRun();
}

CollectivesPage::~CollectivesPage() = default;

// No run to draw: the page says what to do instead of drawing empty axes.
void CollectivesPage::showNoRun() {
  clearShown();
  const QString text = store_path_.isEmpty() ? tr("No trace store: profile a run (Run \u203a Profile\u2026) or open "
                                                  "one (File \u203a Open Trace Store\u2026).")
                                             : tr("No run shown: open one from the Runs page.");
  header_->setText(text);
  empty_reason_ = text;
  empty_->setText(tr("<b>No collectives to draw</b><br><br>%1").arg(text.toHtmlEscaped()));
  stack_->setCurrentIndex(1);
}

void CollectivesPage::setStorePath(const QString& path) {
  if (path == store_path_) return;
  store_path_ = path;
  run_ = 0;
  jobs_->supersede();
  showNoRun();
}

void CollectivesPage::clearShown() {
  const QSignalBlocker block_ops(op_box_), block_groups(group_box_);
  shown_.reset();
  summary_->clear();
  message_->hide();
  op_box_->clear();
  group_box_->clear();
  op_box_->setEnabled(false);
  group_box_->setEnabled(false);
  chart_->setBandwidth(nullptr);
  outliers_->setRowCount(0);
  outlier_title_->clear();
}

void CollectivesPage::showRun(qint64 run) {
  run_ = run;
  header_->setText(tr("Run %1: reading its collectives\u2026").arg(run));
  const std::optional<core::Calibration> calibration = document_->project().calibration;
  shown_calibration_ = calibration;
  jobs_->start(
      [path = store_path_.toStdString(), run,
       calibration](JobContext&) -> core::Result<std::shared_ptr<const profiler::CollectiveBandwidth>> {
        auto store = st::openStore(path, st::OpenMode::ReadOnly);
        if (!store) return store.error();
        profiler::CollectiveBandwidthOptions options;
        options.calibration = calibration ? &*calibration : nullptr;
        auto r = profiler::collectiveBandwidth(*store, st::RunId{run}, options);
        if (!r) return r.error();
        return std::make_shared<const profiler::CollectiveBandwidth>(std::move(r).value());
      },
      [this](std::shared_ptr<const profiler::CollectiveBandwidth> r) { show(std::move(r)); });
}

void CollectivesPage::show(std::shared_ptr<const profiler::CollectiveBandwidth> result) {
  shown_ = std::move(result);
  const profiler::CollectiveBandwidth& r = *shown_;
  header_->setText(tr("Run %1 \u00b7 %2 \u00b7 %3")
                       .arg(static_cast<qint64>(r.run.id))
                       .arg(QString::fromStdString(r.run.label.empty() ? r.run.kind_text : r.run.label),
                            r.grid.empty() ? tr("no grid") : QString::fromStdString(r.grid)));
  QString curves = tr("no model curves");
  if (!r.curves.empty())
    curves = r.calibration.empty() ? tr("the planner's model with default constants (dashed)")
                                   : tr("the planner's model with default constants (dashed) and with the "
                                        "calibration %1 (solid)")
                                         .arg(QString::fromStdString(r.calibration));
  QStringList priced;
  for (const auto& c : r.curves)
    priced << tr("%1 in the %2 group: %3, %4")
                  .arg(QString::fromStdString(c.op), groupName(c.group), QString::fromStdString(c.priced_as),
                       QString::fromStdString(c.link));
  summary_->setToolTip(priced.isEmpty() ? QString()
                                        : tr("The planner's model:\n%1").arg(priced.join(QLatin1Char('\n'))));
  summary_->setText(tr("%1 in %2 op/group series; %3. %4")
                        .arg(callCount(r.calls.size()))
                        .arg(r.series.size())
                        .arg(curves, r.againstModel()
                                         ? tr("Calls far below the model are ringed in red.")
                                         : tr("Calls far below this run's median for their op, group and size "
                                              "are ringed in red.")));
  outliers_->horizontalHeaderItem(ModelBusBw)->setText(r.againstModel() ? tr("Model (GB/s)") : tr("Median (GB/s)"));
  outliers_->horizontalHeaderItem(Ratio)->setText(r.againstModel() ? tr("Measured / model") : tr("Measured / median"));
  QStringList notes;
  for (const auto& n : r.notes) notes << QString::fromStdString(n);
  message_->setText(notes.join(QLatin1Char('\n')));
  message_->setStyleSheet(QString());
  message_->setVisible(!notes.isEmpty());
  stack_->setCurrentIndex(0);
  fillFilters();
  applyFilters();
  emit runShown(run_, {});
}

void CollectivesPage::showEmpty(const QString& why) {
  clearShown();
  header_->setText(tr("Run %1: no collectives to draw").arg(run_));
  empty_reason_ = why;
  empty_->setText(tr("<b>No collectives to draw</b><br><br>%1").arg(why.toHtmlEscaped()));
  stack_->setCurrentIndex(1);
}

// The ops and groups of the shown run; the choices made before are kept when the run has them.
void CollectivesPage::fillFilters() {
  const QString op_before = op_box_->currentData().toString();
  const int group_before = group_box_->currentIndex() >= 0 ? group_box_->currentData().toInt() : -1;
  const QSignalBlocker block_ops(op_box_), block_groups(group_box_);
  std::set<std::string> ops;
  std::set<CollectiveGroup> groups;
  for (const auto& s : shown_->series) {
    ops.insert(s.op);
    groups.insert(s.group);
  }
  op_box_->clear();
  op_box_->addItem(tr("All ops"), QString());
  for (const auto& op : ops) op_box_->addItem(QString::fromStdString(op), QString::fromStdString(op));
  group_box_->clear();
  group_box_->addItem(tr("All groups"), -1);
  for (const auto g : groups) group_box_->addItem(groupName(g), static_cast<int>(g));
  op_box_->setCurrentIndex(std::max(0, op_box_->findData(op_before)));
  group_box_->setCurrentIndex(std::max(0, group_box_->findData(group_before)));
  op_box_->setEnabled(true);
  group_box_->setEnabled(true);
}

void CollectivesPage::applyFilters() {
  if (!shown_) return;
  const std::string op = op_box_->currentData().toString().toStdString();
  const int g = group_box_->currentData().toInt();
  const std::optional<CollectiveGroup> group =
      g >= 0 ? std::optional<CollectiveGroup>(static_cast<CollectiveGroup>(g)) : std::nullopt;
  chart_->setBandwidth(shown_.get(), op, group);
  fillOutliers(op, group);
}

void CollectivesPage::fillOutliers(const std::string& op, std::optional<CollectiveGroup> group) {
  const profiler::CollectiveBandwidth& r = *shown_;
  std::vector<const profiler::CallBandwidth*> rows;
  for (const std::size_t i : r.outliers) {
    const auto& c = r.calls[i];
    if ((op.empty() || c.op == op) && (!group || c.group == *group)) rows.push_back(&c);
  }
  const int total = static_cast<int>(rows.size());
  const int shown = std::min(total, kMaxOutlierRows);
  const bool model = r.againstModel();
  const QString below =
      model
          ? tr("below %1% of the planner's model at their size, worst first").arg(r.outlier_fraction * 100.0, 0, 'f', 0)
          : tr("below %1% of this run's median for their op, group and size (half to twice it), worst first")
                .arg(r.outlier_fraction * 100.0, 0, 'f', 0);
  outlier_title_->setText(total == shown ? tr("<b>%1</b> %2").arg(callCount(static_cast<std::size_t>(total)), below)
                                         : tr("<b>%1 of %2 calls</b> %3").arg(shown).arg(total).arg(below));
  outliers_->setRowCount(shown);
  for (int row = 0; row < shown; ++row) {
    const profiler::CallBandwidth& c = *rows[static_cast<std::size_t>(row)];
    const double reference = !model                        ? c.busbw_gbps / c.ratio
                             : c.calibrated_busbw_gbps > 0 ? c.calibrated_busbw_gbps
                                                           : c.model_busbw_gbps;
    outliers_->setItem(row, Op, text(QString::fromStdString(c.op)));
    outliers_->setItem(row, Group, text(groupName(c.group)));
    outliers_->setItem(row, Step, number(static_cast<double>(c.step), 0));
    outliers_->setItem(row, Seq, c.seq >= 0 ? number(static_cast<double>(c.seq), 0) : text(tr("\u2013")));
    auto* size =
        text(QString::fromStdString(core::formatBytes(static_cast<std::uint64_t>(std::llround(c.size_bytes)))));
    size->setData(Qt::UserRole, c.size_bytes);
    size->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    outliers_->setItem(row, Size, size);
    outliers_->setItem(row, BusBw, number(c.busbw_gbps, 3));
    outliers_->setItem(row, ModelBusBw, number(reference, 3));
    // Two significant digits: a call at 0.13% of its reference is not "0.00".
    auto* ratio = text(QString::number(c.ratio, 'g', 2));
    ratio->setData(Qt::UserRole, c.ratio);
    ratio->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    outliers_->setItem(row, Ratio, ratio);
    outliers_->setItem(row, SlowestRank, c.slowest_rank >= 0 ? number(c.slowest_rank, 0) : text(tr("unknown")));
  }
}

QString CollectivesPage::headerText() const { return header_->text(); }

QString CollectivesPage::summaryToolTip() const { return summary_->toolTip(); }

QString CollectivesPage::messageText() const { return isEmptyStateShown() ? empty_reason_ : message_->text(); }

bool CollectivesPage::isEmptyStateShown() const { return stack_->currentIndex() == 1; }

}  // namespace shardscope::app
