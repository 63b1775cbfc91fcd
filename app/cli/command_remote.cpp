// shardscope-cli remote --agent HOST:PORT <describe|list|submit|watch|cancel|fetch>:
// drives a shardscope-agent (app/remote) for scripts. The token comes from
// --token-file or $SHARDSCOPE_AGENT_TOKEN (never the command line, which ps
// shows); an agent not pinned yet is refused unless --accept-new or
// --fingerprint accepts it (docs/cli.md, docs/agent.md).
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <QCoreApplication>
#include <QTimer>

#include "agent_client.h"
#include "cli.h"
#include "common_options.h"
#include "progress.h"
#include "remote_options.h"
#include "remote_output.h"
#include "run_fetch.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/summary.h"
#include "shardscope/core/version.h"

namespace shardscope::app::cli {

namespace {
namespace proto = core::protocol;
using remote::AgentClient;

volatile std::sig_atomic_t g_interrupted = 0;

constexpr const char* kRemoteHelp =
    R"(usage: shardscope-cli remote --agent HOST:PORT [--token-file F] [--known-agents F]
                            [--accept-new | --fingerprint sha256:HEX] COMMAND ...

Drives a shardscope-agent over TLS. The token is read from --token-file F or
$SHARDSCOPE_AGENT_TOKEN. The agent's certificate is pinned on first use in
--known-agents F (default ~/.config/shardscope/known_agents); an agent not
pinned yet is refused unless --accept-new (pin what it presents) or
--fingerprint (pin it only if it presents that one) is given; a pinned agent
that presents another certificate is always refused.

commands:
  describe [--json]           hosts, GPUs, versions, launcher, modes, cluster, limits
  list [--json]               the agent's jobs, oldest first
  submit [--project F] [--model M] [--cluster C] [--calibration F] [--constraints F]
         [--plan P | --grid M] [--nodes K] [--mode emulate|mpi] [--device cpu|cuda]
         [--steps S] [--warmup W] [--seed N] [--batch B] [--sync-interval K] [--no-trace]
         [--all-groups] [--label L] [--json] [--watch] [--fetch --store F]
                              queues a job on the agent's own cluster (--nodes: K of its
                              nodes; --grid: a sharding group size dividing their GPUs;
                              a --cluster only prices the plan here): prints its id
                              (--watch follows it, --fetch then brings its run into F)
  watch JOB [--quiet]         follows a job to its end: exit 0 when complete, 3 when
                              failed or cancelled (Ctrl-C stops watching; the job goes on)
  cancel JOB                  cancels a queued or running job
  fetch JOB --store F [--keep-file]
                              brings a finished job's run into the local store F
                              (resumable; the file's SHA-256 checked): prints the run id
)";

// One session: connect, run the command, quit the event loop with its exit code.
class Session {
 public:
  explicit Session(RemoteOptions o) : o_(std::move(o)) {}

  int run() {
    QObject::connect(&client_, &AgentClient::failed,
                     [this](const QString& m) { finish(kExitFailure, m.toStdString()); });
    QObject::connect(&client_, &AgentClient::ready, [this] { start(); });
    QTimer interrupt;
    QObject::connect(&interrupt, &QTimer::timeout, [this] {
      if (g_interrupted == 0) return;
      g_interrupted = 0;
      if (fetch_) fetch_->cancel();
      finish(kExitCancelled, watching_ ? "stopped watching; job " + job_ + " goes on at the agent" : "interrupted");
    });
    interrupt.start(100);
    client_.connectToAgent(o_.connect);
    return QCoreApplication::exec();
  }

 private:
  void finish(int code, const std::string& message = {}) {
    if (done_) return;
    done_ = true;
    if (bar_) bar_->finish();
    if (!message.empty()) (code == kExitOk ? std::cout : std::cerr) << message << "\n";
    QCoreApplication::exit(code);
  }
  template <class T>
  bool ok(const core::Result<T>& r) {
    if (!r) finish(exitCodeFor(r.error()) == kExitUsage ? kExitFailure : exitCodeFor(r.error()), r.error().message);
    return r.ok();
  }

  void start() {
    const std::string& c = o_.command;
    if (c == "describe")
      return client_.describe([this](core::Result<proto::Description> d) {
        if (ok(d)) printDescription(*d, o_.json), finish(kExitOk);
      });
    if (c == "list")
      return client_.list([this](core::Result<std::vector<proto::JobInfo>> l) {
        if (!ok(l)) return;
        if (o_.json) {
          nlohmann::json a = nlohmann::json::array();
          for (const auto& j : *l) a.push_back(proto::toJson(j));
          std::cout << a.dump(2) << "\n";
        } else {
          if (l->empty()) std::cout << "no jobs on this agent\n";
          for (const auto& j : *l) std::cout << jobLine(j) << "\n";
        }
        finish(kExitOk);
      });
    if (c == "submit")
      return client_.submit(o_.spec, [this](core::Result<proto::JobInfo> j) {
        if (!ok(j)) return;
        job_ = j->job;
        std::cout << (o_.json ? proto::toJson(*j).dump(2) : j->job) << "\n" << std::flush;
        if (o_.watch || o_.fetch) return watch();
        finish(kExitOk);
      });
    job_ = o_.words.front();
    if (c == "watch") return watch();
    if (c == "cancel")
      return client_.cancel(job_, [this](core::Result<proto::JobInfo> j) {
        if (ok(j)) finish(kExitOk, jobLine(*j));
      });
    fetch();
  }

  void watch() {
    watching_ = true;
    client_.watch(
        job_, nullptr,
        [this](const proto::ProgressEvent& p) {
          if (o_.quiet || p.progress.total == 0) return;
          if (!bar_ || stage_ != p.progress.stage) bar_.emplace(job_ + " " + p.progress.stage, true);
          stage_ = p.progress.stage;
          bar_->update(p.progress.done, p.progress.total, p.progress.text);
        },
        [this](core::Result<proto::JobInfo> j) {
          watching_ = false;
          if (!ok(j)) return;
          if (bar_) bar_->finish();
          bar_.reset();
          if (j->state != proto::JobState::Complete) {
            std::string m = jobLine(*j);
            for (const auto& l : j->stderr_tail) m += "\n  " + l;
            return finish(kExitFailure, m);
          }
          std::cerr << jobLine(*j) << "\n";
          if (o_.fetch) return fetch();
          finish(kExitOk);
        });
  }

  void fetch() {
    fetch_ = std::make_unique<remote::RunFetch>(&client_, remote::FetchOptions{job_, *o_.store, o_.keep_file});
    if (!o_.quiet) bar_.emplace("fetch " + job_, true);
    fetch_->start(
        [this](std::uint64_t done, std::uint64_t total) {
          if (bar_) bar_->update(done, total);
        },
        [this](core::Result<remote::FetchedRun> r) {
          if (!ok(r)) return;
          if (bar_) bar_->finish();
          std::string m = "run " + std::to_string(static_cast<long long>(r->run)) + " in " + *o_.store + " (sha256 " +
                          r->sha256 + ", " + std::to_string(r->bytes) + " bytes)";
          if (!r->kept_file.empty()) m += "; the fetched file is kept at " + r->kept_file;
          finish(kExitOk, m);
        });
  }

  RemoteOptions o_;
  AgentClient client_;
  std::unique_ptr<remote::RunFetch> fetch_;
  std::optional<ProgressBar> bar_;
  std::string stage_;
  std::string job_;
  bool watching_ = false;
  bool done_ = false;
};
}  // namespace

int runRemote(Args args) {
  if (args.flag("--help")) {
    std::cout << kRemoteHelp;
    return kExitOk;
  }
  RemoteOptions o;
  if (int rc = parseRemoteArgs(args, o); rc != kExitOk) return rc;
  int argc = 1;
  char name[] = "shardscope-cli";
  char* argv[] = {name, nullptr};
  QCoreApplication app(argc, argv);
  std::signal(SIGINT, [](int) { g_interrupted = 1; });
  std::signal(SIGPIPE, SIG_IGN);
  return Session(std::move(o)).run();
}

}  // namespace shardscope::app::cli
