// libFuzzer target for the agent protocol's frame decoder: any bytes, fed in
// pieces whose sizes the input's first byte picks, must give messages or one
// error, never a crash, an exception or an allocation beyond the frame limit.
//   CC=clang CXX=clang++ cmake -S . -B build/fuzz -DSHARDSCOPE_FUZZ=ON && ninja -C build/fuzz fuzz_protocol_frame
//   build/fuzz/tests/fuzz/fuzz_protocol_frame -max_total_time=600   (or scripts/fuzz-all)
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shardscope/core/protocol/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  shardscope::core::protocol::FrameDecoder decoder(4096);
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    decoder.feed(bytes.substr(at, piece));
    for (;;) {
      auto m = decoder.next();
      if (!m || !*m) break;
      // A decoded message encodes again within the same limit.
      if (!shardscope::core::protocol::encodeFrame(**m, 1u << 20)) __builtin_trap();
    }
    if (decoder.failed()) break;
  }
  return 0;
}
