#include "shardscope/profiler/agent/agent_launch.h"

#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <filesystem>
#include <fstream>

#include "shardscope/core/json_io.h"

extern char** environ;

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;

// Runs a short command (scancel) and waits for it; its output is not read.
void runAndWait(const std::vector<std::string>& argv) {
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, cargv[0], nullptr, nullptr, cargv.data(), environ) != 0) return;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

core::Result<PreparedLaunch> sbatchLaunch(const AgentConfig& config, const LaunchValues& values,
                                          const std::vector<std::string>& engine_argv,
                                          const std::shared_ptr<SchedulerJob>& scheduler) {
  const fs::path dir(values.job_dir);
  std::string script =
      "#!/bin/sh\n# Written by shardscope-agent: the engine of one job, started by the step launcher.\nexec";
  for (const auto& w : fillLauncherTemplate(config.step_argv, values)) script.append(" ").append(shellQuote(w));
  for (const auto& w : engine_argv) script.append(" ").append(shellQuote(w));
  script.push_back('\n');
  const std::string script_path = (dir / "job.sh").string();
  if (auto s = core::writeFileAtomic(script_path, script); !s) return s.error();
  ::chmod(script_path.c_str(), 0600);  // sbatch reads it; no one else may
  PreparedLaunch p;
  p.argv = fillLauncherTemplate(config.launcher_argv, values);
  const std::string out = (dir / "engine.out").string();
  p.argv.insert(p.argv.end(), {"--parsable", "--wait", "--job-name", "shardscope-" + dir.filename().string(),
                               "--output", out, "--error", (dir / "engine.err").string(), script_path});
  p.options.follow_file = out;
  p.options.cancel_action = [scheduler](int escalation) {
    const std::string id = scheduler->get();
    if (id.empty()) return;  // not queued yet: sbatch itself will be gone with the agent's wait
    if (escalation == 0)
      runAndWait({"scancel", "--signal=USR1", "--full", id});
    else
      runAndWait({"scancel", id});
  };
  return p;
}
}  // namespace

core::Result<PreparedLaunch> prepareAgentLaunch(const AgentConfig& config, std::uint32_t world_size,
                                                std::uint32_t gpus_per_node, const std::string& job_dir,
                                                const std::vector<std::string>& engine_argv,
                                                const std::shared_ptr<SchedulerJob>& scheduler) {
  if (config.launcher == LauncherKind::None || config.launcher_argv.empty())
    return core::Error{"this agent runs emulate jobs only (its config names no launcher)", core::ErrorKind::Usage};
  LaunchValues values;
  values.ranks = world_size;
  values.gpus_per_node = std::max(1u, gpus_per_node);
  values.nodes = (world_size + values.gpus_per_node - 1) / values.gpus_per_node;
  values.job_dir = job_dir;
  if (config.launcher == LauncherKind::Sbatch) return sbatchLaunch(config, values, engine_argv, scheduler);
  PreparedLaunch p;
  p.argv = fillLauncherTemplate(config.launcher_argv, values);
  p.argv.insert(p.argv.end(), engine_argv.begin(), engine_argv.end());
  return p;
}

std::optional<std::string> parseSbatchJobId(std::string_view line) {
  const std::size_t end = std::min(line.find(';'), line.size());
  const std::string_view id = line.substr(0, end);
  if (id.empty() || id.size() > 20) return std::nullopt;
  if (!std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }))
    return std::nullopt;
  return std::string(id);
}

std::string shellQuote(std::string_view word) {
  std::string out;
  out.reserve(word.size() + 2);
  out.push_back('\'');
  for (char c : word) {
    if (c == '\'') {
      out.append(R"('\'')");
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

std::vector<std::string> fileTail(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  for (std::string l; std::getline(in, l);) {
    tail.push_back(std::move(l));
    if (tail.size() > lines) tail.pop_front();
  }
  return {tail.begin(), tail.end()};
}

}  // namespace shardscope::profiler
