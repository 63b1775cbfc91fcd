// placeholder: being written
#include <QtTest>
class TestCliProfile : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestCliProfile)
#include "test_cli_profile.moc"
