#include "shardscope/profiler/agent/agent_config.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "shardscope/core/json_io.h"
#include "shardscope/core/json_reader.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/summary.h"

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::array<std::string_view, 4> kPlaceholders = {"{ranks}", "{nodes}", "{gpus_per_node}", "{job_dir}"};
constexpr std::string_view kPlaceholderList = "{ranks} {nodes} {gpus_per_node} {job_dir}";

// The first "{...}" in the words that is not one of the placeholders: its word's index and the text.
std::optional<std::pair<std::size_t, std::string>> unknownPlaceholder(const std::vector<std::string>& words) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    for (std::size_t open = w.find('{'); open != std::string::npos; open = w.find('{', open + 1)) {
      const std::size_t close = w.find('}', open);
      std::string found = close == std::string::npos ? w.substr(open) : w.substr(open, close - open + 1);
      if (std::find(kPlaceholders.begin(), kPlaceholders.end(), found) == kPlaceholders.end())
        return std::pair{i, std::move(found)};
    }
  }
  return std::nullopt;
}

// core's checked reader (every problem with the file and its JSON path),
// and the keys every read looked up: a member no read knows is refused, since
// a misspelt limit would otherwise be ignored and its default used silently.
class ConfigReader {
 public:
  explicit ConfigReader(std::string source) : r_(std::move(source)) {}

  void fail(const std::string& path, const std::string& what) { r_.fail(path, what); }
  [[nodiscard]] bool ok() const { return r_.ok(); }
  [[nodiscard]] core::Error error() const { return r_.error(); }
  [[nodiscard]] const std::string& source() const { return r_.source(); }
  [[nodiscard]] const std::map<std::string, std::set<std::string>>& knownKeys() const { return known_; }

  // A key the object at `path` may hold (every read below notes its own).
  void known(const std::string& path, const char* key) { known_[path].insert(key); }
  // Every member of the object at `path` must be a key some read noted.
  void refuseUnknownKeys(const json& obj, const std::string& path) {
    if (!obj.is_object()) return;
    const std::set<std::string>& keys = known_[path];
    for (const auto& [key, value] : obj.items()) {
      if (keys.count(key) != 0) continue;
      std::string expected;
      for (const auto& k : keys) expected += (expected.empty() ? "" : ", ") + k;
      fail(core::childPath(path, key), "unknown key; expected one of " + expected);
    }
  }

  std::optional<std::string> text(const json& obj, const std::string& path, const char* key, bool required) {
    known(path, key);
    return r_.string(obj, path, key, required);
  }

  std::optional<std::uint64_t> whole(const json& obj, const std::string& path, const char* key, std::uint64_t min,
                                     std::uint64_t max) {
    known(path, key);
    return r_.integer(obj, path, key, false, min, max);
  }

  std::vector<std::string> words(const json& v, const std::string& path) {
    std::vector<std::string> out;
    if (!v.is_array() || v.empty()) {
      fail(path, "expected a non-empty array of words (strings), got " +
                     (v.is_array() ? std::string("an empty array") : core::describe(v)));
      return out;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string() || v[i].get_ref<const std::string&>().empty()) {
        fail(core::childPath(path, i), "expected a non-empty string, got " + core::describe(v[i]));
        return {};
      }
      out.push_back(v[i].get<std::string>());
    }
    if (auto bad = unknownPlaceholder(out))
      fail(core::childPath(path, bad->first),
           "unknown placeholder \"" + bad->second + "\"; expected one of " + std::string(kPlaceholderList));
    return out;
  }

 private:
  core::JsonReader r_;
  std::map<std::string, std::set<std::string>> known_;  // by object path ("" for the top level)
};

std::string absoluteFrom(const std::string& base_dir, const std::string& p) {
  const fs::path path(p);
  return (path.is_absolute() ? path : fs::path(base_dir) / path).lexically_normal().string();
}

void readListen(ConfigReader& r, const json& j, AgentConfig& c) {
  const auto it = j.find("listen");
  if (it == j.end()) return;
  if (!it->is_object()) return r.fail("/listen", "expected an object {\"address\", \"port\"}");
  if (auto a = r.text(*it, "/listen", "address", false)) c.listen_address = *a;
  if (auto p = r.whole(*it, "/listen", "port", 0, 65535)) c.port = static_cast<std::uint16_t>(*p);
  r.refuseUnknownKeys(*it, "/listen");
}

void readLauncher(ConfigReader& r, const json& j, AgentConfig& c) {
  const auto it = j.find("launcher");
  if (it == j.end() || it->is_null()) return;
  if (!it->is_object()) return r.fail("/launcher", "expected an object {\"kind\", \"argv\"} or null");
  r.known("/launcher", "argv");
  r.known("/launcher", "step_argv");
  const auto kind = r.text(*it, "/launcher", "kind", true);
  r.refuseUnknownKeys(*it, "/launcher");
  if (!kind) return;
  if (*kind == "none") return;
  if (*kind == "mpirun")
    c.launcher = LauncherKind::Mpirun;
  else if (*kind == "srun")
    c.launcher = LauncherKind::Srun;
  else if (*kind == "sbatch")
    c.launcher = LauncherKind::Sbatch;
  else
    return r.fail("/launcher/kind", "expected \"none\", \"mpirun\", \"srun\" or \"sbatch\", got \"" + *kind + "\"");
  const auto argv = it->find("argv");
  if (argv == it->end()) return r.fail("/launcher/argv", "missing (expected the launcher's words)");
  c.launcher_argv = r.words(*argv, "/launcher/argv");
  if (const auto step = it->find("step_argv"); step != it->end()) {
    if (c.launcher != LauncherKind::Sbatch) return r.fail("/launcher/step_argv", "only an sbatch launcher has one");
    c.step_argv = r.words(*step, "/launcher/step_argv");
  }
}

void readCluster(ConfigReader& r, const json& j, const std::string& base_dir, AgentConfig& c) {
  const auto it = j.find("cluster");
  if (it == j.end() || it->is_null()) return;
  core::Result<core::ClusterSpec> cluster = core::Error{""};
  if (it->is_string()) {
    const std::string name = it->get<std::string>();
    cluster = core::clusterPreset(name);
    if (!cluster) cluster = core::loadCluster(absoluteFrom(base_dir, name));
  } else {
    cluster = core::clusterFromJson(*it, r.source() + " /cluster");
  }
  if (!cluster) return r.fail("/cluster", cluster.error().message);
  c.cluster = std::move(cluster).value();
}

void readLimits(ConfigReader& r, const json& j, AgentLimits& l) {
  const auto it = j.find("limits");
  if (it == j.end()) return;
  if (!it->is_object()) return r.fail("/limits", "expected an object");
  constexpr std::uint64_t k32 = std::numeric_limits<std::uint32_t>::max();
  if (auto v = r.whole(*it, "/limits", "max_ranks", 1, 1u << 20)) l.max_ranks = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_steps", 1, 100000)) l.max_steps = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_tables", 1, core::kMaxTables))
    l.max_tables = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_jobs", 1, 100000)) l.max_jobs = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_running", 1, 1024)) l.max_running = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_connections", 1, 100000))
    l.max_connections = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "handshake_seconds", 1, 600))
    l.handshake_seconds = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_handshakes", 1, 100000)) l.max_handshakes = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_handshakes_per_address", 1, 100000))
    l.max_handshakes_per_address = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "max_frame_bytes", 4096, 1u << 30)) l.max_frame_bytes = *v;
  if (auto v = r.whole(*it, "/limits", "max_client_backlog_bytes", 1u << 20, k32 * 16)) l.max_client_backlog_bytes = *v;
}

// What one job may take of the machine: memory per job and of all running
// jobs, kernel threads, wall time (docs/agent.md "Jobs and their limits").
void readJobLimits(ConfigReader& r, const json& j, AgentLimits& l) {
  const auto it = j.find("limits");
  if (it == j.end() || !it->is_object()) return;
  constexpr std::uint64_t kMinMemory = 16u << 20, kMaxMemory = std::uint64_t{1} << 50;
  if (auto v = r.whole(*it, "/limits", "job_memory_bytes", kMinMemory, kMaxMemory)) l.job_memory_bytes = *v;
  if (auto v = r.whole(*it, "/limits", "total_memory_bytes", kMinMemory, kMaxMemory)) l.total_memory_bytes = *v;
  if (auto v = r.whole(*it, "/limits", "job_threads", 1, 4096)) l.job_threads = static_cast<std::uint32_t>(*v);
  if (auto v = r.whole(*it, "/limits", "job_seconds", 1, 31u * 86400)) l.job_seconds = static_cast<std::uint32_t>(*v);
  if (l.job_memory_bytes != 0 && l.total_memory_bytes != 0 && l.job_memory_bytes > l.total_memory_bytes)
    r.fail("/limits/job_memory_bytes", "expected at most total_memory_bytes (" + std::to_string(l.total_memory_bytes) +
                                           "), got " + std::to_string(l.job_memory_bytes));
}
}  // namespace

void resolveJobLimits(AgentLimits& l) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::uint64_t physical =
      pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  if (l.total_memory_bytes == 0)
    l.total_memory_bytes = std::max<std::uint64_t>(std::uint64_t{256} << 20, physical / 4 * 3);
  if (l.job_memory_bytes == 0)
    l.job_memory_bytes = std::min<std::uint64_t>(std::uint64_t{8} << 30, l.total_memory_bytes);
  if (l.job_threads == 0)
    l.job_threads = std::max(1u, std::thread::hardware_concurrency() / std::max(1u, l.max_running));
  if (l.job_seconds == 0) l.job_seconds = 86400;
}

const char* toString(LauncherKind kind) {
  switch (kind) {
    case LauncherKind::None:
      return "emulate-only";
    case LauncherKind::Mpirun:
      return "mpirun";
    case LauncherKind::Srun:
      return "srun";
    case LauncherKind::Sbatch:
      return "sbatch";
  }
  return "emulate-only";
}

core::Status checkLauncherTemplate(const std::vector<std::string>& words, const std::string& source,
                                   const std::string& path) {
  const auto bad = unknownPlaceholder(words);
  if (!bad) return core::Ok{};
  const std::string at = core::childPath(path, bad->first);
  return core::Error{source + ": " + at + ": unknown placeholder \"" + bad->second + "\"; expected one of " +
                         std::string(kPlaceholderList),
                     core::ErrorKind::InvalidInput, source, at};
}

std::vector<std::string> fillLauncherTemplate(const std::vector<std::string>& words, const LaunchValues& values) {
  const std::array<std::string, 4> with = {std::to_string(values.ranks), std::to_string(values.nodes),
                                           std::to_string(values.gpus_per_node), values.job_dir};
  std::vector<std::string> out;
  out.reserve(words.size());
  for (std::string w : words) {
    for (std::size_t k = 0; k < kPlaceholders.size(); ++k)
      for (std::size_t p; (p = w.find(kPlaceholders[k])) != std::string::npos;)
        w.replace(p, kPlaceholders[k].size(), with[k]);
    out.push_back(std::move(w));
  }
  return out;
}

namespace {

// Every member of a config, read into `c`; every problem stays in `r`.
void readConfig(ConfigReader& r, const json& j, const std::string& base_dir, AgentConfig& c) {
  for (const char* key : {"schema", "listen", "cluster", "launcher", "limits"}) r.known("", key);
  readListen(r, j, c);
  if (auto t = r.text(j, "", "token_file", true)) c.token_file = absoluteFrom(base_dir, *t);
  if (auto s = r.text(j, "", "store_dir", true)) c.store_dir = absoluteFrom(base_dir, *s);
  if (auto e = r.text(j, "", "engine", false)) c.engine = absoluteFrom(base_dir, *e);
  readCluster(r, j, base_dir, c);
  readLauncher(r, j, c);
  readLimits(r, j, c.limits);
  readJobLimits(r, j, c.limits);
  if (const auto limits = j.find("limits"); limits != j.end()) r.refuseUnknownKeys(*limits, "/limits");
  r.refuseUnknownKeys(j, "");
}

}  // namespace

std::vector<std::string> agentConfigKeys() {
  // The readers note every key they look up: run them over every object.
  ConfigReader r("keys");
  AgentConfig c;
  readConfig(r, json{{"listen", json::object()}, {"launcher", {{"kind", "none"}}}, {"limits", json::object()}}, "/", c);
  std::vector<std::string> out;
  for (const auto& [path, keys] : r.knownKeys())
    for (const auto& key : keys) {
      std::string full = path;
      full += '/';
      full += key;
      if (r.knownKeys().count(full) == 0) out.push_back(full.substr(1));  // objects are listed by their keys
    }
  return out;
}

core::Result<AgentConfig> agentConfigFromJson(const json& j, const std::string& source, const std::string& base_dir) {
  ConfigReader r(source);
  {
    core::JsonReader schema(source);
    if (!schema.schema(j, kAgentConfigSchema)) return schema.error();
  }
  AgentConfig c;
  c.source = source;
  readConfig(r, j, base_dir, c);
  if (!r.ok()) return r.error();
  resolveJobLimits(c.limits);
  if (c.limits.job_memory_bytes > c.limits.total_memory_bytes)
    return core::Error{source + ": /limits/job_memory_bytes: " + core::formatBytes(c.limits.job_memory_bytes) +
                           " exceeds total_memory_bytes (" + core::formatBytes(c.limits.total_memory_bytes) +
                           ", 3/4 of this machine's memory unless given)",
                       core::ErrorKind::InvalidInput, source, "/limits/job_memory_bytes"};
  return c;
}

core::Result<AgentConfig> loadAgentConfig(const std::string& path) {
  auto j = core::readJsonFile(path);
  if (!j) return j.error();
  std::error_code ec;
  const std::string dir = fs::absolute(path, ec).parent_path().string();
  return agentConfigFromJson(*j, path, dir);
}

}  // namespace shardscope::profiler
