// placeholder: being written
#include <QtTest>
class TestCalibrationFit : public QObject {
  Q_OBJECT
 private slots:
  void placeholder() { QSKIP("not written yet"); }
};
QTEST_GUILESS_MAIN(TestCalibrationFit)
#include "test_calibration_fit.moc"
