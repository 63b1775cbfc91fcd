// shardscope-cli remote's command line (remote_options.h).
#include "remote_options.h"

#include <cstdlib>
#include <fstream>

#include "cli.h"
#include "common_options.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/protocol/job_spec.h"
#include "shardscope/core/version.h"

namespace shardscope::app::cli {

namespace {
namespace proto = core::protocol;

constexpr unsigned long long kMaxRanks = 1u << 20;  // the most any agent config allows (limits.max_ranks)

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
  core::ProjectSources sources;
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

// The job spec of `submit` (the project loaded here and sent inline; the
// agent checks it against its own cluster: remote describe lists what it offers).
int buildSubmit(const SubmitTexts& t, proto::JobSpec& s) {
  proto::JobOptions o;
  const std::string device = t.device.value_or("cpu");
  o.mode = t.mode.value_or("emulate");
  o.label = t.label.value_or("");
  o.trace_spans = !t.no_trace;
  o.all_groups = t.all_groups;
  if (!numberInto(t.steps, "--steps", o.steps, proto::kMaxJobSteps, false) ||
      !numberInto(t.warmup, "--warmup", o.warmup, proto::kMaxJobWarmup, true) ||
      !numberInto(t.seed, "--seed", o.seed, proto::kMaxJobSeed, false) ||
      !numberInto(t.batch, "--batch", o.batch, core::kMaxBatchPerGpu, true) ||
      !numberInto(t.sync, "--sync-interval", o.sync_interval, core::kMaxSyncInterval, true))
    return kExitUsage;
  if (o.mode != "emulate" && o.mode != "mpi") return usageError("remote submit: --mode must be emulate or mpi");
  if (device != "cpu" && device != "cuda") return usageError("remote submit: --device must be cpu or cuda");
  o.cuda = device == "cuda";
  if (t.plan && t.grid) return usageError("remote submit: give --plan or --grid, not both");
  auto project = core::resolveProject(t.sources);
  if (!project) return fail(project.error());
  if (t.plan) {
    auto plan = core::loadPlan(*t.plan);
    if (!plan) return fail(plan.error());
    o.plan = std::move(plan).value();
  }
  if (t.grid && !numberInto(t.grid, "--grid", o.grid, kMaxRanks, false)) return kExitUsage;
  if (t.nodes && !numberInto(t.nodes, "--nodes", o.nodes, kMaxRanks, false)) return kExitUsage;
  auto spec = proto::makeJobSpec(*project, o);
  if (!spec) return fail(spec.error());
  s = std::move(spec).value();
  return kExitOk;
}

}  // namespace

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
  if (auto bad = args.problem(Args::Positionals::Allowed)) return usageError("remote: " + *bad);
  const auto positional = args.positional();
  if (positional.empty()) return usageError("remote: give a command: describe, list, submit, watch, cancel or fetch");
  o.command = positional.front();
  o.words.assign(positional.begin() + 1, positional.end());
  if (o.command != "submit" && submit.any())
    return usageError("remote " + o.command + ": job options belong to submit");
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

}  // namespace shardscope::app::cli
