#include "job_manager.h"

#include <algorithm>
#include <filesystem>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QFile>
#include <QMetaObject>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/core/time_text.h"
#include "shardscope/profiler/workflow/agent_launch.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::app::agent {

namespace {
namespace fs = std::filesystem;
namespace st = core::store;
using nlohmann::json;

constexpr const char* kJobSchema = "shardscope.agent-job/1";
constexpr std::size_t kStderrTail = 40;

JobManager::Refusal refusal(proto::ErrorCode code, std::string message) {
  return {code, core::Error{std::move(message), core::ErrorKind::Usage}};
}

// The newest run in a job's store (0 when none, or no store).
std::int64_t newestRun(const std::string& store) {
  std::error_code ec;
  if (!fs::exists(store, ec)) return 0;
  auto s = st::openStore(store, st::OpenMode::ReadOnly);
  if (!s) return 0;
  auto runs = s->listRuns();
  if (!runs || runs->empty()) return 0;
  return static_cast<std::int64_t>(runs->back().id);
}

// Snapshots a job's store into run.sqlite (through a temporary name, so a
// kill never leaves a half file under the final one) and checksums it.
core::Result<RunFile> snapshotRun(const std::string& dir, std::int64_t run) {
  const std::string store = (fs::path(dir) / "store.sqlite").string();
  const std::string final_path = (fs::path(dir) / "run.sqlite").string();
  const std::string temp = final_path + ".tmp";
  std::error_code ec;
  fs::remove(temp, ec);
  if (auto s = st::writeStoreSnapshot(store, temp); !s) return s.error();
  fs::rename(temp, final_path, ec);
  if (ec) return core::Error{"cannot rename " + temp + ": " + ec.message(), core::ErrorKind::Io};
  auto sum = fileSha256(final_path);
  if (!sum) return sum.error();
  return RunFile{final_path, sum->second, sum->first, run};
}
}  // namespace

core::Result<std::pair<std::string, std::uint64_t>> fileSha256(const std::string& path) {
  QFile f(QString::fromStdString(path));
  if (!f.open(QIODevice::ReadOnly))
    return core::Error{"cannot read " + path + ": " + f.errorString().toStdString(), core::ErrorKind::Io};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  if (!hash.addData(&f)) return core::Error{"cannot read " + path, core::ErrorKind::Io};
  return std::pair{hash.result().toHex().toStdString(), static_cast<std::uint64_t>(f.size())};
}

// A running job: its thread, its cancel flag, what its launch learned.
struct JobManager::Runtime {
  std::thread thread;
  std::atomic<bool> cancel{false};
  std::shared_ptr<profiler::SchedulerJob> scheduler = std::make_shared<profiler::SchedulerJob>();
  std::mutex mutex;  // guards the members below (written by the job's thread)
  std::vector<std::string> stderr_tail;
  int exit_code = 0;
};

JobManager::JobManager(profiler::AgentConfig config, core::ClusterSpec cluster, QObject* parent)
    : QObject(parent), config_(std::move(config)), cluster_(std::move(cluster)) {}

JobManager::~JobManager() {
  stopping_ = true;
  for (auto& [id, rt] : running_) rt->cancel = true;
  for (auto& [id, rt] : running_)
    if (rt->thread.joinable()) rt->thread.join();
  // The jobs' last reports (cancelled, their runs failed) are still queued to
  // this object: record them now, so the next start finds them ended.
  QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
}

std::string JobManager::jobDir(const std::string& id) const {
  return (fs::path(config_.store_dir) / "jobs" / id).string();
}

std::string JobManager::nextId() {
  std::string id = "j" + std::to_string(next_number_++);
  return id;
}

core::Status JobManager::save(const Job& job) const {
  json j;
  j["schema"] = kJobSchema;
  j["info"] = proto::toJson(job.info);
  j["spec"] = proto::toJson(job.spec);
  if (!job.run_file.sha256.empty())
    j["run_file"] = {{"size", job.run_file.size}, {"sha256", job.run_file.sha256}, {"run", job.run_file.run}};
  return core::writeFileAtomic((fs::path(jobDir(job.info.job)) / "job.json").string(), j.dump(1));
}

std::variant<proto::JobInfo, JobManager::Refusal> JobManager::submit(const proto::JobSpec& spec) {
  const std::uint32_t n = spec.project.cluster.worldSize();
  const auto& l = config_.limits;
  if (n > l.max_ranks)
    return refusal(proto::ErrorCode::LimitExceeded, "a job of " + std::to_string(n) + " ranks exceeds this agent's " +
                                                        std::to_string(l.max_ranks) + " (limits.max_ranks)");
  if (spec.steps > l.max_steps)
    return refusal(proto::ErrorCode::LimitExceeded, std::to_string(spec.steps) + " steps exceed this agent's " +
                                                        std::to_string(l.max_steps) + " (limits.max_steps)");
  if (queue_.size() + running_.size() >= l.max_jobs)
    return refusal(proto::ErrorCode::LimitExceeded, "this agent already has " + std::to_string(l.max_jobs) +
                                                        " jobs queued or running (limits.max_jobs)");
  if (spec.mode == proto::JobMode::Mpi && config_.launcher == profiler::LauncherKind::None)
    return refusal(proto::ErrorCode::InvalidJob, "this agent runs emulate jobs only (its config names no launcher)");
  if (spec.device == proto::JobDevice::Cuda && !profiler::gpuEngineBuilt())
    return refusal(proto::ErrorCode::InvalidJob, "this agent's engine was built without CUDA, NCCL and CUPTI");
  Job job;
  job.spec = spec;
  job.info.job = nextId();
  while (jobs_.count(job.info.job) != 0) job.info.job = nextId();
  job.info.label = spec.label;
  job.info.model = spec.project.model.name;
  job.info.state = proto::JobState::Queued;
  job.info.mode = spec.mode == proto::JobMode::Mpi ? "mpi" : "emulate";
  job.info.launcher = spec.mode == proto::JobMode::Mpi ? profiler::toString(config_.launcher) : "in-process";
  job.info.world_size = n;
  job.info.group_size = spec.plan ? spec.plan->sharding_group_size : spec.grid.value_or(0);
  job.info.created = core::utcNowIso8601();
  job.info.progress.stage = "queued";
  std::error_code ec;
  fs::create_directories(jobDir(job.info.job), ec);
  if (ec)
    return Refusal{proto::ErrorCode::Internal,
                   core::Error{"cannot create " + jobDir(job.info.job) + ": " + ec.message(), core::ErrorKind::Io}};
  if (auto s = save(job); !s) return Refusal{proto::ErrorCode::Internal, s.error()};
  const std::string id = job.info.job;
  jobs_.emplace(id, std::move(job));
  order_.push_back(id);
  queue_.push_back(id);
  const proto::JobInfo info = jobs_.at(id).info;
  QMetaObject::invokeMethod(
      this, [this] { startQueued(); }, Qt::QueuedConnection);
  return info;
}

std::variant<proto::JobInfo, JobManager::Refusal> JobManager::cancel(const std::string& id) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return refusal(proto::ErrorCode::NoSuchJob, "no job " + id + " on this agent");
  Job& job = it->second;
  if (job.info.state == proto::JobState::Queued) {
    queue_.erase(std::remove(queue_.begin(), queue_.end(), id), queue_.end());
    job.info.state = proto::JobState::Cancelled;
    job.info.finished = core::utcNowIso8601();
    job.info.error = "cancelled before it started";
    (void)save(job);
    emit jobChanged(job.info);
  } else if (const auto rt = running_.find(id); rt != running_.end()) {
    rt->second->cancel = true;
    job.info.progress.text = "cancelling";
    emit jobChanged(job.info);
  }
  return job.info;
}

const proto::JobInfo* JobManager::find(const std::string& id) const {
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second.info;
}

std::vector<proto::JobInfo> JobManager::list() const {
  std::vector<proto::JobInfo> out;
  out.reserve(order_.size());
  for (const auto& id : order_) out.push_back(jobs_.at(id).info);
  return out;
}

std::variant<RunFile, JobManager::Refusal> JobManager::runFile(const std::string& id) const {
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return refusal(proto::ErrorCode::NoSuchJob, "no job " + id + " on this agent");
  if (!proto::finished(it->second.info.state))
    return refusal(
        proto::ErrorCode::JobNotFinished,
        "job " + id + " is " + std::string(proto::toString(it->second.info.state)) + "; fetch it when it has ended");
  if (it->second.run_file.sha256.empty())
    return refusal(proto::ErrorCode::NoRun, "job " + id + " ended without a run" +
                                                (it->second.info.error.empty() ? "" : ": " + it->second.info.error));
  return it->second.run_file;
}

void JobManager::startQueued() {
  while (!stopping_ && !queue_.empty() && running_.size() < config_.limits.max_running) {
    const std::string id = queue_.front();
    queue_.pop_front();
    start(jobs_.at(id));
  }
}

void JobManager::progressFromThread(const std::string& id, const proto::JobProgress& p, std::vector<double> step_ms) {
  QMetaObject::invokeMethod(
      this,
      [this, id, p, ms = std::move(step_ms)] {
        const auto it = jobs_.find(id);
        if (it == jobs_.end() || proto::finished(it->second.info.state)) return;
        if (!p.stage.empty()) it->second.info.progress = p;
        emit jobProgress(proto::ProgressEvent{0, id, it->second.info.progress, ms});
      },
      Qt::QueuedConnection);
}

void JobManager::start(Job& job) {
  const std::string id = job.info.job;
  job.info.state = proto::JobState::Running;
  job.info.started = core::utcNowIso8601();
  job.info.progress = proto::JobProgress{job.spec.plan ? "starting" : "planning", 0, 0, ""};
  (void)save(job);
  emit jobChanged(job.info);
  auto rt = std::make_unique<Runtime>();
  Runtime* r = rt.get();
  running_[id] = std::move(rt);
  r->thread = std::thread([this, id, dir = jobDir(id), spec = job.spec, r] { runJob(id, dir, spec, *r); });
}

namespace {
// The profile request of a job spec (everything but the plan and the launch).
profiler::ProfileRequest profileRequest(const proto::JobSpec& spec, const std::string& dir,
                                        const profiler::AgentConfig& config) {
  profiler::ProfileRequest req;
  req.project = spec.project;
  req.batch = spec.batch;
  req.sync_interval = spec.sync_interval;
  req.steps = spec.steps;
  req.warmup = spec.warmup;
  req.seed = spec.seed;
  req.trace_spans = spec.trace_spans;
  req.all_groups = spec.all_groups;
  if (!spec.label.empty()) req.label = spec.label;
  req.store = (fs::path(dir) / "store.sqlite").string();
  req.mode = spec.mode == proto::JobMode::Mpi ? profiler::ProfileMode::Mpi : profiler::ProfileMode::Emulate;
  req.device = spec.device == proto::JobDevice::Cuda ? profiler::ProfileDevice::Cuda : profiler::ProfileDevice::Cpu;
  req.engine = config.engine;
  req.cancel_reason = "cancelled by a client of the agent";
  return req;
}

// Whether a progress report may go out now (at most 20 a second; stage changes always).
class ProgressThrottle {
 public:
  bool admit(bool always) {
    const auto now = std::chrono::steady_clock::now();
    if (!always && now - last_ < std::chrono::milliseconds(50)) return false;
    last_ = now;
    return true;
  }

 private:
  std::chrono::steady_clock::time_point last_{};
};
}  // namespace

void JobManager::runJob(const std::string& id, const std::string& dir, const proto::JobSpec& spec, Runtime& rt) {
  profiler::ProfileRequest req = profileRequest(spec, dir, config_);
  proto::JobInfo ended;
  auto plan = spec.plan ? core::Result<core::ShardPlan>(*spec.plan) : profiler::plannedProfilePlan(req, spec.grid);
  RunFile file;
  if (!plan) {
    ended.state = proto::JobState::Failed;
    ended.error = "planning failed: " + plan.error().message;
  } else {
    req.plan = std::move(plan).value();
    ended.group_size = req.plan.sharding_group_size;
    const bool sbatch = config_.launcher == profiler::LauncherKind::Sbatch;
    if (req.mode == profiler::ProfileMode::Mpi) {
      profiler::MpiLaunchHooks hooks;
      const std::uint32_t n = req.plan.world_size;
      const std::uint32_t gpn = spec.project.cluster.gpus_per_node;
      hooks.inputs_dir = (fs::path(dir) / "inputs").string();
      hooks.prepare = [this, n, gpn, dir, &rt](const std::vector<std::string>& engine, const std::string&) {
        return profiler::prepareAgentLaunch(config_, n, gpn, dir, engine, rt.scheduler);
      };
      hooks.stderr_line = [&rt](const std::string& line) {
        const std::lock_guard lock(rt.mutex);
        rt.stderr_tail.push_back(line);
        if (rt.stderr_tail.size() > kStderrTail) rt.stderr_tail.erase(rt.stderr_tail.begin());
      };
      hooks.exited = [&rt, sbatch, dir](const profiler::EngineLaunchOutcome& o) {
        const std::lock_guard lock(rt.mutex);
        rt.exit_code = o.exit_code;
        if (sbatch) rt.stderr_tail = profiler::fileTail((fs::path(dir) / "engine.err").string(), kStderrTail);
      };
      req.mpi_hooks = std::move(hooks);
    }
    ProgressThrottle throttle;
    const auto progress = [&](const profiler::ProfileProgress& p) {
      using Kind = profiler::ProfileProgress::Kind;
      if (p.kind == Kind::EngineOutput) {
        if (sbatch && rt.scheduler->get().empty())
          if (auto job = profiler::parseSbatchJobId(p.text)) {
            rt.scheduler->set(*job);
            QMetaObject::invokeMethod(
                this, [this, id, job = *job] { noteSchedulerJob(id, job); }, Qt::QueuedConnection);
          }
        return;
      }
      if (p.kind == Kind::End || !throttle.admit(p.kind != Kind::Step)) return;  // the job's end says the rest
      progressFromThread(id, proto::JobProgress{p.stage, p.done, p.total, p.text}, {});
    };
    auto outcome = profiler::runProfile(req, progress, &rt.cancel);
    std::int64_t run = 0;
    if (outcome) {
      ended.state = proto::JobState::Complete;
      run = static_cast<std::int64_t>(outcome->run);
    } else {
      ended.state =
          outcome.error().kind == core::ErrorKind::Cancelled ? proto::JobState::Cancelled : proto::JobState::Failed;
      ended.error = outcome.error().message;
      run = newestRun(req.store);
    }
    if (run > 0) {
      auto snap = snapshotRun(dir, run);
      if (snap) {
        file = *snap;
      } else if (ended.state == proto::JobState::Complete) {
        ended.state = proto::JobState::Failed;
        ended.error = "the run finished but its snapshot failed: " + snap.error().message;
      }
    }
    ended.run = run;
  }
  {
    const std::lock_guard lock(rt.mutex);
    ended.exit_code = rt.exit_code;
    if (ended.state == proto::JobState::Failed) ended.stderr_tail = rt.stderr_tail;
  }
  QMetaObject::invokeMethod(
      this, [this, id, ended, file] { finish(id, ended, file); }, Qt::QueuedConnection);
}

void JobManager::noteSchedulerJob(const std::string& id, const std::string& scheduler_job) {
  const auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  it->second.info.scheduler_job = scheduler_job;
  it->second.info.progress.stage = "queued in slurm (job " + scheduler_job + ")";
  (void)save(it->second);
  emit jobChanged(it->second.info);
}

void JobManager::finish(const std::string& id, const proto::JobInfo& ended, const RunFile& file) {
  if (const auto rt = running_.find(id); rt != running_.end()) {
    if (rt->second->thread.joinable()) rt->second->thread.join();
    running_.erase(rt);
  }
  Job& job = jobs_.at(id);
  job.info.state = ended.state;
  job.info.finished = core::utcNowIso8601();
  job.info.error = ended.error;
  job.info.exit_code = ended.exit_code;
  job.info.stderr_tail = ended.stderr_tail;
  job.info.run = ended.run;
  if (ended.group_size != 0) job.info.group_size = ended.group_size;
  job.info.progress.text = std::string(proto::toString(ended.state));
  job.run_file = file;
  (void)save(job);
  emit jobChanged(job.info);
  startQueued();
}

std::string JobManager::recoverOne(const std::string& path) {
  auto j = core::readJsonFile(path);
  if (!j) return "skipped " + path + ": " + j.error().message;
  if (!j->is_object() || !j->contains("info") || !j->contains("spec"))
    return "skipped " + path + ": not a " + kJobSchema + " record";
  auto info = proto::parseJobInfo((*j)["info"], path, "/info");
  if (!info) return "skipped " + path + ": " + info.error().message;
  auto spec = proto::parseJobSpec((*j)["spec"], path, "/spec");
  if (!spec) return "skipped " + path + ": " + spec.error().message;
  Job job{*info, *spec, {}};
  const std::string dir = fs::path(path).parent_path().string();
  if (job.info.job != fs::path(dir).filename().string())
    return "skipped " + path + ": it names job " + job.info.job + ", not its folder's";
  if (j->contains("run_file"))
    job.run_file =
        RunFile{(fs::path(dir) / "run.sqlite").string(), (*j)["run_file"].value("size", std::uint64_t{0}),
                (*j)["run_file"].value("sha256", std::string()), (*j)["run_file"].value("run", std::int64_t{0})};
  std::string note;
  if (job.info.state == proto::JobState::Running) {
    const std::string store = (fs::path(dir) / "store.sqlite").string();
    job.info.state = proto::JobState::Failed;
    job.info.finished = core::utcNowIso8601();
    job.info.error = "the agent stopped while this job ran";
    if (!job.info.scheduler_job.empty())
      job.info.error +=
          "; Slurm job " + job.info.scheduler_job + " may still run (scancel " + job.info.scheduler_job + ")";
    job.info.run = newestRun(store);
    if (job.info.run > 0) {
      if (auto s = st::openStore(store, st::OpenMode::ReadWrite))
        (void)s->failStaleRun(st::RunId{job.info.run}, job.info.error);
      if (auto snap = snapshotRun(dir, job.info.run)) job.run_file = *snap;
    }
    note = "job " + job.info.job + " was running when the agent stopped: marked failed";
  } else if (proto::finished(job.info.state) && job.info.run > 0 &&
             (job.run_file.sha256.empty() || !fs::exists(job.run_file.path))) {
    if (auto snap = snapshotRun(dir, job.info.run)) job.run_file = *snap;
    note = "job " + job.info.job + ": its run file was written again";
  }
  if (job.info.state == proto::JobState::Queued) {
    queue_.push_back(job.info.job);
    note = "job " + job.info.job + " was queued: queued again";
  }
  (void)save(job);
  const std::string id = job.info.job;
  jobs_.emplace(id, std::move(job));
  return note;
}

core::Result<std::vector<std::string>> JobManager::recover() {
  std::vector<std::string> notes;
  const fs::path root = fs::path(config_.store_dir) / "jobs";
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) return core::Error{"cannot create " + root.string() + ": " + ec.message(), core::ErrorKind::Io};
  std::vector<std::pair<std::uint64_t, std::string>> found;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (!proto::validJobId(name)) continue;
    found.emplace_back(std::stoull(name.substr(1)), name);
  }
  std::sort(found.begin(), found.end());
  for (const auto& [number, name] : found) {
    next_number_ = std::max(next_number_, number + 1);
    const fs::path record = root / name / "job.json";
    if (!fs::exists(record, ec)) continue;  // a submit killed before its record: nothing was promised
    const std::string note = recoverOne(record.string());
    if (!note.empty()) notes.push_back(note);
    if (jobs_.count(name) != 0) order_.push_back(name);
  }
  if (!queue_.empty())
    QMetaObject::invokeMethod(
        this, [this] { startQueued(); }, Qt::QueuedConnection);
  return notes;
}

}  // namespace shardscope::app::agent
