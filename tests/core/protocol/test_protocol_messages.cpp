// The agent protocol's messages: every message survives toJson -> frame ->
// parse unchanged; every malformed member is refused with the JSON path of
// that member; a job spec never names a file the agent would read; base64
// follows RFC 4648 exactly.
#include <QtTest>

#include <chrono>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/protocol/safe_text.h"

using namespace shardscope::core;
using namespace shardscope::core::protocol;
using nlohmann::json;

namespace {

const std::string kSource = "client 127.0.0.1";
constexpr std::uint64_t kTwoTo53 = std::uint64_t{1} << 53;

// What a peer receives of `m`: framed, decoded, its envelope checked.
json wire(const json& m) {
  FrameDecoder d;
  d.feed(encodeFrame(m).value());
  auto got = d.next();
  if (!got || !*got) qFatal("a message did not come through its frame");
  return **got;
}

json set(json m, const std::string& pointer, json value) {
  m[json::json_pointer(pointer)] = std::move(value);
  return m;
}

json without(json m, const std::string& pointer) {
  const json::json_pointer p(pointer);
  m[p.parent_pointer()].erase(p.back());
  return m;
}

std::string randomBytes(std::size_t n, std::mt19937& rng) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

json projectJson(const std::string& model = "dcnv2", const std::string& cluster = "h100x8") {
  return {{"schema", "shardscope.project/1"}, {"name", "p"}, {"model", model}, {"cluster", cluster}};
}

json specJson(json project = projectJson()) { return {{"label", "nightly"}, {"project", std::move(project)}}; }

json submitJson(json spec = specJson()) { return {{"v", 1}, {"type", "submit"}, {"id", 9}, {"job", std::move(spec)}}; }

ShardPlan strided32Plan() { return loadPlan(SHARDSCOPE_TEST_DATA_DIR "/plans/strided_8x4.json").value(); }

JobSpec gridSpec() {
  JobSpec s;
  s.label = "nightly dcnv2 \xe2\x9c\x93";
  s.project = defaultProject();
  s.project.cluster = clusterPreset("h100x8").value();
  s.project.sync_interval = 4;
  s.grid = 4;
  s.mode = JobMode::Mpi;
  s.device = JobDevice::Cuda;
  s.steps = 77;
  s.warmup = 3;
  s.seed = kTwoTo53;
  s.batch = 4096;
  s.sync_interval = 8;
  s.trace_spans = false;
  s.all_groups = true;
  return s;
}

JobSpec planSpec() {
  JobSpec s;
  s.label = "with a plan";
  s.project = defaultProject();
  s.project.cluster = resizedCluster(s.project.cluster, 32);
  s.plan = strided32Plan();
  return s;
}

JobInfo sampleInfo(const std::string& job, JobState state) {
  JobInfo i;
  i.job = job;
  i.label = "nightly";
  i.model = "DLRM-DCNv2";
  i.state = state;
  i.mode = "mpi";
  i.launcher = "sbatch";
  i.world_size = 64;
  i.group_size = 8;
  i.created = "2026-12-04T10:00:00Z";
  i.started = "2026-12-04T10:00:05Z";
  i.finished = "2026-12-04T10:03:00Z";
  i.progress = {"mpi x64", 40, 50, "step 40 of 50"};
  i.run = 3;
  i.scheduler_job = "123456";
  i.exit_code = 137;
  i.error = "killed";
  i.stderr_tail = {"srun: error: node7", "Killed"};
  return i;
}

json descriptionJson() {
  Description d;
  d.agent = "shardscope-agent 0.1.0 on node1";
  d.hosts = {{"node1", 64, 1u << 30, {{0, "H100", 80u << 20}}}};
  d.engine_version = "0.1.0";
  d.launcher = "mpirun";
  d.modes = {"emulate", "mpi"};
  d.cluster = clusterPreset("h100x8").value();
  d.max_ranks = 8;
  d.max_steps = 1000;
  d.max_jobs = 2;
  return toJson(d);
}

json chunkJson() {
  return {{"v", 1},        {"type", "chunk"}, {"id", 4},  {"job", "j1"},
          {"offset", 3},   {"total", 6},      {"run", 1}, {"sha256", std::string(64, 'a')},
          {"data", "Zm9v"}};
}

template <class T>
std::optional<Error> errorOf(const Result<T>& r) {
  if (r) return std::nullopt;
  return r.error();
}

// The parsers, each as a function that gives the error of a message it refuses.
template <class T, Result<T> (*Parse)(const json&, const std::string&)>
std::optional<Error> refusal(const json& m) {
  return errorOf(Parse(m, kSource));
}
constexpr auto hello = refusal<Hello, parseHello>;
constexpr auto welcome = refusal<Welcome, parseWelcome>;
constexpr auto describe = refusal<DescribeRequest, parseDescribeRequest>;
constexpr auto description = refusal<Description, parseDescription>;
constexpr auto submit = refusal<SubmitRequest, parseSubmitRequest>;
constexpr auto request = refusal<JobRequest, parseJobRequest>;
constexpr auto list = refusal<ListRequest, parseListRequest>;
constexpr auto job = refusal<JobMessage, parseJobMessage>;
constexpr auto jobs = refusal<JobList, parseJobList>;
constexpr auto progress = refusal<ProgressEvent, parseProgressEvent>;
constexpr auto fetch = refusal<FetchRequest, parseFetchRequest>;
constexpr auto chunk = refusal<Chunk, parseChunk>;
constexpr auto error = refusal<ErrorMessage, parseErrorMessage>;

// A message a parser must refuse, and the JSON path its error must name.
struct Case {
  std::optional<Error> (*parse)(const json&);
  json message;
  std::string path;
};

// Request ids, hello, welcome, description.
std::vector<Case> helloAndDescriptionCases() {
  const json h = toJson(Hello{1, "cli", "token"});
  const json d = descriptionJson();
  const json s = submitJson();
  const json w = toJson(JobRequest{2, "j7"}, "watch");
  const json f = toJson(FetchRequest{5, "j7", 0, 1024});
  return {
      // request ids: required, 1..2^53-1, a whole number
      {hello, without(h, "/id"), "/id"},
      {hello, set(h, "/id", 0), "/id"},
      {hello, set(h, "/id", kTwoTo53), "/id"},
      {hello, set(h, "/id", -1), "/id"},
      {hello, set(h, "/id", 1.0), "/id"},
      {hello, set(h, "/id", "1"), "/id"},
      {hello, set(h, "/id", true), "/id"},
      {describe, toJson(DescribeRequest{}), "/id"},
      {list, set(toJson(ListRequest{1}), "/id", kTwoTo53), "/id"},
      {submit, set(s, "/id", 0), "/id"},
      {fetch, without(f, "/id"), "/id"},
      {request, set(w, "/id", nullptr), "/id"},
      // hello, welcome
      {hello, set(h, "/token", std::string(kMaxTokenBytes + 1, 't')), "/token"},
      {hello, set(h, "/token", 5), "/token"},
      {hello, without(h, "/token"), "/token"},
      {hello, set(h, "/client", ""), "/client"},
      {welcome, set(toJson(Welcome{1, "agent", "host"}), "/id", -1), "/id"},
      {welcome, set(toJson(Welcome{1, "agent", "host"}), "/host", 3), "/host"},
      // description
      {description, set(d, "/hosts/0/cpus", -1), "/hosts/0/cpus"},
      {description, set(d, "/hosts/0/gpus/0/index", 1.5), "/hosts/0/gpus/0/index"},
      {description, set(d, "/hosts/0/gpus/0/memory_bytes", "80GB"), "/hosts/0/gpus/0/memory_bytes"},
      {description, set(d, "/hosts", json::object()), "/hosts"},
      {description, set(d, "/launcher", "ssh"), "/launcher"},
      {description, set(d, "/modes/1", "docker"), "/modes/1"},
      {description, set(d, "/gpu_engine", 1), "/gpu_engine"},
      {description, set(d, "/limits/max_steps", kMaxJobSteps + 1), "/limits/max_steps"},
      {description, without(d, "/limits"), "/limits"},
      {description, set(d, "/cluster/schema", "shardscope.model/1"), "/cluster/schema"},
      {description, set(d, "/cluster", "h100x8"), "/cluster"},
  };
}

// A job spec: its own members, a project that names no file, plan and grid.
std::vector<Case> submitCases() {
  const json s = submitJson();
  json inline_model = json(toJson(modelPreset("dcnv2").value()));
  inline_model["tables"][0]["dim"] = "16";
  json inline_named = json(toJson(modelPreset("dcnv2").value()));
  inline_named["name"] = "model\x1b]0;title\x07";
  const json plan32 = json(toJson(strided32Plan()));
  const json cluster32 = json(toJson(resizedCluster(clusterPreset("h100x64").value(), 32)));
  const json s32 = set(set(s, "/job/plan", plan32), "/job/project/cluster", cluster32);
  return {
      // submit: the spec's own members
      {submit, without(s, "/job"), "/job"},
      {submit, set(s, "/job", json::array()), "/job"},
      {submit, set(s, "/job/steps", -3), "/job/steps"},
      {submit, set(s, "/job/steps", 0), "/job/steps"},
      {submit, set(s, "/job/steps", kMaxJobSteps + 1), "/job/steps"},
      {submit, set(s, "/job/steps", 5.0), "/job/steps"},
      {submit, set(s, "/job/steps", "5"), "/job/steps"},
      {submit, set(s, "/job/warmup", kMaxJobWarmup + 1), "/job/warmup"},
      {submit, set(s, "/job/seed", 0), "/job/seed"},
      {submit, set(s, "/job/seed", kTwoTo53 + 1), "/job/seed"},
      {submit, set(s, "/job/batch", kMaxBatchPerGpu + 1), "/job/batch"},
      {submit, set(s, "/job/sync_interval", kMaxSyncInterval + 1), "/job/sync_interval"},
      {submit, set(s, "/job/trace_spans", 1), "/job/trace_spans"},
      {submit, set(s, "/job/all_groups", "true"), "/job/all_groups"},
      {submit, set(s, "/job/label", std::string(kMaxLabelBytes + 1, 'a')), "/job/label"},
      {submit, set(s, "/job/label", "a\tb"), "/job/label"},
      {submit, set(s, "/job/label", "a\x7f"), "/job/label"},
      {submit, set(s, "/job/label", "line\n"), "/job/label"},
      // labels and names others are shown: C0, DEL, C1, bidirectional marks, bytes that are not UTF-8
      {submit, set(s, "/job/label", "a\x01"), "/job/label"},
      {submit, set(s, "/job/label", "esc \x1b[31m"), "/job/label"},
      {submit, set(s, "/job/label", "next line \xc2\x85"), "/job/label"},
      {submit, set(s, "/job/label", "csi \xc2\x9b"), "/job/label"},
      {submit, set(s, "/job/label", "abc\xe2\x80\xaetxt.exe"), "/job/label"},  // U+202E right-to-left override
      {submit,
       set(s, "/job/label",
           "\xe2\x80\xaa"
           "embedded"),
       "/job/label"},                                                        // U+202A
      {submit, set(s, "/job/label", "\xe2\x81\xa6isolate"), "/job/label"},   // U+2066
      {submit, set(s, "/job/label", "pop\xe2\x81\xa9"), "/job/label"},       // U+2069
      {submit, set(s, "/job/label", "mark\xe2\x80\x8e"), "/job/label"},      // U+200E
      {submit, set(s, "/job/label", "mark\xe2\x80\x8f"), "/job/label"},      // U+200F
      {submit, set(s, "/job/label", "arabic mark \xd8\x9c"), "/job/label"},  // U+061C
      {submit, set(s, "/job/label", "byte \xff"), "/job/label"},
      {submit, set(s, "/job/label", "cut \xe2\x9c"), "/job/label"},
      {submit, set(s, "/job/label", "overlong \xc0\xaf"), "/job/label"},
      {submit, set(s, "/job/label", "surrogate \xed\xa0\x80"), "/job/label"},
      {submit, set(s, "/job/project/name", "p\xe2\x80\xae"), "/job/project/name"},
      {submit, set(s, "/job/project/model", inline_named), "/job/project/model/name"},
      {submit, set(s, "/job/mode", "local"), "/job/mode"},
      {submit, set(s, "/job/device", "gpu"), "/job/device"},
      // submit: the project names no file
      {submit, without(s, "/job/project"), "/job/project"},
      {submit, set(s, "/job/project", "project.shardscope"), "/job/project"},
      {submit, set(s, "/job/project/model", "/etc/passwd"), "/job/project/model"},
      {submit, set(s, "/job/project/model", "../x.json"), "/job/project/model"},
      {submit, set(s, "/job/project/model", "dcnv2.json"), "/job/project/model"},
      {submit, set(s, "/job/project/model", "h100x8"), "/job/project/model"},
      {submit, set(s, "/job/project/model", 3), "/job/project/model"},
      {submit, set(s, "/job/project/cluster", "/etc/hosts"), "/job/project/cluster"},
      {submit, set(s, "/job/project/calibration", "calibration.json"), "/job/project/calibration"},
      {submit, set(s, "/job/project/constraints", "c"), "/job/project/constraints"},
      {submit, set(s, "/job/project/model", inline_model), "/job/project/model/tables/0/dim"},
      {submit, set(s, "/job/project/sync_interval", 0), "/job/project/sync_interval"},
      // submit: plan and grid against the cluster (h100x8: 8 GPUs)
      {submit, set(s, "/job/plan", plan32), "/job/plan/world_size"},
      {submit, set(set(s, "/job/plan", plan32), "/job/project/cluster", "h100x4096"), "/job/plan/world_size"},
      {submit, set(s32, "/job/grid", 8), "/job/grid"},
      {submit, set(set(s32, "/job/project/cluster/nodes", 2), "/job/project/cluster/world_size", 16),
       "/job/plan/world_size"},
      {submit, set(s, "/job/plan", "plan.json"), "/job/plan"},
      {submit, set(s, "/job/plan", without(plan32, "/schema")), "/job/plan/schema"},
      {submit, set(s, "/job/grid", 3), "/job/grid"},
      {submit, set(s, "/job/grid", 0), "/job/grid"},
      {submit, set(s, "/job/grid", 16), "/job/grid"},
  };
}

// Watch and cancel, job info, job lists, progress.
std::vector<Case> jobCases() {
  const json w = toJson(JobRequest{2, "j7"}, "watch");
  const json j = toJson(JobMessage{3, sampleInfo("j7", JobState::Running)});
  const json js = toJson(JobList{
      3,
      {sampleInfo("j1", JobState::Complete), sampleInfo("j2", JobState::Running), sampleInfo("j3", JobState::Queued)}});
  const json p = toJson(ProgressEvent{4, "j7", {"emulate", 1, 5, ""}, {1.5, 2.5}});
  return {
      // watch, cancel
      {request, set(w, "/job", "7"), "/job"},
      {request, set(w, "/job", "j"), "/job"},
      {request, set(w, "/job", "j1234567890123"), "/job"},
      {request, set(w, "/job", "J1"), "/job"},
      {request, set(w, "/job", "j1a"), "/job"},
      {request, set(w, "/job", 7), "/job"},
      {request, without(w, "/job"), "/job"},
      {request, set(w, "/type", "list"), "/type"},
      // job info
      {job, set(j, "/job/state", "done"), "/job/state"},
      {job, set(j, "/job/state", 1), "/job/state"},
      {job, set(j, "/job/job", "x"), "/job/job"},
      {job, set(j, "/job/label", "a\x01"), "/job/label"},
      {job, set(j, "/job/mode", "slurm"), "/job/mode"},
      {job, set(j, "/job/launcher", "ssh"), "/job/launcher"},
      {job, set(j, "/job/world_size", kMaxWorldSize + 1), "/job/world_size"},
      {job, set(j, "/job/group_size", -8), "/job/group_size"},
      {job, set(j, "/job/exit_code", std::int64_t{1} << 31), "/job/exit_code"},
      {job, set(j, "/job/exit_code", 1.5), "/job/exit_code"},
      {job, set(j, "/job/run", -1), "/job/run"},
      {job, set(j, "/job/progress/done", "3"), "/job/progress/done"},
      {job, without(j, "/job/progress"), "/job/progress"},
      {job, set(j, "/job/stderr_tail/1", 7), "/job/stderr_tail/1"},
      {job, set(j, "/job/created", false), "/job/created"},
      {job, set(j, "/job", "j7"), "/job"},
      {jobs, set(js, "/jobs/2/state", "bogus"), "/jobs/2/state"},
      {jobs, set(js, "/jobs/1", 4), "/jobs/1"},
      {jobs, set(js, "/jobs", json::object()), "/jobs"},
      // progress
      {progress, set(p, "/step_ms/1", -1), "/step_ms/1"},
      {progress, set(p, "/step_ms/0", "x"), "/step_ms/0"},
      {progress, set(p, "/step_ms", 3), "/step_ms"},
      {progress, set(p, "/job", "j"), "/job"},
      {progress, without(p, "/progress"), "/progress"},
      {progress, set(p, "/progress/total", -1), "/progress/total"},
  };
}

// Fetch, chunk, error.
std::vector<Case> transferCases() {
  const json f = toJson(FetchRequest{5, "j7", 0, 1024});
  const json c = chunkJson();
  const json e = toJson(ErrorMessage{6, ErrorCode::NoSuchJob, "no such job", "/job"});
  return {
      // fetch
      {fetch, set(f, "/offset", -1), "/offset"},
      {fetch, set(f, "/offset", 1.5), "/offset"},
      {fetch, set(f, "/length", 0), "/length"},
      {fetch, set(f, "/length", kMaxChunkBytes + 1), "/length"},
      {fetch, set(f, "/job", "j1/../../etc"), "/job"},
      // chunk
      {chunk, set(c, "/offset", 7), "/offset"},
      {chunk, set(c, "/offset", 4), "/data"},
      {chunk, set(c, "/data", "Zm9vYg=="), "/data"},
      {chunk, set(c, "/sha256", std::string(64, 'A')), "/sha256"},
      {chunk, set(c, "/sha256", std::string(63, 'a')), "/sha256"},
      {chunk, set(c, "/sha256", std::string(63, 'a') + "g"), "/sha256"},
      {chunk, set(c, "/data", "Zg="), "/data"},
      {chunk, set(c, "/data", "Zh=="), "/data"},
      {chunk, set(c, "/data", "Zm9v!A=="), "/data"},
      {chunk, set(c, "/data", "Zg==Zg=="), "/data"},
      {chunk, set(c, "/data", 5), "/data"},
      {chunk, set(c, "/run", -1), "/run"},
      {chunk, set(c, "/total", -1), "/total"},
      // error
      {error, set(e, "/code", "oops"), "/code"},
      {error, set(e, "/code", "Internal"), "/code"},
      {error, without(e, "/code"), "/code"},
      {error, set(e, "/message", 3), "/message"},
      {error, set(e, "/path", "job"), "/path"},
      {error, set(e, "/id", "6"), "/id"},
  };
}

const std::vector<Case>& malformed() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> all;
    for (auto part : {helloAndDescriptionCases, submitCases, jobCases, transferCases}) {
      auto more = part();
      all.insert(all.end(), more.begin(), more.end());
    }
    return all;
  }();
  return cases;
}

}  // namespace

class TestProtocolMessages : public QObject {
  Q_OBJECT

 private slots:
  void errorCodesAreTheListedWords() {
    const std::vector<std::string> words = {"bad_frame",   "bad_message",    "unknown_type",     "not_authenticated",
                                            "auth_failed", "no_such_job",    "job_not_finished", "no_run",
                                            "invalid_job", "limit_exceeded", "launcher_failed",  "internal"};
    for (std::size_t i = 0; i < words.size(); ++i) {
      const auto code = static_cast<ErrorCode>(i);
      QCOMPARE(std::string(toString(code)), words[i]);
      QVERIFY(errorCodeFromString(words[i]) == code);
    }
    QVERIFY(!errorCodeFromString("Internal"));
    QVERIFY(!errorCodeFromString(""));
    QVERIFY(!errorCodeFromString("oops"));
  }

  void jobStatesAndWhichHaveEnded() {
    QCOMPARE(std::string(toString(JobState::Queued)), std::string("queued"));
    QCOMPARE(std::string(toString(JobState::Cancelled)), std::string("cancelled"));
    QVERIFY(!finished(JobState::Queued));
    QVERIFY(!finished(JobState::Running));
    QVERIFY(finished(JobState::Complete));
    QVERIFY(finished(JobState::Failed));
    QVERIFY(finished(JobState::Cancelled));
  }

  void base64MatchesRfc4648Vectors() {
    const std::vector<std::pair<std::string, std::string>> vectors = {{"", ""},
                                                                      {"f", "Zg=="},
                                                                      {"fo", "Zm8="},
                                                                      {"foo", "Zm9v"},
                                                                      {"foob", "Zm9vYg=="},
                                                                      {"fooba", "Zm9vYmE="},
                                                                      {"foobar", "Zm9vYmFy"}};
    for (const auto& [raw, text] : vectors) {
      QCOMPARE(base64Encode(raw), text);
      QCOMPARE(base64Decode(text).value_or("<refused>"), raw);
    }
    QCOMPARE(base64Encode(std::string("\xff\xfe\x00", 3)), std::string("//4A"));
    QCOMPARE(base64Decode("+/+/").value_or(""), std::string("\xfb\xff\xbf"));
  }

  void base64RoundTripsRandomBytes() {
    std::mt19937 rng(7);
    for (std::size_t n = 0; n < 300; ++n) {
      const std::string raw = randomBytes(n, rng);
      const std::string text = base64Encode(raw);
      QCOMPARE(text.size(), (n + 2) / 3 * 4);
      QCOMPARE(base64Decode(text).value_or("<refused>"), raw);
    }
  }

  void base64DecodeRefusesAnythingElse() {
    const std::vector<std::string> bad = {"Zg",
                                          "Zg=",
                                          "Zg===",
                                          "Zm9",
                                          "Zm9vY",  // wrong length or padding
                                          "Zh==",
                                          "Zm9=",  // bits past the last byte set (non-canonical)
                                          "Zg==Zg==",
                                          "=Zg=",
                                          "Z=g=",
                                          "====",
                                          "Zm=v",  // padding not at the end
                                          "Zm9v!A==",
                                          "Zm9v\nYg==",
                                          "Zm 9v",
                                          "Zm9-",
                                          "Zm9_",  // characters outside the alphabet
                                          std::string("Zm9\0", 4),
                                          "\xc3\xa9\xc3\xa9"};
    for (const auto& text : bad) QVERIFY2(!base64Decode(text), text.c_str());
    QVERIFY(base64Decode("Zm8=").has_value());
  }

  void base64IsFastEnoughForFourMebibyteChunks() {
    std::mt19937 rng(3);
    const std::string raw = randomBytes(kMaxChunkBytes, rng);
    const auto t0 = std::chrono::steady_clock::now();
    const std::string text = base64Encode(raw);
    const auto back = base64Decode(text);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    QVERIFY(back && *back == raw);
    qInfo("4 MiB encoded and decoded in %.1f ms", ms);
    QVERIFY2(ms < 1000, "base64 of a 4 MiB chunk took over a second");
  }

  void jobIdsAreJAndUpToTwelveDigits() {
    for (const char* ok : {"j1", "j0", "j42", "j123456789012"}) QVERIFY2(validJobId(ok), ok);
    for (const char* no : {"", "j", "J1", "1", "j1234567890123", "j1a", "j-1", "jj1", " j1", "j1 ", "j１"})
      QVERIFY2(!validJobId(no), no);
  }

  void messageIdAndTypeReadAnyMessage() {
    QCOMPARE(messageId(json{{"v", 1}, {"type", "x"}, {"id", 17}}), std::uint64_t{17});
    QCOMPARE(messageId(json{{"id", kTwoTo53 - 1}}), kTwoTo53 - 1);
    for (const json& bad : {json{{"type", "x"}}, json{{"id", 0}}, json{{"id", -4}}, json{{"id", 1.0}},
                            json{{"id", "3"}}, json{{"id", true}}, json{{"id", kTwoTo53}}, json::array(), json(3)})
      QCOMPARE(messageId(bad), std::uint64_t{0});
    QCOMPARE(messageType(json{{"v", 1}, {"type", "hello"}}), std::string("hello"));
    QCOMPARE(messageType(json{{"type", 3}}), std::string());
    QCOMPARE(messageType(json("hello")), std::string());
  }

  void everyMessageRoundTrips() {
    const Hello hello{7, "shardscope-cli 0.1.0", "tok\xc3\xa9n"};
    QVERIFY(parseHello(wire(toJson(hello)), kSource).value() == hello);
    const Welcome welcome{7, "shardscope-agent 0.1.0 on node1", "node1"};
    QVERIFY(parseWelcome(wire(toJson(welcome)), kSource).value() == welcome);
    const DescribeRequest describe{8};
    QVERIFY(parseDescribeRequest(wire(toJson(describe)), kSource).value() == describe);
    Description d = parseDescription(descriptionJson(), kSource).value();
    d.id = 8;
    d.hosts.push_back({"node2", 32, 3u << 30, {{0, "A100", 40u << 20}, {1, "A100", 40u << 20}}});
    d.cuda_version = "12.4";
    d.nccl_version = "2.21.5";
    d.gpu_engine = true;
    d.launcher = "sbatch";
    QVERIFY(parseDescription(wire(toJson(d)), kSource).value() == d);
    for (const JobSpec& spec : {gridSpec(), planSpec()}) {
      const SubmitRequest submit{9, spec};
      QVERIFY(parseSubmitRequest(wire(toJson(submit)), kSource).value() == submit);
      QVERIFY(parseJobSpec(toJson(spec), kSource, "/job").value() == spec);
    }
    const JobRequest watch{10, "j42"};
    QVERIFY(parseJobRequest(wire(toJson(watch, "watch")), kSource).value() == watch);
    QVERIFY(parseJobRequest(wire(toJson(watch, "cancel")), kSource).value() == watch);
    const ListRequest list{11};
    QVERIFY(parseListRequest(wire(toJson(list)), kSource).value() == list);
    const JobMessage job{9, sampleInfo("j42", JobState::Failed)};
    QVERIFY(parseJobMessage(wire(toJson(job)), kSource).value() == job);
    const ProgressEvent progress{10, "j42", {"emulate", 3, 7, "step 3"}, {12.5, 13.25, 0.0}};
    QVERIFY(parseProgressEvent(wire(toJson(progress)), kSource).value() == progress);
    const JobList jobs{11, {sampleInfo("j1", JobState::Complete), sampleInfo("j2", JobState::Queued)}};
    QVERIFY(parseJobList(wire(toJson(jobs)), kSource).value() == jobs);
    const FetchRequest fetch{12, "j42", 1024, 4096};
    QVERIFY(parseFetchRequest(wire(toJson(fetch)), kSource).value() == fetch);
    std::mt19937 rng(5);
    const Chunk chunk{12, "j42", 1024, 5000, std::string(64, 'e'), randomBytes(3000, rng), 3};
    QVERIFY(parseChunk(wire(toJson(chunk)), kSource).value() == chunk);
    const ErrorMessage error{9, ErrorCode::InvalidJob, "client: /job/steps: expected ...", "/job/steps"};
    QVERIFY(parseErrorMessage(wire(toJson(error)), kSource).value() == error);
    const ErrorMessage unanswered{0, ErrorCode::BadFrame, "not JSON", ""};
    QVERIFY(parseErrorMessage(wire(toJson(unanswered)), kSource).value() == unanswered);
  }

  void jobInfoWithoutAModelStillParses() {  // the member came later: older agents leave it out
    nlohmann::json j = toJson(sampleInfo("j7", JobState::Running));
    j.erase("model");
    auto parsed = parseJobInfo(j, "agent", "/job");
    QVERIFY(parsed);
    QCOMPARE(parsed->model, std::string());
    j["model"] = 3;
    parsed = parseJobInfo(j, "agent", "/job");
    QVERIFY(!parsed);
    QCOMPARE(parsed.error().json_path, std::string("/job/model"));
  }

  // What a job may ask for and take: describe's shapes and job limits (both
  // left out by older agents) and a spec's nodes.
  void jobShapesLimitsAndNodesRoundTrip() {
    Description d = parseDescription(descriptionJson(), kSource).value();
    QCOMPARE(d.shapes.size(), std::size_t{0});  // an older agent's: none said
    QVERIFY(d.job_limits == JobLimits{});
    d.shapes = {{1, 8, {1, 2, 4, 8}}, {2, 16, {1, 2, 4, 8, 16}}};
    d.job_limits = {8u << 30, 48ull << 30, 16, 86400};
    QVERIFY(parseDescription(wire(toJson(d)), kSource).value() == d);
    json bad = toJson(d);
    bad["jobs"]["shapes"][0]["grids"][1] = 0;
    QCOMPARE(parseDescription(bad, kSource).error().json_path, std::string("/jobs/shapes/0/grids/1"));
    JobSpec spec = gridSpec();
    spec.nodes = 1;
    QVERIFY(parseJobSpec(toJson(spec), kSource, "/job").value() == spec);
    json zero = toJson(spec);
    zero["nodes"] = 0;
    QCOMPARE(parseJobSpec(zero, kSource, "/job").error().json_path, std::string("/job/nodes"));
  }

  void answersWithoutAnIdAreEvents() {
    const json m = without(toJson(JobMessage{5, sampleInfo("j3", JobState::Running)}), "/id");
    QCOMPARE(parseJobMessage(m, kSource).value().id, std::uint64_t{0});
    QCOMPARE(parseErrorMessage(set(toJson(ErrorMessage{}), "/id", 0), kSource).value().id, std::uint64_t{0});
  }

  void jobSpecDefaultsWhatIsLeftOut() {
    const JobSpec s = parseJobSpec(json{{"project", projectJson()}}, kSource, "/job").value();
    const JobSpec defaults;
    QCOMPARE(s.label, std::string());
    QVERIFY(s.mode == JobMode::Emulate && s.device == JobDevice::Cpu);
    QCOMPARE(s.steps, defaults.steps);
    QCOMPARE(s.warmup, defaults.warmup);
    QCOMPARE(s.seed, defaults.seed);
    QCOMPARE(s.batch, 0u);
    QCOMPARE(s.sync_interval, 0u);
    QVERIFY(s.trace_spans && !s.all_groups && !s.plan && !s.grid);
  }

  void jobSpecTakesBuiltInPresetsByName() {
    const JobSpec s = parseJobSpec(specJson(projectJson("criteo_kaggle", "a100x8")), kSource, "/job").value();
    QVERIFY(s.project.model == modelPreset("criteo_kaggle").value());
    QVERIFY(s.project.cluster == clusterPreset("a100x8").value());
  }

  void jobSpecNeverReadsAFileTheClientNames() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string model = dir.filePath("model.json").toStdString();
    const std::string cluster = dir.filePath("cluster.json").toStdString();
    QVERIFY(writeJsonFile(model, toJson(modelPreset("dcnv2").value())).ok());
    QVERIFY(writeJsonFile(cluster, toJson(clusterPreset("h100x8").value())).ok());
    QVERIFY(loadModel(model).ok() && loadCluster(cluster).ok());  // files a project file could name
    const auto m = parseJobSpec(specJson(projectJson(model, "h100x8")), kSource, "/job");
    QVERIFY(!m);
    QCOMPARE(m.error().json_path, std::string("/job/project/model"));
    QVERIFY(m.error().message.find("the agent reads no file a client names") != std::string::npos);
    const auto c = parseJobSpec(specJson(projectJson("dcnv2", cluster)), kSource, "/job");
    QVERIFY(!c);
    QCOMPARE(c.error().json_path, std::string("/job/project/cluster"));
  }

  void jobSpecDropsTheClientsTraceStore() {
    json project = projectJson();
    project["trace_store"] = "/home/someone/runs.sqlite";
    QCOMPARE(parseJobSpec(specJson(project), kSource, "/job").value().project.trace_store, std::string());
    project["trace_store"] = 42;  // not even read
    QVERIFY(parseJobSpec(specJson(project), kSource, "/job").ok());
  }

  void projectErrorsNameTheirPathInTheMessage() {
    json model = json(toJson(modelPreset("dcnv2").value()));
    model["tables"][1]["rows"] = -1;
    json project = projectJson();
    project["model"] = model;
    const auto e = parseSubmitRequest(submitJson(specJson(project)), kSource);
    QVERIFY(!e);
    QCOMPARE(e.error().json_path, std::string("/job/project/model/tables/1/rows"));
    QVERIFY2(e.error().message.starts_with(kSource + ": /job/project/model/tables/1/rows: "),
             e.error().message.c_str());
    QVERIFY(e.error().kind == ErrorKind::InvalidInput);
    const auto root = parseJobSpec(json{{"project", json::object()}}, kSource, "/job");
    QVERIFY(!root);
    QCOMPARE(root.error().json_path, std::string("/job/project/schema"));
  }

  void errorReplyCarriesThePath() {
    const auto e = parseSubmitRequest(submitJson(set(specJson(), "/steps", -3)), kSource);
    QVERIFY(!e);
    QCOMPARE(e.error().message, kSource + ": /job/steps: expected a whole number in 1..100000, got -3");
    const ErrorMessage reply = errorReply(9, ErrorCode::InvalidJob, e.error());
    QCOMPARE(reply.id, std::uint64_t{9});
    QVERIFY(reply.code == ErrorCode::InvalidJob);
    QCOMPARE(reply.path, std::string("/job/steps"));
    QCOMPARE(reply.message, e.error().message);
    QCOMPARE(toJson(reply)["code"].get<std::string>(), std::string("invalid_job"));
  }

  void labelsOfAnyScriptAreKept() {
    for (const std::string label :
         {"nightly dcnv2 \xe2\x9c\x93", "\xd7\xaa\xd7\x95\xd7\x95\xd7\x99\xd7\xaa", "\xd9\x85\xd9\x84\xd8\xb5\xd9\x82",
          "\xe6\xa0\x87\xe7\xad\xbe \xf0\x9f\x9a\x80", "tab\\t is two characters", ""}) {
      auto spec = parseJobSpec(set(specJson(), "/label", label), kSource, "/job");
      QVERIFY2(spec.ok(), spec ? "" : spec.error().message.c_str());
      QCOMPARE(spec->label, label);
    }
  }

  void labelRefusalsSayWhatAndWhere() {
    const auto bidi = parseJobSpec(set(specJson(), "/label", "abc\xe2\x80\xaetxt"), kSource, "/job");
    QVERIFY(!bidi);
    QCOMPARE(bidi.error().json_path, std::string("/job/label"));
    QVERIFY2(bidi.error().message.find("U+202E, a bidirectional formatting character at byte 3") != std::string::npos,
             bidi.error().message.c_str());
    const auto c1 = parseJobSpec(set(specJson(), "/label", "x\xc2\x85"), kSource, "/job");
    QVERIFY(c1.error().message.find("control character U+0085 at byte 1") != std::string::npos);
    // A label a program built in memory (never through a JSON parser) may hold any bytes.
    json spec = specJson();
    spec["label"] = std::string("ok\xff");
    const auto bytes = parseJobSpec(spec, kSource, "/job");
    QVERIFY(!bytes);
    QVERIFY(bytes.error().message.find("byte 0xFF, not UTF-8 at byte 2") != std::string::npos);
  }

  void peerTextInErrorsIsQuotedSafely() {
    // Every error a peer's message causes is safe to encode and to show, whatever it quoted.
    const std::vector<json> bad = {
        set(submitJson(), "/job/steps",
            "\xe2\x80\xae"
            "12\x1b[2J"),
        set(submitJson(), "/job/trace_spans", std::string("\xff\xfe")),
        set(submitJson(), "/job/project/model", std::string(39, 'a') + "\xe2\x9c\x93 and more"),
        set(toJson(JobRequest{2, "j7"}, "watch"), "/type", "watch\x1b[1m"),
        set(submitJson(), "/job/project/model",
            json{{"schema", "shardscope.model/1"},
                 {"name", "m"},
                 {"tables", json::array({{{"name", "t\x01\xe2\x80\xae"}}})}}),
    };
    for (const json& m : bad) {
      const std::string type = messageType(m);
      const auto e = type == "submit" ? errorOf(parseSubmitRequest(m, kSource)) : errorOf(parseJobRequest(m, kSource));
      QVERIFY(e.has_value());
      const ErrorMessage reply = errorReply(1, ErrorCode::BadMessage, *e);
      for (std::size_t at = 0, end = 0; at <= reply.message.size(); at = end + 1) {
        end = std::min(reply.message.find('\n', at), reply.message.size());
        const auto unsafe = findUnsafe(std::string_view(reply.message).substr(at, end - at));
        QVERIFY2(!unsafe, reply.message.c_str());
      }
      QVERIFY(!findUnsafe(reply.path));
      QVERIFY(encodeFrame(toJson(reply)).ok());
      const std::string body = toJson(reply).dump();  // strict: throws on bytes that are not UTF-8
      QVERIFY(body.find("\xEF\xBF\xBD") == std::string::npos);
    }
    const auto e = errorOf(parseSubmitRequest(set(submitJson(), "/job/steps", "\xe2\x80\xae"), kSource));
    QVERIFY2(e->message.find("got string \"\\u{202E}\"") != std::string::npos, e->message.c_str());
  }

  void quotedTextEscapesWhatIsNotSafe() {
    QCOMPARE(quoteText("plain \xc3\xa9 text"), std::string("plain \xc3\xa9 text"));
    QCOMPARE(quoteText("a\tb\nc\x7f\xc2\x85"), std::string("a\\x09b\\x0Ac\\x7F\\x85"));
    QCOMPARE(quoteText("\xe2\x80\xae\xd8\x9c\xff"), std::string("\\u{202E}\\u{061C}\\xFF"));
    QCOMPARE(quoteText("back\\x41slash"), std::string("back\\\\x41slash"));  // an escape cannot be forged
    QCOMPARE(safeText("back\\xFFslash\nline\x1b"), std::string("back\\xFFslash\nline\\x1B"));
    QCOMPARE(safeText("one\ntwo", false), std::string("one\\x0Atwo"));
    QCOMPARE(safeText(safeText("x\xff\x01")), safeText("x\xff\x01"));  // quoting twice changes nothing
    const std::string cut = quoteText(std::string(10, 'a') + "\xe2\x9c\x93\xe2\x9c\x93", 11);
    QCOMPARE(cut, std::string(10, 'a') + "\xe2\x9c\x93\xe2\x80\xa6");  // whole code points, then an ellipsis
    std::mt19937 rng(5);
    for (int i = 0; i < 200; ++i) {
      const std::string bytes = randomBytes(1 + rng() % 64, rng);
      QVERIFY(!findUnsafe(quoteText(bytes, 1000)));
      QVERIFY(!findUnsafe(safeText(bytes, false)));
    }
  }

  void chunkOfFourMebibytesIsTheMost() {
    std::mt19937 rng(9);
    Chunk c{1, "j1", 0, kMaxChunkBytes + 10, std::string(64, '0'), randomBytes(kMaxChunkBytes, rng), 1};
    QVERIFY(parseChunk(toJson(c), kSource).ok());
    c.data.push_back('x');
    const auto e = parseChunk(toJson(c), kSource);
    QVERIFY(!e);
    QCOMPARE(e.error().json_path, std::string("/data"));
    QVERIFY(e.error().message.find("at most 4194304 bytes") != std::string::npos);
  }

  void parsersRefuseAnotherTypeOrEnvelope() {
    QCOMPARE(parseHello(toJson(Welcome{1, "a", "h"}), kSource).error().json_path, std::string("/type"));
    QCOMPARE(parseJobRequest(toJson(ListRequest{1}), kSource).error().json_path, std::string("/type"));
    QCOMPARE(parseListRequest(json{{"type", "list"}, {"id", 1}}, kSource).error().json_path, std::string("/v"));
    QCOMPARE(parseChunk(json::array(), kSource).error().json_path, std::string("/"));
  }

  void malformedMessagesNameThePath_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < malformed().size(); ++i)
      QTest::newRow((std::to_string(i) + " " + malformed()[i].path).c_str()) << static_cast<int>(i);
  }

  void malformedMessagesNameThePath() {
    QFETCH(int, index);
    const Case& c = malformed().at(static_cast<std::size_t>(index));
    const std::optional<Error> e = c.parse(c.message);
    QVERIFY2(e.has_value(), c.message.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 300).c_str());
    QCOMPARE(QString::fromStdString(e->json_path), QString::fromStdString(c.path));
    QVERIFY(e->kind == ErrorKind::InvalidInput);
    const std::string head = kSource + ": " + c.path + ": ";
    QVERIFY2(e->message.starts_with(head), e->message.c_str());
  }
};

QTEST_APPLESS_MAIN(TestProtocolMessages)
#include "test_protocol_messages.moc"
