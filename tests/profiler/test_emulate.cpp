// placeholder: being written
#include <QtTest>
class TestEmulate : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestEmulate)
#include "test_emulate.moc"
