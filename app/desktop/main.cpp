// shardscope: the desktop app. Parses the command line, opens the default
// project, the given project file or trace store, and either shows the window
// or, headless, renders it to a PNG (--screenshot), writes the HTML decision
// report (--report) or renders the gallery of every page (--gallery) and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QTimer>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "export_page.h"
#include "gallery.h"
#include "main_window.h"
#include "plan_page.h"
#include "planning_session.h"
#include "project_document.h"
#include "project_files.h"
#include "screenshot.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/core/version.h"

namespace {

using shardscope::app::MainWindow;

// What the command line asks for.
struct Options {
  QString file;  // a project file or a trace store; empty: the built-in project
  bool store = false;
  MainWindow::Page page = MainWindow::Page::Model;
  qint64 run = 0;
  QString screenshot;
  QSize screenshot_size = shardscope::app::kScreenshotSize;
  QString report;
  QString gallery;
  QString gallery_prefix;
  std::vector<qint64> gallery_runs;
  [[nodiscard]] bool headless() const { return !screenshot.isEmpty() || !report.isEmpty() || !gallery.isEmpty(); }
};

// A whole number > 0, or 0.
qint64 runId(const QString& text) {
  bool ok = false;
  const qint64 v = text.trimmed().toLongLong(&ok);
  return ok && v > 0 ? v : 0;
}

// Exits with 2 (bad command line) after saying why.
[[noreturn]] void usage(const QString& message) {
  std::fprintf(stderr, "shardscope: %s\n", qPrintable(message));
  std::exit(2);
}

Options parseOptions(const QApplication& app) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Plan 2D sparse parallelism (sharding group x replicas) for DLRM-style models."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"), QStringLiteral("Render the main window to <png> and exit."), QStringLiteral("png"));
  const QCommandLineOption screenshot_size(QStringLiteral("screenshot-size"),
                                           QStringLiteral("Size for --screenshot (default 1600x1000)."),
                                           QStringLiteral("WxH"), QStringLiteral("1600x1000"));
  const QCommandLineOption page(
      QStringLiteral("page"),
      QStringLiteral(
          "Page to show: model (default), cluster, grid, plan, export, runs, measured, timeline or collectives "
          "(--screenshot waits for the planning and for the run the page shows)."),
      QStringLiteral("page"), QStringLiteral("model"));
  const QCommandLineOption run(
      QStringLiteral("run"),
      QStringLiteral("The run of the trace store the Measured, Timeline and Collectives pages show (default: the "
                     "newest complete run)."),
      QStringLiteral("id"));
  const QCommandLineOption report(QStringLiteral("report"),
                                  QStringLiteral("Write the one-page HTML report of the project's grid decision to "
                                                 "<html>, print its path and exit."),
                                  QStringLiteral("html"));
  const QCommandLineOption gallery(
      QStringLiteral("gallery"),
      QStringLiteral("Render every page at 1280x800 and 1920x1080 (the run pages once per run of --gallery-runs, "
                     "else for the newest run) and every dialog into <dir>, print what was checked and exit (1 when "
                     "a check failed)."),
      QStringLiteral("dir"));
  const QCommandLineOption gallery_prefix(QStringLiteral("gallery-prefix"),
                                          QStringLiteral("File name prefix for --gallery (default: gallery)."),
                                          QStringLiteral("name"), QStringLiteral("gallery"));
  const QCommandLineOption gallery_runs(QStringLiteral("gallery-runs"),
                                        QStringLiteral("Comma-separated run ids for --gallery's run pages."),
                                        QStringLiteral("ids"));
  parser.addOptions({screenshot, screenshot_size, page, run, report, gallery, gallery_prefix, gallery_runs});
  parser.addPositionalArgument(
      QStringLiteral("file"),
      QStringLiteral("A *.shardscope project file, or a trace store (*.sqlite) opened with the built-in project "
                     "(default: the built-in project)."),
      QStringLiteral("[project|store]"));
  parser.process(app);

  Options o;
  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) usage(QStringLiteral("at most one project file or store, got %1").arg(positional.size()));
  if (!positional.isEmpty()) {
    o.file = positional.front();
    o.store = shardscope::core::store::isSqliteFile(o.file.toStdString());
  }
  if (parser.isSet(screenshot_size)) {
    const QStringList wh = parser.value(screenshot_size).split(QLatin1Char('x'));
    bool ok_w = false;
    bool ok_h = false;
    if (wh.size() == 2) o.screenshot_size = QSize(wh[0].toInt(&ok_w), wh[1].toInt(&ok_h));
    if (!ok_w || !ok_h || o.screenshot_size.width() < 200 || o.screenshot_size.height() < 200)
      usage(QStringLiteral("--screenshot-size wants WxH (at least 200x200), got '%1'")
                .arg(parser.value(screenshot_size)));
  }
  const std::optional<MainWindow::Page> shown = MainWindow::pageFromName(parser.value(page));
  if (!shown)
    usage(QStringLiteral("--page wants model, cluster, grid, plan, export, runs, measured, timeline or collectives, "
                         "got '%1'")
              .arg(parser.value(page)));
  o.page = *shown;
  if (parser.isSet(run) && (o.run = runId(parser.value(run))) == 0)
    usage(QStringLiteral("--run wants a run id (a whole number > 0), got '%1'").arg(parser.value(run)));
  for (const QString& id : parser.value(gallery_runs).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    if (runId(id) == 0) usage(QStringLiteral("--gallery-runs wants run ids (whole numbers > 0), got '%1'").arg(id));
    o.gallery_runs.push_back(runId(id));
  }
  o.screenshot = parser.value(screenshot);
  o.report = parser.value(report);
  o.gallery = parser.value(gallery);
  o.gallery_prefix = parser.value(gallery_prefix);
  return o;
}

// Headless: no message boxes, errors go to stderr; the exit code.
int runHeadless(MainWindow& window, const Options& o) {
  if (o.store) {
    window.openStore(o.file);
  } else if (!o.file.isEmpty()) {
    shardscope::core::Status opened = window.openProject(o.file);
    if (!opened) {
      std::fprintf(stderr, "shardscope: %s\n", opened.error().message.c_str());
      return 1;
    }
  }
  if (o.run > 0 && window.storePath().isEmpty()) {
    std::fprintf(stderr, "shardscope: --run %lld: the project has no trace store\n", static_cast<long long>(o.run));
    return 1;
  }
  if (o.run > 0) {
    // A run the store does not hold is an error now, not a page left "analysing" in the screenshot.
    auto store = shardscope::core::store::openStore(shardscope::app::localPath(window.storePath()),
                                                    shardscope::core::store::OpenMode::ReadOnly);
    auto record = store ? store->run(shardscope::core::store::RunId{o.run})
                        : decltype(store->run(shardscope::core::store::RunId{o.run})){store.error()};
    if (!record) {
      std::fprintf(stderr, "shardscope: --run %lld: %s\n", static_cast<long long>(o.run),
                   record.error().message.c_str());
      return 1;
    }
    window.selectRun(o.run);
  }
  // Wait (in the event loop, the GUI stays live) for the planning of the project shown.
  if (!window.session()->waitUntilIdle(300000, true) || !window.planPage()->waitUntilShown(300000)) {
    std::fprintf(stderr, "shardscope: the planning did not finish within 300 s\n");
    return 1;
  }
  if (!o.report.isEmpty()) {
    shardscope::core::Status written = window.exportPage()->writeReport(o.report);
    if (!written) {
      std::fprintf(stderr, "shardscope: %s\n", written.error().message.c_str());
      return 1;
    }
    std::printf("%s\n", qPrintable(QFileInfo(o.report).absoluteFilePath()));
  }
  if (!o.gallery.isEmpty()) {
    auto rendered = shardscope::app::renderGallery(window, o.gallery, o.gallery_prefix, o.gallery_runs);
    if (!rendered) {
      std::fprintf(stderr, "shardscope: %s\n", rendered.error().message.c_str());
      return 1;
    }
    for (const QString& line : rendered->checks) std::printf("%s\n", qPrintable(line));
    std::printf("%lld images in %s\n", static_cast<long long>(rendered->images.size()),
                qPrintable(QFileInfo(o.gallery).absoluteFilePath()));
    return rendered->failed() ? 1 : 0;
  }
  if (!o.screenshot.isEmpty()) {
    if (!window.waitUntilRunShown(300000)) {
      std::fprintf(stderr, "shardscope: run %lld was not shown within 300 s\n",
                   static_cast<long long>(window.currentRun()));
      return 1;
    }
    shardscope::core::Status saved = shardscope::app::saveScreenshot(window, o.screenshot, o.screenshot_size);
    if (!saved) {
      std::fprintf(stderr, "shardscope: %s\n", saved.error().message.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  // --version answers without a display (a packaged install asked over ssh); the rest needs the GUI.
  if (argc == 2 && (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "-v") == 0)) {
    std::printf("ShardScope %s\n", shardscope::core::versionLine().c_str());
    return 0;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("ShardScope"));
  QApplication::setApplicationName(QStringLiteral("ShardScope"));
  QApplication::setApplicationDisplayName(QStringLiteral("ShardScope"));
  QApplication::setApplicationVersion(QString::fromStdString(shardscope::core::versionLine()));
  const Options o = parseOptions(app);

  MainWindow window;
  window.showPage(o.page);
  if (o.headless()) return runHeadless(window, o);

  window.resize(1400, 900);
  window.show();
  if (!o.file.isEmpty() || o.run > 0) {
    // After the event loop starts, so an error box has its window behind it;
    // on failure the default project stays loaded.
    QTimer::singleShot(0, &window, [&window, o] {
      if (o.store)
        window.openStore(o.file);
      else if (!o.file.isEmpty())
        window.openProjectInteractive(o.file);
      if (o.run > 0) window.selectRun(o.run);
    });
  }
  return QApplication::exec();
}
