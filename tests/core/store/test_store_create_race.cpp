// Several processes creating the same new store at the same moment: each
// gets a working store and writes its run, none is told the file is empty,
// corrupt or not a store, and the store holds every run afterwards.
#include <QProcess>
#include <QtTest>

#include <chrono>
#include <memory>

#include "store_test_support.h"

using namespace storetest;

class TestStoreCreateRace : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void processesCreatingOneStoreAtOnceAllSucceed() {
    constexpr int kRounds = 25;
    constexpr int kProcesses = 3;
    for (int round = 0; round < kRounds; ++round) {
      const auto path = numberedPath(dir_, "race", round);
      // Each process sleeps until the same moment, so that their opens
      // overlap far more tightly than their start-ups would.
      const auto startAt = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch() + std::chrono::milliseconds(150))
                               .count();
      std::vector<std::unique_ptr<QProcess>> children;
      for (int i = 0; i < kProcesses; ++i) {
        auto& child = children.emplace_back(std::make_unique<QProcess>());
        child->start(QStringLiteral(SHARDSCOPE_STORE_PROBE),
                     {"write", QString::fromStdString(path.string()), QString::number(startAt)});
      }
      for (auto& child : children) {
        QVERIFY2(child->waitForFinished(30'000), "a writer hung");
        const QByteArray err = child->readAllStandardError();
        QVERIFY2(child->exitStatus() == QProcess::NormalExit && child->exitCode() == 0,
                 qPrintable(QString("round %1: %2").arg(round).arg(QString::fromUtf8(err))));
        QVERIFY(child->readAllStandardOutput().startsWith("run "));
      }
      auto store = st::openStore(path, st::OpenMode::ReadOnly);
      QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
      const auto runs = store->listRuns();
      QVERIFY(runs.ok());
      QCOMPARE(runs->size(), std::size_t{kProcesses});
      for (const auto& run : *runs) {
        QVERIFY(run.isComplete());
        QCOMPARE(*store->spanCount(run.id), std::int64_t{100});
      }
    }
    // Nothing but the stores and their WAL files is left behind.
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path().toStdString())) {
      const std::string name = entry.path().filename().string();
      QVERIFY2(name.ends_with(".db") || name.ends_with(".db-wal") || name.ends_with(".db-shm"), name.c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestStoreCreateRace)
#include "test_store_create_race.moc"
