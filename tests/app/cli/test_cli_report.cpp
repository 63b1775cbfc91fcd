// placeholder: being written
#include <QtTest>
class TestCliReport : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestCliReport)
#include "test_cli_report.moc"
