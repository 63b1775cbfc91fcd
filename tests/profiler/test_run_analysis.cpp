// placeholder: being written
#include <QtTest>
class TestRunAnalysis : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestRunAnalysis)
#include "test_run_analysis.moc"
