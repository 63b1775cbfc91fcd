// The Profile dialog: runs the engine on the shown plan (or the planner's
// plan for a chosen sharding group size) and stores the run in the project's
// trace store, through profiler::runProfile on a job tracker: progress,
// cancel (the run is kept, marked failed "cancelled"), errors said in the
// dialog. Emulate mode runs here; mpi mode starts shardscope-engine. On the
// CPU or, in a build with the GPU engine, on this machine's GPUs. "Run on"
// offers each connected agent (setRemoteTargets): its cluster is then what
// the plan is made for, the modes are the agent's, and Run submits the job
// (core::protocol::makeJobSpecFor) to be followed on the Runs page instead.
#pragma once

#include <QDialog>
#include <QString>
#include <optional>

#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QCustomPlot;
class QCPItemText;

namespace shardscope::app {

class JobTracker;
class RemoteAgents;
class RemoteJobs;

class ProfileDialog : public QDialog {
  Q_OBJECT

 public:
  // `shown`: the plan the Plan page shows (offered first), when there is one.
  ProfileDialog(core::Project project, std::optional<core::ShardPlan> shown, QString store, QWidget* parent = nullptr);
  ~ProfileDialog() override;

  // The form, for tests and for callers that preset it.
  [[nodiscard]] QComboBox* planChoice() const { return plan_choice_; }
  [[nodiscard]] QSpinBox* stepsBox() const { return steps_; }
  [[nodiscard]] QSpinBox* batchBox() const { return batch_; }
  [[nodiscard]] QSpinBox* threadsBox() const { return threads_; }
  [[nodiscard]] QComboBox* modeChoice() const { return mode_; }
  [[nodiscard]] QComboBox* deviceChoice() const { return device_; }
  [[nodiscard]] QComboBox* targetChoice() const { return target_; }
  [[nodiscard]] QSpinBox* warmupBox() const { return warmup_; }
  [[nodiscard]] QSpinBox* seedBox() const { return seed_; }
  [[nodiscard]] QLineEdit* labelEdit() const { return label_; }
  [[nodiscard]] QString statusText() const;

  // Offers `agents`' connected agents as run targets; a job submitted goes to `jobs`.
  void setRemoteTargets(RemoteAgents* agents, RemoteJobs* jobs);
  // Chooses the target: "" this machine, else an agent's address; false when it is not offered.
  bool setTarget(const QString& address);
  [[nodiscard]] bool isRunning() const;
  // Live step time per rank (emulate mode): one graph per rank, a point per measured step.
  [[nodiscard]] QCustomPlot* stepTimePlot() const { return plot_; }

  // Starts the run with the form's settings; Cancel asks it to stop.
  void start();
  void cancel();

 signals:
  // The run is in the store (`run`), or it failed or was cancelled (`message`).
  void profiled(qint64 run);
  void failed(const QString& message);
  // A job was submitted to the agent at `address` (followed on the Runs page).
  void submitted(const QString& address, const QString& job);

 private:
  void setRunning(bool running);
  void addStepTime(quint32 rank, qint64 step, double step_ms);
  void clearStepTimes();
  void fillTargets();
  void onTargetChanged();
  void fillPlanChoices(std::uint32_t world_size);
  void startRemote(const QString& address);

  core::Project project_;
  std::optional<core::ShardPlan> shown_;
  QString store_;
  QComboBox* target_;
  QComboBox* mode_;
  QComboBox* device_;
  QComboBox* plan_choice_;
  QSpinBox* batch_;
  QSpinBox* steps_;
  QSpinBox* threads_;
  QSpinBox* warmup_;
  QSpinBox* seed_;
  QLineEdit* label_;
  QProgressBar* progress_;
  QCustomPlot* plot_;
  QCPItemText* plot_hint_ = nullptr;  // shown while the plot has no step yet
  QLabel* status_;
  QPushButton* run_;
  QPushButton* cancel_;
  QDialogButtonBox* buttons_;
  JobTracker* jobs_;
  RemoteAgents* agents_ = nullptr;
  RemoteJobs* remote_jobs_ = nullptr;
  bool submitting_ = false;
};

}  // namespace shardscope::app
