// placeholder: being written
#include <QtTest>
class TestEngineTrace : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestEngineTrace)
#include "test_engine_trace.moc"
