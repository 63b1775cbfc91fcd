#include "calibration_confirm.h"

#include <QMessageBox>
#include <QPushButton>

#include "shardscope/core/device.h"

namespace shardscope::app {

void confirmCalibration(QWidget* parent, const core::ClusterSpec& cluster, const core::Calibration& calibration,
                        std::function<void(bool apply)> done) {
  const std::string mismatch = core::calibrationMismatch(cluster, &calibration);
  if (mismatch.empty()) {
    done(true);
    return;
  }
  const QString fitted = QString::fromStdString(core::describeDevice(calibration.device));
  const QString gpu = QString::fromStdString(core::shortDeviceName(core::clusterDevice(cluster)));
  auto* box = new QMessageBox(
      QMessageBox::Warning, QObject::tr("Calibration for Another Device"),
      calibration.device.kind == core::DeviceClass::Unknown
          ? QObject::tr("This calibration does not say which device it was fitted on. "
                        "Plan the %1 cluster with it?")
                .arg(gpu)
          : QObject::tr("This calibration was fitted on %1. Plan the %2 cluster with it?").arg(fitted, gpu),
      QMessageBox::NoButton, parent);
  box->setObjectName(QStringLiteral("calibrationDeviceConfirm"));
  box->setInformativeText(
      QObject::tr("Its constants describe that device: the figures they change will be for it and say "
                  "\u201ccalibrated on %2\u201d, while the others stay priced for %1, so a step time mixes "
                  "the two devices.")
          .arg(gpu, fitted));
  QPushButton* apply = box->addButton(QObject::tr("Apply to %1 Anyway").arg(gpu), QMessageBox::AcceptRole);
  apply->setObjectName(QStringLiteral("calibrationApplyAnyway"));
  box->addButton(QMessageBox::Cancel);
  box->setDefaultButton(QMessageBox::Cancel);
  box->setAttribute(Qt::WA_DeleteOnClose);
  QObject::connect(box, &QMessageBox::finished, box,
                   [box, apply, done = std::move(done)](int) { done(box->clickedButton() == apply); });
  box->open();
}

}  // namespace shardscope::app
