#include "export_page.h"

#include "chart_style.h"
#include "shardscope/report/grid_choice.h"

#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryFile>
#include <QVBoxLayout>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <qcustomplot.h>

#include "chart_style.h"
#include "shardscope/report/grid_choice.h"
#include "shardscope/report/decision_report.h"
#include "planning_session.h"
#include "project_document.h"
#include "project_files.h"
#include "shardscope/report/rank_csv.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/version.h"
#include "shardscope/report/torchrec_snippet.h"

namespace shardscope::app {

namespace {

// Charts in the report: drawn at this logical size and twice the pixels, so
// the text stays sharp where the page shows them two to a row.
constexpr int kReportChartWidth = 760;
constexpr int kReportChartHeight = 400;
constexpr double kReportChartScale = 2.0;

core::Error fileError(const QString& path, const QString& reason) {
  return core::Error{path.toStdString() + ": " + reason.toStdString()};
}

// Replaces `path` with `bytes` atomically (core::writeFileAtomic), so a failed write keeps the old file.
core::Status writeFileAtomically(const QString& path, const QByteArray& bytes) {
  return core::writeFileAtomic(localPath(path), std::string_view(bytes.constData(), bytes.size()));
}

// Plots replot on the next event-loop pass (rpQueuedReplot); bring a chart
// up to date before it is drawn off screen, however hidden its page is.
QPixmap renderChart(QCustomPlot* plot, int width, int height, double scale) {
  plot->replot(QCustomPlot::rpImmediateRefresh);
  QPixmap pixmap = plot->toPixmap(width, height, scale);
  plot->replot(QCustomPlot::rpQueuedReplot);  // its own size again on screen
  return pixmap;
}

QString safeFileStem(QString name) {
  static const QString kBad = QStringLiteral("/\\:*?\"<>|");
  for (QChar& c : name) {
    if (kBad.contains(c) || c.unicode() < 0x20) c = QLatin1Char('_');
  }
  name = name.trimmed();
  return name.isEmpty() ? QStringLiteral("shardscope") : name;
}

}  // namespace

ExportPage::ExportPage(PlanningSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      summary_(new QLabel),
      slower_(new QLabel),
      status_(new QLabel),
      snippet_(new QPlainTextEdit),
      chart_choice_(new QComboBox),
      chart_format_(new QComboBox),
      save_plan_(new QPushButton(tr("Save plan\u2026"))),
      save_snippet_(new QPushButton(tr("Save snippet\u2026"))),
      copy_snippet_(new QPushButton(tr("Copy snippet"))),
      save_charts_(new QPushButton(tr("Save charts\u2026"))),
      save_csv_(new QPushButton(tr("Save per-rank CSV\u2026"))),
      save_report_(new QPushButton(tr("Save HTML report\u2026"))) {
  setObjectName(QStringLiteral("exportPage"));
  summary_->setObjectName(QStringLiteral("exportSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont summary_font = summary_->font();
  summary_font.setPointSizeF(summary_font.pointSizeF() * 1.15);
  summary_font.setBold(true);
  summary_->setFont(summary_font);
  slower_->setObjectName(QStringLiteral("exportSlower"));
  slower_->setWordWrap(true);
  slower_->setStyleSheet(QStringLiteral("color: %1; font-weight: bold;").arg(problemColor().name()));
  slower_->setVisible(false);
  status_->setObjectName(QStringLiteral("exportStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  save_plan_->setObjectName(QStringLiteral("savePlan"));
  save_snippet_->setObjectName(QStringLiteral("saveSnippet"));
  copy_snippet_->setObjectName(QStringLiteral("copySnippet"));
  save_charts_->setObjectName(QStringLiteral("saveCharts"));
  save_csv_->setObjectName(QStringLiteral("savePerRankCsv"));
  save_report_->setObjectName(QStringLiteral("saveReport"));
  chart_choice_->setObjectName(QStringLiteral("chartChoice"));
  chart_format_->setObjectName(QStringLiteral("chartFormat"));
  chart_choice_->setPlaceholderText(tr("No charts"));
  chart_choice_->setMinimumContentsLength(16);
  chart_format_->addItem(QStringLiteral("PNG"), QStringLiteral("png"));
  chart_format_->addItem(QStringLiteral("PDF"), QStringLiteral("pdf"));
  connect(save_plan_, &QPushButton::clicked, this, &ExportPage::onSavePlan);
  connect(save_snippet_, &QPushButton::clicked, this, &ExportPage::onSaveSnippet);
  connect(copy_snippet_, &QPushButton::clicked, this, &ExportPage::onCopySnippet);
  connect(save_charts_, &QPushButton::clicked, this, &ExportPage::onSaveCharts);
  connect(save_csv_, &QPushButton::clicked, this, &ExportPage::onSaveCsv);
  connect(save_report_, &QPushButton::clicked, this, &ExportPage::onSaveReport);

  snippet_->setObjectName(QStringLiteral("torchrecSnippet"));
  snippet_->setReadOnly(true);
  snippet_->setLineWrapMode(QPlainTextEdit::NoWrap);
  snippet_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  snippet_->setToolTip(
      tr("Python for a TorchRec trainer: loads the saved plan with shardscope_torchrec "
         "(packaging/python) and builds DMPCollection for this grid"));

  // Files: one row per export, the button and what it writes.
  auto* files = new QGroupBox(tr("Files"));
  auto* grid = new QGridLayout(files);
  grid->setColumnStretch(1, 1);
  int row = 0;
  const auto add_row = [&](QWidget* control, const QString& text) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    grid->addWidget(control, row, 0);
    grid->addWidget(label, row, 1);
    ++row;
  };
  add_row(save_plan_, tr("The plan as shardscope.plan/1: grid, rank groups and every shard, for the trainer "
                         "(snippet below) and shardscope-cli evaluate."));
  add_row(save_csv_, tr("One row per rank of the sharding group: compute, all-to-all, replica sync, load and memory."));
  add_row(save_report_, tr("One self-contained HTML page: the decision, why, the alternatives and the charts."));
  auto* chart_row = new QWidget;
  auto* chart_layout = new QHBoxLayout(chart_row);
  chart_layout->setContentsMargins(0, 0, 0, 0);
  chart_layout->addWidget(chart_choice_, 1);
  chart_layout->addWidget(chart_format_);
  chart_layout->addWidget(save_charts_);
  add_row(chart_row, tr("The Grid Explorer's and the Plan page's charts at %1 \u00d7 %2, as PNG or PDF; all charts "
                        "go into a folder.")
                         .arg(kChartWidth)
                         .arg(kChartHeight));

  auto* snippet_box = new QGroupBox(tr("TorchRec snippet"));
  auto* snippet_layout = new QVBoxLayout(snippet_box);
  auto* snippet_buttons = new QHBoxLayout;
  auto* snippet_hint = new QLabel(tr("Save the plan first: the snippet loads it from the path it was saved to."));
  snippet_hint->setWordWrap(true);
  snippet_buttons->addWidget(snippet_hint, 1);
  snippet_buttons->addWidget(copy_snippet_);
  snippet_buttons->addWidget(save_snippet_);
  snippet_layout->addLayout(snippet_buttons);
  snippet_layout->addWidget(snippet_, 1);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(summary_);
  layout->addWidget(slower_);
  layout->addWidget(files);
  layout->addWidget(snippet_box, 1);
  layout->addWidget(status_);

  connect(session_, &PlanningSession::sweepStarted, this, &ExportPage::refresh);
  connect(session_, &PlanningSession::sweepFinished, this, &ExportPage::refresh);
  connect(session_, &PlanningSession::sweepCancelled, this, &ExportPage::refresh);
  connect(session_, &PlanningSession::chosenChanged, this, &ExportPage::refresh);
  connect(session_->document(), &ProjectDocument::filePathChanged, this, &ExportPage::refresh);
  refresh();
}

void ExportPage::setCharts(std::vector<ExportChart> charts) {
  charts_.clear();
  for (ExportChart& c : charts) {
    if (c.plot == nullptr) continue;
    // Pages are torn down in any order (the session may be gone already):
    // forget a chart whose plot is gone, without asking the session anything.
    connect(c.plot, &QObject::destroyed, this, [this, id = c.id](QObject* gone) {
      std::erase_if(charts_, [gone](const ExportChart& e) { return e.plot == gone; });
      if (const int i = chart_choice_->findData(id); i >= 0) chart_choice_->removeItem(i);
    });
    charts_.push_back(std::move(c));
  }
  refresh();
}

const ExportPage::ExportChart* ExportPage::chart(const QString& id) const {
  for (const ExportChart& c : charts_) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

QString ExportPage::summaryText() const {
  const planner::GridResult* grid = session_->planGrid();
  if (grid == nullptr) {
    if (!session_->hasResult()) return tr("Nothing to export yet: the project is being planned.");
    if (!session_->error().isEmpty()) return tr("Nothing to export: %1").arg(session_->error());
    return tr("No grid fits in memory, so there is no plan to export; the HTML report explains why.");
  }
  const core::Project& project = session_->plannedProject();
  QString text =
      session_->planGridIsChosen() ? tr("Exporting the chosen grid: ") : tr("Exporting the best fitting grid: ");
  text += PlanningSession::describe(*grid);
  text +=
      tr(" \u2014 %1 on N = %2 GPUs.").arg(QString::fromStdString(project.model.name)).arg(project.cluster.worldSize());
  text += grid->plan.target == core::PlanTarget::TorchRec
              ? tr(" Planned for TorchRec: DMPCollection runs exactly this layout.")
              : tr(" Planned for ShardScope's engine: TorchRec may refuse its row-block placement.");
  if (session_->isRunning()) text += tr(" (The project changed; replanning\u2026)");
  return text;
}

QString ExportPage::slowerText() const {
  const planner::GridResult* grid = session_->planGrid();
  const planner::GridResult* best = session_->hasResult() ? session_->result().best() : nullptr;
  if (grid == nullptr || best == nullptr || grid == best) return {};
  const double factor = report::slowdownAgainstBest(session_->result(), *grid);
  if (factor < 1.0005) return {};
  return tr("\u26a0 This plan is %1x slower than the best grid, %2 (%3 vs %4 ms per step).")
      .arg(factor, 0, 'f', 2)
      .arg(PlanningSession::describe(*best))
      .arg(grid->step.step_ms, 0, 'f', 2)
      .arg(best->step.step_ms, 0, 'f', 2);
}

QString ExportPage::planPath() const {
  if (!saved_plan_path_.isEmpty()) return saved_plan_path_;
  const QString project_file = session_->document()->filePath();
  if (project_file.isEmpty()) return QStringLiteral("plan.json");
  const QFileInfo info(project_file);
  return info.absoluteDir().filePath(info.completeBaseName() + QStringLiteral(".plan.json"));
}

QString ExportPage::snippetText() const {
  const planner::GridResult* grid = session_->planGrid();
  if (grid == nullptr) return {};
  return QString::fromStdString(report::torchRecSnippet(grid->plan, planPath().toStdString()));
}

void ExportPage::refresh() {
  const bool has_plan = session_->planGrid() != nullptr;
  const bool has_grids = session_->hasResult() && !session_->result().grids.empty();
  summary_->setText(summaryText());
  slower_->setText(slowerText());
  slower_->setVisible(!slower_->text().isEmpty());
  const QString snippet = snippetText();
  if (snippet_->toPlainText() != snippet) snippet_->setPlainText(snippet);
  if (!has_plan) snippet_->setPlaceholderText(tr("No plan yet."));
  save_plan_->setEnabled(has_plan);
  save_snippet_->setEnabled(has_plan);
  copy_snippet_->setEnabled(has_plan);
  save_csv_->setEnabled(has_plan);
  save_report_->setEnabled(has_grids);

  const QString current = chart_choice_->currentData().toString();
  chart_choice_->clear();
  if (!charts_.empty()) chart_choice_->addItem(tr("All charts (%1)").arg(charts_.size()), QString());
  for (const ExportChart& c : charts_) chart_choice_->addItem(c.title, c.id);
  const int keep = chart_choice_->findData(current);
  chart_choice_->setCurrentIndex(keep >= 0 ? keep : (charts_.empty() ? -1 : 0));
  chart_choice_->setEnabled(!charts_.empty());
  chart_format_->setEnabled(!charts_.empty());
  save_charts_->setEnabled(!charts_.empty() && has_grids);
}

core::Status ExportPage::savePlan(const QString& path) {
  const planner::GridResult* grid = session_->planGrid();
  if (grid == nullptr) return fileError(path, QStringLiteral("not written: there is no plan (no grid fits in memory)"));
  if (const std::string why = planner::unpricedReason(*grid); !why.empty())
    return fileError(path, QStringLiteral("not written: ") + QString::fromStdString(why));
  if (auto written = core::writeJsonFile(path.toStdString(), core::toJson(grid->plan)); !written) return written;
  saved_plan_path_ = QFileInfo(path).absoluteFilePath();
  refresh();
  return core::Ok{};
}

core::Status ExportPage::saveSnippet(const QString& path) {
  const QString snippet = snippetText();
  if (snippet.isEmpty())
    return fileError(path, QStringLiteral("not written: there is no plan (no grid fits in memory)"));
  return writeFileAtomically(path, snippet.toUtf8());
}

core::Status ExportPage::savePerRankCsv(const QString& path) {
  const planner::GridResult* grid = session_->planGrid();
  if (grid == nullptr) return fileError(path, QStringLiteral("not written: there is no plan (no grid fits in memory)"));
  return writeFileAtomically(path, QByteArray::fromStdString(report::perRankCsv(*grid)));
}

core::Status ExportPage::saveChart(const QString& id, const QString& path) {
  const ExportChart* c = chart(id);
  if (c == nullptr) return fileError(path, QStringLiteral("not written: there is no chart '%1'").arg(id));
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("png")) {
    const QPixmap pixmap = renderChart(c->plot, kChartWidth, kChartHeight, 1.0);
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (pixmap.isNull() || !pixmap.save(&buffer, "PNG"))
      return fileError(path, QStringLiteral("cannot render the chart"));
    return writeFileAtomically(path, png);
  }
  if (suffix == QLatin1String("pdf")) {
    // QCustomPlot writes the PDF itself: into a temporary file beside the
    // target, renamed over it only when complete.
    const QFileInfo info(path);
    QTemporaryFile tmp(info.absoluteDir().filePath(QStringLiteral(".shardscope-XXXXXX.pdf")));
    if (!tmp.open()) return fileError(path, QStringLiteral("cannot write: ") + tmp.errorString());
    tmp.close();
    c->plot->replot(QCustomPlot::rpImmediateRefresh);
    const bool saved = c->plot->savePdf(tmp.fileName(), kChartWidth, kChartHeight, QCP::epNoCosmetic,
                                        QStringLiteral("ShardScope"), c->title);
    c->plot->replot(QCustomPlot::rpQueuedReplot);
    if (!saved || QFileInfo(tmp.fileName()).size() == 0)
      return fileError(path, QStringLiteral("cannot render the chart as PDF"));
    // The temporary file is private (0600); give the PDF the old file's
    // permissions, or a plain file's.
    QFile::setPermissions(tmp.fileName(), info.exists() ? info.permissions()
                                                        : QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                              QFileDevice::ReadGroup | QFileDevice::ReadOther);
    if (std::rename(QFile::encodeName(tmp.fileName()).constData(), QFile::encodeName(path).constData()) != 0) {
      return fileError(path, QStringLiteral("cannot replace the file: %1; the previous file is unchanged")
                                 .arg(QString::fromLocal8Bit(std::strerror(errno))));
    }
    tmp.setAutoRemove(false);  // renamed: nothing left to remove
    return core::Ok{};
  }
  return fileError(path, QStringLiteral("not written: charts are saved as .png or .pdf, not '.%1'").arg(suffix));
}

core::Status ExportPage::saveCharts(const QString& folder, const QString& format) {
  const QString suffix = format.toLower();
  if (suffix != QLatin1String("png") && suffix != QLatin1String("pdf")) {
    return fileError(folder, QStringLiteral("not written: charts are saved as png or pdf, not '%1'").arg(format));
  }
  if (charts_.empty()) return fileError(folder, QStringLiteral("not written: there are no charts"));
  if (!QDir().mkpath(folder)) return fileError(folder, QStringLiteral("cannot create the folder"));
  for (const ExportChart& c : charts_) {
    const QString file = QDir(folder).filePath(safeFileStem(c.id) + QLatin1Char('.') + suffix);
    if (auto saved = saveChart(c.id, file); !saved) return saved;
  }
  return core::Ok{};
}

core::Result<QString> ExportPage::reportHtml() {
  if (!session_->hasResult() || session_->result().grids.empty()) {
    return core::Error{session_->error().isEmpty() ? std::string("nothing has been planned yet")
                                                   : session_->error().toStdString()};
  }
  report::DecisionReportInput input;
  input.project = session_->plannedProject();
  input.sweep = session_->result();
  if (const planner::GridResult* grid = session_->planGrid()) {
    input.decision = static_cast<std::size_t>(grid - session_->result().grids.data());
  }
  input.chosen = session_->planGridIsChosen();
  input.project_file = session_->document()->filePath().toStdString();
  input.generated = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
  input.version = core::versionString();
  for (const ExportChart& c : charts_) {
    const QPixmap pixmap = renderChart(c.plot, kReportChartWidth, kReportChartHeight, kReportChartScale);
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (pixmap.isNull() || !pixmap.save(&buffer, "PNG")) {
      return core::Error{"cannot render the chart '" + c.title.toStdString() + "'"};
    }
    input.charts.push_back({c.id.toStdString(), c.title.toStdString(), png.toBase64().toStdString()});
  }
  return QString::fromStdString(report::decisionReportHtml(input));
}

core::Status ExportPage::writeReport(const QString& path) {
  core::Result<QString> html = reportHtml();
  if (!html) return fileError(path, QStringLiteral("not written: ") + QString::fromStdString(html.error().message));
  return writeFileAtomically(path, html->toUtf8());
}

// --- interactive forms: dialogs around the calls above -----------------------

QString ExportPage::suggestedPath(const QString& suffix) const {
  const QString project_file = session_->document()->filePath();
  QString dir;
  QString stem;
  if (!project_file.isEmpty()) {
    const QFileInfo info(project_file);
    dir = info.absolutePath();
    stem = info.completeBaseName();
  } else {
    dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    stem = session_->document()->displayName();
  }
  return QDir(dir).filePath(safeFileStem(stem) + suffix);
}

void ExportPage::showResult(const QString& what, const core::Status& status, const QString& path) {
  if (!status) {
    status_->setText(tr("%1 failed.").arg(what));
    QMessageBox::warning(this, tr("%1 failed").arg(what), QString::fromStdString(status.error().message));
    return;
  }
  const QString slower = slowerText();
  status_->setText(slower.isEmpty() ? tr("%1: wrote %2").arg(what, QDir::toNativeSeparators(path))
                                    : tr("%1: wrote %2. %3").arg(what, QDir::toNativeSeparators(path), slower));
}

void ExportPage::onSavePlan() {
  const QString start = saved_plan_path_.isEmpty() ? suggestedPath(QStringLiteral(".plan.json")) : saved_plan_path_;
  const QString path = QFileDialog::getSaveFileName(this, tr("Save plan"), start, tr("ShardScope plans (*.json)"));
  if (path.isEmpty()) return;
  showResult(tr("Save plan"), savePlan(path), path);
}

void ExportPage::onSaveSnippet() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save TorchRec snippet"),
                                                    suggestedPath(QStringLiteral("_torchrec.py")), tr("Python (*.py)"));
  if (path.isEmpty()) return;
  showResult(tr("Save snippet"), saveSnippet(path), path);
}

void ExportPage::onCopySnippet() {
  QApplication::clipboard()->setText(snippet_->toPlainText());
  status_->setText(tr("Copied the TorchRec snippet to the clipboard."));
}

void ExportPage::onSaveCharts() {
  const QString id = chart_choice_->currentData().toString();
  const QString format = chart_format_->currentData().toString();
  if (id.isEmpty()) {
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("Save charts into"), QFileInfo(suggestedPath({})).absolutePath());
    if (folder.isEmpty()) return;
    showResult(tr("Save charts"), saveCharts(folder, format), folder);
    return;
  }
  const QString filter = format == QLatin1String("pdf") ? tr("PDF (*.pdf)") : tr("PNG images (*.png)");
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Save chart"), suggestedPath(QLatin1Char('_') + safeFileStem(id) + QLatin1Char('.') + format), filter);
  if (path.isEmpty()) return;
  showResult(tr("Save chart"), saveChart(id, path), path);
}

void ExportPage::onSaveCsv() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save per-rank CSV"),
                                                    suggestedPath(QStringLiteral("_ranks.csv")), tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  showResult(tr("Save per-rank CSV"), savePerRankCsv(path), path);
}

void ExportPage::onSaveReport() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Save HTML report"),
                                                    suggestedPath(QStringLiteral("_report.html")), tr("HTML (*.html)"));
  if (path.isEmpty()) return;
  showResult(tr("Save HTML report"), writeReport(path), path);
}

}  // namespace shardscope::app
