// Errors carry a kind (what programs act on: the CLI's exit code) and, where
// known, the file and JSON path their message names.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#include "shardscope/core/json_io.h"
#include "shardscope/core/result.h"

using namespace shardscope::core;

namespace {
void writeText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}
}  // namespace

class TestErrors : public QObject {
  Q_OBJECT
 private slots:
  void aMessageAloneIsAnInvalidInput() {
    const Error e{"bad"};
    QCOMPARE(e.message, std::string("bad"));
    QVERIFY(e.kind == ErrorKind::InvalidInput);
    QVERIFY(e.file.empty() && e.json_path.empty());
    const Error io{"disk full", ErrorKind::Io, "out.json"};
    QVERIFY(io.kind == ErrorKind::Io);
    QCOMPARE(io.file, std::string("out.json"));
    QCOMPARE(std::string(toString(ErrorKind::Cancelled)), std::string("cancelled"));
  }

  void anUnreadableInputIsAnInvalidInputNamingTheFile() {
    QTemporaryDir dir;
    const std::string missing = dir.filePath("missing.json").toStdString();
    auto r = readJsonFile(missing);
    QVERIFY(!r);
    QVERIFY(r.error().kind == ErrorKind::InvalidInput);
    QCOMPARE(r.error().file, missing);
    const std::string broken = dir.filePath("broken.json").toStdString();
    writeText(broken, "{\"schema\": ");
    r = readJsonFile(broken);
    QVERIFY(!r);
    QVERIFY(r.error().kind == ErrorKind::InvalidInput);
    QCOMPARE(r.error().file, broken);
  }

  void aFormatProblemNamesTheFileAndTheFirstJsonPath() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("model.json").toStdString();
    writeText(path, R"({"schema": "shardscope.model/1", "name": "m", "batch_size_per_gpu": 0,
                        "tables": [{"name": "t", "rows": 10, "dim": 130}]})");
    auto m = loadModel(path);
    QVERIFY(!m);
    QVERIFY(m.error().kind == ErrorKind::InvalidInput);
    QCOMPARE(m.error().file, path);
    QVERIFY2(m.error().json_path.starts_with("/"), m.error().json_path.c_str());
    QVERIFY2(m.error().message.find(m.error().json_path) != std::string::npos, m.error().message.c_str());
  }

  void aFailedWriteIsAnIoErrorNamingTheFile() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("no/such/folder/out.json").toStdString();
    const Status s = writeJsonFile(path, nlohmann::ordered_json::object());
    QVERIFY(!s);
    QVERIFY(s.error().kind == ErrorKind::Io);
    QCOMPARE(s.error().file, path);
  }
};

QTEST_APPLESS_MAIN(TestErrors)
#include "test_errors.moc"
