// The agent's jobs: submitted specs are admitted (profiler/agent's
// job_admission.h: the agent's own cluster, a grid or plan for it, the
// predicted memory within the limits), queue in order, and at most max_running run at once, each on its
// own thread that starts and follows a child process: shardscope-engine
// --emulate for emulate jobs, the config's launcher for mpi jobs, never the
// job's tables in this process. A child is limited (resident memory of its
// process tree, wall time, threads; killed at a limit: job_limits.h) and dies
// with the agent. Every state change is written to the job's folder
// (<store_dir>/jobs/<id>/job.json, job_record.h; atomically, folders 0700 and
// files 0600)
// so a restart, even after a kill -9, finds every job: one that was running
// is marked failed (its run in the job's store marked failed too), one that
// was queued runs. A job outlives the client that submitted it. When a job
// ends, its store is snapshotted once into run.sqlite, the file fetch serves.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <QObject>

#include "shardscope/core/cluster.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/agent/agent_config.h"
#include "shardscope/profiler/agent/job_admission.h"
#include "shardscope/profiler/agent/job_limits.h"
#include "shardscope/profiler/agent/job_record.h"

namespace shardscope::app::agent {

namespace proto = core::protocol;
using profiler::RunFile;

class JobManager : public QObject {
  Q_OBJECT

 public:
  JobManager(profiler::AgentConfig config, core::ClusterSpec cluster, QObject* parent = nullptr);
  ~JobManager() override;  // cancels running jobs, waits for them and records their end
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Reads the jobs a previous start left (call once, before serving).
  // Returns one line per job it had to repair, for the log.
  [[nodiscard]] core::Result<std::vector<std::string>> recover();

  // Queues a spec that checkJobRequest and admitJob accept. `owner` names
  // the client ("client 10.0.0.5:51234") in the log and the job's record.
  // Errors carry the protocol code to answer with.
  using Refusal = profiler::JobRefusal;
  [[nodiscard]] std::variant<proto::JobInfo, Refusal> submit(const proto::JobSpec& spec, const std::string& owner);
  [[nodiscard]] std::variant<proto::JobInfo, Refusal> cancel(const std::string& job);
  [[nodiscard]] const proto::JobInfo* find(const std::string& job) const;
  [[nodiscard]] std::vector<proto::JobInfo> list() const;  // oldest first
  [[nodiscard]] std::variant<RunFile, Refusal> runFile(const std::string& job) const;
  [[nodiscard]] std::size_t running() const { return running_.size(); }

 signals:
  void jobChanged(const shardscope::core::protocol::JobInfo& info);
  void jobProgress(const shardscope::core::protocol::ProgressEvent& event);

 private:
  struct Runtime;  // a running job's thread, cancel flag and launch state
  // Its record (info, spec, the run file once it ended with a run, owner) and
  // its memory estimate, held against limits.total_memory_bytes until it ends
  // (not recorded: a queued job is admitted again at the next start).
  struct Job : profiler::JobRecord {
    std::uint64_t memory = 0;
  };

  void startQueued();
  void start(Job& job);
  // The job's thread: runs the engine as a child process, snapshots its run.
  void runJob(const std::string& id, const std::string& dir, const proto::JobSpec& spec, Runtime& rt);
  [[nodiscard]] std::string recoverOne(const std::string& file);
  void noteSchedulerJob(const std::string& id, const std::string& scheduler_job);
  void finish(const std::string& id, const proto::JobInfo& ended, const RunFile& file);
  void progressFromThread(const std::string& id, const proto::JobProgress& p, std::vector<double> step_ms);
  [[nodiscard]] core::Status save(const Job& job) const;
  [[nodiscard]] std::string jobDir(const std::string& id) const;
  [[nodiscard]] std::string nextId();
  [[nodiscard]] std::uint64_t reservedMemory() const;  // estimates of the jobs queued or running

  profiler::AgentConfig config_;
  core::ClusterSpec cluster_;
  std::map<std::string, Job> jobs_;  // by id
  std::vector<std::string> order_;   // ids, oldest first
  std::deque<std::string> queue_;    // queued ids, in order
  std::map<std::string, std::unique_ptr<Runtime>> running_;
  std::shared_ptr<profiler::ResidentLedger> ledger_;  // the running children's resident memory, for the total limit
  std::uint64_t next_number_ = 1;
  bool stopping_ = false;       // the agent is stopping: start nothing more
  std::size_t local_gpus_ = 0;  // this machine's GPUs (emulate jobs on the cuda device run here)
};

// The SHA-256 (lowercase hex) and size of a file; errors name it.
[[nodiscard]] core::Result<std::pair<std::string, std::uint64_t>> fileSha256(const std::string& path);

}  // namespace shardscope::app::agent
