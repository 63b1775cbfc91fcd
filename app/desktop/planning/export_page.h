// The Export page: what leaves ShardScope for the plan the session shows
// (the chosen grid, else the best fitting one): the shardscope.plan/1 file,
// the TorchRec snippet that runs it, the charts of the other pages as PNG or
// PDF, the per-rank CSV and the one-page HTML report of the decision. Every
// action has a non-interactive form returning a Status (tests, --report);
// the buttons add the file dialogs and message boxes.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

#include "shardscope/core/result.h"

class QCustomPlot;
class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace shardscope::app {

class PlanningSession;

class ExportPage : public QWidget {
  Q_OBJECT

 public:
  // A chart another page owns; the page exports it, never changes it.
  struct ExportChart {
    QString id;     // file name stem and report anchor: "step", "memory", ...
    QString title;  // caption
    QCustomPlot* plot = nullptr;
  };
  // Size of exported charts (logical pixels); the report renders them at 2x.
  static constexpr int kChartWidth = 1200;
  static constexpr int kChartHeight = 600;

  explicit ExportPage(PlanningSession* session, QWidget* parent = nullptr);

  [[nodiscard]] PlanningSession* session() const { return session_; }
  // The charts "Save charts…" and the report include, in this order.
  void setCharts(std::vector<ExportChart> charts);
  [[nodiscard]] const std::vector<ExportChart>& charts() const { return charts_; }

  // What the page exports, as its summary line shows it.
  [[nodiscard]] QString summaryText() const;
  // The warning when the exported plan is slower than the best grid, with the factor ("" when it is the best).
  [[nodiscard]] QString slowerText() const;
  // The Python for this plan (empty without a plan); names planPath().
  [[nodiscard]] QString snippetText() const;
  // Where the snippet says the plan is: the last path savePlan wrote, else
  // "<project file's folder>/<project>.plan.json", else "plan.json".
  [[nodiscard]] QString planPath() const;

  // No dialogs. Errors name the file and the reason; a failed write leaves
  // an existing file as it was.
  [[nodiscard]] core::Status savePlan(const QString& path);
  [[nodiscard]] core::Status saveSnippet(const QString& path);
  [[nodiscard]] core::Status savePerRankCsv(const QString& path);
  // Format by extension: .png or .pdf.
  [[nodiscard]] core::Status saveChart(const QString& id, const QString& path);
  // Every chart as <folder>/<id>.<format> (format "png" or "pdf").
  [[nodiscard]] core::Status saveCharts(const QString& folder, const QString& format);
  // The one-page HTML report of the grid decision (headless: --report).
  [[nodiscard]] core::Status writeReport(const QString& path);

  // The HTML of the report, as writeReport writes it.
  [[nodiscard]] core::Result<QString> reportHtml();

 public slots:
  void refresh();  // after the plan or the project changed

 private:
  void onSavePlan();
  void onSaveSnippet();
  void onCopySnippet();
  void onSaveCharts();
  void onSaveCsv();
  void onSaveReport();
  void showResult(const QString& what, const core::Status& status, const QString& path);
  [[nodiscard]] QString suggestedPath(const QString& suffix) const;
  [[nodiscard]] const ExportChart* chart(const QString& id) const;

  PlanningSession* session_;
  std::vector<ExportChart> charts_;
  QString saved_plan_path_;
  QLabel* summary_;
  QLabel* slower_;
  QLabel* status_;
  QPlainTextEdit* snippet_;
  QComboBox* chart_choice_;
  QComboBox* chart_format_;
  QPushButton* save_plan_;
  QPushButton* save_snippet_;
  QPushButton* copy_snippet_;
  QPushButton* save_charts_;
  QPushButton* save_csv_;
  QPushButton* save_report_;
};

}  // namespace shardscope::app
