// placeholder: being written
#include <QtTest>
class TestEngineMpi : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestEngineMpi)
#include "test_engine_mpi.moc"
