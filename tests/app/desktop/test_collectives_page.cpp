// The Collectives page: a generated 2D run (M=4 R=2 on two nodes, eight
// steps of all-to-alls, data-parallel all-reduces, replica syncs, dense
// all-reduces and an all-gather of a group the grid does not have) shown off
// the GUI thread; the chart's series, curves and outlier rings and the
// outlier table checked against profiler::collectiveBandwidth; filtering by
// op and group; the calibrated curves following the project's calibration;
// the empty state of a run without collectives; a screenshot at 1280x800.
#include <QComboBox>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QLabel>
#include <QToolTip>
#include <QtTest>

#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "collectives_chart.h"
#include "collectives_page.h"
#include "project_document.h"
#include "screenshot.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/rank_layout.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/collective_bandwidth.h"

using namespace shardscope;
using namespace shardscope::app;
namespace st = core::store;
using profiler::CollectiveGroup;

namespace {

constexpr int kTimeoutMs = 30000;
constexpr std::int64_t kUs = 1'000;

core::ClusterSpec twoNodes() {
  core::ClusterSpec c;
  c.name = "two nodes";
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.gpu = {"H100 SXM 80GB", 80ull << 30, 3350.0, 990.0};
  c.intra_node = {150.0, 3.0};
  c.inter_node = {25.0, 12.0};
  return c;
}

core::ModelSpec oneTable() {
  core::ModelSpec m;
  m.name = "one table";
  core::TableSpec t;
  t.name = "a";
  t.rows = 1000;
  t.dim = 64;
  t.pooling.mean = 2;
  m.tables = {t};
  m.batch_size_per_gpu = 16;
  m.dense.parameters = 1'000'000;
  m.dense.flops_per_sample = 1000;
  return m;
}

st::RunHeader header(bool with_plan) {
  core::ShardPlan p;
  p.model = "one table";
  p.world_size = 8;
  p.gpus_per_node = 4;
  p.sharding_group_size = 4;
  p.replicas = 2;
  p.sharding_groups = core::shardingGroups(8, 4, core::RankLayout::Strided);
  p.replica_groups = core::replicaGroups(8, 4, core::RankLayout::Strided);
  p.tables = {{"a", 1000, 64, core::ShardingType::TableWise, {{0, 0, 1000, 0, 64}}}};
  p.provenance.tool = "test";
  p.provenance.created = "2026-01-01T00:00:00Z";
  st::RunHeader h;
  h.kind = st::RunKind::Mpi;
  h.label = "mpi M=4 R=2";
  h.model_json = core::toJson(oneTable()).dump();
  h.cluster_json = core::toJson(twoNodes()).dump();
  if (with_plan) h.plan_json = core::toJson(p).dump();
  h.config_json = R"({"mode": "mpi", "device": "cuda", "gpus": ["NVIDIA H100 80GB HBM3"]})";  // on the cluster's GPUs
  return h;
}

std::string joined(const std::vector<std::uint32_t>& ranks) {
  std::string s;
  for (auto r : ranks) {
    if (!s.empty()) s += ',';
    s += std::to_string(r);
  }
  return s;
}

// One call of the generated run: the op, its ranks, bytes as stored, its transfer time.
struct Call {
  std::string op;
  std::vector<std::uint32_t> ranks;
  std::int64_t bytes = 0;
  std::int64_t step = 0;
  double transfer_ms = 0.0;
};

// Writes the calls one after another; each member ends together, the last to arrive runs the transfer time.
st::RunId writeRun(const QString& path, const std::vector<Call>& calls) {
  auto w = st::RunWriter::begin(path.toStdString(), header(true));
  if (!w) qFatal("%s", w.error().message.c_str());
  for (int r = 0; r < 8; ++r)
    if (!w->addRank({r, r < 4 ? "node0" : "node1", r % 4, r % 2, r / 2}).ok()) qFatal("rank");
  std::int64_t t = 1'000'000;
  std::size_t k = 0;
  for (const auto& c : calls) {
    const auto transfer = static_cast<std::int64_t>(std::llround(c.transfer_ms * 1e6));
    const std::int64_t end = t + transfer + 40 * kUs;
    for (std::size_t i = 0; i < c.ranks.size(); ++i) {
      st::Collective row;
      row.rank = static_cast<int>(c.ranks[i]);
      row.step = c.step;
      row.op = w->intern(c.op).value();
      row.group = w->intern(joined(c.ranks)).value();
      row.bytes = c.bytes;
      row.peers = static_cast<int>(c.ranks.size()) - 1;
      row.end_ns = end;
      row.start_ns = end - transfer - ((i + k) % c.ranks.size()) * 5 * kUs;
      if (!w->addCollective(row).ok()) qFatal("collective");
    }
    t = end + 20 * kUs;
    ++k;
  }
  const st::RunId id = w->run();
  if (!w->finish().ok()) qFatal("finish");
  return id;
}

profiler::CollectiveBandwidth analyse(const QString& path, st::RunId run, const core::Calibration* cal = nullptr) {
  auto store = st::openStore(path.toStdString());
  if (!store) qFatal("%s", store.error().message.c_str());
  profiler::CollectiveBandwidthOptions options;
  options.calibration = cal;
  auto r = profiler::collectiveBandwidth(*store, run, options);
  if (!r) qFatal("%s", r.error().message.c_str());
  return std::move(r).value();
}

// Eight steps whose calls run near the planner's time at their size (the
// model read from a probe run of one call per op and group), a few of them
// three to five times slower.
st::RunId writeTwoDimRun(const QString& path) {
  const auto sharding = core::shardingGroups(8, 4, core::RankLayout::Strided);
  const auto replica = core::replicaGroups(8, 4, core::RankLayout::Strided);
  const std::vector<std::uint32_t> world = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<std::uint32_t> pair = {0, 5};  // a group the grid does not have: no model
  std::vector<Call> probe = {{"all_to_all", sharding[0], 1 << 20},
                             {"all_reduce", sharding[0], 1 << 20},
                             {"all_reduce", replica[0], 1 << 20},
                             {"all_reduce", world, 1 << 20}};
  for (auto& c : probe) c.transfer_ms = 1.0;
  const auto probed = analyse(path, writeRun(path, probe));
  std::map<std::pair<std::string, std::size_t>, profiler::CollectivePriceModel>
      model;  // (op, group size) -> the planner's
  for (const auto& curve : probed.curves) model[{curve.op, static_cast<std::size_t>(curve.group_size)}] = curve.model;
  model[{"all_gather", 2}] = model.at({"all_reduce", 2});

  std::mt19937 random(7);
  std::uniform_real_distribution<double> jitter(1.05, 1.6), slow(3.0, 5.0), unit(0.0, 1.0);
  std::vector<Call> calls;
  auto add = [&](const std::string& op, const std::vector<std::uint32_t>& ranks, std::int64_t bytes,
                 std::int64_t step) {
    const double size = op == "all_to_all" ? static_cast<double>(bytes) / 2.0 : static_cast<double>(bytes);
    const double factor = unit(random) < 0.07 ? slow(random) : jitter(random);
    calls.push_back({op, ranks, bytes, step, model.at({op, ranks.size()}).timeMs(size) * factor});
  };
  for (std::int64_t step = 0; step < 8; ++step) {
    const auto shift = static_cast<int>(step % 4);
    for (const auto& g : sharding) {
      add("all_to_all", g, std::int64_t{32 << 10} << shift, step);
      add("all_to_all", g, std::int64_t{1 << 20} << shift, step);
      add("all_to_all", g, std::int64_t{1 << 20} << shift, step);
      add("all_reduce", g, 256'000, step);
    }
    for (const auto& g : replica) add("all_reduce", g, std::int64_t{16 << 20} << shift, step);
    add("all_reduce", world, std::int64_t{4 << 20}, step);
    add("all_gather", pair, std::int64_t{64 << 10} << (2 * shift), step);
  }
  return writeRun(path, calls);
}

// Waits for the next runShown and returns its message.
QString waitShown(QSignalSpy& spy) {
  if (!spy.wait(kTimeoutMs)) return QStringLiteral("timed out");
  return spy.last().at(1).toString();
}

void selectData(QComboBox* box, const QVariant& data) {
  const int i = box->findData(data);
  QVERIFY2(i >= 0, qPrintable(data.toString()));
  box->setCurrentIndex(i);
}

}  // namespace

class TestCollectivesPage : public QObject {
  Q_OBJECT

 private slots:
  void showsPointsCurvesAndOutliersOfTheRun() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId run = writeTwoDimRun(path);
    ProjectDocument document;
    CollectivesPage page(&document);
    page.setStorePath(path);
    QSignalSpy shown(&page, &CollectivesPage::runShown);
    page.showRun(static_cast<qint64>(run));
    QCOMPARE(waitShown(shown), QString());
    QCOMPARE(shown.last().at(0).toLongLong(), static_cast<qint64>(run));
    QVERIFY(!page.isEmptyStateShown());
    QVERIFY(page.headerText().contains(QStringLiteral("M=4 R=2 strided")));
    QVERIFY(page.summaryToolTip().contains(QStringLiteral("the replica weight sync, intra-node")));

    const auto want = analyse(path, run);
    QCOMPARE(page.shown()->calls.size(), want.calls.size());
    const CollectivesChart* chart = page.chart();
    QCOMPARE(chart->series().size(), std::size_t{5});
    for (const auto& s : want.series) {
      const auto* g = chart->find(s.op, s.group);
      QVERIFY2(g != nullptr, s.op.c_str());
      QCOMPARE(g->points->dataCount(), static_cast<int>(s.calls.size()));
      QVERIFY(chart->legend->hasItemWithPlottable(g->points));
      // The planner prices every series but the all-gather; no calibration: no solid curve.
      QCOMPARE(g->model != nullptr, s.curve >= 0);
      QCOMPARE(g->model != nullptr, s.op != "all_gather");
      QVERIFY(g->calibrated == nullptr);
      if (g->model) QVERIFY(g->model->dataCount() > 0);
      // Each point is a call's (size, busbw).
      std::multimap<double, double> points;
      for (const std::size_t i : s.calls) points.emplace(want.calls[i].size_bytes, want.calls[i].busbw_gbps);
      for (int i = 0; i < g->points->dataCount(); ++i) {
        const auto it = g->points->data()->at(i);
        bool found = false;
        for (auto [a, b] = points.equal_range(it->key); a != b && !found; ++a) found = a->second == it->value;
        QVERIFY(found);
      }
    }
    // Hovering a point names its call: the nearest point within 8 px, nothing away from the points.
    {
      CollectivesPage shown_page(&document);
      shown_page.resize(1100, 800);
      shown_page.setStorePath(path);
      QSignalSpy again(&shown_page, &CollectivesPage::runShown);
      shown_page.showRun(static_cast<qint64>(run));
      QCOMPARE(waitShown(again), QString());
      CollectivesChart* hover = shown_page.chart();
      hover->replot(QCustomPlot::rpImmediateRefresh);
      const auto& worst = want.calls[want.outliers.front()];
      const QPointF at(hover->xAxis->coordToPixel(worst.size_bytes), hover->yAxis->coordToPixel(worst.busbw_gbps));
      const profiler::CallBandwidth* found = hover->callAtPixel(at + QPointF(2, -2));
      QVERIFY(found != nullptr);
      QCOMPARE(found->size_bytes, worst.size_bytes);
      QCOMPARE(found->busbw_gbps, worst.busbw_gbps);
      const QString tip = CollectivesChart::callToolTip(*found);
      QVERIFY2(tip.contains(QString::fromStdString(found->op)) && tip.contains(QStringLiteral("GB/s bus bandwidth")) &&
                   tip.contains(QStringLiteral("reached")),
               qPrintable(tip));
      if (found->slowest_rank >= 0) QVERIFY(tip.contains(QStringLiteral("rank %1").arg(found->slowest_rank)));
      QVERIFY(hover->callAtPixel(QPointF(-50, -50)) == nullptr);
      // What the tooltip reads, drawn as a label in the tooltip's palette, to look at.
      QLabel label(tip);
      label.setPalette(QToolTip::palette());
      label.setAutoFillBackground(true);
      label.setMargin(6);
      const QString tip_shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/collectives_point_tooltip.png");
      QVERIFY(saveScreenshot(label, tip_shot, label.sizeHint()).ok());
    }
    // The outliers: ringed and listed, worst first.
    QVERIFY(!want.outliers.empty());
    QCOMPARE(chart->outlierGraph()->dataCount(), static_cast<int>(want.outliers.size()));
    QTableWidget* table = page.outlierTable();
    QCOMPARE(table->rowCount(), static_cast<int>(want.outliers.size()));
    for (int row = 0; row < table->rowCount(); ++row) {
      const auto& c = want.calls[want.outliers[static_cast<std::size_t>(row)]];
      QCOMPARE(table->item(row, CollectivesPage::Op)->text(), QString::fromStdString(c.op));
      QCOMPARE(table->item(row, CollectivesPage::Step)->data(Qt::UserRole).toDouble(), static_cast<double>(c.step));
      QCOMPARE(table->item(row, CollectivesPage::BusBw)->data(Qt::UserRole).toDouble(), c.busbw_gbps);
      QCOMPARE(table->item(row, CollectivesPage::ModelBusBw)->data(Qt::UserRole).toDouble(), c.model_busbw_gbps);
      const double ratio = table->item(row, CollectivesPage::Ratio)->data(Qt::UserRole).toDouble();
      QVERIFY(ratio < 0.5);
      if (row > 0) QVERIFY(table->item(row - 1, CollectivesPage::Ratio)->data(Qt::UserRole).toDouble() <= ratio);
      QCOMPARE(table->item(row, CollectivesPage::SlowestRank)->data(Qt::UserRole).toInt(), c.slowest_rank);
    }
  }

  void filtersByOpAndGroup() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId run = writeTwoDimRun(path);
    ProjectDocument document;
    CollectivesPage page(&document);
    page.setStorePath(path);
    QSignalSpy shown(&page, &CollectivesPage::runShown);
    page.showRun(static_cast<qint64>(run));
    QCOMPARE(waitShown(shown), QString());
    const auto want = analyse(path, run);
    auto outliersOf = [&](const std::string& op, std::optional<CollectiveGroup> group) {
      int n = 0;
      for (const std::size_t i : want.outliers)
        n += (op.empty() || want.calls[i].op == op) && (!group || want.calls[i].group == *group);
      return n;
    };
    QCOMPARE(page.opFilter()->count(), 4);     // all, all_gather, all_reduce, all_to_all
    QCOMPARE(page.groupFilter()->count(), 5);  // all, sharding, replica, world, other

    selectData(page.opFilter(), QStringLiteral("all_to_all"));
    QCOMPARE(page.chart()->series().size(), std::size_t{1});
    QCOMPARE(page.chart()->series().front().op, std::string("all_to_all"));
    QCOMPARE(page.outlierTable()->rowCount(), outliersOf("all_to_all", std::nullopt));
    for (int row = 0; row < page.outlierTable()->rowCount(); ++row)
      QCOMPARE(page.outlierTable()->item(row, CollectivesPage::Op)->text(), QStringLiteral("all_to_all"));

    selectData(page.groupFilter(), static_cast<int>(CollectiveGroup::Replica));
    QVERIFY(page.chart()->series().empty());  // no all-to-all in the replica group
    QCOMPARE(page.outlierTable()->rowCount(), 0);

    selectData(page.opFilter(), QString());
    QCOMPARE(page.chart()->series().size(), std::size_t{1});
    QVERIFY(page.chart()->find("all_reduce", CollectiveGroup::Replica) != nullptr);
    QCOMPARE(page.outlierTable()->rowCount(), outliersOf("", CollectiveGroup::Replica));

    selectData(page.groupFilter(), -1);
    QCOMPARE(page.chart()->series().size(), std::size_t{5});
    QCOMPARE(page.outlierTable()->rowCount(), static_cast<int>(want.outliers.size()));
  }

  void calibratedCurvesFollowTheProjectsCalibration() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId run = writeTwoDimRun(path);
    ProjectDocument document;
    CollectivesPage page(&document);
    page.setStorePath(path);
    QSignalSpy shown(&page, &CollectivesPage::runShown);
    page.showRun(static_cast<qint64>(run));
    QCOMPARE(waitShown(shown), QString());

    core::Calibration cal;
    cal.source = "nccl-tests on two nodes";
    cal.coefficients["intra_node_bandwidth_gbps"] = {110.0, 2.0};
    cal.coefficients["inter_node_bandwidth_gbps"] = {21.0, 0.5};
    cal.coefficients["inter_node_latency_us"] = {18.0, 1.0};
    core::Project p = document.project();
    p.calibration = cal;
    document.edit(std::move(p), QStringLiteral("Load calibration"));
    QCOMPARE(waitShown(shown), QString());
    const auto want = analyse(path, run, &cal);
    for (const auto& s : want.series) {
      const auto* g = page.chart()->find(s.op, s.group);
      QVERIFY(g != nullptr);
      if (s.curve < 0) continue;
      QVERIFY(g->model != nullptr && g->calibrated != nullptr);
      const auto& curve = want.curves[static_cast<std::size_t>(s.curve)];
      QCOMPARE(g->calibrated->dataCount(), static_cast<int>(curve.sizes.size()));
      QCOMPARE(g->calibrated->data()->at(0)->value, curve.calibrated_busbw_gbps.front());
      QCOMPARE(g->model->data()->at(0)->value, curve.busbw_gbps.front());
      QCOMPARE(g->calibrated->pen().style(), Qt::SolidLine);
      QCOMPARE(g->model->pen().style(), Qt::DashLine);
      QCOMPARE(g->calibrated->pen().color(), g->model->pen().color());
    }
    // The table compares with the calibrated model.
    QCOMPARE(page.outlierTable()->rowCount(), static_cast<int>(want.outliers.size()));
    for (int row = 0; row < page.outlierTable()->rowCount(); ++row)
      QCOMPARE(page.outlierTable()->item(row, CollectivesPage::ModelBusBw)->data(Qt::UserRole).toDouble(),
               want.calls[want.outliers[static_cast<std::size_t>(row)]].calibrated_busbw_gbps);

    const QString shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_collectives_1280x800.png");
    const core::Status saved = saveScreenshot(page, shot, QSize(1280, 800));
    QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
    QCOMPARE(QImage(shot).size(), QSize(1280, 800));
  }

  void aRunWithoutCollectivesSaysWhy() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("runs.sqlite"));
    const st::RunId busy = writeTwoDimRun(path);
    st::RunHeader h;
    h.kind = st::RunKind::Emulate;
    h.label = "emulate";
    h.config_json = R"({"mode": "emulate"})";
    auto w = st::RunWriter::begin(path.toStdString(), h);
    QVERIFY(w.ok());
    QVERIFY(w->addStepSummary({0, 0, 1000, 1000, 0, 0, 0, 3000}).ok());
    const st::RunId quiet = w->run();
    QVERIFY(w->finish().ok());

    ProjectDocument document;
    CollectivesPage page(&document);
    page.setStorePath(path);
    QSignalSpy shown(&page, &CollectivesPage::runShown);
    page.showRun(static_cast<qint64>(busy));
    QCOMPARE(waitShown(shown), QString());
    page.showRun(static_cast<qint64>(quiet));
    const QString message = waitShown(shown);
    QVERIFY2(message.contains(QStringLiteral("has no collectives")), qPrintable(message));
    QVERIFY(page.isEmptyStateShown());
    QVERIFY(page.messageText().contains(QStringLiteral("an emulate run runs none")));
    QVERIFY(page.shown() == nullptr);
    QVERIFY(page.chart()->series().empty());
    QCOMPARE(page.outlierTable()->rowCount(), 0);
    QVERIFY(!page.opFilter()->isEnabled());
    const QString shot = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/page_collectives_empty_1280x800.png");
    QVERIFY(saveScreenshot(page, shot, QSize(1280, 800)).ok());

    // The next run with collectives shows the chart again.
    page.showRun(static_cast<qint64>(busy));
    QCOMPARE(waitShown(shown), QString());
    QVERIFY(!page.isEmptyStateShown());
    QCOMPARE(page.chart()->series().size(), std::size_t{5});
  }
};

QTEST_MAIN(TestCollectivesPage)
#include "test_collectives_page.moc"
