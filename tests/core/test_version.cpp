// What every program's --version says: the project version and the git
// commit of the build (12 hex digits, maybe "-dirty"), or "unknown" outside git.
#include <QtTest>

#include <regex>
#include <string>

#include "shardscope/core/version.h"

class TestVersion : public QObject {
  Q_OBJECT

 private slots:
  void versionLineNamesTheCommit() {
    const std::string line = shardscope::core::versionLine();
    QVERIFY2(line.starts_with(std::string(shardscope::core::versionString()) + " (commit "), line.c_str());
    const std::string commit = shardscope::core::buildCommit();
    QVERIFY2(std::regex_match(commit, std::regex("[0-9a-f]{12}(-dirty)?|unknown")), commit.c_str());
    QCOMPARE(line, std::string(shardscope::core::versionString()) + " (commit " + commit + ")");
  }
};

QTEST_APPLESS_MAIN(TestVersion)
#include "test_version.moc"
