// libFuzzer target for the agent protocol: any bytes, fed to the frame
// decoder in pieces whose sizes the input's first byte picks, must give
// messages or one error, never a crash, an exception or an allocation beyond
// the frame limit. Each decoded message is read by the parser of its type;
// what a parser accepts is written again (toJson), must make a valid frame
// and must read back equal; what it refuses is an error that names the peer
// and the JSON path. Every error, the decoder's too, is safe text (peer bytes
// quoted, safe_text.h) and its error answer encodes. Base64 decodes only the
// one canonical form.
//   CC=clang CXX=clang++ cmake -S . -B build/fuzz -DSHARDSCOPE_FUZZ=ON && ninja -C build/fuzz fuzz_protocol_frame
//   build/fuzz/tests/fuzz/fuzz_protocol_frame -max_total_time=600   (or scripts/fuzz-all)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "shardscope/core/json_io.h"
#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/protocol/safe_text.h"

using namespace shardscope::core;
using namespace shardscope::core::protocol;
using nlohmann::json;

namespace {

const std::string kSource = "fuzz peer";

[[noreturn]] void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_protocol_frame: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// An error is safe to answer with and to log: each line safe text (safe_text.h), the path too.
void checkSafe(const Error& e) {
  for (std::size_t at = 0, end = 0; at <= e.message.size(); at = end + 1) {
    end = std::min(e.message.find('\n', at), e.message.size());
    if (auto bad = findUnsafe(std::string_view(e.message).substr(at, end - at)))
      die("an error that quotes peer bytes unescaped", bad->what + ": " + quoteText(e.message, 1000));
  }
  if (findUnsafe(e.json_path)) die("an error path that is not safe text", quoteText(e.json_path, 1000));
  const json reply = toJson(errorReply(1, ErrorCode::BadMessage, e));
  try {
    (void)reply.dump();  // strict: throws on bytes that are not UTF-8
  } catch (const std::exception& x) {
    die("an error answer that does not encode", x.what());
  }
}

void checkError(const Error& e) {
  checkSafe(e);
  if (!e.message.starts_with(kSource + ": /")) die("an error that does not name the peer and a path", e.message);
  if (!e.json_path.starts_with('/')) die("an error without a JSON path", e.message);
  if (e.kind != ErrorKind::InvalidInput) die("an error of another kind than invalid input", e.message);
}

// Parses `m`; what parses is written again, framed, and must read back equal.
template <class Parse, class Write>
void roundTrip(const json& m, Parse parse, Write write) {
  auto first = parse(m);
  if (!first) return checkError(first.error());
  const json again = write(*first);
  if (!encodeFrame(again, kDefaultMaxFrameBytes)) die("the writer's output is not a valid frame", again.dump());
  auto text = parseJsonText(again.dump(), kSource);
  if (!text) die("the writer's output is not JSON", text.error().message);
  auto second = parse(*text);
  if (!second) die("the writer's output is refused", second.error().message + "\n" + again.dump());
  if (!(*second == *first)) die("a message read back differs", m.dump() + "\n" + again.dump());
}

template <class T>
using Parser = Result<T> (*)(const json&, const std::string&);

template <class T>
void roundTrip(const json& m, Parser<T> parse) {
  roundTrip(
      m, [&](const json& j) { return parse(j, kSource); }, [](const T& v) { return toJson(v); });
}

void dispatch(const json& m) {
  const std::string type = messageType(m);
  if (type == "hello") return roundTrip(m, parseHello);
  if (type == "welcome") return roundTrip(m, parseWelcome);
  if (type == "describe") return roundTrip(m, parseDescribeRequest);
  if (type == "description") return roundTrip(m, parseDescription);
  if (type == "submit") return roundTrip(m, parseSubmitRequest);
  if (type == "watch" || type == "cancel") {
    return roundTrip(
        m, [](const json& j) { return parseJobRequest(j, kSource); },
        [&](const JobRequest& q) { return toJson(q, type); });
  }
  if (type == "list") return roundTrip(m, parseListRequest);
  if (type == "job") return roundTrip(m, parseJobMessage);
  if (type == "progress") return roundTrip(m, parseProgressEvent);
  if (type == "jobs") return roundTrip(m, parseJobList);
  if (type == "fetch") return roundTrip(m, parseFetchRequest);
  if (type == "chunk") return roundTrip(m, parseChunk);
  if (type == "error") return roundTrip(m, parseErrorMessage);
}

void checkMessage(const json& m) {
  // A decoded message encodes again within the same limit.
  if (!encodeFrame(m, 1u << 20)) die("a decoded message does not encode again", m.dump());
  const std::uint64_t id = messageId(m);
  if (id > kMaxMessageInteger) die("a message id beyond 2^53", m.dump());
  // Base64 decodes only what it would have written itself.
  if (const auto data = m.find("data"); data != m.end() && data->is_string()) {
    const std::string& text = data->get_ref<const std::string&>();
    if (auto bytes = base64Decode(text); bytes && base64Encode(*bytes) != text)
      die("base64 decoded a non-canonical text", text);
  }
  try {
    dispatch(m);
  } catch (const std::exception& e) {
    die("an exception escaped a parser", std::string(e.what()) + "\n" + m.dump());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  FrameDecoder decoder(4096);
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    decoder.feed(bytes.substr(at, piece));
    for (;;) {
      auto m = decoder.next();
      if (!m) checkSafe(m.error());
      if (!m || !*m) break;
      checkMessage(**m);
    }
    if (decoder.failed()) break;
  }
  return 0;
}
