// libFuzzer target for the agent's side of one connection: ClientSession
// (profiler/agent's client_session.h, what AgentConnection runs for each TLS
// client) fed any byte stream, before or after a hello with the right token,
// with job events in between, against a host whose jobs live in memory (a
// finished one with a run file, a running one to watch, a failed one, and
// whatever the stream submits). Checked, for every call:
// - every byte the session sends decodes as whole frames of JSON, each a
//   message the client's parser of its type reads (error, welcome,
//   description, job, jobs, progress, chunk), and none an internal error;
// - no string it sends needed encodeFrame's last-line replacement of bytes
//   that are not UTF-8 (peer text is quoted where it enters a message);
// - every log line is safe text (no control, bidirectional or non-UTF-8
//   byte), is no internal error and holds the token only where the stream
//   put it elsewhere than in a hello's "token" (a key of a malformed frame);
// - after the session said close, it sends nothing more.
// The input: byte 0 holds flags (1: a valid hello first, 2: job events after
// every piece, 4: the handshake deadline passes at the end), byte 1 the size
// of the pieces (1-64) the rest is fed in.
//   CC=clang CXX=clang++ cmake -S . -B build/fuzz -DSHARDSCOPE_FUZZ=ON && ninja -C build/fuzz fuzz_agent_connection
//   build/fuzz/tests/fuzz/fuzz_agent_connection -max_total_time=600   (or scripts/fuzz-all)
// Seeds: tests/fuzz/seeds/agent_connection.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "shardscope/profiler/agent/client_session.h"
#include "shardscope/core/presets.h"
#include "shardscope/core/protocol/safe_text.h"

using namespace shardscope;
using namespace shardscope::core::protocol;
using nlohmann::json;
using profiler::ClientSession;
using profiler::RunFile;
using profiler::SessionHost;

namespace {

const std::string kToken = "fuzz-token-0123456789abcdef";
const std::string kPeer = "client 192.0.2.7:40000";

[[noreturn]] void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_agent_connection: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// A finished job's run file, written once per process and removed at its exit.
const std::string& runFilePath() {
  static const std::string path = "/tmp/fuzz_agent_connection_run." + std::to_string(::getpid());
  static const bool written = [] {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 5000; ++i) out.put(static_cast<char>(i * 7));
    std::atexit([] { std::remove(path.c_str()); });
    return true;
  }();
  (void)written;
  return path;
}

JobInfo jobInfo(const std::string& id, JobState state) {
  JobInfo i;
  i.job = id;
  i.label = "fuzz " + id;
  i.model = "DLRM-DCNv2";
  i.state = state;
  i.mode = "emulate";
  i.launcher = "in-process";
  i.world_size = 8;
  i.created = "2026-12-07T10:00:00Z";
  i.run = state == JobState::Complete ? 1 : 0;
  return i;
}

class FuzzHost final : public SessionHost {
 public:
  FuzzHost() {
    jobs_ = {jobInfo("j1", JobState::Complete), jobInfo("j2", JobState::Running), jobInfo("j3", JobState::Failed)};
  }

  bool tokenMatches(const std::string& token) const override { return token == kToken; }
  std::chrono::milliseconds authFailed() override { return std::chrono::milliseconds(250); }
  std::optional<shardscope::core::Error> authSucceeded() override { return std::nullopt; }
  const Description& description() const override {
    static const Description d = [] {
      Description x;
      x.agent = "shardscope-agent fuzz on node1";
      x.hosts = {{"node1", 16, 1u << 30, {{0, "H100", 80u << 20}}}};
      x.engine_version = "0.1.0";
      x.launcher = "mpirun";
      x.modes = {"emulate", "mpi"};
      x.cluster = core::clusterPreset("h100x8").value();
      x.max_ranks = 64;
      x.max_steps = 1000;
      x.max_jobs = 8;
      return x;
    }();
    return d;
  }
  Answer<JobInfo> submit(const JobSpec& spec) override {
    if (jobs_.size() >= 8) {
      // A refusal quoting a name the protocol does not check: the answer must still be safe.
      const std::string table = spec.project.model.tables.empty() ? "" : spec.project.model.tables.front().name;
      return Refusal{ErrorCode::LimitExceeded, core::Error{"8 jobs at once; not queued: table " + table}};
    }
    JobInfo info = jobInfo("j" + std::to_string(jobs_.size() + 1), JobState::Queued);
    info.label = spec.label;
    info.model = spec.project.model.name;
    info.world_size = spec.project.cluster.worldSize();
    jobs_.push_back(info);
    return info;
  }
  Answer<JobInfo> cancel(const std::string& job) override {
    for (auto& info : jobs_) {
      if (info.job != job) continue;
      if (!finished(info.state)) info.state = JobState::Cancelled;
      return info;
    }
    return Refusal{ErrorCode::NoSuchJob, core::Error{"no job " + job}};
  }
  std::optional<JobInfo> find(const std::string& job) const override {
    for (const auto& info : jobs_)
      if (info.job == job) return info;
    return std::nullopt;
  }
  std::vector<JobInfo> list() const override { return jobs_; }
  Answer<RunFile> runFile(const std::string& job) const override {
    const auto info = find(job);
    if (!info) return Refusal{ErrorCode::NoSuchJob, core::Error{"no job " + job}};
    if (!finished(info->state)) return Refusal{ErrorCode::JobNotFinished, core::Error{job + " has not ended"}};
    if (job != "j1") return Refusal{ErrorCode::NoRun, core::Error{job + " ended without a run"}};
    return RunFile{runFilePath(), 5000, std::string(64, 'a'), 1};
  }

 private:
  std::vector<JobInfo> jobs_;
};

template <class T>
void readsBack(core::Result<T> (*parse)(const json&, const std::string&), const json& m) {
  if (auto r = parse(m, "agent"); !r) die("the agent sent a message its clients refuse", r.error().message);
}

void checkMessage(const json& m) {
  const std::string type = messageType(m);
  if (type == "error") {
    auto e = parseErrorMessage(m, "agent");
    if (!e) die("the agent sent an error its clients refuse", e.error().message);
    if (e->code == ErrorCode::Internal) die("the agent answered an internal error", m.dump());
  } else if (type == "welcome") {
    readsBack(parseWelcome, m);
  } else if (type == "description") {
    readsBack(parseDescription, m);
  } else if (type == "job") {
    readsBack(parseJobMessage, m);
  } else if (type == "jobs") {
    readsBack(parseJobList, m);
  } else if (type == "progress") {
    readsBack(parseProgressEvent, m);
  } else if (type == "chunk") {
    readsBack(parseChunk, m);
  } else {
    die("the agent sent a message of a type no client knows", m.dump());
  }
}

struct Run {
  std::string input_lower;       // the input, lowercased: where U+FFFD may legitimately come from
  bool token_elsewhere = false;  // the input holds the token outside a "token" member: a peer may have it logged
  bool closed = false;
};

// Whether `bytes` hold the token other than as the value of a "token" member.
bool tokenElsewhere(std::string_view bytes) {
  std::string rest(bytes);
  const std::string member = "\"token\":\"" + kToken + "\"";
  for (std::size_t at = rest.find(member); at != std::string::npos; at = rest.find(member, at))
    rest.erase(at, member.size());
  return rest.find(kToken) != std::string::npos;
}

void checkFrames(const std::string& bytes, const Run& run) {
  if (bytes.find("\xEF\xBF\xBD") != std::string::npos && run.input_lower.find("\xEF\xBF\xBD") == std::string::npos &&
      run.input_lower.find("\\ufffd") == std::string::npos)
    die("a message needed encodeFrame's replacement: peer bytes reached it unquoted", bytes);
  FrameDecoder decoder(kDefaultMaxFrameBytes);
  decoder.feed(bytes);
  for (;;) {
    auto m = decoder.next();
    if (!m) die("the agent sent bytes that are not frames of JSON", m.error().message);
    if (!m->has_value()) break;
    checkMessage(**m);
  }
  if (decoder.buffered() != 0) die("the agent sent part of a frame");
}

void check(const ClientSession::Output& out, Run& run) {
  if (run.closed && !(out.send.empty() && out.send_later.empty())) die("the agent sent more after it closed");
  checkFrames(out.send, run);
  checkFrames(out.send_later, run);
  for (const auto& line : out.log) {
    if (auto bad = findUnsafe(line)) die("a log line that is not safe text", bad->what + ": " + quoteText(line, 500));
    if (!run.token_elsewhere && line.find(kToken) != std::string::npos) die("a log line holds the token", line);
    if (line.starts_with(kPeer + ": internal error")) die("an internal error", line);
  }
  if (out.close) run.closed = true;
}

std::string frameOf(const json& m) { return encodeFrame(m).value(); }

void jobEvents(ClientSession& session, Run& run, std::uint64_t step, bool end) {
  ProgressEvent p{0, "j2", {"emulate", step, 10, "step " + std::to_string(step)}, {1.5, 2.0}};
  check(session.jobProgress(p), run);
  JobInfo info = jobInfo("j2", end ? JobState::Complete : JobState::Running);
  info.progress = p.progress;
  if (end || step % 4 == 0) check(session.jobChanged(info), run);
  check(session.flushProgress(), run);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t piece = 1 + data[1] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 2), size - 2);
  Run run;
  run.input_lower.assign(bytes);
  run.token_elsewhere = tokenElsewhere(bytes);
  std::ranges::transform(run.input_lower, run.input_lower.begin(),
                         [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  FuzzHost host;
  ClientSession session(host, kPeer, kDefaultMaxFrameBytes, 10);
  if (flags & 1) {
    check(session.received(frameOf({{"v", 1}, {"type", "hello"}, {"id", 1}, {"client", "fuzz"}, {"token", kToken}})),
          run);
    if (!session.authenticated()) die("a valid hello did not authenticate");
  }
  std::uint64_t step = 0;
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    check(session.received(bytes.substr(at, piece)), run);
    if (flags & 2) jobEvents(session, run, ++step, false);
  }
  if (flags & 2) jobEvents(session, run, ++step, true);
  if (flags & 4) check(session.handshakeExpired(), run);
  check(session.ended(), run);
  return 0;
}
