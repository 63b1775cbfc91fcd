#include "remote_jobs.h"

#include <QCryptographicHash>
#include <QSettings>
#include <algorithm>

#include "agent_client.h"
#include "project_files.h"
#include "remote_agents.h"
#include "remote_rows.h"
#include "run_fetch.h"

namespace shardscope::app {

namespace proto = core::protocol;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString entry(const QString& address, const QString& job) { return address + QLatin1Char(' ') + job; }

}  // namespace

RemoteJobs::RemoteJobs(RemoteAgents* agents, QObject* parent) : QObject(parent), agents_(agents) {
  connect(agents_, &RemoteAgents::jobsListed, this, &RemoteJobs::onJobsListed);
  connect(agents_, &RemoteAgents::disconnected, this, &RemoteJobs::onDisconnected);
}

RemoteJobs::~RemoteJobs() {
  for (const auto& f : fetches_)
    if (f) f->cancel();
}

QString RemoteJobs::settingsKey() const {
  const QByteArray hash = QCryptographicHash::hash(store_.toUtf8(), QCryptographicHash::Sha1).toHex();
  return QStringLiteral("remoteJobs/") + QString::fromLatin1(hash);
}

QStringList RemoteJobs::remembered() const {
  if (store_.isEmpty()) return {};
  return QSettings().value(settingsKey()).toStringList();
}

void RemoteJobs::remember(const QString& address, const QString& job, bool keep) {
  if (store_.isEmpty()) return;
  QSettings settings;
  QStringList list = settings.value(settingsKey()).toStringList();
  list.removeAll(entry(address, job));
  if (keep) list.append(entry(address, job));
  if (list.isEmpty())
    settings.remove(settingsKey());
  else
    settings.setValue(settingsKey(), list);
}

void RemoteJobs::setStorePath(const QString& path) {
  if (path == store_) return;
  store_ = path;
  jobs_.clear();  // watches and fetches of the old store's jobs find no row and stop updating
  for (const auto& f : fetches_)
    if (f) f->cancel();
  emit changed();
  for (const QString& address : agents_->connectedAddresses()) agents_->refreshJobs(address);
}

RemoteJobs::Job* RemoteJobs::findJob(const QString& address, const QString& job) {
  for (Job& j : jobs_)
    if (j.address == address && qs(j.info.job) == job) return &j;
  return nullptr;
}

const RemoteJobs::Job* RemoteJobs::find(const QString& address, const QString& job) const {
  return const_cast<RemoteJobs*>(this)->findJob(address, job);
}

void RemoteJobs::submit(const QString& address, const proto::JobSpec& spec, Submitted done) {
  remote::AgentClient* client = agents_->client(address);
  if (client == nullptr) {
    done(core::Error{"agent " + address.toStdString() + " is not connected: connect it in Run \u203a Connections",
                     core::ErrorKind::Usage});
    return;
  }
  client->submit(spec, [this, self = QPointer<RemoteJobs>(this), address, done](core::Result<proto::JobInfo> info) {
    if (self && info) {
      Job job;
      job.address = address;
      if (const auto* a = agents_->agent(address)) job.agent = a->saved.displayName();
      job.info = *info;
      jobs_.push_back(job);
      remember(address, qs(info->job), true);
      follow(jobs_.back());
      emit changed();
    }
    done(std::move(info));
  });
}

void RemoteJobs::follow(Job& job) {
  remote::AgentClient* client = agents_->client(job.address);
  if (client == nullptr || job.watching) return;
  job.watching = true;
  if (job.phase == Phase::Lost) job.phase = Phase::Active;
  const QString address = job.address;
  const QPointer<RemoteJobs> self(this);
  client->watch(
      job.info.job,
      [this, self, address](const proto::JobInfo& info) {
        if (self) update(address, info);
      },
      [this, self, address](const proto::ProgressEvent& p) {
        if (!self) return;
        if (Job* j = findJob(address, qs(p.job)); j != nullptr && j->phase == Phase::Active) {
          j->info.progress = p.progress;
          if (j->info.state == proto::JobState::Queued) j->info.state = proto::JobState::Running;
          emit changed();
        }
      },
      [this, self, address, id = qs(job.info.job)](core::Result<proto::JobInfo> final_info) {
        if (!self) return;
        Job* j = findJob(address, id);
        if (j == nullptr) return;
        j->watching = false;
        if (final_info) {
          update(address, *final_info);
        } else if (j->phase == Phase::Active) {
          j->phase = Phase::Lost;
          j->message = qs(final_info.error().message);
          emit changed();
        }
      });
}

void RemoteJobs::update(const QString& address, const proto::JobInfo& info) {
  Job* j = findJob(address, qs(info.job));
  if (j == nullptr) return;
  if (j->phase == Phase::Fetching) return;
  j->info = info;
  if (info.state == proto::JobState::Complete) {
    if (j->phase == Phase::Active || j->phase == Phase::Lost) startFetch(*j);
  } else if (proto::finished(info.state)) {
    const bool newly_failed = j->phase != Phase::Ended && info.state == proto::JobState::Failed;
    j->phase = Phase::Ended;
    j->message = qs(info.error);
    if (newly_failed) {
      const QString text = remoteFailureText(*j);
      emit changed();
      emit problem(text);
      return;
    }
  } else if (j->phase == Phase::Lost) {
    j->phase = Phase::Active;
  }
  emit changed();
}

void RemoteJobs::startFetch(Job& job) {
  remote::AgentClient* client = agents_->client(job.address);
  if (client == nullptr || store_.isEmpty()) {
    job.phase = Phase::Lost;
    job.message = tr("complete; its run is fetched once the agent is connected again");
    return;
  }
  job.phase = Phase::Fetching;
  job.fetched = job.fetch_total = 0;
  job.message.clear();
  remote::FetchOptions options;
  options.job = job.info.job;
  options.store = localPath(store_);
  auto* fetch = new remote::RunFetch(client, options, this);
  fetches_.erase(std::remove(fetches_.begin(), fetches_.end(), nullptr), fetches_.end());
  fetches_.emplace_back(fetch);
  const QString address = job.address;
  const QString id = qs(job.info.job);
  const QString store = store_;
  fetch->start(
      [this, address, id](std::uint64_t done, std::uint64_t total) {
        if (Job* j = findJob(address, id)) {
          j->fetched = done;
          j->fetch_total = total;
          emit changed();
        }
      },
      [this, fetch, address, id, store](core::Result<remote::FetchedRun> run) {
        fetch->deleteLater();
        if (store != store_) return;  // the project moved on to another store
        Job* j = findJob(address, id);
        if (j == nullptr) return;
        if (!run) {
          j->phase = Phase::FetchFailed;
          j->message = tr("fetching its run failed: %1").arg(qs(run.error().message));
          emit changed();
          emit problem(j->message);
          return;
        }
        const qint64 local = static_cast<qint64>(run->run);
        const QString message = tr("Run %1 fetched from %2 (job %3, %4 bytes).")
                                    .arg(local)
                                    .arg(j->agent, id)
                                    .arg(static_cast<qulonglong>(run->bytes));
        remember(address, id, false);
        jobs_.erase(jobs_.begin() + (j - jobs_.data()));
        emit changed();
        emit fetched(local, message);
      });
  emit changed();
}

void RemoteJobs::cancelJob(const QString& address, const QString& job) {
  remote::AgentClient* client = agents_->client(address);
  if (client == nullptr) {
    emit problem(
        tr("Cannot cancel job %1: agent %2 is not connected; connect it in Run \u203a Connections.").arg(job, address));
    return;
  }
  client->cancel(job.toStdString(), [this, self = QPointer<RemoteJobs>(this), address](core::Result<proto::JobInfo> r) {
    if (!self) return;
    if (!r) {
      emit problem(tr("Cancel refused: %1").arg(qs(r.error().message)));
      return;
    }
    update(address, *r);
  });
}

void RemoteJobs::fetchAgain(const QString& address, const QString& job) {
  Job* j = findJob(address, job);
  if (j != nullptr && (j->phase == Phase::FetchFailed || j->phase == Phase::Lost) &&
      j->info.state == proto::JobState::Complete)
    startFetch(*j);
}

void RemoteJobs::dismiss(const QString& address, const QString& job) {
  Job* j = findJob(address, job);
  if (j == nullptr || j->phase == Phase::Active || j->phase == Phase::Fetching) return;
  remember(address, job, false);
  jobs_.erase(jobs_.begin() + (j - jobs_.data()));
  emit changed();
}

void RemoteJobs::onJobsListed(const QString& address) {
  const RemoteAgents::Agent* agent = agents_->agent(address);
  if (agent == nullptr) return;
  const QStringList ours = remembered();
  QStringList listed;
  for (const proto::JobInfo& info : agent->jobs) {
    const QString id = qs(info.job);
    if (!ours.contains(entry(address, id))) continue;
    listed.append(entry(address, id));
    Job* j = findJob(address, id);
    if (j == nullptr) {
      Job job;
      job.address = address;
      job.agent = agent->saved.displayName();
      job.info = info;
      jobs_.push_back(job);
      j = &jobs_.back();
    }
    if (j->phase == Phase::Fetching) continue;
    if (!proto::finished(info.state)) {
      j->info = info;
      follow(*j);
    } else {
      j->phase = j->phase == Phase::Ended ? Phase::Ended : Phase::Lost;
      update(address, info);
    }
  }
  // Remembered jobs the agent no longer has: forgotten (their rows go too).
  for (const QString& e : ours)
    if (e.startsWith(address + QLatin1Char(' ')) && !listed.contains(e)) remember(address, e.section(' ', 1), false);
  emit changed();
}

void RemoteJobs::onDisconnected(const QString& address) {
  for (Job& j : jobs_) {
    if (j.address != address) continue;
    j.watching = false;
    if (j.phase == Phase::Active || j.phase == Phase::Fetching) {
      j.phase = Phase::Lost;
      j.message = tr("the connection to %1 was lost; connect again (Run \u203a Connections) to follow it").arg(j.agent);
    }
  }
  emit changed();
}

}  // namespace shardscope::app
