// Remote runs from the desktop against a real shardscope-agent on loopback
// (tests/app/agent/agent_harness.h): the Connections dialog saves an agent
// (the token remembered in a 0600 file, never in QSettings), connects, the
// trust question is answered and the fingerprint pinned; the description
// and the agent's jobs are shown. The Profile dialog's "Run on" offers the
// agent; an emulate job submitted there shows on the Runs page with its
// progress and, once complete, is fetched into the project's store and
// listed as a run. A long job is cancelled from the Runs page. A pinned
// fingerprint that changed is refused with the loud message; after the pin
// is right again, the reconnect shows this project's job again. Forget
// Fingerprint makes the next connection ask again. Screenshots of the
// Connections dialog, the refusal and the Runs page with remote jobs.
#include <sys/stat.h>

#include <QAbstractButton>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <memory>

#include "agent_harness.h"
#include "connections_dialog.h"
#include "main_window.h"
#include "planning_session.h"
#include "profile_dialog.h"
#include "project_document.h"
#include "remote_agents.h"
#include "remote_jobs.h"
#include "remote_rows.h"
#include "run_list_model.h"
#include "runs_page.h"
#include "screenshot.h"
#include "tiny_project.h"

using namespace shardscope;
using namespace shardscope::app;

namespace {

constexpr int kTimeoutMs = 120000;
const QString kShots = QStringLiteral(SHARDSCOPE_BINARY_DIR "/screenshots/");

QString readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(f.readAll());
}

void writeAll(const QString& path, const QString& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(text.toUtf8());
}

}  // namespace

class TestConnections : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir config_;  // XDG_CONFIG_HOME: settings, known_agents, remembered tokens
  QTemporaryDir projects_;
  std::unique_ptr<agent_test::Agent> agent_;
  std::unique_ptr<MainWindow> window_;
  ConnectionsDialog* dialog_ = nullptr;
  QString address_;

  RemoteAgents* agents() const { return window_->remoteAgents(); }
  // Connects the selected agent and waits for its description (or the failure).
  bool connectAndWait() {
    QSignalSpy connected(agents(), &RemoteAgents::connected);
    QSignalSpy failed(agents(), &RemoteAgents::connectionFailed);
    dialog_->connectSelected();
    QElapsedTimer t;
    t.start();
    while (connected.isEmpty() && failed.isEmpty() && t.elapsed() < kTimeoutMs) QTest::qWait(20);
    return !connected.isEmpty();
  }
  // The remote row of `job`, nullptr when not listed.
  const RemoteRow* remoteRow(const QString& job) const {
    for (const RemoteRow& r : window_->runsPage()->model()->remoteRows())
      if (r.job == job) return &r;
    return nullptr;
  }
  // Submits an emulate job of `steps` from the Profile dialog: its job id.
  QString submit(int steps, const QString& label) {
    ProfileDialog* profile = window_->showProfileDialog();
    if (profile == nullptr) return {};
    [&] {
      QVERIFY(profile->setTarget(address_));
      QVERIFY2(profile->targetChoice()->currentText().contains(QStringLiteral("4 GPUs")),
               qPrintable(profile->targetChoice()->currentText()));
      // The agent runs mpi too: both modes offered; emulate chosen.
      profile->modeChoice()->setCurrentIndex(0);
      profile->planChoice()->setCurrentIndex(profile->planChoice()->findData(2u));
      profile->stepsBox()->setValue(steps);
      profile->warmupBox()->setValue(0);
      profile->seedBox()->setValue(7);
    }();
    profile->labelEdit()->setText(label);
    QSignalSpy submitted(profile, &ProfileDialog::submitted);
    QSignalSpy failed(profile, &ProfileDialog::failed);
    profile->start();
    QElapsedTimer t;
    t.start();
    while (submitted.isEmpty() && failed.isEmpty() && t.elapsed() < kTimeoutMs) QTest::qWait(20);
    const QString job = submitted.isEmpty() ? QString() : submitted.last().at(1).toString();
    if (job.isEmpty()) qWarning() << "not submitted:" << profile->statusText();
    profile->close();
    return job;
  }

 private slots:
  void initTestCase() {
    qputenv("XDG_CONFIG_HOME", config_.path().toLocal8Bit());
    QCoreApplication::setOrganizationName(QStringLiteral("ShardScopeTest"));
    QCoreApplication::setApplicationName(QStringLiteral("test_connections"));
    agent_ = std::make_unique<agent_test::Agent>();
    QVERIFY2(agent_->start(), qPrintable(agent_->output()));
    address_ = QStringLiteral("127.0.0.1:%1").arg(agent_->port());
    window_ = std::make_unique<MainWindow>();
    window_->setUnsavedChangesAnswer(MainWindow::UnsavedAnswer::Discard);
    window_->resize(1400, 860);
    window_->document()->reset(test::tinyProject());
    QVERIFY(window_->document()->saveAs(projects_.filePath(QStringLiteral("tiny.shardscope"))).ok());
    QVERIFY(window_->session()->waitUntilIdle(kTimeoutMs, false));
    QVERIFY(!window_->storePath().isEmpty());
  }

  void savesTheAgentWithoutTheTokenInSettings() {
    dialog_ = window_->showConnections();
    const QString token = QString::fromStdString(agent_->token());
    QVERIFY(dialog_->saveAgent({address_, QStringLiteral("loopback agent"), {}, false}, token, /*remember=*/true).ok());
    const QString token_file = rememberedTokenPath(address_);
    QCOMPARE(token_file, config_.filePath(QStringLiteral("shardscope/agents/127.0.0.1_%1.token").arg(agent_->port())));
    struct stat st {};
    QCOMPARE(::stat(token_file.toLocal8Bit().constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    QCOMPARE(readAll(token_file).trimmed(), token);
    const QList<SavedAgent> saved = loadSavedAgents();
    QCOMPARE(saved.size(), 1);
    QCOMPARE(saved.front().address, address_);
    QVERIFY(saved.front().remembered);
    QSettings settings;
    settings.sync();
    QVERIFY2(!readAll(settings.fileName()).contains(token), qPrintable(settings.fileName()));
    // A missing token is refused with what to do.
    const core::Status no_token = dialog_->saveAgent({QStringLiteral("gpu01:7443"), {}, {}, false});
    QVERIFY(!no_token.ok());
    QVERIFY(QString::fromStdString(no_token.error().message).contains(QStringLiteral("token")));
    QCOMPARE(dialog_->agentList()->count(), 1);
  }

  void connectsTrustsPinsAndDescribes() {
    dialog_->selectAgent(address_);
    dialog_->setTrustAnswer(ConnectionsDialog::TrustAnswer::Trust);
    QSignalSpy asked(dialog_, &ConnectionsDialog::trustAsked);
    QSignalSpy listed(agents(), &RemoteAgents::jobsListed);
    QVERIFY(connectAndWait());
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.front().at(1).toString(), agent_->fingerprint());
    const QString known = readAll(knownAgentsPath());
    QVERIFY2(known.contains(address_ + QLatin1Char(' ') + agent_->fingerprint()), qPrintable(known));
    if (listed.isEmpty()) QVERIFY(listed.wait(kTimeoutMs));
    const QString description = dialog_->descriptionView()->toPlainText();
    QVERIFY2(description.contains(QStringLiteral("cpu4")), qPrintable(description));
    QVERIFY(description.contains(QStringLiteral("mpirun")));
    QVERIFY(description.contains(QStringLiteral("emulate, mpi")));
    QVERIFY(description.contains(agent_->fingerprint()));
    QVERIFY(dialog_->stateLabel()->text().contains(QStringLiteral("connected")));
    QCOMPARE(agents()->connectedAddresses(), QStringList{address_});
    // One connection per agent: connecting again keeps it.
    remote::AgentClient* client = agents()->client(address_);
    QVERIFY(connectAndWait());
    QCOMPARE(agents()->client(address_), client);
  }

  void submitsFollowsAndFetchesARun() {
    QSignalSpy fetched(window_->remoteJobs(), &RemoteJobs::fetched);
    QSignalSpy listed(window_->runsPage(), &RunsPage::listed);
    const QString job = submit(3, QStringLiteral("remote tiny M=2"));
    QVERIFY(!job.isEmpty());
    QCOMPARE(window_->currentPage(), MainWindow::Page::Runs);
    // Its row (or, if it was that quick, its fetched run).
    QVERIFY(remoteRow(job) != nullptr || !fetched.isEmpty());
    if (const RemoteRow* row = remoteRow(job)) {
      QVERIFY(row->kind.contains(QStringLiteral("loopback agent")));
      QCOMPARE(row->model, QString::fromStdString(test::tinyProject().model.name));
      QCOMPARE(row->mode, QStringLiteral("emulate"));
    }
    if (fetched.isEmpty()) QVERIFY(fetched.wait(kTimeoutMs));
    const qint64 run = fetched.last().at(0).toLongLong();
    QVERIFY(run > 0);
    QTRY_VERIFY_WITH_TIMEOUT(window_->runsPage()->model()->rowOf(run) >= 0, kTimeoutMs);
    QCOMPARE(remoteRow(job), nullptr);
    const profiler::RunRow* row = window_->runsPage()->model()->runAt(window_->runsPage()->model()->rowOf(run));
    QCOMPARE(QString::fromStdString(row->label), QStringLiteral("remote tiny M=2"));
    QCOMPARE(row->sharding_group_size, 2u);
    QCOMPARE(row->steps, std::int64_t{3});
    QVERIFY(window_->runsPage()->messageText().contains(QStringLiteral("fetched")));
    // It opens like any other run.
    window_->openRun(run);
    QCOMPARE(window_->currentPage(), MainWindow::Page::Measured);
    QVERIFY(!listed.isEmpty());
  }

  void showsProgressAndCancels() {
    const QString job = submit(100000, QStringLiteral("remote long run"));
    QVERIFY(!job.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(remoteRow(job) != nullptr && remoteRow(job)->done > 0, kTimeoutMs);
    QVERIFY2(remoteRow(job)->status.startsWith(QStringLiteral("running")), qPrintable(remoteRow(job)->status));
    // Select it: the page offers the cancel.
    RunsPage* page = window_->runsPage();
    const int source = page->model()->rowCount() - 1;
    QCOMPARE(page->model()->remoteAt(source)->job, job);
    QTableView* view = page->view();
    auto* proxy = qobject_cast<QSortFilterProxyModel*>(view->model());
    view->selectRow(proxy->mapFromSource(page->model()->index(source, 0)).row());
    QVERIFY(page->selectedRemoteRow() != nullptr);
    QCOMPARE(page->remoteButton()->text(), QStringLiteral("Cancel Remote Job"));
    QVERIFY(saveScreenshot(*window_, kShots + QStringLiteral("runs_page_remote_job.png"), QSize(1400, 860)).ok());
    page->remoteButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(remoteRow(job) != nullptr && remoteRow(job)->status == QStringLiteral("cancelled"),
                             kTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(page->remoteButton()->text(), QStringLiteral("Dismiss"), 5000);
  }

  void screenshotOfTheConnectedDialog() {
    agents()->refreshJobs(address_);
    QTRY_VERIFY_WITH_TIMEOUT(dialog_->jobsTable()->rowCount() >= 2, kTimeoutMs);
    QVERIFY(saveScreenshot(*dialog_, kShots + QStringLiteral("connections_dialog.png"), QSize(1100, 720)).ok());
  }

  void refusesAChangedFingerprintLoudly() {
    agents()->disconnectAgent(address_);
    const QString path = knownAgentsPath();
    const QString pinned = readAll(path);
    const QString other = QStringLiteral("sha256:") + QString(64, QLatin1Char('e'));
    writeAll(path, QString(pinned).replace(agent_->fingerprint(), other));
    QSignalSpy failed(agents(), &RemoteAgents::connectionFailed);
    QVERIFY(!connectAndWait());
    QVERIFY(!failed.isEmpty());
    const QString message = failed.last().at(1).toString();
    QVERIFY2(message.contains(QStringLiteral("CHANGED")), qPrintable(message));
    QVERIFY(message.contains(other));
    QVERIFY(message.contains(agent_->fingerprint()));
    QVERIFY(message.contains(path));
    QMessageBox* box = dialog_->messageBox();
    QVERIFY(box != nullptr);
    QTRY_VERIFY(box->isVisible());
    QCOMPARE(box->icon(), QMessageBox::Critical);
    QVERIFY(box->text().contains(QStringLiteral("CHANGED")));
    QVERIFY(box->informativeText().contains(other));
    QVERIFY(box->informativeText().contains(QStringLiteral("line 1")));
    QVERIFY(box->informativeText().contains(agent_->fingerprint()));
    QVERIFY(box->informativeText().contains(path.toHtmlEscaped()));
    QVERIFY(box->detailedText().contains(QStringLiteral("CHANGED")));
    QVERIFY(saveScreenshot(*box, kShots + QStringLiteral("connections_fingerprint_changed.png"), box->sizeHint()).ok());
    box->close();
    QVERIFY(agents()->connectedAddresses().isEmpty());
    QCOMPARE(readAll(path), QString(pinned).replace(agent_->fingerprint(), other));  // the pin is not touched
    writeAll(path, pinned);
  }

  void reconnectingShowsTheProjectsJobsAgain() {
    // The rows went with the connection's loss of state; the store's remembered ids bring them back.
    window_->remoteJobs()->setStorePath({});
    QVERIFY(window_->runsPage()->model()->remoteRows().empty());
    window_->remoteJobs()->setStorePath(window_->storePath());
    QVERIFY(connectAndWait());
    QTRY_VERIFY_WITH_TIMEOUT(window_->runsPage()->model()->remoteRows().size() == 1, kTimeoutMs);
    const RemoteRow& row = window_->runsPage()->model()->remoteRows().front();
    QCOMPARE(row.label, QStringLiteral("remote long run"));
    QCOMPARE(row.status, QStringLiteral("cancelled"));
    // Dismissed: forgotten for this store (it stays on the agent).
    window_->remoteJobs()->dismiss(row.address, row.job);
    QVERIFY(window_->runsPage()->model()->remoteRows().empty());
  }

  void aFailedJobShowsItsErrorAndStderr() {
    RemoteJobs::Job job;
    job.address = address_;
    job.agent = QStringLiteral("loopback agent");
    job.info.job = "j9";
    job.info.label = "killed by the launcher";
    job.info.mode = "mpi";
    job.info.world_size = 4;
    job.info.group_size = 2;
    job.info.state = core::protocol::JobState::Failed;
    job.info.error = "the launcher exited with status 137";
    job.info.exit_code = 137;
    job.info.stderr_tail = {"srun: error: node07: task 3: Killed", "srun: Terminating job step 4242.0"};
    job.phase = RemoteJobs::Phase::Ended;
    const RemoteRow row = shardscope::app::remoteRow(job);
    QCOMPARE(row.status, QStringLiteral("failed"));
    QVERIFY(row.failed);
    QVERIFY(!row.active);
    QCOMPARE(row.grid, QStringLiteral("M=2 \u00d7 R=2"));
    QVERIFY2(row.detail.contains(QStringLiteral("status 137")) &&
                 row.detail.contains(QStringLiteral("exit code 137")) &&
                 row.detail.contains(QStringLiteral("node07: task 3: Killed")) &&
                 row.detail.contains(QStringLiteral("4242.0")),
             qPrintable(row.detail));
  }

  void forgettingTheFingerprintAsksAgain() {
    dialog_->selectAgent(address_);
    const auto forgotten = dialog_->forgetSelectedFingerprint();
    QVERIFY(forgotten.ok());
    QVERIFY(*forgotten);
    QVERIFY(!readAll(knownAgentsPath()).contains(address_));
    QSignalSpy asked(dialog_, &ConnectionsDialog::trustAsked);
    dialog_->setTrustAnswer(ConnectionsDialog::TrustAnswer::Refuse);
    QVERIFY(!connectAndWait());
    QCOMPARE(asked.size(), 1);
    QVERIFY(!readAll(knownAgentsPath()).contains(address_));  // refused: not pinned
    if (dialog_->messageBox() != nullptr) dialog_->messageBox()->close();
  }

  void cleanupTestCase() {
    window_.reset();
    agent_.reset();
  }
};

QTEST_MAIN(TestConnections)
#include "test_connections.moc"
