// One client's protocol without a socket (ClientSession): what it answers,
// when it closes, what it logs. An exception while serving a request ends
// that session with an internal error answer and a log line, and nothing
// else; the token is never logged.
#include <QtTest>

#include <new>
#include <stdexcept>

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

const std::string kToken = "session-test-token-0123456789";
const std::string kPeer = "client 192.0.2.1:5000";

// A host with one running job; `throw_in` makes one of its calls throw.
class Host final : public SessionHost {
 public:
  enum class Throw { Nothing, Describe, ListOutOfMemory };
  Throw throw_in = Throw::Nothing;
  int failures = 0;

  bool tokenMatches(const std::string& token) const override { return token == kToken; }
  std::chrono::milliseconds authFailed() override { return std::chrono::milliseconds(250 << failures++); }
  std::optional<shardscope::core::Error> authSucceeded() override {
    failures = 0;
    return std::nullopt;
  }
  const Description& description() const override {
    if (throw_in == Throw::Describe) throw std::runtime_error("describe failed \xff\x1b[2J");
    static const Description d = [] {
      Description x;
      x.agent = "agent under test";
      x.hosts = {{"node1", 4, 1u << 30, {}}};
      x.launcher = "emulate-only";
      x.modes = {"emulate"};
      x.cluster = core::clusterPreset("h100x8").value();
      return x;
    }();
    return d;
  }
  Answer<JobInfo> submit(const JobSpec&) override { return Refusal{ErrorCode::LimitExceeded, core::Error{"full"}}; }
  Answer<JobInfo> cancel(const std::string& job) override {
    return Refusal{ErrorCode::NoSuchJob, core::Error{"no " + job}};
  }
  std::optional<JobInfo> find(const std::string& job) const override {
    if (job != "j1") return std::nullopt;
    JobInfo info;
    info.job = "j1";
    info.state = JobState::Running;
    info.mode = "emulate";
    info.launcher = "in-process";
    return info;
  }
  std::vector<JobInfo> list() const override {
    if (throw_in == Throw::ListOutOfMemory) throw std::bad_alloc();
    return {};
  }
  Answer<RunFile> runFile(const std::string& job) const override {
    return Refusal{ErrorCode::JobNotFinished, core::Error{job + " has not ended"}};
  }
};

std::string frame(const json& m) { return encodeFrame(m).value(); }

json request(const std::string& type, std::uint64_t id, json body = json::object()) {
  body["v"] = 1;
  body["type"] = type;
  body["id"] = id;
  return body;
}

std::string helloFrame(const std::string& token = kToken) {
  return frame(request("hello", 1, {{"client", "unit test"}, {"token", token}}));
}

// The messages in `bytes`, which must be whole frames.
std::vector<json> messages(const std::string& bytes) {
  FrameDecoder d;
  d.feed(bytes);
  std::vector<json> out;
  for (;;) {
    auto m = d.next();
    if (!m) qFatal("not a frame: %s", m.error().message.c_str());
    if (!*m) break;
    out.push_back(**m);
  }
  if (d.buffered() != 0) qFatal("part of a frame");
  return out;
}

bool logHas(const ClientSession::Output& out, const std::string& line) {
  return std::ranges::find(out.log, line) != out.log.end();
}

}  // namespace

class TestClientSession : public QObject {
  Q_OBJECT

 private slots:
  void helloThenRequests() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    auto out = s.received(helloFrame() + frame(request("describe", 2)));
    const auto m = messages(out.send);
    QCOMPARE(m.size(), std::size_t{2});
    QCOMPARE(m[0]["type"], "welcome");
    QCOMPARE(m[1]["type"], "description");
    QCOMPARE(m[1]["id"], 2);
    QVERIFY(!out.close && s.authenticated());
    QVERIFY(logHas(out, kPeer + ": authenticated (unit test)"));
    QVERIFY(s.handshakeExpired().send.empty());  // too late to matter
  }

  void oneByteThatIsNotJsonIsABadFrame() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    auto out = s.received(std::string("\0\0\0\x01\xff", 5));
    const auto m = messages(out.send);
    QCOMPARE(m.size(), std::size_t{1});
    QCOMPARE(m[0]["code"], "bad_frame");
    QVERIFY(m[0]["message"].get<std::string>().find("'\\xFF'") != std::string::npos);
    QVERIFY(out.close && s.closing());
    QCOMPARE(out.log.size(), std::size_t{1});
    QVERIFY2(out.log[0].starts_with(kPeer + ": bad frame (agent protocol frame: not valid JSON"), out.log[0].c_str());
    QVERIFY(s.received(helloFrame()).send.empty());  // nothing more is read
  }

  void beforeHelloOnlyASmallFrameIsBuffered() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    // A header announcing a frame past the hello limit is refused at once, before its body is held.
    std::string header(4, '\0');
    const std::uint32_t big = static_cast<std::uint32_t>(kMaxHelloFrameBytes) + 1;
    for (int i = 0; i < 4; ++i) header[static_cast<std::size_t>(i)] = static_cast<char>((big >> (8 * (3 - i))) & 0xff);
    auto out = s.received(header + std::string(1000, 'A'));
    const auto m = messages(out.send);
    QCOMPARE(m.size(), std::size_t{1});
    QCOMPARE(m[0]["code"], "bad_frame");
    QVERIFY(out.close);
    // Once authenticated, frames up to the agent's limit are read (a submit far past the hello limit).
    ClientSession t(host, kPeer, kDefaultMaxFrameBytes, 10);
    QVERIFY(!t.received(helloFrame()).close);
    json submit = request("submit", 3);
    submit["job"] = {{"label", std::string(100000, 'x')}};
    const auto answer = messages(t.received(frame(submit)).send);
    QCOMPARE(answer.size(), std::size_t{1});
    QVERIFY2(answer[0]["code"] != "bad_frame", answer[0].dump().c_str());  // decoded: refused as a job, not a frame
  }

  void aWrongTokenIsAnsweredLaterAndCloses() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    auto out = s.received(helloFrame("not the token, but long enough") + frame(request("describe", 2)));
    QVERIFY(out.send.empty());
    const auto later = messages(out.send_later);
    QCOMPARE(later.size(), std::size_t{1});
    QCOMPARE(later[0]["code"], "auth_failed");
    QCOMPARE(out.delay, std::chrono::milliseconds(250));
    QVERIFY(out.close && !s.authenticated());
    QVERIFY(logHas(out, kPeer + ": wrong token (answered in 250 ms)"));
  }

  void noHelloInTime() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 7);
    auto out = s.handshakeExpired();
    QCOMPARE(messages(out.send).at(0)["code"], "not_authenticated");
    QVERIFY(out.close);
    QVERIFY(logHas(out, kPeer + ": no hello within 7 s"));
    QVERIFY(logHas(s.ended(), kPeer + ": closed"));
  }

  void theTokenIsNeverLogged() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    // A hello whose token string ends in a bad escape: the JSON parser's own message quotes the string.
    const std::string body = "{\"v\":1,\"type\":\"hello\",\"id\":1,\"client\":\"x\",\"token\":\"" + kToken + "\\q\"}";
    std::string bytes(4, '\0');
    bytes[3] = static_cast<char>(body.size());
    auto out = s.received(bytes + body);
    QCOMPARE(messages(out.send).at(0)["code"], "bad_frame");
    for (const auto& line : out.log) QVERIFY2(line.find(kToken) == std::string::npos, line.c_str());
    QVERIFY(!out.log.empty());
  }

  void anExceptionEndsOnlyThatSession() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    QVERIFY(s.received(helloFrame()).send.size() > 0);
    host.throw_in = Host::Throw::Describe;
    auto out = s.received(frame(request("describe", 5)) + frame(request("list", 6)));
    const auto m = messages(out.send);
    QCOMPARE(m.size(), std::size_t{1});  // the list after it is not read
    QCOMPARE(m[0]["code"], "internal");
    QCOMPARE(m[0]["id"], 5);
    QVERIFY(out.close && s.closing());
    QCOMPARE(out.log.size(), std::size_t{1});
    QCOMPARE(out.log[0], kPeer + ": internal error (describe failed \\xFF\\x1B[2J)");
    QVERIFY(!findUnsafe(m[0]["message"].get<std::string>()));
    // Another session of the same agent goes on.
    host.throw_in = Host::Throw::Nothing;
    ClientSession other(host, "client 192.0.2.1:5001", kDefaultMaxFrameBytes, 10);
    const auto fine = messages(other.received(helloFrame() + frame(request("describe", 2))).send);
    QCOMPARE(fine.at(1)["type"], "description");
  }

  void runningOutOfMemoryForOneRequestEndsItsSession() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    (void)s.received(helloFrame());
    host.throw_in = Host::Throw::ListOutOfMemory;
    auto out = s.received(frame(request("list", 3)));
    QCOMPARE(messages(out.send).at(0)["code"], "internal");
    QVERIFY(out.close);
    QVERIFY(out.log.at(0).starts_with(kPeer + ": internal error ("));
  }

  void progressIsCoalescedToTheNewest() {
    Host host;
    ClientSession s(host, kPeer, kDefaultMaxFrameBytes, 10);
    (void)s.received(helloFrame());
    QCOMPARE(messages(s.received(frame(request("watch", 4, {{"job", "j1"}}))).send).at(0)["type"], "job");
    for (std::uint64_t done = 1; done <= 3; ++done) {
      auto out = s.jobProgress(ProgressEvent{0, "j1", {"emulate", done, 3, ""}, {}});
      QVERIFY(out.send.empty() && out.progress_due);
    }
    const auto m = messages(s.flushProgress().send);
    QCOMPARE(m.size(), std::size_t{1});
    QCOMPARE(m[0]["progress"]["done"], 3);
    QCOMPARE(m[0]["id"], 4);
    QVERIFY(s.jobProgress(ProgressEvent{0, "j9", {}, {}}).send.empty());  // a job nobody watches
  }
};

QTEST_APPLESS_MAIN(TestClientSession)
#include "test_client_session.moc"
