// The measured-vs-predicted view of one run of the project's trace store:
// per-rank bars of the measured phases beside the prediction of the plan the
// run ran (or of a plan the user picks: the Plan page's, or a shardscope or
// TorchRec plan file, which is how an imported run gets a prediction), the
// error per rank and overall, TorchRec's imbalance statistics of both, the
// stragglers; and "Calibrate from this run", which fits the cost model as
// `shardscope-cli calibrate` does, shows the fitted constants and the fit's
// error, and makes the project plan with them (one undoable edit). Every
// store read and fit runs off the GUI thread through a JobTracker.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

#include "shardscope/profiler/workflow/stored_runs.h"

class QComboBox;
class QLabel;
class QPushButton;
class QTableWidget;

namespace shardscope::app {

class JobTracker;
class MeasuredChart;
class PlanningSession;
class ProjectDocument;

class MeasuredPage : public QWidget {
  Q_OBJECT

 public:
  // Where the prediction's plan comes from.
  enum class PlanSource { Run = 0, PlanPage = 1, File = 2 };

  MeasuredPage(ProjectDocument* document, PlanningSession* session, QWidget* parent = nullptr);
  ~MeasuredPage() override;

  void setStorePath(const QString& path);
  // Analyses run `run` of the store against the chosen plan, off the GUI thread.
  void showRun(qint64 run);
  [[nodiscard]] qint64 run() const { return run_; }
  // The plan to predict from; File reads `file` (shardscope.plan/1 or a
  // TorchRec plan, placed on the run's ranks) and shows the run again.
  void setPlanSource(PlanSource source, const QString& file = {});
  // Fits the cost model to the shown run; on success the project plans with
  // the fit (an undoable edit named "Calibrate from run N").
  void calibrate();

  // What is shown (nullptr before the first analysis arrives).
  [[nodiscard]] const profiler::RunVsPlan* shown() const { return shown_.get(); }
  [[nodiscard]] const profiler::CalibrationReport* lastCalibration() const { return calibration_.get(); }
  [[nodiscard]] MeasuredChart* chart() const { return chart_; }
  [[nodiscard]] QTableWidget* rankTable() const { return ranks_; }
  [[nodiscard]] QTableWidget* calibrationTable() const { return terms_; }
  [[nodiscard]] QString statsText() const;
  [[nodiscard]] QString messageText() const;

 signals:
  // An analysis arrived (`message` empty) or failed.
  void runShown(qint64 run, const QString& message);
  // A fit arrived and the project uses it (`message` empty), or it failed.
  void calibrated(const QString& message);

 private:
  void show(std::shared_ptr<const profiler::RunVsPlan> result);
  void showCalibration(const profiler::CalibrationReport& report);
  void setRankColumns(bool absolute);
  [[nodiscard]] QString noRunText() const;
  void fillRankTable(const profiler::MeasuredVsPredicted& v);
  void fillMeasuredTable(const profiler::RunAnalysis& a);
  void fillStats(const profiler::RunVsPlan& r);
  void showMessage(const QString& text, bool error);
  void onSourceActivated(int index);

  ProjectDocument* document_;
  PlanningSession* session_;
  QString store_path_;
  qint64 run_ = 0;
  PlanSource source_ = PlanSource::Run;
  QString plan_file_;
  std::shared_ptr<const profiler::RunVsPlan> shown_;
  std::optional<core::Calibration> shown_calibration_;  // what the shown prediction was priced with
  std::shared_ptr<const profiler::CalibrationReport> calibration_;
  QLabel* header_;
  QComboBox* source_box_;
  QPushButton* calibrate_;
  QLabel* message_;
  MeasuredChart* chart_;
  QTableWidget* ranks_;
  QLabel* stats_;
  QLabel* calibration_title_;
  QTableWidget* terms_;
  JobTracker* show_jobs_;
  JobTracker* calibrate_jobs_;
};

}  // namespace shardscope::app
