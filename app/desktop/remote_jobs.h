// The project's jobs on agents (docs/desktop/remote.md): submitted from the
// Profile dialog, followed with a watch (state and progress), cancelled on
// request, and once complete fetched into the project's trace store with
// RunFetch (chunks on the GUI thread's event loop, the import off it); the
// Runs page shows them as rows until their run is in the store. The ids of
// jobs submitted for a store are remembered (QSettings "remoteJobs"), so
// after a reconnect the agent's list brings them back, and a job that ended
// while the desktop was away is fetched then.
#pragma once

#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>
#include <vector>

#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::app {

namespace remote {
class RunFetch;
}
class RemoteAgents;

class RemoteJobs : public QObject {
  Q_OBJECT

 public:
  enum class Phase {
    Active,       // queued or running on the agent
    Fetching,     // complete: its run is on its way into the store
    Ended,        // failed or cancelled on the agent (info.error, info.stderr_tail)
    FetchFailed,  // complete, but the fetch failed (`message`); Fetch Again retries
    Lost,         // the connection went away; reconnecting follows it again
  };
  struct Job {
    QString address;
    QString agent;  // the agent's label
    core::protocol::JobInfo info;
    Phase phase = Phase::Active;
    QString message;
    quint64 fetched = 0;
    quint64 fetch_total = 0;
    bool watching = false;
  };

  explicit RemoteJobs(RemoteAgents* agents, QObject* parent = nullptr);
  ~RemoteJobs() override;

  // The store fetched runs go to; the jobs remembered for it are shown (once their agent lists them).
  void setStorePath(const QString& path);
  [[nodiscard]] const QString& storePath() const { return store_; }

  using Submitted = std::function<void(core::Result<core::protocol::JobInfo>)>;
  void submit(const QString& address, const core::protocol::JobSpec& spec, Submitted done);
  void cancelJob(const QString& address, const QString& job);
  void fetchAgain(const QString& address, const QString& job);
  // Forgets an ended job (it stays on the agent).
  void dismiss(const QString& address, const QString& job);

  [[nodiscard]] const std::vector<Job>& jobs() const { return jobs_; }
  [[nodiscard]] const Job* find(const QString& address, const QString& job) const;

 signals:
  void changed();
  // A job's run is in the store (`run`), `message` says which.
  void fetched(qint64 run, const QString& message);
  // Something to say on the Runs page (a cancel refused, a fetch failed).
  void problem(const QString& message);

 private:
  Job* findJob(const QString& address, const QString& job);
  void follow(Job& job);
  void update(const QString& address, const core::protocol::JobInfo& info);
  void onJobsListed(const QString& address);
  void onDisconnected(const QString& address);
  void startFetch(Job& job);
  void remember(const QString& address, const QString& job, bool keep);
  [[nodiscard]] QStringList remembered() const;
  [[nodiscard]] QString settingsKey() const;

  RemoteAgents* agents_;
  QString store_;
  std::vector<Job> jobs_;
  std::vector<QPointer<remote::RunFetch>> fetches_;
};

}  // namespace shardscope::app
