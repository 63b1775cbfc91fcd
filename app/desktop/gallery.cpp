#include "gallery.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QDir>
#include <QHeaderView>
#include <QMessageBox>
#include <QTableView>
#include <QTableWidget>

#include "about.h"
#include "calibration_confirm.h"
#include "connections_dialog.h"
#include "grid_explorer_page.h"
#include "main_window.h"
#include "measured_page.h"
#include "planning_session.h"
#include "profile_dialog.h"
#include "project_document.h"
#include "runs_page.h"
#include "screenshot.h"
#include "shardscope/core/device.h"

namespace shardscope::app {

namespace {

constexpr int kWaitMs = 120000;
const char* const kPageNames[] = {"model", "cluster",  "grid",     "plan",       "export",
                                  "runs",  "measured", "timeline", "collectives"};

bool isRunPage(MainWindow::Page p) {
  return p == MainWindow::Page::Measured || p == MainWindow::Page::Timeline || p == MainWindow::Page::Collectives;
}

// Header sections and cells in view whose text is wider than their column: what a reader sees cut ("Embed…").
QStringList elidedLabels(const QTableView* table) {
  QStringList cut;
  if (table == nullptr || table->model() == nullptr || !table->isVisible()) return cut;
  const QHeaderView* header = table->horizontalHeader();
  const QFontMetrics header_metrics(header->font());
  const QFontMetrics cell_metrics(table->font());
  const int viewport = table->viewport()->width();
  const QAbstractItemModel* model = table->model();
  for (int c = 0; c < model->columnCount(); ++c) {
    if (table->isColumnHidden(c)) continue;
    const int x = header->sectionViewportPosition(c);
    const int width = header->sectionSize(c);
    if (x < 0 || x + width > viewport) continue;  // scrolled out of view: not cut, just elsewhere
    const QString title = model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
    for (const QString& line : title.split(QLatin1Char('\n')))
      if (header_metrics.horizontalAdvance(line) + 8 > width) cut << QStringLiteral("header \"%1\"").arg(line);
    const int rows = std::min(model->rowCount(), 50);
    for (int r = 0; r < rows; ++r) {
      const QString text = model->index(r, c).data(Qt::DisplayRole).toString();
      if (cell_metrics.horizontalAdvance(text) + 6 > width) cut << QStringLiteral("row %1 \"%2\"").arg(r + 1).arg(text);
    }
  }
  return cut;
}

void check(GalleryReport& report, bool ok, const QString& what) {
  report.checks << (ok ? QStringLiteral("ok: ") : QStringLiteral("FAIL: ")) + what;
}

// What the image of `page` at `size` must show.
void checkPage(MainWindow& window, MainWindow::Page page, QSize size, qint64 run, GalleryReport& report) {
  const QString where = QStringLiteral("%1 at %2x%3")
                            .arg(QLatin1String(kPageNames[static_cast<int>(page)]))
                            .arg(size.width())
                            .arg(size.height());
  if (page == MainWindow::Page::GridExplorer && window.session()->result().best() != nullptr) {
    const double px = window.gridExplorerPage()->stepPlot()->bestBarPixels();
    check(report, px >= 10.0, QStringLiteral("%1: the best grid's bar is %2 px tall").arg(where).arg(px, 0, 'f', 0));
    const QStringList cut = elidedLabels(window.gridExplorerPage()->gridTable());
    check(report, cut.isEmpty(),
          QStringLiteral("%1: grid table labels not cut%2")
              .arg(where, cut.isEmpty() ? QString() : QStringLiteral(": ") + cut.join(QStringLiteral(", "))));
  }
  if (page == MainWindow::Page::Measured) {
    const QStringList cut = elidedLabels(window.measuredPage()->rankTable());
    check(report, cut.isEmpty(),
          QStringLiteral("%1: rank table labels not cut%2")
              .arg(where, cut.isEmpty() ? QString() : QStringLiteral(": ") + cut.join(QStringLiteral(", "))));
  }
  if (isRunPage(page) && run > 0)
    check(report, window.currentRun() == run, QStringLiteral("%1: shows run %2").arg(where).arg(run));
}

core::Status shoot(QWidget& widget, const QString& path, QSize size, GalleryReport& report) {
  if (auto saved = saveScreenshot(widget, path, size); !saved) return saved;
  report.images << path;
  return core::Ok{};
}

// The dialogs at their own size: Profile (with a store), Connections, About, and the calibration device confirmation.
core::Status shootDialogs(MainWindow& window, const QString& dir, const QString& prefix, GalleryReport& report) {
  const auto file = [&](const char* name) {
    return QDir(dir).filePath(prefix + QStringLiteral("-dialog-%1.png").arg(QLatin1String(name)));
  };
  if (!window.storePath().isEmpty()) {
    if (ProfileDialog* profile = window.showProfileDialog()) {
      const core::Status s = shoot(*profile, file("profile"), profile->sizeHint().expandedTo(QSize(640, 480)), report);
      profile->close();
      if (!s) return s;
    }
  }
  QWidget* connections = window.showConnections();
  if (auto s = shoot(*connections, file("connections"), connections->sizeHint().expandedTo(QSize(800, 520)), report);
      !s)
    return s;
  connections->close();
  QMessageBox about(QMessageBox::NoIcon, QObject::tr("About ShardScope"), aboutText(), QMessageBox::Ok, &window);
  if (auto s = shoot(about, file("about"), about.sizeHint(), report); !s) return s;
  // A calibration fitted on a CPU offered to the project's GPUs: the confirmation names both.
  core::Calibration cpu;
  cpu.source = "gallery";
  cpu.device = {core::DeviceClass::Cpu, "Intel(R) Xeon(R) Platinum 8480+", 2, 1};
  confirmCalibration(&window, window.document()->project().cluster, cpu, [](bool) {});
  if (auto* box = window.findChild<QMessageBox*>(QStringLiteral("calibrationDeviceConfirm"))) {
    const core::Status s = shoot(*box, file("calibration-device"), box->sizeHint(), report);
    box->reject();
    if (!s) return s;
  }
  return core::Ok{};
}

}  // namespace

bool GalleryReport::failed() const {
  return std::any_of(checks.begin(), checks.end(),
                     [](const QString& c) { return c.startsWith(QLatin1String("FAIL")); });
}

core::Result<GalleryReport> renderGallery(MainWindow& window, const QString& dir, const QString& prefix,
                                          const std::vector<qint64>& runs) {
  GalleryReport report;
  for (int p = 0; p < MainWindow::kPageCount; ++p) {
    const auto page = static_cast<MainWindow::Page>(p);
    window.showPage(page);
    std::vector<qint64> shown = isRunPage(page) && !runs.empty() ? runs : std::vector<qint64>{0};
    for (const qint64 run : shown) {
      if (run > 0) window.selectRun(run);
      if (!window.waitUntilRunShown(kWaitMs))
        return core::Error{"run " + std::to_string(window.currentRun()) + " was not shown within 120 s"};
      for (const QSize size : kGallerySizes) {
        const QString name =
            QStringLiteral("%1-%2%3-%4x%5.png")
                .arg(prefix, QLatin1String(kPageNames[p]), run > 0 ? QStringLiteral("-run%1").arg(run) : QString())
                .arg(size.width())
                .arg(size.height());
        if (auto s = shoot(window, QDir(dir).filePath(name), size, report); !s) return s.error();
        checkPage(window, page, size, run > 0 ? run : window.currentRun(), report);
      }
    }
  }
  if (auto s = shootDialogs(window, dir, prefix, report); !s) return s.error();
  return report;
}

}  // namespace shardscope::app
