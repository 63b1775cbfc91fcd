// shardscope: the desktop app. Parses the command line, opens the default
// project or the given file, and either shows the window or, headless,
// renders it to a PNG (--screenshot) and/or writes the HTML decision report
// (--report) and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <optional>

#include "export_page.h"
#include "plan_page.h"
#include "main_window.h"
#include "planning_session.h"
#include "project_document.h"
#include "screenshot.h"
#include "shardscope/core/version.h"

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("ShardScope"));
  QApplication::setApplicationName(QStringLiteral("ShardScope"));
  QApplication::setApplicationDisplayName(QStringLiteral("ShardScope"));
  QApplication::setApplicationVersion(QString::fromLatin1(shardscope::core::versionString()));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Plan 2D sparse parallelism (sharding group x replicas) for DLRM-style models."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"), QStringLiteral("Render the main window to <png> and exit."), QStringLiteral("png"));
  parser.addOption(screenshot);
  const QCommandLineOption screenshot_size(QStringLiteral("screenshot-size"),
                                           QStringLiteral("Size for --screenshot (default 1600x1000)."),
                                           QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  parser.addOption(screenshot_size);
  const QCommandLineOption page_option(
      QStringLiteral("page"),
      QStringLiteral(
          "Page to show: model (default), cluster, grid, plan, export, runs, measured, timeline or collectives "
          "(--screenshot waits for the planning to finish)."),
      QStringLiteral("page"), QStringLiteral("model"));
  parser.addOption(page_option);
  const QCommandLineOption report(QStringLiteral("report"),
                                  QStringLiteral("Write the one-page HTML report of the project's grid decision to "
                                                 "<html>, print its path and exit."),
                                  QStringLiteral("html"));
  parser.addOption(report);
  parser.addPositionalArgument(QStringLiteral("project"),
                               QStringLiteral("A *.shardscope project file (default: the built-in project)."),
                               QStringLiteral("[project]"));
  parser.process(app);

  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    std::fprintf(stderr, "shardscope: at most one project file, got %lld\n", static_cast<long long>(positional.size()));
    return 2;
  }

  QSize shot_size = shardscope::app::kScreenshotSize;
  if (parser.isSet(screenshot_size)) {
    const QStringList wh = parser.value(screenshot_size).split(QLatin1Char('x'));
    bool ok_w = false;
    bool ok_h = false;
    if (wh.size() == 2) shot_size = QSize(wh[0].toInt(&ok_w), wh[1].toInt(&ok_h));
    if (!ok_w || !ok_h || shot_size.width() < 200 || shot_size.height() < 200) {
      std::fprintf(stderr, "shardscope: --screenshot-size wants WxH (at least 200x200), got '%s'\n",
                   qPrintable(parser.value(screenshot_size)));
      return 2;
    }
  }

  using shardscope::app::MainWindow;
  const std::optional<MainWindow::Page> page = MainWindow::pageFromName(parser.value(page_option));
  if (!page) {
    std::fprintf(stderr,
                 "shardscope: --page wants model, cluster, grid, plan, export, runs, measured, timeline or "
                 "collectives, got '%s'\n",
                 qPrintable(parser.value(page_option)));
    return 2;
  }

  MainWindow window;
  window.showPage(*page);
  if (parser.isSet(screenshot) || parser.isSet(report)) {
    // Headless: no message boxes, errors go to stderr.
    if (!positional.isEmpty()) {
      shardscope::core::Status opened = window.openProject(positional.front());
      if (!opened) {
        std::fprintf(stderr, "shardscope: %s\n", opened.error().message.c_str());
        return 1;
      }
    }
    // Wait (in the event loop, the GUI stays live) for the planning of the project shown.
    if (!window.session()->waitUntilIdle(300000, true) || !window.planPage()->waitUntilShown(300000)) {
      std::fprintf(stderr, "shardscope: the planning did not finish within 300 s\n");
      return 1;
    }
    if (parser.isSet(report)) {
      const QString path = parser.value(report);
      shardscope::core::Status written = window.exportPage()->writeReport(path);
      if (!written) {
        std::fprintf(stderr, "shardscope: %s\n", written.error().message.c_str());
        return 1;
      }
      std::printf("%s\n", qPrintable(QFileInfo(path).absoluteFilePath()));
    }
    if (parser.isSet(screenshot)) {
      shardscope::core::Status saved = shardscope::app::saveScreenshot(window, parser.value(screenshot), shot_size);
      if (!saved) {
        std::fprintf(stderr, "shardscope: %s\n", saved.error().message.c_str());
        return 1;
      }
    }
    return 0;
  }

  window.resize(1400, 900);
  window.show();
  if (!positional.isEmpty()) {
    // After the event loop starts, so the error box has its window behind it;
    // on failure the default project stays loaded.
    const QString path = positional.front();
    QTimer::singleShot(0, &window, [&window, path] { window.openProjectInteractive(path); });
  }
  return QApplication::exec();
}
