#include "shardscope/profiler/agent/client_session.h"

#include <algorithm>
#include <fstream>

#include "shardscope/core/protocol/safe_text.h"

namespace shardscope::profiler {

namespace {

using nlohmann::json;

// A frame's problem for the log: the decoder's message without what the JSON
// parser read last (a malformed hello may hold part of the token there).
std::string logReason(const std::string& message) {
  return proto::safeText(std::string_view(message).substr(0, message.find("; last read:")), false, 300);
}

}  // namespace

ClientSession::ClientSession(SessionHost& host, std::string peer, std::size_t max_frame_bytes,
                             std::uint32_t handshake_seconds)
    : host_(host),
      peer_(std::move(peer)),
      max_frame_bytes_(max_frame_bytes),
      handshake_seconds_(handshake_seconds),
      decoder_(std::min(max_frame_bytes, proto::kMaxHelloFrameBytes)) {}

template <class Step>
ClientSession::Output ClientSession::guarded(Step step) {
  Output out;
  try {
    step(out);
  } catch (const std::exception& e) {
    fail(out, e.what());
  } catch (...) {
    fail(out, "an exception of unknown type");
  }
  return out;
}

void ClientSession::fail(Output& out, const std::string& what) {
  closing_ = true;
  out.close = true;
  out.progress_due = false;
  try {
    const std::string safe = proto::safeText(what, false, 300);
    out.log.push_back(peer_ + ": internal error (" + safe + ")");
    sendError(out, handling_, proto::ErrorCode::Internal,
              core::Error{"the agent failed on a request of this connection (" + safe + "); closing it",
                          core::ErrorKind::Internal});
  } catch (...) {  // even the answer failed (out of memory): the connection just closes
  }
  decoder_ = proto::FrameDecoder(1);
}

ClientSession::Output ClientSession::received(std::string_view bytes) {
  return guarded([&](Output& out) {
    if (closing_) return;
    decoder_.feed(bytes);
    while (!closing_) {
      auto next = decoder_.next();
      if (!next) {
        core::Error e = next.error();
        out.log.push_back(peer_ + ": bad frame (" + logReason(e.message) + ")");
        e.message = peer_ + ": " + e.message;
        sendError(out, 0, proto::ErrorCode::BadFrame, e);
        return close(out);
      }
      if (!next->has_value()) return;
      handle(out, **next);
    }
  });
}

ClientSession::Output ClientSession::handshakeExpired() {
  return guarded([&](Output& out) {
    if (authenticated_ || closing_) return;
    const std::string what = "no hello within " + std::to_string(handshake_seconds_) + " s";
    out.log.push_back(peer_ + ": " + what);
    sendError(out, 0, proto::ErrorCode::NotAuthenticated, core::Error{what});
    close(out);
  });
}

ClientSession::Output ClientSession::ended() {
  return guarded([&](Output& out) {
    out.log.push_back(peer_ + ": closed");
    closing_ = true;
  });
}

void ClientSession::close(Output& out) {
  closing_ = true;
  out.close = true;
  out.progress_due = false;
  pending_.clear();
  decoder_ = proto::FrameDecoder(1);  // nothing more is read: drop what was buffered
}

void ClientSession::send(Output& out, const json& message) const {
  auto frame = proto::encodeFrame(message, max_frame_bytes_);
  if (!frame) {  // our bug, not the client's: say so rather than send nothing
    frame = proto::encodeFrame(
        proto::toJson(proto::errorReply(proto::messageId(message), proto::ErrorCode::Internal, frame.error())),
        max_frame_bytes_);
    if (!frame) return;
  }
  out.send += *frame;
}

void ClientSession::sendError(Output& out, std::uint64_t id, proto::ErrorCode code, const core::Error& error) const {
  send(out, proto::toJson(proto::errorReply(id, code, error)));
}

void ClientSession::handle(Output& out, const json& message) {
  const std::string type = proto::messageType(message);
  const std::uint64_t id = proto::messageId(message);
  handling_ = id;
  if (!authenticated_) {
    if (type == "hello") return hello(out, message);
    out.log.push_back(peer_ + ": a request before hello");
    sendError(out, id, proto::ErrorCode::NotAuthenticated, core::Error{"say hello with the agent's token first"});
    return close(out);
  }
  if (type == "hello") return sendError(out, id, proto::ErrorCode::BadMessage, core::Error{"already authenticated"});
  handleRequest(out, type, message);
}

void ClientSession::handleRequest(Output& out, const std::string& type, const json& message) {
  const std::uint64_t id = proto::messageId(message);
  if (type == "describe") {
    auto r = proto::parseDescribeRequest(message, peer_);
    if (!r) return sendError(out, id, proto::ErrorCode::BadMessage, r.error());
    proto::Description d = host_.description();
    d.id = r->id;
    return send(out, proto::toJson(d));
  }
  if (type == "list") {
    auto r = proto::parseListRequest(message, peer_);
    if (!r) return sendError(out, id, proto::ErrorCode::BadMessage, r.error());
    return send(out, proto::toJson(proto::JobList{r->id, host_.list()}));
  }
  if (type == "submit") return submit(out, message);
  if (type == "watch") return watch(out, message);
  if (type == "cancel") return cancel(out, message);
  if (type == "fetch") return fetch(out, message);
  sendError(out, id, proto::ErrorCode::UnknownType,
            core::Error{"unknown message type \"" + proto::quoteText(type, 100) + "\""});
}

void ClientSession::hello(Output& out, const json& message) {
  auto h = proto::parseHello(message, peer_);
  if (!h) {
    out.log.push_back(peer_ + ": bad hello (" + proto::safeText(h.error().message, false, 300) + ")");
    sendError(out, proto::messageId(message), proto::ErrorCode::BadMessage, h.error());
    return close(out);
  }
  if (!host_.tokenMatches(h->token)) {
    const auto delay = host_.authFailed();
    out.log.push_back(peer_ + ": wrong token (answered in " + std::to_string(delay.count()) + " ms)");
    Output answer;
    sendError(answer, h->id, proto::ErrorCode::AuthFailed, core::Error{"wrong token"});
    close(out);  // nothing more is read from a client that failed
    out.send_later = std::move(answer.send);
    out.delay = delay;
    return;
  }
  if (auto refused = host_.authSucceeded()) {
    out.log.push_back(peer_ + ": refused after hello (" + proto::safeText(refused->message, false, 200) + ")");
    sendError(out, h->id, proto::ErrorCode::LimitExceeded, *refused);
    return close(out);
  }
  authenticated_ = true;
  decoder_.setMaxBytes(max_frame_bytes_);  // the agent's frame limit from now on
  out.log.push_back(peer_ + ": authenticated (" + proto::quoteText(h->client, 100) + ")");
  const proto::Description& d = host_.description();
  send(out, proto::toJson(proto::Welcome{h->id, d.agent, d.hosts.empty() ? std::string() : d.hosts.front().name}));
}

void ClientSession::submit(Output& out, const json& message) {
  auto r = proto::parseSubmitRequest(message, peer_);
  if (!r) return sendError(out, proto::messageId(message), proto::ErrorCode::InvalidJob, r.error());
  auto result = host_.submit(r->job);
  if (auto* refused = std::get_if<SessionHost::Refusal>(&result))
    return sendError(out, r->id, refused->code, refused->error);
  send(out, proto::toJson(proto::JobMessage{r->id, std::get<proto::JobInfo>(result)}));
}

void ClientSession::watch(Output& out, const json& message) {
  auto r = proto::parseJobRequest(message, peer_);
  if (!r) return sendError(out, proto::messageId(message), proto::ErrorCode::BadMessage, r.error());
  const auto info = host_.find(r->job);
  if (!info)
    return sendError(out, r->id, proto::ErrorCode::NoSuchJob, core::Error{"no job " + r->job + " on this agent"});
  send(out, proto::toJson(proto::JobMessage{r->id, *info}));
  if (!proto::finished(info->state)) watches_[r->job] = r->id;
}

void ClientSession::cancel(Output& out, const json& message) {
  auto r = proto::parseJobRequest(message, peer_);
  if (!r) return sendError(out, proto::messageId(message), proto::ErrorCode::BadMessage, r.error());
  auto result = host_.cancel(r->job);
  if (auto* refused = std::get_if<SessionHost::Refusal>(&result))
    return sendError(out, r->id, refused->code, refused->error);
  send(out, proto::toJson(proto::JobMessage{r->id, std::get<proto::JobInfo>(result)}));
}

void ClientSession::fetch(Output& out, const json& message) {
  auto r = proto::parseFetchRequest(message, peer_);
  if (!r) return sendError(out, proto::messageId(message), proto::ErrorCode::BadMessage, r.error());
  auto result = host_.runFile(r->job);
  if (auto* refused = std::get_if<SessionHost::Refusal>(&result))
    return sendError(out, r->id, refused->code, refused->error);
  const RunFile& file = std::get<RunFile>(result);
  if (r->offset > file.size)
    return sendError(out, r->id, proto::ErrorCode::BadMessage,
                     core::Error{"offset " + std::to_string(r->offset) + " is past the end of the run file (" +
                                     std::to_string(file.size) + " bytes)",
                                 core::ErrorKind::InvalidInput, peer_, "/offset"});
  proto::Chunk c;
  const std::uint64_t n = std::min(r->length, file.size - r->offset);
  c.data.resize(n);
  std::ifstream f(file.path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(r->offset));
  f.read(c.data.data(), static_cast<std::streamsize>(n));
  if (!f || static_cast<std::uint64_t>(f.gcount()) != n)
    return sendError(out, r->id, proto::ErrorCode::Internal, core::Error{"cannot read the run file of " + r->job});
  c.id = r->id;
  c.job = r->job;
  c.offset = r->offset;
  c.total = file.size;
  c.sha256 = file.sha256;
  c.run = file.run;
  send(out, proto::toJson(c));
}

ClientSession::Output ClientSession::jobChanged(const proto::JobInfo& info) {
  return guarded([&](Output& out) {
    const auto it = watches_.find(info.job);
    if (closing_ || it == watches_.end()) return;
    if (proto::finished(info.state)) {
      pending_.erase(info.job);  // the final state replaces any progress not yet sent
    } else {
      flushInto(out);
    }
    send(out, proto::toJson(proto::JobMessage{it->second, info}));
    if (proto::finished(info.state)) watches_.erase(it);
  });
}

ClientSession::Output ClientSession::jobProgress(const proto::ProgressEvent& event) {
  return guarded([&](Output& out) {
    const auto it = watches_.find(event.job);
    if (closing_ || it == watches_.end()) return;
    proto::ProgressEvent e = event;
    e.id = it->second;
    pending_[event.job] = std::move(e);
    out.progress_due = true;
  });
}

ClientSession::Output ClientSession::flushProgress() {
  return guarded([&](Output& out) {
    if (!closing_) flushInto(out);
  });
}

void ClientSession::flushInto(Output& out) {
  for (const auto& [job, event] : pending_) send(out, proto::toJson(event));
  pending_.clear();
}

}  // namespace shardscope::profiler
