// The GPUs a trace lists (Kineto deviceProperties, Nsight Systems TARGET_INFO_GPU), as the
// importers keep them (private to profiler/import): names cut to a bounded, printable text, and
// the one a rank ran on. Header-only: the fuzz targets compile the importers' sources on their own.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler::import_detail {

// A GPU's name is a model and a memory size ("NVIDIA H100 80GB HBM3"): anything longer is not one.
inline constexpr std::size_t kMaxGpuNameBytes = 256;
// A node has a few dozen GPUs at most: a longer list is cut, not held.
inline constexpr std::size_t kMaxListedGpus = 64;

// The length of the UTF-8 character at the start of `s` (1-4 bytes, RFC 3629: no overlong forms,
// no surrogates, nothing past U+10FFFF); 0 when it is not one.
inline std::size_t utf8Length(std::string_view s) {
  const auto b = [&s](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) {
    return i < s.size() && b(i) >= lo && b(i) <= hi;
  };
  const unsigned c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// A name as the run's configuration keeps it: control characters (C0, DEL, C1) become spaces,
// bytes that are not UTF-8 are dropped, runs of spaces become one, the ends are trimmed, and at
// most kMaxGpuNameBytes bytes are kept, never half a character. A file's name can then neither
// break the configuration's JSON nor a line of text that shows it.
inline std::string gpuNameText(std::string_view raw) {
  std::string out;
  bool space = false;  // a space is owed before the next character
  for (std::size_t i = 0; i < raw.size();) {
    const std::size_t n = utf8Length(raw.substr(i));
    if (n == 0) {
      ++i;
      continue;
    }
    const auto c = static_cast<unsigned char>(raw[i]);
    const bool control = c < 0x20 || c == 0x7F || (c == 0xC2 && static_cast<unsigned char>(raw[i + 1]) < 0xA0);
    if (control || c == ' ') {
      space = !out.empty();
      i += n;
      continue;
    }
    if (out.size() + (space ? 1 : 0) + n > kMaxGpuNameBytes) break;
    if (space) out += ' ';
    space = false;
    out.append(raw.substr(i, n));
    i += n;
  }
  return out;
}

// Lists a GPU of the trace when it has a name that keeps some text and the list has room.
inline void listGpu(std::vector<ImportGpu>& gpus, int device, std::string_view raw_name) {
  if (gpus.size() >= kMaxListedGpus) return;
  std::string name = gpuNameText(raw_name);
  if (!name.empty()) gpus.push_back({device, std::move(name)});
}

// The rank's GPU: the listed one with the device id of its GPU events, else (no GPU events, or a
// device the file does not list) the first listed; "" when the file lists none.
inline std::string rankGpuName(const std::vector<ImportGpu>& gpus, int device) {
  if (device >= 0)
    for (const ImportGpu& g : gpus)
      if (g.device == device) return g.name;
  return gpus.empty() ? std::string() : gpus.front().name;
}

}  // namespace shardscope::profiler::import_detail
