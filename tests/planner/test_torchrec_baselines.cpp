// Our optimizer against TorchRec's own EmbeddingShardingPlanner: for every
// fixture (model x cluster x grid, TorchRec 1.9's plan), priced by our cost
// model, our plan for the same grid is never slower, fits whenever TorchRec's
// does, and is a layout TorchRec runs as written.
#include <QtTest>

#include <cmath>
#include <set>

#include "shardscope/core/torchrec_sharding.h"
#include "torchrec_baselines.h"

using namespace shardscope;

class TestTorchRecBaselines : public QObject {
  Q_OBJECT
 private slots:
  void fixturesCoverModelsGridsAndTopologies() {
    const auto files = testing::torchRecBaselineFiles(std::string(SHARDSCOPE_TEST_DATA_DIR) + "/torchrec/planner");
    QVERIFY2(files.size() >= 6, qPrintable(QString::number(files.size())));
    std::set<std::string> models, replicated;
    for (const auto& f : files) {
      auto b = testing::loadTorchRecBaseline(f);
      QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
      models.insert(b->model.name);
      if (b->plan.replicas > 1) replicated.insert(b->name);
    }
    QVERIFY(models.size() >= 4);
    QVERIFY(!replicated.empty());
  }

  void neverSlowerThanTorchRecsPlanner_data() {
    QTest::addColumn<QString>("file");
    for (const auto& f : testing::torchRecBaselineFiles(std::string(SHARDSCOPE_TEST_DATA_DIR) + "/torchrec/planner"))
      QTest::newRow(f.substr(f.find_last_of('/') + 1).c_str()) << QString::fromStdString(f);
  }

  void neverSlowerThanTorchRecsPlanner() {
    QFETCH(QString, file);
    auto b = testing::loadTorchRecBaseline(file.toStdString());
    QVERIFY2(b.ok(), b.ok() ? "" : b.error().message.c_str());
    const planner::PlanComparison c = testing::compareWithTorchRec(*b);
    qInfo("%s: ours %.4f ms, TorchRec's %.4f ms (x%.3f)", b->name.c_str(), c.optimized.step.step_ms,
          c.given.step.step_ms, c.stepRatio());
    QVERIFY2(
        c.optimized.step.step_ms <= c.given.step.step_ms * (1 + 1e-9),
        qPrintable(QString("ours %1 ms > TorchRec's %2 ms").arg(c.optimized.step.step_ms).arg(c.given.step.step_ms)));
    if (c.given.fits) QVERIFY(c.optimized.fits);
    QCOMPARE(c.optimized.plan.target, core::PlanTarget::TorchRec);
    QVERIFY(core::torchRecLayoutProblems(c.optimized.plan).empty());
  }
};

QTEST_APPLESS_MAIN(TestTorchRecBaselines)
#include "test_torchrec_baselines.moc"
