// The TorchRec snippet's Python string literals.
#include <QtTest>

#include "shardscope/report/torchrec_snippet.h"

namespace report = shardscope::report;

class TestTorchRecSnippet : public QObject {
  Q_OBJECT

 private slots:
  void pythonStringLiteralEscapesBackslashesQuotesAndNewlines() {
    QCOMPARE(QString::fromStdString(report::pythonStringLiteral("a\\b\"c\n")), QStringLiteral("\"a\\\\b\\\"c\\n\""));
  }
};

QTEST_MAIN(TestTorchRecSnippet)
#include "test_torchrec_snippet.moc"
