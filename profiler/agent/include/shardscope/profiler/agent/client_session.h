// The protocol of one client of the agent, without a socket: bytes received
// go in, the bytes to send, whether to close and the lines to log come out.
// app/agent's AgentConnection wraps it with a TLS socket and timers; the
// fuzzer (tests/fuzz/fuzz_agent_connection.cpp) drives it with any bytes.
// Plain C++: everything it asks of the agent goes through SessionHost.
//
// It reads frames (FrameDecoder, the agent's frame limit), allows nothing
// but hello until the token matched, answers requests by their id, streams
// the jobs it watches (progress coalesced: the newest per job is kept until
// flushProgress) and serves run files in chunks. A malformed frame is
// answered bad_frame and ends the session; so does anything a peer sends
// that makes the agent fail (an exception): that one session ends with an
// internal error, never the agent. Ending a session never touches a job.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/profiler/agent/job_record.h"
#include "shardscope/profiler/agent/job_refusal.h"
#include "shardscope/profiler/agent/progress_throttle.h"

namespace shardscope::profiler {

namespace proto = core::protocol;

// What a session needs of the agent (AgentConnection: its server and jobs).
class SessionHost {
 public:
  using Refusal = JobRefusal;
  template <class T>
  using Answer = std::variant<T, Refusal>;

  SessionHost() = default;
  virtual ~SessionHost() = default;
  SessionHost(const SessionHost&) = delete;
  SessionHost& operator=(const SessionHost&) = delete;

  [[nodiscard]] virtual bool tokenMatches(const std::string& token) const = 0;
  // A failed hello of this client: how long to wait before answering it.
  [[nodiscard]] virtual std::chrono::milliseconds authFailed() = 0;
  // The right token: nullopt, or why this client is refused anyway (the
  // agent serves limits.max_connections clients at once).
  [[nodiscard]] virtual std::optional<core::Error> authSucceeded() = 0;
  [[nodiscard]] virtual const proto::Description& description() const = 0;
  [[nodiscard]] virtual Answer<proto::JobInfo> submit(const proto::JobSpec& spec) = 0;
  [[nodiscard]] virtual Answer<proto::JobInfo> cancel(const std::string& job) = 0;
  [[nodiscard]] virtual std::optional<proto::JobInfo> find(const std::string& job) const = 0;
  [[nodiscard]] virtual std::vector<proto::JobInfo> list() const = 0;
  [[nodiscard]] virtual Answer<RunFile> runFile(const std::string& job) const = 0;
};

class ClientSession {
 public:
  // At most one progress message per watched job and interval (20 a second).
  static constexpr std::chrono::milliseconds kProgressInterval = profiler::kProgressInterval;

  // `peer` names the client in messages and log lines ("client 10.0.0.5:51234").
  ClientSession(SessionHost& host, std::string peer, std::size_t max_frame_bytes, std::uint32_t handshake_seconds);

  struct Output {
    std::string send;                    // frames to write now
    std::string send_later;              // frames to write after `delay` (a wrong token's answer)
    std::chrono::milliseconds delay{0};  //
    bool close = false;                  // end the connection once all of the above is written
    bool progress_due = false;           // call flushProgress in kProgressInterval
    std::vector<std::string> log;        // lines for the agent's log: peer text escaped, never the token
  };

  Output received(std::string_view bytes);
  Output handshakeExpired();  // handshake_seconds passed since the connection was accepted
  Output jobChanged(const proto::JobInfo& info);
  Output jobProgress(const proto::ProgressEvent& event);
  Output flushProgress();
  Output ended();  // the connection is gone: its last log line

  [[nodiscard]] bool authenticated() const { return authenticated_; }
  [[nodiscard]] bool closing() const { return closing_; }
  [[nodiscard]] const std::string& peer() const { return peer_; }

 private:
  // Runs `step` on `out`; an exception ends this session with an internal error.
  template <class Step>
  Output guarded(Step step);
  void fail(Output& out, const std::string& what);
  void handle(Output& out, const nlohmann::json& message);
  void handleRequest(Output& out, const std::string& type, const nlohmann::json& message);
  void hello(Output& out, const nlohmann::json& message);
  void submit(Output& out, const nlohmann::json& message);
  void watch(Output& out, const nlohmann::json& message);
  void cancel(Output& out, const nlohmann::json& message);
  void fetch(Output& out, const nlohmann::json& message);
  void flushInto(Output& out);
  void send(Output& out, const nlohmann::json& message) const;
  void sendError(Output& out, std::uint64_t id, proto::ErrorCode code, const core::Error& error) const;
  void close(Output& out);

  SessionHost& host_;
  std::string peer_;
  std::size_t max_frame_bytes_;
  std::uint32_t handshake_seconds_;
  proto::FrameDecoder decoder_;
  bool authenticated_ = false;
  bool closing_ = false;
  std::uint64_t handling_ = 0;                           // the id of the request last handled
  std::map<std::string, std::uint64_t> watches_;         // job -> the watch's request id
  std::map<std::string, proto::ProgressEvent> pending_;  // newest progress per watched job, not yet sent
};

}  // namespace shardscope::profiler
