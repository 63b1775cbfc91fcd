#include "job_manager.h"

#include <algorithm>
#include <filesystem>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QFile>
#include <QMetaObject>

#include "agent_log.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/protocol/safe_text.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/core/summary.h"
#include "shardscope/core/time_text.h"
#include "shardscope/profiler/agent/agent_launch.h"
#include "shardscope/profiler/agent/progress_throttle.h"
#include "shardscope/profiler/engine/gpu_devices.h"
#include "shardscope/profiler/workflow/profile_run.h"

namespace shardscope::app::agent {

namespace {
namespace fs = std::filesystem;
namespace st = core::store;

constexpr std::size_t kStderrTail = 40;

JobManager::Refusal refusal(proto::ErrorCode code, std::string message) {
  return {code, core::Error{std::move(message), core::ErrorKind::Usage}};
}

// Owner read and write only: a job's folder and the files the agent writes in it.
void ownerOnly(const std::string& path, bool folder) {
  std::error_code ec;
  fs::permissions(path, folder ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace, ec);
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
  ownerOnly(temp, false);
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
  std::uint64_t peak_resident_bytes = 0;
};

JobManager::JobManager(profiler::AgentConfig config, core::ClusterSpec cluster, QObject* parent)
    : QObject(parent),
      config_(std::move(config)),
      cluster_(std::move(cluster)),
      ledger_(std::make_shared<profiler::ResidentLedger>(config_.limits.total_memory_bytes)) {
  if (auto gpus = profiler::queryGpuDevices()) local_gpus_ = gpus->size();
}

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
  const std::string path = (fs::path(jobDir(job.info.job)) / "job.json").string();
  auto written = core::writeFileAtomic(path, profiler::jobRecordText(job));
  ownerOnly(path, false);
  return written;
}

std::uint64_t JobManager::reservedMemory() const {
  std::uint64_t sum = 0;
  for (const auto& id : queue_) sum += jobs_.at(id).memory;
  for (const auto& [id, rt] : running_) sum += jobs_.at(id).memory;
  return sum;
}

namespace {
// "emulate x4 M=2 \"label\"" for the log (the label is the client's).
std::string jobLogText(const proto::JobInfo& info) {
  return info.mode + " x" + std::to_string(info.world_size) + " M=" + std::to_string(info.group_size) + " \"" +
         logSafe(info.label) + "\"";
}
}  // namespace

std::variant<proto::JobInfo, JobManager::Refusal> JobManager::submit(const proto::JobSpec& spec,
                                                                     const std::string& owner) {
  const auto refused = [&owner](Refusal r) {
    logLine("submit by " + owner + " refused: " + logSafe(r.error.message, 400));
    return r;
  };
  if (auto r = profiler::checkJobRequest(spec, config_, queue_.size() + running_.size(), local_gpus_))
    return refused(*r);
  auto admitted = profiler::admitJob(spec, config_, cluster_, reservedMemory());
  if (auto* r = std::get_if<Refusal>(&admitted)) return refused(*r);
  profiler::Admission& a = std::get<profiler::Admission>(admitted);
  Job job;
  job.spec = std::move(a.spec);
  job.owner = owner;
  job.memory = a.memory.bytes;
  job.info.job = nextId();
  while (jobs_.count(job.info.job) != 0) job.info.job = nextId();
  job.info.label = spec.label;
  job.info.model = spec.project.model.name;
  job.info.state = proto::JobState::Queued;
  job.info.mode = spec.mode == proto::JobMode::Mpi ? "mpi" : "emulate";
  job.info.launcher = spec.mode == proto::JobMode::Mpi ? profiler::toString(config_.launcher) : "in-process";
  job.info.world_size = job.spec.project.cluster.worldSize();
  job.info.group_size = job.spec.plan ? job.spec.plan->sharding_group_size : 0;
  job.info.created = core::utcNowIso8601();
  job.info.progress.stage = "queued";
  const std::string dir = jobDir(job.info.job);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return refused(
        {proto::ErrorCode::Internal, core::Error{"cannot create " + dir + ": " + ec.message(), core::ErrorKind::Io}});
  ownerOnly(dir, true);
  if (auto s = save(job); !s) return refused({proto::ErrorCode::Internal, s.error()});
  const std::string id = job.info.job;
  std::string note;
  if (spec.project.cluster.worldSize() != job.info.world_size)
    note = "; the spec's cluster of " + std::to_string(spec.project.cluster.worldSize()) +
           " GPUs is replaced by this agent's";
  logLine("job " + id + " submitted by " + owner + ": " + jobLogText(job.info) + ", estimated " +
          core::formatBytes(job.memory) + note);
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
    logLine("job " + id + " cancelled before it started");
  } else if (const auto rt = running_.find(id); rt != running_.end()) {
    rt->second->cancel = true;
    job.info.progress.text = "cancelling";
    emit jobChanged(job.info);
    logLine("job " + id + ": cancelling");
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
  logLine("job " + id + " started (" + job.owner + ")");
  auto rt = std::make_unique<Runtime>();
  Runtime* r = rt.get();
  running_[id] = std::move(rt);
  ledger_->add(id);
  r->thread = std::thread([this, id, dir = jobDir(id), spec = job.spec, r] { runJob(id, dir, spec, *r); });
}

void JobManager::runJob(const std::string& id, const std::string& dir, const proto::JobSpec& spec, Runtime& rt) {
  profiler::ProfileRequest req = profiler::jobProfileRequest(spec, dir, config_);
  proto::JobInfo ended;
  auto plan = spec.plan ? core::Result<core::ShardPlan>(*spec.plan) : profiler::plannedProfilePlan(req, spec.grid);
  RunFile file;
  if (!plan) {
    ended.state = proto::JobState::Failed;
    ended.error = "planning failed: " + plan.error().message;
  } else {
    req.plan = std::move(plan).value();
    ended.group_size = req.plan.sharding_group_size;
    const bool sbatch = req.mode == profiler::ProfileMode::Mpi && config_.launcher == profiler::LauncherKind::Sbatch;
    profiler::MpiLaunchHooks hooks;
    const std::uint32_t n = req.plan.world_size;
    const std::uint32_t gpn = spec.project.cluster.gpus_per_node;
    hooks.inputs_dir = (fs::path(dir) / "inputs").string();
    hooks.prepare = [this, &req, &spec, id, n, gpn, dir, &rt](
                        const std::vector<std::string>& engine,
                        const std::string&) -> core::Result<profiler::PreparedLaunch> {
      profiler::PreparedLaunch p{engine, {}};
      p.options.limits = profiler::jobProcessLimits(config_, spec, id, ledger_);
      if (req.mode == profiler::ProfileMode::Emulate) return p;  // the engine itself, no launcher
      auto launch = profiler::prepareAgentLaunch(config_, n, gpn, dir, engine, rt.scheduler);
      if (launch) launch->options.limits = p.options.limits;
      return launch;
    };
    hooks.stderr_line = [&rt](const std::string& line) {
      const std::lock_guard lock(rt.mutex);
      rt.stderr_tail.push_back(proto::quoteText(line, 400));  // a launcher's bytes: any, not only UTF-8
      if (rt.stderr_tail.size() > kStderrTail) rt.stderr_tail.erase(rt.stderr_tail.begin());
    };
    hooks.exited = [&rt, sbatch, dir](const profiler::EngineLaunchOutcome& o) {
      const std::lock_guard lock(rt.mutex);
      rt.exit_code = o.exit_code;
      rt.peak_resident_bytes = o.peak_resident_bytes;
      if (sbatch) {
        rt.stderr_tail = profiler::fileTail((fs::path(dir) / "engine.err").string(), kStderrTail);
        for (std::string& l : rt.stderr_tail) l = proto::quoteText(l, 400);
      }
    };
    req.mpi_hooks = std::move(hooks);
    profiler::ProgressThrottle throttle;
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
      if (run > 0)  // a child killed before it said its run leaves it running in the store
        if (auto s = st::openStore(req.store, st::OpenMode::ReadWrite))
          (void)s->failStaleRun(st::RunId{run}, ended.error);
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
  std::uint64_t peak = 0;
  if (const auto rt = running_.find(id); rt != running_.end()) {
    if (rt->second->thread.joinable()) rt->second->thread.join();
    peak = rt->second->peak_resident_bytes;
    running_.erase(rt);
  }
  ledger_->remove(id);
  Job& job = jobs_.at(id);
  job.info.state = ended.state;
  job.info.finished = core::utcNowIso8601();
  job.info.error = ended.error;
  // Cancelled because the agent is stopping, not by a client.
  if (stopping_ && ended.state == proto::JobState::Cancelled)
    job.info.error = "cancelled: the agent stopped (SIGTERM or SIGINT) while this job ran";
  job.info.exit_code = ended.exit_code;
  job.info.stderr_tail = ended.stderr_tail;
  job.info.run = ended.run;
  if (ended.group_size != 0) job.info.group_size = ended.group_size;
  job.info.progress.text = std::string(proto::toString(ended.state));
  job.run_file = file;
  (void)save(job);
  emit jobChanged(job.info);
  logLine("job " + id + " " + std::string(proto::toString(job.info.state)) + " (" + job.owner + ")" +
          (peak > 0 ? ", its processes' most resident memory as sampled " + core::formatBytes(peak) : "") +
          (job.info.error.empty() ? "" : ": " + logSafe(job.info.error, 400)));
  startQueued();
}

std::string JobManager::recoverOne(const std::string& path) {
  auto record = profiler::loadJobRecord(path);
  if (!record) return "skipped " + record.error().message;
  Job job{std::move(record).value(), 0};
  const std::string dir = fs::path(path).parent_path().string();
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
  if (job.info.state == proto::JobState::Queued) {  // admitted again: the config may have changed since
    auto admitted = profiler::admitJob(job.spec, config_, cluster_, reservedMemory());
    if (auto* a = std::get_if<profiler::Admission>(&admitted)) {
      job.spec = std::move(a->spec);
      job.memory = a->memory.bytes;
      queue_.push_back(job.info.job);
      note = "job " + job.info.job + " was queued: queued again";
    } else {
      job.info.state = proto::JobState::Failed;
      job.info.finished = core::utcNowIso8601();
      job.info.error = "refused when the agent started again: " + std::get<Refusal>(admitted).error.message;
      note = "job " + job.info.job + " was queued: " + job.info.error;
    }
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
