// The agent's log: logSafe escapes what a peer could use to forge or hide a
// line (controls, bidirectional marks, bytes that are not UTF-8) and keeps
// everything else as it is; logLine writes one time-stamped line.
#include <QtTest>

#include <unistd.h>

#include <random>
#include <string>

#include <QRegularExpression>
#include <QTemporaryFile>

#include "agent_log.h"
#include "shardscope/core/protocol/safe_text.h"

using shardscope::app::agent::logLine;
using shardscope::app::agent::logSafe;
using shardscope::core::protocol::findUnsafe;

class TestAgentLog : public QObject {
  Q_OBJECT

 private slots:
  void printableTextIsKept() {
    QCOMPARE(logSafe("nightly run 42"), std::string("nightly run 42"));
    const std::string scripts =
        "caf\xc3\xa9 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d \xe6\xa0\x87\xe7\xad\xbe \xf0\x9f\x9a\x80";
    QCOMPARE(logSafe(scripts), scripts);
    QCOMPARE(logSafe(""), std::string());
  }

  void controlsAreEscaped() {
    QCOMPARE(logSafe("two\nlines"), std::string("two\\x0Alines"));  // no forged second line
    QCOMPARE(logSafe("cr\rtab\t"), std::string("cr\\x0Dtab\\x09"));
    QCOMPARE(logSafe("\x1b[31mred"), std::string("\\x1B[31mred"));
    QCOMPARE(logSafe(std::string("nul\0x", 5)), std::string("nul\\x00x"));
    QCOMPARE(logSafe("del\x7f"), std::string("del\\x7F"));
    QCOMPARE(logSafe("c1 \xc2\x85 \xc2\x9b"), std::string("c1 \\x85 \\x9B"));
  }

  void bidirectionalMarksAreEscaped() {
    QCOMPARE(logSafe("abc\xe2\x80\xaetxt.exe"), std::string("abc\\u{202E}txt.exe"));
    QCOMPARE(logSafe("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"),
             std::string("\\u{202A}\\u{202B}\\u{202C}\\u{202D}"));
    QCOMPARE(logSafe("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"),
             std::string("\\u{2066}\\u{2067}\\u{2068}\\u{2069}"));
    QCOMPARE(logSafe("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), std::string("\\u{200E}\\u{200F}\\u{061C}"));
  }

  void bytesThatAreNotUtf8AreEscaped() {
    QCOMPARE(logSafe("a\xff"
                     "b"),
             std::string("a\\xFFb"));
    QCOMPARE(logSafe("cut \xe2\x9c"), std::string("cut \\xE2\\x9C"));            // a sequence cut short
    QCOMPARE(logSafe("overlong \xc0\xaf"), std::string("overlong \\xC0\\xAF"));  // '/' in two bytes
    QCOMPARE(logSafe("surrogate \xed\xa0\x80"), std::string("surrogate \\xED\\xA0\\x80"));
    QCOMPARE(logSafe("past \xf4\x90\x80\x80"), std::string("past \\xF4\\x90\\x80\\x80"));  // beyond U+10FFFF
    QCOMPARE(logSafe("stray \x80"), std::string("stray \\x80"));
  }

  void aBackslashCannotForgeAnEscape() {
    QCOMPARE(logSafe("\\x1B"), std::string("\\\\x1B"));
    QVERIFY(logSafe("\\x1B") != logSafe("\x1b"));
  }

  void longTextIsCutBetweenCodePoints() {
    const std::string cut = logSafe(std::string(9, 'a') + "\xe2\x9c\x93\xe2\x9c\x93", 10);
    QCOMPARE(cut, std::string(9, 'a') + "\xe2\x9c\x93\xe2\x80\xa6");
    QCOMPARE(logSafe(std::string(500, 'x')).size(), std::size_t{200} + 3);  // 200 bytes and an ellipsis
  }

  void anyBytesGiveSafeText() {
    std::mt19937 rng(11);
    for (int i = 0; i < 500; ++i) {
      std::string bytes(1 + rng() % 100, '\0');
      for (auto& c : bytes) c = static_cast<char>(rng() & 0xff);
      const std::string safe = logSafe(bytes, 1000);
      QVERIFY2(!findUnsafe(safe), safe.c_str());
    }
  }

  void logLineWritesOneStampedLine() {
    QTemporaryFile file;
    QVERIFY(file.open());
    const int saved = ::dup(STDERR_FILENO);
    QVERIFY(saved >= 0);
    QVERIFY(::dup2(file.handle(), STDERR_FILENO) >= 0);
    logLine("client 10.0.0.5:51234: authenticated");
    ::dup2(saved, STDERR_FILENO);
    ::close(saved);
    file.seek(0);
    const QString text = QString::fromUtf8(file.readAll());
    static const QRegularExpression line(
        R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ shardscope-agent: client 10\.0\.0\.5:51234: authenticated\n$)");
    QVERIFY2(line.match(text).hasMatch(), qPrintable(text));
  }
};

QTEST_APPLESS_MAIN(TestAgentLog)
#include "test_agent_log.moc"
