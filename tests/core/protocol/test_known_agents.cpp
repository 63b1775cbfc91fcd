// Pins of agent certificates: malformed lines are errors with their line
// number, comments survive a save, pin/forget, fingerprints in every form
// people paste them.
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>
#include <sstream>

#include "shardscope/core/protocol/known_agents.h"

using namespace shardscope::core::protocol;

namespace {
const std::string kA = std::string("sha256:").append(64, 'a');
const std::string kB = std::string("sha256:").append(64, 'b');

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
// Joins pieces without "literal" + std::string, which GCC 12's -Wrestrict misreads at -O3.
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (auto p : parts) s.append(p);
  return s;
}
}  // namespace

class TestKnownAgents : public QObject {
  Q_OBJECT

 private slots:
  void fingerprintForms() {
    QCOMPARE(normalizeFingerprint(kA), std::optional<std::string>(kA));
    QCOMPARE(normalizeFingerprint(cat({"SHA256:", std::string(64, 'A')})), std::optional<std::string>(kA));
    std::string colons;
    for (int i = 0; i < 32; ++i) colons.append(i ? ":AA" : "AA");
    QCOMPARE(normalizeFingerprint(cat({"SHA256 Fingerprint=", colons})), std::optional<std::string>(kA));
    QCOMPARE(normalizeFingerprint(std::string(64, 'a')), std::optional<std::string>(kA));
    QVERIFY(!normalizeFingerprint(cat({"sha256:", std::string(63, 'a')})));
    QVERIFY(!normalizeFingerprint(cat({"sha256:", std::string(63, 'a'), "g"})));
    QVERIFY(!normalizeFingerprint(""));
  }

  void missingFileIsEmpty() {
    QTemporaryDir dir;
    auto k = KnownAgents::load(dir.filePath("none").toStdString());
    QVERIFY(k);
    QCOMPARE(k->check("gpu01:7443", kA).verdict, KnownAgents::Verdict::Unknown);
  }

  void malformedLinesNameTheirLine_data() {
    QTest::addColumn<QString>("line");
    QTest::newRow("no fingerprint") << "gpu01:7443";
    QTest::newRow("short") << "gpu01:7443 sha256:abc";
    QTest::newRow("no port") << QString::fromStdString(cat({"gpu01 ", kA}));
    QTest::newRow("bad port") << QString::fromStdString(cat({"gpu01:99999 ", kA}));
  }
  void malformedLinesNameTheirLine() {
    QFETCH(QString, line);
    QTemporaryDir dir;
    const std::string path = dir.filePath("known").toStdString();
    write(path, cat({"# pins\n\nok:1 ", kA, "\n", line.toStdString(), "\n"}));
    auto k = KnownAgents::load(path);
    QVERIFY(!k);
    QVERIFY2(k.error().message.find(cat({path, ":4:"})) == 0, k.error().message.c_str());
  }

  void pinCheckForgetAndSaveKeepComments() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("sub/known").toStdString();
    QVERIFY(QDir().mkpath(dir.filePath("sub")));
    write(path, cat({"# my agents\ngpu01:7443 ", kA, "\n\n# lab\n"}));
    auto k = KnownAgents::load(path);
    QVERIFY(k);
    QCOMPARE(k->check("GPU01:7443", kA).verdict, KnownAgents::Verdict::Match);
    const auto mismatch = k->check("gpu01:7443", kB);
    QCOMPARE(mismatch.verdict, KnownAgents::Verdict::Mismatch);
    QCOMPARE(mismatch.pinned, kA);
    QCOMPARE(mismatch.line, std::size_t{2});
    k->pin("[::1]:7070", cat({"SHA256:", std::string(64, 'B')}));
    QVERIFY(k->save());
    QCOMPARE(readAll(path), cat({"# my agents\ngpu01:7443 ", kA, "\n\n# lab\n[::1]:7070 ", kB, "\n"}));
    QFileInfo info(QString::fromStdString(path));
    QCOMPARE(info.permissions() & (QFile::ReadGroup | QFile::ReadOther), QFileDevice::Permissions{});
    auto again = KnownAgents::load(path);
    QVERIFY(again);
    QCOMPARE(again->check("[::1]:7070", kB).verdict, KnownAgents::Verdict::Match);
    QVERIFY(again->forget("gpu01:7443"));
    QVERIFY(!again->forget("gpu01:7443"));
    QVERIFY(again->save());
    QCOMPARE(readAll(path), cat({"# my agents\n\n# lab\n[::1]:7070 ", kB, "\n"}));
  }
};

QTEST_GUILESS_MAIN(TestKnownAgents)
#include "test_known_agents.moc"
