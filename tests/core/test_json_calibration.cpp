// shardscope.calibration/1: fitted coefficients the planner uses instead of defaults.
#include <QtTest>

#include "shardscope/core/json_io.h"

using namespace shardscope::core;
using nlohmann::json;

namespace {
json validCalibration() {
  return json::parse(R"({
    "schema": "shardscope.calibration/1", "source": "run 3 of traces.sqlite", "created": "2026-12-02T10:00:00Z",
    "coefficients": {"embedding_bandwidth_gbps": {"value": 2100, "std_error": 35},
                     "kernel_overhead_us": 6.5},
    "fit": {"samples": 480, "mape": 0.041, "holdout_mape": 0.063}})");
}
QString errorOf(const json& j) {
  auto r = calibrationFromJson(j, "cal.json");
  return r ? QString() : QString::fromStdString(r.error().message);
}
}  // namespace

class TestJsonCalibration : public QObject {
  Q_OBJECT
 private slots:
  void loadsCoefficientsInBothForms() {
    auto r = calibrationFromJson(validCalibration(), "cal.json");
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QCOMPARE(r->coefficients.at("embedding_bandwidth_gbps").value, 2100.0);
    QCOMPARE(r->coefficients.at("embedding_bandwidth_gbps").std_error, 35.0);
    QCOMPARE(r->coefficients.at("kernel_overhead_us").value, 6.5);
    QCOMPARE(r->fit.samples, 480u);
    QCOMPARE(r->fit.holdout_mape, 0.063);
  }

  void roundTripsThroughJson() {
    auto a = calibrationFromJson(validCalibration(), "cal.json");
    QVERIFY(a.ok());
    auto b = calibrationFromJson(json::parse(toJson(*a).dump()), "again.json");
    QVERIFY(b.ok());
    QVERIFY(*a == *b);
  }

  void rejectsUnknownCoefficient() {
    json j = validCalibration();
    j["coefficients"]["warp_speed"] = 9;
    const QString e = errorOf(j);
    QVERIFY2(
        e.contains("cal.json: /coefficients/warp_speed: unknown coefficient; expected one of embedding_bandwidth_gbps"),
        qPrintable(e));
  }

  void rejectsNonPositiveCoefficient() {
    json j = validCalibration();
    j["coefficients"]["kernel_overhead_us"] = -1;
    QVERIFY(errorOf(j).contains("/coefficients/kernel_overhead_us: expected a number > 0, got -1"));
  }

  void rejectsMissingSource() {
    json j = validCalibration();
    j.erase("source");
    QVERIFY(errorOf(j).contains("/source: missing required field"));
  }

  void rejectsCoefficientsOfWrongType() {
    json j = validCalibration();
    j["coefficients"] = json::array();
    QVERIFY(errorOf(j).contains("/coefficients: expected an object, got an array"));
  }

  void everyKnownNameIsAccepted() {
    json j = validCalibration();
    for (auto name : knownCalibrationCoefficients()) j["coefficients"][std::string(name)] = 1.0;
    QVERIFY(calibrationFromJson(j, "cal.json").ok());
  }
};

QTEST_APPLESS_MAIN(TestJsonCalibration)
#include "test_json_calibration.moc"
