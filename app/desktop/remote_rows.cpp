#include "remote_rows.h"

#include <QCoreApplication>

namespace shardscope::app {

namespace proto = core::protocol;

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }
QString tr(const char* text) { return QCoreApplication::translate("RemoteRow", text); }

QString percent(std::uint64_t done, std::uint64_t total) {
  if (total == 0) return {};
  const double p = 100.0 * static_cast<double>(done) / static_cast<double>(total);
  return QStringLiteral(" %1%").arg(p, 0, 'f', p < 10 ? 1 : 0);
}

QString statusText(const RemoteJobs::Job& job) {
  switch (job.phase) {
    case RemoteJobs::Phase::Active:
      if (job.info.state == proto::JobState::Queued) return tr("queued");
      if (job.info.progress.total == 0) return tr("running");
      return tr("running") + percent(job.info.progress.done, job.info.progress.total) +
             QStringLiteral(" (%1/%2)").arg(job.info.progress.done).arg(job.info.progress.total);
    case RemoteJobs::Phase::Fetching:
      return tr("fetching") + percent(job.fetched, job.fetch_total);
    case RemoteJobs::Phase::Ended:
      return qs(std::string(proto::toString(job.info.state)));
    case RemoteJobs::Phase::FetchFailed:
      return tr("complete, fetch failed");
    case RemoteJobs::Phase::Lost:
      return job.info.state == proto::JobState::Complete ? tr("complete, not fetched") : tr("connection lost");
  }
  return {};
}

}  // namespace

QString remoteFailureText(const RemoteJobs::Job& job) {
  QString text = QCoreApplication::translate("RemoteRow", "Job %1 on %2 %3")
                     .arg(qs(job.info.job), job.agent, qs(std::string(proto::toString(job.info.state))));
  if (!job.info.error.empty()) text += QStringLiteral(": ") + qs(job.info.error);
  if (job.info.exit_code != 0) text += tr(" (exit code %1)").arg(job.info.exit_code);
  if (!job.info.stderr_tail.empty()) {
    text += tr("\nstderr, last lines:");
    for (const std::string& line : job.info.stderr_tail) text += QStringLiteral("\n  ") + qs(line);
  }
  if (job.info.state == proto::JobState::Failed)
    text += tr(
        "\nFix what it names (the plan, the agent's launcher or limits) and profile again; Dismiss removes the row.");
  return text;
}

RemoteRow remoteRow(const RemoteJobs::Job& job) {
  RemoteRow r;
  r.address = job.address;
  r.job = qs(job.info.job);
  r.label = qs(job.info.label);
  r.model = qs(job.info.model);
  r.kind = tr("on %1").arg(job.agent);
  r.mode = qs(job.info.mode);
  r.status = statusText(job);
  r.created = qs(job.info.created);
  if (job.info.group_size > 0 && job.info.world_size > 0)
    r.grid = QStringLiteral("M=%1 \u00d7 R=%2").arg(job.info.group_size).arg(job.info.world_size / job.info.group_size);
  r.done = static_cast<int>(job.info.progress.done);
  r.total = static_cast<int>(job.info.progress.total);
  r.active = job.phase == RemoteJobs::Phase::Active || job.phase == RemoteJobs::Phase::Fetching;
  r.failed = job.phase == RemoteJobs::Phase::FetchFailed ||
             (job.phase == RemoteJobs::Phase::Ended && job.info.state == proto::JobState::Failed);
  if (job.phase == RemoteJobs::Phase::Ended)
    r.detail = remoteFailureText(job);
  else if (!job.message.isEmpty())
    r.detail = job.message;
  else
    r.detail = qs(job.info.progress.stage) +
               (job.info.progress.text.empty() ? QString() : QStringLiteral(": ") + qs(job.info.progress.text));
  return r;
}

}  // namespace shardscope::app
