// The Grid Explorer's calibration strip: which constants the project plans
// with (the defaults, or a calibration and its fit error), Load and Unload
// (each one undoable edit; the project file keeps the calibration inline,
// with its source), and after the calibration changed, the best grid before
// and after side by side.
#pragma once

#include <QWidget>

#include "shardscope/core/result.h"

class QLabel;
class QPushButton;

namespace shardscope::app {

class JobTracker;
class PlanningSession;

class CalibrationBar : public QWidget {
  Q_OBJECT

 public:
  explicit CalibrationBar(PlanningSession* session, QWidget* parent = nullptr);

  // Reads a shardscope.calibration/1 file off the GUI thread; the project
  // then plans with it. Errors name the file and the JSON path.
  void loadCalibration(const QString& path);
  void unloadCalibration();
  [[nodiscard]] QString constantsText() const;
  [[nodiscard]] QString comparisonText() const;

 signals:
  // A load finished: `message` empty on success.
  void loaded(const QString& message);

 private:
  void showConstants();
  void showComparison();

  PlanningSession* session_;
  QLabel* constants_;
  QPushButton* load_;
  QPushButton* unload_;
  QLabel* comparison_;
  JobTracker* load_jobs_;
};

}  // namespace shardscope::app
