#include "shardscope/profiler/agent/job_limits.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "shardscope/core/summary.h"

namespace shardscope::profiler {

void ResidentLedger::add(const std::string& job) {
  const std::lock_guard lock(mutex_);
  jobs_[job] = {next_++, 0};
}

void ResidentLedger::remove(const std::string& job) {
  const std::lock_guard lock(mutex_);
  jobs_.erase(job);
}

std::string ResidentLedger::sample(const std::string& job, std::uint64_t resident_bytes) {
  const std::lock_guard lock(mutex_);
  const auto it = jobs_.find(job);
  if (it == jobs_.end()) return {};
  it->second.resident = resident_bytes;
  std::uint64_t sum = 0, newest = 0;
  for (const auto& [id, e] : jobs_) {
    sum += e.resident;
    newest = std::max(newest, e.order);
  }
  if (sum <= total_ || it->second.order != newest) return {};
  return "memory limit (" + core::formatBytes(total_) + ", limits.total_memory_bytes): the running jobs held " +
         core::formatBytes(sum) + " together; the newest was stopped";
}

ProcessLimits jobProcessLimits(const AgentConfig& config, const core::protocol::JobSpec& spec, const std::string& job,
                               std::shared_ptr<ResidentLedger> ledger) {
  namespace proto = core::protocol;
  ProcessLimits l;
  l.resident_bytes = config.limits.job_memory_bytes;
  l.resident_name = "limits.job_memory_bytes";
  l.wall = std::chrono::seconds(config.limits.job_seconds);
  l.wall_name = "limits.job_seconds";
  l.die_with_caller = true;
  if (kJobAddressSpaceBackstop && spec.mode == proto::JobMode::Emulate && spec.device == proto::JobDevice::Cpu)
    l.address_space_bytes =
        config.limits.job_memory_bytes + kJobAddressSpaceBase + kJobAddressSpacePerThread * config.limits.job_threads;
  if (ledger)
    l.sample = [ledger = std::move(ledger), job](std::uint64_t resident) { return ledger->sample(job, resident); };
  return l;
}

}  // namespace shardscope::profiler
