// The Model page's table work without a window: free names, the state bytes
// the planner counts, and reading tables from CSV, model or project files.
#include <QTemporaryDir>
#include <QtTest>

#include "shardscope/core/json_io.h"
#include "shardscope/core/model_csv.h"
#include "shardscope/core/presets.h"
#include "shardscope/report/model_tables.h"

namespace core = shardscope::core;
namespace report = shardscope::report;

class TestModelTables : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  std::string path(const char* name) const { return dir_.filePath(QString::fromLatin1(name)).toStdString(); }

 private slots:
  void freeNamesCountOnFromTwo() {
    const std::unordered_set<std::string> taken = {"a", "a2"};
    QCOMPARE(report::freeName("a", taken), std::string("a3"));
    QCOMPARE(report::freeName("b", taken), std::string("b"));
    QCOMPARE(report::namesOf(core::defaultProject().model.tables).size(), std::size_t{26});
  }

  void stateBytesAddTheOptimizerStateToTheWeights() {
    const core::Project p = core::defaultProject();
    QVERIFY(report::stateBytes(p) > p.model.totalWeightBytes());
  }

  void filesAreToldApartByContent() {
    QVERIFY(dir_.isValid());
    const core::ModelSpec model = core::defaultProject().model;
    const std::string csv = path("tables.txt");  // no telling extension
    QVERIFY(core::saveTablesCsv(csv, model.tables).ok());
    const auto from_csv = report::readTablesFile(csv);
    QVERIFY(from_csv.ok());
    QVERIFY(!from_csv->model.has_value());
    QCOMPARE(from_csv->tables.size(), model.tables.size());

    const std::string json = path("model.data");
    QVERIFY(core::writeJsonFile(json, core::toJson(model)).ok());
    const auto from_model = report::readTablesFile(json);
    QVERIFY(from_model.ok());
    QVERIFY(from_model->model.has_value());
    QCOMPARE(from_model->model->name, model.name);
    QVERIFY(from_model->tables == model.tables);

    const std::string cluster = path("cluster.json");
    QVERIFY(core::writeJsonFile(cluster, core::toJson(core::defaultProject().cluster)).ok());
    const auto refused = report::readTablesFile(cluster);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().message.find("holds no tables") != std::string::npos, refused.error().message.c_str());
    QVERIFY(!report::readTablesFile(path("missing.csv")).ok());
  }
};

QTEST_MAIN(TestModelTables)
#include "test_model_tables.moc"
