// The Timeline page: every rank of a stored run (engine or imported) on one
// time axis, with the tools to see why a rank is slow: zoom history, go to a
// step, search spans by name, a clicked span's details, one collective call
// highlighted on every rank with each rank's arrival and wait, a range's
// per-class totals per rank, ranks aligned on a step or a collective, and the
// per-step straggler strip. Every store read runs on the page's worker
// (TimelineQueries); the GUI thread only paints.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>
#include <vector>

#include "shardscope/profiler/analysis/timeline_inspect.h"
#include "timeline_queries.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace shardscope::app {

class JobTracker;
class TimelineView;
struct TimelineHit;

class TimelinePage : public QWidget {
  Q_OBJECT

 public:
  enum class Alignment { None = 0, StepStart = 1, SelectedCollective = 2 };

  explicit TimelinePage(QWidget* parent = nullptr);
  ~TimelinePage() override;

  void setStorePath(const QString& path);
  [[nodiscard]] QString storePath() const { return store_path_; }
  // Shows run `run` of the store (its overview, then the whole run).
  void showRun(qint64 run);
  [[nodiscard]] qint64 run() const { return run_; }

  // Shows step `step` (every rank's step span, padded).
  void goToStep(qint64 step);
  void setAlignment(Alignment alignment);
  // Searches span names for the search box's text after (before) the selected
  // span, or the view's start (end) when nothing is selected.
  void findNext();
  void findPrevious();
  // The current view (ruler, strip, lanes) as a PNG file.
  [[nodiscard]] bool savePng(const QString& path) const;

  [[nodiscard]] TimelineView* view() const { return view_; }
  [[nodiscard]] TimelineQueries* queries() const { return queries_; }
  [[nodiscard]] QLineEdit* searchEdit() const { return search_; }
  [[nodiscard]] QSpinBox* stepBox() const { return step_box_; }
  [[nodiscard]] QComboBox* alignBox() const { return align_box_; }
  [[nodiscard]] QString detailsText() const;
  [[nodiscard]] QString messageText() const;
  [[nodiscard]] const std::vector<profiler::StepStart>& steps() const { return steps_; }
  [[nodiscard]] const profiler::CollectiveCalls* calls() const { return calls_.get(); }
  // The store query time of the last window shown (us), for the status line and benches.
  [[nodiscard]] qint64 lastQueryUs() const { return last_query_us_; }

 signals:
  // The run's overview arrived (`message` empty) or the run could not be read.
  void runShown(qint64 run, const QString& message);
  // A window answer was painted.
  void windowShown(quint64 generation);
  // The details panel changed (span, block, call, range totals, search result).
  void detailsChanged();
  // Collective calls and steps of the run were loaded.
  void inspectionReady();

 private:
  void connectSignals();
  void onOpened(const TimelineOverview& overview);
  void onSpanClicked(const TimelineHit& hit);
  void onRangeSelected(std::int64_t t0_ns, std::int64_t t1_ns);
  void loadInspection();
  void buildSummaries();
  void find(profiler::SearchDirection direction);
  void showSpanDetails(const TimelineHit& hit);
  void showCall(std::size_t index);
  void applyAlignment();
  void showMessage(const QString& text, bool error);
  void updateButtons();
  [[nodiscard]] QString rel(std::int64_t t_ns) const;  // time since the run's first span

  QString store_path_;
  qint64 run_ = 0;
  TimelineOverview overview_;
  std::shared_ptr<const profiler::CollectiveCalls> calls_;
  std::vector<profiler::StepStart> steps_;
  std::optional<std::size_t> selected_call_;
  Alignment alignment_ = Alignment::None;
  qint64 last_query_us_ = 0;
  TimelineQueries* queries_;
  TimelineView* view_;
  QLabel* header_;
  QToolButton* back_;
  QToolButton* forward_;
  QToolButton* whole_;
  QToolButton* fit_;
  QSpinBox* step_box_;
  QPushButton* go_step_;
  QComboBox* align_box_;
  QLineEdit* search_;
  QToolButton* prev_;
  QToolButton* next_;
  QPushButton* save_png_;
  QLabel* details_;
  QLabel* message_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  JobTracker* summary_jobs_;
};

}  // namespace shardscope::app
