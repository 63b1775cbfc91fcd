// The limits a job's child processes run under (docs/agent.md "Jobs and
// their limits"): its own (resident memory of its process tree, wall time, an
// address-space backstop for a CPU engine; killed with the agent), and the
// total of every running job's resident memory, which stops the newest job
// when they pass it together.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/agent/agent_config.h"
#include "shardscope/profiler/workflow/engine_launch.h"

namespace shardscope::profiler {

// RLIMIT_AS of an emulate engine on the CPU, past limits.job_memory_bytes: the
// address space its libraries map and each kernel thread's stack and glibc
// arena reserve without making them resident (about 0.2 GiB for two threads).
inline constexpr std::uint64_t kJobAddressSpaceBase = std::uint64_t{1} << 30;
inline constexpr std::uint64_t kJobAddressSpacePerThread = std::uint64_t{72} << 20;
// A build with AddressSanitizer (the test suite's sanitizer stage) sets no
// address-space limit: ASan reserves terabytes of shadow address space at
// start, which any such limit refuses; the resident-memory limit still holds.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kJobAddressSpaceBackstop = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kJobAddressSpaceBackstop = false;
#else
inline constexpr bool kJobAddressSpaceBackstop = true;
#endif
#else
inline constexpr bool kJobAddressSpaceBackstop = true;
#endif

// The resident memory of every running job's processes, as their launches
// sample it: when all of them together pass limits.total_memory_bytes, the
// newest job is stopped (the others were there first). Thread-safe: each
// job's launch samples from its own thread.
class ResidentLedger {
 public:
  explicit ResidentLedger(std::uint64_t total_bytes) : total_(total_bytes) {}
  void add(const std::string& job);  // a job that starts: the newest
  void remove(const std::string& job);
  // Records one sample of a job; the reason to stop it, or "".
  [[nodiscard]] std::string sample(const std::string& job, std::uint64_t resident_bytes);

 private:
  struct Entry {
    std::uint64_t order = 0;
    std::uint64_t resident = 0;
  };
  std::mutex mutex_;
  std::uint64_t total_;
  std::uint64_t next_ = 0;
  std::map<std::string, Entry> jobs_;
};

// The limits of job `job`'s processes under `config`: limits.job_memory_bytes
// resident, limits.job_seconds of wall time, killed when the agent dies, an
// address-space backstop for an emulate engine on the CPU only (a GPU
// process's CUDA context reserves the GPUs' size, and Slurm passes limits on
// to the ranks), and every sample reported to `ledger` (when given).
[[nodiscard]] ProcessLimits jobProcessLimits(const AgentConfig& config, const core::protocol::JobSpec& spec,
                                             const std::string& job, std::shared_ptr<ResidentLedger> ledger);

}  // namespace shardscope::profiler
