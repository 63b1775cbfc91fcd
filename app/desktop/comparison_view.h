// Two runs side by side under the Runs page's list: which runs (and on what
// device), how their ranks were paired, why shares are compared when the
// devices differ, their step times; then the comparison as charts
// (ComparisonChart) and, on a second tab, every figure as a table: A, B,
// B - A and the change (a factor past +1,000 %, percentage points for shares).
#pragma once

#include <QWidget>

#include "shardscope/profiler/workflow/run_comparison.h"

class QLabel;
class QTableWidget;
class QTabWidget;

namespace shardscope::app {

class ComparisonChart;

class ComparisonView : public QWidget {
  Q_OBJECT

 public:
  explicit ComparisonView(QWidget* parent = nullptr);

  void setComparison(const profiler::RunComparison& c);

  [[nodiscard]] QTableWidget* table() const { return table_; }
  [[nodiscard]] ComparisonChart* chart() const { return chart_; }
  [[nodiscard]] QTabWidget* tabs() const { return tabs_; }
  [[nodiscard]] QString titleText() const;
  [[nodiscard]] QString notesText() const;

 private:
  void fillTable(const profiler::RunComparison& c);

  QLabel* title_;
  QLabel* notes_;
  QTabWidget* tabs_;
  ComparisonChart* chart_;
  QTableWidget* table_;
};

}  // namespace shardscope::app
