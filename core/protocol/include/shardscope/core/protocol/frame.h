// The agent protocol's framing (docs/agent-protocol.md): every message is one
// JSON object sent as a frame, a 4-byte big-endian length followed by that
// many bytes of UTF-8 JSON. Every message carries the protocol version "v"
// and its "type". A receiver refuses a frame longer than its limit from the
// length alone, before buffering it, so a peer cannot make it allocate more.
// Plain C++ (no Qt): the agent, the desktop's transport and the CLI share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscope/core/result.h"

namespace shardscope::core::protocol {

inline constexpr int kProtocolVersion = 1;
inline constexpr std::size_t kFrameHeaderBytes = 4;
// The default limit on one frame's JSON (run chunks are sent well below it).
inline constexpr std::size_t kDefaultMaxFrameBytes = 8u << 20;

// The frame of `message`: header + compact JSON. An error (Usage) when the
// JSON is longer than `max_bytes` or `message` lacks an object with "v" and
// "type" (a sender's bug, caught before anything is written). Never throws:
// a string that is not UTF-8 is written with U+FFFD in place of its bad
// bytes (peer text should have been quoted through safe_text.h before), and
// a message that cannot be dumped at all is an error (Internal).
[[nodiscard]] Result<std::string> encodeFrame(const nlohmann::json& message,
                                              std::size_t max_bytes = kDefaultMaxFrameBytes);

// Reassembles frames from a byte stream fed in pieces of any size.
class FrameDecoder {
 public:
  explicit FrameDecoder(std::size_t max_bytes = kDefaultMaxFrameBytes) : max_bytes_(max_bytes) {}

  // Appends received bytes. Refused (the decoder stays failed) after an error.
  void feed(std::string_view bytes);
  // The next whole message, nullopt when more bytes are needed, or an error
  // naming what was wrong (an oversized length, JSON that does not parse, not
  // an object, a missing or wrong "v", a missing "type"; the JSON path where
  // known). The error's text is safe (safe_text.h) whatever the bytes were. After an error the stream cannot be
  // trusted: the decoder stays failed and returns the same error; the connection should be closed.
  [[nodiscard]] Result<std::optional<nlohmann::json>> next();
  // A new limit for the frames not yet returned (the agent's limit once a
  // client has authenticated; a small one before).
  void setMaxBytes(std::size_t max_bytes) { max_bytes_ = max_bytes; }
  // Bytes received and not yet returned as messages.
  [[nodiscard]] std::size_t buffered() const { return buffer_.size() - offset_; }
  [[nodiscard]] bool failed() const { return error_.has_value(); }

 private:
  std::size_t max_bytes_;
  std::string buffer_;
  std::size_t offset_ = 0;  // start of the first byte not yet consumed
  std::optional<Error> error_;
};

// Checks what every message must carry; `source` names the peer in errors.
[[nodiscard]] Status checkEnvelope(const nlohmann::json& message, const std::string& source);

}  // namespace shardscope::core::protocol
