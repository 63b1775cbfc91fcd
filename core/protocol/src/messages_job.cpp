// The agent protocol's job messages: a job spec (what a client asks to run;
// the agent reads no file a client names, so a project's parts are inline or
// built-in presets), job info (what the agent says of a job) and the submit,
// job, jobs and progress messages that carry them.
#include <algorithm>
#include <array>
#include <limits>

#include "message_fields.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"

namespace shardscope::core::protocol {

using detail::childPath;
using detail::JsonReader;
using json = nlohmann::json;

namespace {

constexpr std::array<std::string_view, 5> kJobStates = {"queued", "running", "complete", "failed", "cancelled"};
constexpr std::array<std::string_view, 2> kJobModes = {"emulate", "mpi"};
constexpr std::array<std::string_view, 2> kJobDevices = {"cpu", "cuda"};
constexpr std::array<std::string_view, 4> kJobLaunchers = {"in-process", "mpirun", "srun", "sbatch"};

}  // namespace

std::string_view toString(JobState s) { return kJobStates.at(static_cast<std::size_t>(s)); }

bool finished(JobState s) { return s == JobState::Complete || s == JobState::Failed || s == JobState::Cancelled; }

// ---- job spec ---------------------------------------------------------------

json toJson(const JobSpec& spec) {
  json j;
  j["label"] = spec.label;
  j["project"] = json(core::toJson(spec.project));
  if (spec.plan) j["plan"] = json(core::toJson(*spec.plan));
  if (spec.grid) j["grid"] = *spec.grid;
  if (spec.nodes) j["nodes"] = *spec.nodes;
  j["mode"] = kJobModes.at(static_cast<std::size_t>(spec.mode));
  j["device"] = kJobDevices.at(static_cast<std::size_t>(spec.device));
  j["steps"] = spec.steps;
  j["warmup"] = spec.warmup;
  j["seed"] = spec.seed;
  j["batch"] = spec.batch;
  j["sync_interval"] = spec.sync_interval;
  j["trace_spans"] = spec.trace_spans;
  j["all_groups"] = spec.all_groups;
  return j;
}

namespace {

// Everything of a spec but its project and plan.
void readSpecOptions(JsonReader& r, const json& j, const std::string& path, JobSpec& spec) {
  if (auto s = detail::label(r, j, path, "label", false)) spec.label = *s;
  if (auto w = detail::word(r, j, path, "mode", false, kJobModes)) spec.mode = static_cast<JobMode>(*w);
  if (auto w = detail::word(r, j, path, "device", false, kJobDevices)) spec.device = static_cast<JobDevice>(*w);
  const auto u32 = [&](std::string_view key, std::uint64_t min, std::uint64_t max, std::uint32_t& out) {
    if (auto x = detail::whole(r, j, path, key, false, min, max)) out = static_cast<std::uint32_t>(*x);
  };
  u32("steps", 1, kMaxJobSteps, spec.steps);
  u32("warmup", 0, kMaxJobWarmup, spec.warmup);
  if (auto x = detail::whole(r, j, path, "seed", false, 1, kMaxJobSeed)) spec.seed = *x;
  u32("batch", 0, kMaxBatchPerGpu, spec.batch);
  u32("sync_interval", 0, kMaxSyncInterval, spec.sync_interval);
  if (auto b = r.boolean(j, path, "trace_spans", false)) spec.trace_spans = *b;
  if (auto b = r.boolean(j, path, "all_groups", false)) spec.all_groups = *b;
  if (auto x = detail::whole(r, j, path, "grid", false, 1, kMaxWorldSize)) spec.grid = static_cast<std::uint32_t>(*x);
  if (auto x = detail::whole(r, j, path, "nodes", false, 1, kMaxWorldSize)) spec.nodes = static_cast<std::uint32_t>(*x);
}

std::string presetList(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// A project's model and cluster are inline objects or built-in preset names,
// its calibration and constraints inline objects: never names of files, which
// projectFromJson would read on the agent's host.
void checkProjectParts(JsonReader& r, const json& project, const std::string& path) {
  const auto part = [&](std::string_view key, std::string_view what, const std::vector<std::string>& presets) {
    const auto it = project.find(key);
    if (it == project.end() || it->is_object()) return;
    if (it->is_string() && std::ranges::find(presets, it->get_ref<const std::string&>()) != presets.end()) return;
    r.fail(childPath(path, key), "expected an inline " + std::string(what) + " object or a built-in preset name (" +
                                     presetList(presets) + "), got " + detail::describe(*it) +
                                     " (the agent reads no file a client names)");
  };
  part("model", "shardscope.model/1", modelPresetNames());
  part("cluster", "shardscope.cluster/1", clusterPresetNames());
  for (const std::string_view key : {"calibration", "constraints"}) {
    const auto it = project.find(key);
    if (it != project.end() && it->is_string())
      r.fail(childPath(path, key), "expected an inline object or null, got " + detail::describe(*it) +
                                       " (the agent reads no file a client names)");
  }
}

// The project at `path` (checked by checkProjectParts); its trace store is the
// agent's business, so a client's is dropped unread.
Result<Project> readProject(const json& project, const std::string& source, const std::string& path) {
  const json* read = &project;
  json without_store;
  if (project.contains("trace_store")) {
    without_store = project;
    without_store.erase("trace_store");
    read = &without_store;
  }
  auto p = projectFromJson(*read, source);
  if (!p) return detail::prefixed(p.error(), source, path);
  return p;
}

// What the plan or grid must agree on with the project's cluster.
void checkAgainstCluster(JsonReader& r, const JobSpec& spec, const std::string& path) {
  const std::uint32_t world = spec.project.cluster.worldSize();
  if (spec.plan && spec.plan->world_size != world)
    r.fail(childPath(childPath(path, "plan"), "world_size"), "expected the cluster's world size " +
                                                                 std::to_string(world) + ", got " +
                                                                 std::to_string(spec.plan->world_size));
  if (spec.grid && spec.plan)
    r.fail(childPath(path, "grid"), "expected no grid with a plan (the plan's grid is the one that runs)");
  else if (spec.grid && (world == 0 || world % *spec.grid != 0))
    r.fail(childPath(path, "grid"),
           "expected a divisor of the cluster's " + std::to_string(world) + " GPUs, got " + std::to_string(*spec.grid));
}

}  // namespace

Result<JobSpec> parseJobSpec(const json& j, const std::string& source, const std::string& path) {
  JsonReader r(source);
  JobSpec spec;
  if (!r.expectObject(j, path)) return r.error();
  readSpecOptions(r, j, path, spec);
  const std::string project_path = childPath(path, "project");
  const json* project = detail::object(r, j, path, "project", true);
  if (project) checkProjectParts(r, *project, project_path);
  const json* plan = detail::object(r, j, path, "plan", false);
  if (!r.ok()) return r.error();
  auto p = readProject(*project, source, project_path);
  if (!p) return p.error();
  spec.project = std::move(p).value();
  // Names every client of the agent is shown (job info, the runs): safe text, as the label.
  detail::checkSafeName(r, spec.project.name, childPath(project_path, "name"), "a project name");
  detail::checkSafeName(r, spec.project.model.name, childPath(childPath(project_path, "model"), "name"),
                        "a model name");
  if (plan) {
    auto sp = planFromJson(*plan, source);
    if (!sp) return detail::prefixed(sp.error(), source, childPath(path, "plan"));
    spec.plan = std::move(sp).value();
  }
  checkAgainstCluster(r, spec, path);
  if (!r.ok()) return r.error();
  return spec;
}

json toJson(const SubmitRequest& m) {
  json j = detail::messageHead("submit", m.id);
  j["job"] = toJson(m.job);
  return j;
}

Result<SubmitRequest> parseSubmitRequest(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "submit"); !s) return s.error();
  JsonReader r(source);
  SubmitRequest q;
  q.id = detail::requestId(r, m);
  const json* job = r.member(m, "", "job", true, "a job spec (an object)");
  if (!r.ok()) return r.error();
  auto spec = parseJobSpec(*job, source, "/job");
  if (!spec) return spec.error();
  q.job = std::move(spec).value();
  return q;
}

// ---- job info ---------------------------------------------------------------

namespace {

json toJson(const JobProgress& p) {
  return {{"stage", p.stage}, {"done", p.done}, {"total", p.total}, {"text", p.text}};
}

void readProgress(JsonReader& r, const json& obj, const std::string& path, JobProgress& p) {
  const json* v = detail::object(r, obj, path, "progress", true);
  if (!v) return;
  const std::string ppath = childPath(path, "progress");
  if (auto s = detail::text(r, *v, ppath, "stage", true)) p.stage = *s;
  if (auto x = detail::whole(r, *v, ppath, "done", true, 0, kMaxMessageInteger)) p.done = *x;
  if (auto x = detail::whole(r, *v, ppath, "total", true, 0, kMaxMessageInteger)) p.total = *x;
  if (auto s = detail::text(r, *v, ppath, "text", true)) p.text = *s;
}

void readJobInfo(JsonReader& r, const json& j, const std::string& path, JobInfo& info) {
  if (!r.expectObject(j, path)) return;
  if (auto s = detail::jobId(r, j, path, "job")) info.job = *s;
  if (auto s = detail::label(r, j, path, "label", true)) info.label = *s;
  if (auto s = detail::text(r, j, path, "model", false)) info.model = *s;
  if (auto w = detail::word(r, j, path, "state", true, kJobStates)) info.state = static_cast<JobState>(*w);
  if (auto w = detail::word(r, j, path, "mode", true, kJobModes)) info.mode = kJobModes.at(*w);
  if (auto w = detail::word(r, j, path, "launcher", true, kJobLaunchers)) info.launcher = kJobLaunchers.at(*w);
  if (auto x = detail::whole(r, j, path, "world_size", true, 0, kMaxWorldSize))
    info.world_size = static_cast<std::uint32_t>(*x);
  if (auto x = detail::whole(r, j, path, "group_size", true, 0, kMaxWorldSize))
    info.group_size = static_cast<std::uint32_t>(*x);
  if (auto s = detail::text(r, j, path, "created", true)) info.created = *s;
  if (auto s = detail::text(r, j, path, "started", true)) info.started = *s;
  if (auto s = detail::text(r, j, path, "finished", true)) info.finished = *s;
  readProgress(r, j, path, info.progress);
  if (auto x = detail::signedWhole(r, j, path, "run", true, 0, static_cast<std::int64_t>(kMaxMessageInteger)))
    info.run = *x;
  if (auto s = detail::text(r, j, path, "scheduler_job", true)) info.scheduler_job = *s;
  if (auto x = detail::signedWhole(r, j, path, "exit_code", true, INT32_MIN, INT32_MAX))
    info.exit_code = static_cast<std::int32_t>(*x);
  if (auto s = detail::text(r, j, path, "error", true)) info.error = *s;
  const std::string tpath = childPath(path, "stderr_tail");
  if (const json* tail = detail::array(r, j, path, "stderr_tail", true)) {
    for (std::size_t i = 0; i < tail->size(); ++i) {
      if ((*tail)[i].is_string())
        info.stderr_tail.push_back((*tail)[i].get<std::string>());
      else
        r.fail(childPath(tpath, i), "expected a line of text, got " + detail::describe((*tail)[i]));
    }
  }
}

}  // namespace

json toJson(const JobInfo& info) {
  json j;
  j["job"] = info.job;
  j["label"] = info.label;
  j["model"] = info.model;
  j["state"] = toString(info.state);
  j["mode"] = info.mode;
  j["launcher"] = info.launcher;
  j["world_size"] = info.world_size;
  j["group_size"] = info.group_size;
  j["created"] = info.created;
  j["started"] = info.started;
  j["finished"] = info.finished;
  j["progress"] = toJson(info.progress);
  j["run"] = info.run;
  j["scheduler_job"] = info.scheduler_job;
  j["exit_code"] = info.exit_code;
  j["error"] = info.error;
  j["stderr_tail"] = info.stderr_tail;
  return j;
}

Result<JobInfo> parseJobInfo(const json& j, const std::string& source, const std::string& path) {
  JsonReader r(source);
  JobInfo info;
  readJobInfo(r, j, path, info);
  if (!r.ok()) return r.error();
  return info;
}

// ---- job, jobs, progress ----------------------------------------------------

json toJson(const JobMessage& m) {
  json j = detail::messageHead("job", m.id);
  j["job"] = toJson(m.info);
  return j;
}

json toJson(const JobList& m) {
  json j = detail::messageHead("jobs", m.id);
  json jobs = json::array();
  for (const auto& info : m.jobs) jobs.push_back(toJson(info));
  j["jobs"] = std::move(jobs);
  return j;
}

json toJson(const ProgressEvent& m) {
  json j = detail::messageHead("progress", m.id);
  j["job"] = m.job;
  j["progress"] = toJson(m.progress);
  if (!m.step_ms.empty()) j["step_ms"] = m.step_ms;
  return j;
}

Result<JobMessage> parseJobMessage(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "job"); !s) return s.error();
  JsonReader r(source);
  JobMessage out;
  out.id = detail::answerId(r, m);
  if (const json* info = r.member(m, "", "job", true, "job info (an object)")) readJobInfo(r, *info, "/job", out.info);
  if (!r.ok()) return r.error();
  return out;
}

Result<JobList> parseJobList(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "jobs"); !s) return s.error();
  JsonReader r(source);
  JobList out;
  out.id = detail::answerId(r, m);
  if (const json* jobs = detail::array(r, m, "", "jobs", true)) {
    out.jobs.resize(jobs->size());
    for (std::size_t i = 0; i < jobs->size(); ++i) readJobInfo(r, (*jobs)[i], childPath("/jobs", i), out.jobs[i]);
  }
  if (!r.ok()) return r.error();
  return out;
}

Result<ProgressEvent> parseProgressEvent(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "progress"); !s) return s.error();
  JsonReader r(source);
  ProgressEvent out;
  out.id = detail::answerId(r, m);
  if (auto s = detail::jobId(r, m, "", "job")) out.job = *s;
  readProgress(r, m, "", out.progress);
  if (const json* steps = detail::array(r, m, "", "step_ms", false)) {
    if (steps->size() > kMaxWorldSize)
      r.fail("/step_ms",
             "expected at most " + std::to_string(kMaxWorldSize) + " ranks, got " + std::to_string(steps->size()));
    for (std::size_t i = 0; i < steps->size() && i < kMaxWorldSize; ++i) {
      if (auto x = r.numberValue((*steps)[i], childPath("/step_ms", i), 0, std::numeric_limits<double>::infinity()))
        out.step_ms.push_back(*x);
    }
  }
  if (!r.ok()) return r.error();
  return out;
}

}  // namespace shardscope::core::protocol
