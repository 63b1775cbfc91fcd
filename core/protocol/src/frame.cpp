#include "shardscope/core/protocol/frame.h"

#include "shardscope/core/json_io.h"
#include "shardscope/core/protocol/safe_text.h"

namespace shardscope::core::protocol {

namespace {

constexpr const char* kSource = "agent protocol frame";

std::uint32_t readLength(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return (std::uint32_t{u[0]} << 24) | (std::uint32_t{u[1]} << 16) | (std::uint32_t{u[2]} << 8) | std::uint32_t{u[3]};
}

}  // namespace

Status checkEnvelope(const nlohmann::json& message, const std::string& source) {
  if (!message.is_object()) {
    return Error{source + ": a message must be a JSON object, found " + std::string(message.type_name()),
                 ErrorKind::InvalidInput, source, "/"};
  }
  const auto v = message.find("v");
  if (v == message.end() || !v->is_number_integer()) {
    return Error{source + ": /v: expected the protocol version (an integer)", ErrorKind::InvalidInput, source, "/v"};
  }
  if (v->get<std::int64_t>() != kProtocolVersion) {
    return Error{source + ": /v: protocol version " + v->dump() + " is not spoken here (this build speaks " +
                     std::to_string(kProtocolVersion) + ")",
                 ErrorKind::InvalidInput, source, "/v"};
  }
  const auto type = message.find("type");
  if (type == message.end() || !type->is_string() || type->get_ref<const std::string&>().empty()) {
    return Error{source + ": /type: expected the message type (a non-empty string)", ErrorKind::InvalidInput, source,
                 "/type"};
  }
  return Ok{};
}

Result<std::string> encodeFrame(const nlohmann::json& message, std::size_t max_bytes) {
  if (auto s = checkEnvelope(message, "outgoing message"); !s) {
    Error e = s.error();
    e.kind = ErrorKind::Usage;
    return e;
  }
  // Text that is not UTF-8 becomes U+FFFD rather than an exception: every
  // message quotes peer text through safe_text.h, this is the last line.
  std::string body;
  try {
    body = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& e) {  // out of memory for a huge message
    return Error{std::string("cannot encode an outgoing message: ") + e.what(), ErrorKind::Internal};
  }
  if (body.size() > max_bytes) {
    return Error{"outgoing " + message.find("type")->get<std::string>() + " message is " + std::to_string(body.size()) +
                     " bytes; a frame holds at most " + std::to_string(max_bytes),
                 ErrorKind::Usage};
  }
  std::string frame(kFrameHeaderBytes, '\0');
  const auto n = static_cast<std::uint32_t>(body.size());
  frame[0] = static_cast<char>((n >> 24) & 0xff);
  frame[1] = static_cast<char>((n >> 16) & 0xff);
  frame[2] = static_cast<char>((n >> 8) & 0xff);
  frame[3] = static_cast<char>(n & 0xff);
  frame += body;
  return frame;
}

void FrameDecoder::feed(std::string_view bytes) {
  if (error_) return;
  // Drop what was consumed before growing, so the buffer holds at most one frame and a piece.
  if (offset_ > 0 && offset_ >= buffer_.size() / 2) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  buffer_.append(bytes);
}

Result<std::optional<nlohmann::json>> FrameDecoder::next() {
  if (error_) return *error_;
  if (buffered() < kFrameHeaderBytes) return std::optional<nlohmann::json>{};
  const std::uint32_t length = readLength(buffer_.data() + offset_);
  if (length > max_bytes_) {
    error_ = Error{std::string(kSource) + ": a frame of " + std::to_string(length) + " bytes exceeds the limit of " +
                       std::to_string(max_bytes_),
                   ErrorKind::InvalidInput, kSource};
    return *error_;
  }
  if (buffered() < kFrameHeaderBytes + length) return std::optional<nlohmann::json>{};
  const std::string_view body(buffer_.data() + offset_ + kFrameHeaderBytes, length);
  offset_ += kFrameHeaderBytes + length;
  auto parsed = parseJsonText(body, kSource);
  if (!parsed) {
    // The parser's message may quote the bytes it stopped at.
    error_ = parsed.error();
    error_->message = safeText(error_->message);
    error_->json_path = safeText(error_->json_path, false);
    return *error_;
  }
  if (auto s = checkEnvelope(*parsed, kSource); !s) {
    error_ = s.error();
    return *error_;
  }
  return std::optional<nlohmann::json>{std::move(*parsed)};
}

}  // namespace shardscope::core::protocol
