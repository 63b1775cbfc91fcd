#include "calibration_bar.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>

#include "shardscope/core/device.h"
#include "shardscope/core/json_io.h"
#include "calibration_confirm.h"
#include "chart_style.h"
#include "job_tracker.h"
#include "planning_session.h"
#include "project_document.h"
#include "project_files.h"

namespace shardscope::app {

CalibrationBar::CalibrationBar(PlanningSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      constants_(new QLabel),
      load_(new QPushButton(tr("Load Calibration\u2026"))),
      unload_(new QPushButton(tr("Unload"))),
      comparison_(new QLabel),
      load_jobs_(new JobTracker(planningPool(), this)) {
  setObjectName(QStringLiteral("calibrationBar"));
  constants_->setObjectName(QStringLiteral("calibrationConstants"));
  constants_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  constants_->setWordWrap(true);  // a long source must not widen the window
  constants_->setTextFormat(Qt::RichText);
  load_->setObjectName(QStringLiteral("calibrationLoad"));
  load_->setToolTip(tr("Plan with the constants of a shardscope.calibration/1 file (shardscope-cli calibrate --out)"));
  unload_->setObjectName(QStringLiteral("calibrationUnload"));
  unload_->setToolTip(tr("Plan with the cost model's default constants again"));
  comparison_->setObjectName(QStringLiteral("calibrationComparison"));
  comparison_->setWordWrap(true);
  comparison_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(constants_, 1);
  row->addWidget(load_);
  row->addWidget(unload_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(row);
  layout->addWidget(comparison_);

  connect(load_, &QPushButton::clicked, this, [this] {
    const QString file =
        QFileDialog::getOpenFileName(this, tr("Load Calibration"), {}, tr("Calibrations (*.json);;All files (*)"));
    if (!file.isEmpty()) loadCalibration(file);
  });
  connect(unload_, &QPushButton::clicked, this, &CalibrationBar::unloadCalibration);
  connect(session_->document(), &ProjectDocument::projectChanged, this, &CalibrationBar::showConstants);
  connect(session_, &PlanningSession::calibrationChangeShown, this, &CalibrationBar::showComparison);
  connect(load_jobs_, &JobTracker::failed, this, [this](quint64, const QString& message) {
    constants_->setText(tr("Could not load the calibration: %1").arg(message));
    emit loaded(message.isEmpty() ? tr("could not load the calibration") : message);
  });
  showConstants();
  showComparison();
}

void CalibrationBar::loadCalibration(const QString& path) {
  load_jobs_->start([file = localPath(path)](JobContext&) { return core::loadCalibration(file); },
                    [this, path](core::Calibration calibration) {
                      const core::ClusterSpec cluster = session_->document()->project().cluster;
                      confirmCalibration(this, cluster, calibration, [this, path, calibration](bool apply) {
                        if (!apply) {
                          emit loaded(tr("not applied: fitted on another device"));
                          return;
                        }
                        core::Project p = session_->document()->project();
                        p.calibration = calibration;
                        session_->document()->edit(std::move(p),
                                                   tr("Load calibration %1").arg(QFileInfo(path).fileName()));
                        emit loaded({});
                      });
                    });
}

void CalibrationBar::unloadCalibration() {
  core::Project p = session_->document()->project();
  if (!p.calibration) return;
  p.calibration.reset();
  session_->document()->edit(std::move(p), tr("Unload calibration"));
}

void CalibrationBar::showConstants() {
  const auto& cal = session_->document()->project().calibration;
  unload_->setEnabled(cal.has_value());
  if (!cal) {
    constants_->setText(tr("Cost model: default constants (no calibration)."));
    return;
  }
  QString fit;
  if (cal->fit.samples > 0) {
    fit = tr(", fit error %1% over %2 measurements").arg(cal->fit.mape * 100.0, 0, 'f', 1).arg(cal->fit.samples);
    if (cal->fit.holdout_mape >= 0) fit += tr(", held-out %1%").arg(cal->fit.holdout_mape * 100.0, 0, 'f', 1);
  }
  QString text = tr("Cost model: %1, from %2 (%3 constants%4).")
                     .arg(QString::fromStdString(core::calibratedOnText(&*cal)).toHtmlEscaped(),
                          QString::fromStdString(cal->source).toHtmlEscaped())
                     .arg(cal->coefficients.size())
                     .arg(fit);
  const std::string mismatch = core::calibrationMismatch(session_->document()->project().cluster, &*cal);
  if (!mismatch.empty())
    text += QStringLiteral(
                " <span style=\"color:%1\">\u26a0 %2: the figures it changes (\u2020) are for that device, the others "
                "for the cluster's.</span>")
                .arg(problemColor().name(), QString::fromStdString(mismatch).toHtmlEscaped());
  constants_->setText(text);
}

void CalibrationBar::showComparison() {
  const auto& change = session_->calibrationChange();
  comparison_->setVisible(change.has_value());
  if (!change) return;
  const auto side = [](const PlanningSession::BestGrid& b) {
    const QString constants =
        b.calibration.isEmpty() ? tr("default constants") : tr("calibration %1").arg(b.calibration);
    return b.grid.isEmpty() ? tr("%1: no grid fits").arg(constants) : tr("%1: <b>%2</b>").arg(constants, b.grid);
  };
  comparison_->setText(
      tr("Best grid before: %1 &nbsp;\u2192&nbsp; after: %2").arg(side(change->before), side(change->after)));
}

QString CalibrationBar::constantsText() const { return constants_->text(); }
QString CalibrationBar::comparisonText() const { return comparison_->text(); }

}  // namespace shardscope::app
