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

constexpr unsigned long long kMaxRanks = 1u << 20;  // the most any agent config allows (limits.max_ranks)

// What the command line asks for.
struct RemoteOptions {
  remote::ConnectOptions connect;
  std::string command;
  std::vector<std::string> words;  // the command's positional arguments
  bool json = false, quiet = false, watch = false, fetch = false, keep_file = false;
  std::optional<std::string> store;
  proto::JobSpec spec;
};

std::optional<std::string> readToken(const std::optional<std::string>& file, std::string& error) {
  if (file) {
    std::ifstream in(*file);
    std::string token;
    if (!in) {
      error = "remote: cannot read the token file " + *file;
      return std::nullopt;
    }
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
    if (token.empty()) {
      error = "remote: the token file " + *file + " holds no token on its first line";
      return std::nullopt;
    }
    return token;
  }
  if (const char* env = std::getenv("SHARDSCOPE_AGENT_TOKEN"); env != nullptr && *env != '\0') return env;
  error = "remote: give the agent's token with --token-file F or $SHARDSCOPE_AGENT_TOKEN";
  return std::nullopt;
}

// submit's options as given (taken whatever the command, so that their
// values are never read as positional words).
struct SubmitTexts {
  profiler::ProjectSources sources;
  std::optional<std::string> plan, grid, nodes, mode, device, label, steps, warmup, seed, batch, sync;
  bool no_trace = false, all_groups = false;
  [[nodiscard]] bool any() const {
    return sources.project || sources.model || sources.cluster || sources.calibration || sources.constraints || plan ||
           grid || nodes || mode || device || label || steps || warmup || seed || batch || sync || no_trace ||
           all_groups;
  }
};

SubmitTexts takeSubmitOptions(Args& args) {
  SubmitTexts t;
  t.sources = takeProjectSources(args);
  t.plan = args.option("--plan");
  t.grid = args.option("--grid");
  t.nodes = args.option("--nodes");
  t.mode = args.option("--mode");
  t.device = args.option("--device");
  t.label = args.option("--label");
  t.steps = args.option("--steps");
  t.warmup = args.option("--warmup");
  t.seed = args.option("--seed");
  t.batch = args.option("--batch");
  t.sync = args.option("--sync-interval");
  t.no_trace = args.flag("--no-trace");
  t.all_groups = args.flag("--all-groups");
  return t;
}

// A whole number option into `out` (left as it is when absent); false, the usage error printed, when bad.
template <class T>
bool numberInto(const std::optional<std::string>& text, const char* name, T& out, unsigned long long max,
                bool allow_zero) {
  const auto v = wholeNumberOption(text, out, max, "remote submit", name, allow_zero);
  if (v) out = static_cast<T>(*v);
  return v.has_value();
}

// The job spec of `submit` (the project loaded here and sent inline).
int buildSubmit(const SubmitTexts& t, proto::JobSpec& s) {
  const std::string mode = t.mode.value_or("emulate");
  const std::string device = t.device.value_or("cpu");
  s.label = t.label.value_or("");
  s.trace_spans = !t.no_trace;
  s.all_groups = t.all_groups;
  if (!numberInto(t.steps, "--steps", s.steps, proto::kMaxJobSteps, false) ||
      !numberInto(t.warmup, "--warmup", s.warmup, proto::kMaxJobWarmup, true) ||
      !numberInto(t.seed, "--seed", s.seed, proto::kMaxJobSeed, false) ||
      !numberInto(t.batch, "--batch", s.batch, core::kMaxBatchPerGpu, true) ||
      !numberInto(t.sync, "--sync-interval", s.sync_interval, core::kMaxSyncInterval, true))
    return kExitUsage;
  if (mode != "emulate" && mode != "mpi") return usageError("remote submit: --mode must be emulate or mpi");
  if (device != "cpu" && device != "cuda") return usageError("remote submit: --device must be cpu or cuda");
  s.mode = mode == "mpi" ? proto::JobMode::Mpi : proto::JobMode::Emulate;
  s.device = device == "cuda" ? proto::JobDevice::Cuda : proto::JobDevice::Cpu;
  if (t.plan && t.grid) return usageError("remote submit: give --plan or --grid, not both");
  auto project = profiler::resolveProject(t.sources);
  if (!project) return fail(project.error());
  s.project = std::move(project).value();
  s.project.trace_store.clear();
  if (t.plan) {
    auto plan = core::loadPlan(*t.plan);
    if (!plan) return fail(plan.error());
    s.plan = std::move(plan).value();
  }
  // The agent runs the job on its own cluster and checks both against it (remote describe lists what it offers).
  if (t.grid) {
    std::uint32_t m = 0;
    if (!numberInto(t.grid, "--grid", m, kMaxRanks, false)) return kExitUsage;
    s.grid = m;
  }
  if (t.nodes) {
    std::uint32_t nodes = 0;
    if (!numberInto(t.nodes, "--nodes", nodes, kMaxRanks, false)) return kExitUsage;
    s.nodes = nodes;
  }
  return kExitOk;
}

int parseRemoteArgs(Args& args, RemoteOptions& o) {
  const auto agent = args.option("--agent");
  const auto token_file = args.option("--token-file");
  const auto known = args.option("--known-agents");
  const auto fingerprint = args.option("--fingerprint");
  const bool accept_new = args.flag("--accept-new");
  o.json = args.flag("--json");
  o.quiet = args.flag("--quiet");
  o.watch = args.flag("--watch");
  o.fetch = args.flag("--fetch");
  o.keep_file = args.flag("--keep-file");
  o.store = args.option("--store");
  const SubmitTexts submit = takeSubmitOptions(args);
  const auto positional = args.positional();
  if (positional.empty()) return usageError("remote: give a command: describe, list, submit, watch, cancel or fetch");
  o.command = positional.front();
  o.words.assign(positional.begin() + 1, positional.end());
  if (o.command != "submit" && submit.any())
    return usageError("remote " + o.command + ": job options belong to submit");
  if (!args.error().empty()) return usageError("remote: " + args.error());
  if (auto u = args.unknownOption()) return usageError("remote: unknown option " + *u);
  if (!agent) return usageError("remote: --agent HOST:PORT is required");
  auto address = remote::parseAgentAddress(*agent);
  if (!address) return usageError("remote: --agent: " + address.error().message);
  if (accept_new && fingerprint) return usageError("remote: give --accept-new or --fingerprint, not both");
  const bool needs_job = o.command == "watch" || o.command == "cancel" || o.command == "fetch";
  if (needs_job && (o.words.size() != 1 || !proto::validJobId(o.words.front())))
    return usageError("remote " + o.command + ": give one job id (j and digits, as submit and list print)");
  if (!needs_job && !o.words.empty()) return usageError("remote " + o.command + ": unexpected argument " + o.words[0]);
  if ((o.command == "fetch" || o.fetch) && !o.store) return usageError("remote: fetch needs --store F");
  if (o.command != "describe" && o.command != "list" && o.command != "submit" && !needs_job)
    return usageError("remote: unknown command '" + o.command + "'");
  std::string error;
  auto token = readToken(token_file, error);
  if (!token) return usageError(error);
  o.connect.address = *address;
  o.connect.token = *token;
  o.connect.known_agents_path = known.value_or("");
  o.connect.trust = accept_new ? remote::TrustPolicy::AcceptNew : remote::TrustPolicy::Refuse;
  o.connect.expected_fingerprint = fingerprint.value_or("");
  o.connect.client_name = std::string("shardscope-cli ") + core::versionString();
  if (o.command == "submit") return buildSubmit(submit, o.spec);
  return kExitOk;
}

std::string jobLine(const proto::JobInfo& j) {
  std::string line = j.job + "  " + std::string(proto::toString(j.state)) + "  " + j.mode + " x" +
                     std::to_string(j.world_size) + "  \"" + j.label + "\"";
  if (j.progress.total > 0 && !proto::finished(j.state))
    line += "  " + j.progress.stage + " " + std::to_string(j.progress.done) + "/" + std::to_string(j.progress.total);
  if (j.run > 0) line += "  run " + std::to_string(j.run);
  if (!j.scheduler_job.empty()) line += "  slurm " + j.scheduler_job;
  if (!j.error.empty()) line += "  (" + j.error + ")";
  return line;
}

void printDescription(const proto::Description& d, bool json) {
  if (json) {
    std::cout << proto::toJson(d).dump(2) << "\n";
    return;
  }
  std::cout << d.agent << "\n  engine " << d.engine_version << (d.gpu_engine ? " (CUDA, NCCL, CUPTI)" : " (CPU only)")
            << "; CUDA " << (d.cuda_version.empty() ? "none" : d.cuda_version) << "; NCCL "
            << (d.nccl_version.empty() ? "none" : d.nccl_version) << "\n  launcher " << d.launcher << "; modes";
  for (const auto& m : d.modes) std::cout << " " << m;
  std::cout << "\n  cluster " << d.cluster.name << ": " << d.cluster.nodes << " x " << d.cluster.gpus_per_node
            << " GPUs\n  limits: " << d.max_ranks << " ranks, " << d.max_steps << " steps, " << d.max_jobs
            << " jobs at once";
  const proto::JobLimits& l = d.job_limits;
  if (l.job_memory_bytes > 0)
    std::cout << "; per job " << core::formatBytes(l.job_memory_bytes) << ", " << l.job_threads << " threads, "
              << l.job_seconds << " s; " << core::formatBytes(l.total_memory_bytes) << " for all jobs";
  std::cout << "\n";
  // What a submit may ask for: whole nodes of the cluster and, on them, a grid.
  for (const auto& shape : d.shapes) {
    std::cout << "  jobs on " << shape.nodes << (shape.nodes == 1 ? " node" : " nodes") << " (--nodes " << shape.nodes
              << ", N = " << shape.world_size << "): --grid";
    for (const auto m : shape.grids) std::cout << " " << m;
    std::cout << "\n";
  }
  for (const auto& h : d.hosts) {
    std::cout << "  host " << h.name << ": " << h.cpus << " CPUs, " << h.memory_bytes / (1u << 20) << " MiB available, "
              << h.gpus.size() << " GPUs\n";
    for (const auto& g : h.gpus)
      std::cout << "    gpu " << g.index << ": " << g.name << ", " << g.memory_bytes / (1u << 20) << " MiB\n";
  }
}

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
