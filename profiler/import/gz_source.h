// The Kineto importer's input (private to profiler/import): a file read through zlib's gzread,
// which reads plain files as they are, so gzip is found by its magic bytes; the import's progress
// is asked about every MiB and can cancel it.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "json_scanner.h"
#include "shardscope/profiler/import/kineto_import.h"

namespace shardscope::profiler::kineto_detail {

inline constexpr std::uint64_t kProgressEvery = 1 << 20;

// gzread over a file, asking `progress` about every MiB of the file.
class GzSource final : public json::ChunkSource {
 public:
  GzSource(gzFile f, std::uint64_t total, const KinetoOptions& o) : f_(f), total_(total), opts_(o) {}
  std::ptrdiff_t read(char* buf, std::size_t n) override {
    if (opts_.progress) {
      const auto done = static_cast<std::uint64_t>(gzoffset(f_));
      if (asked_ < 0 || done >= static_cast<std::uint64_t>(asked_) + kProgressEvery) {
        asked_ = static_cast<std::int64_t>(done);
        if (!opts_.progress(done, total_)) {
          cancelled = true;
          return -1;
        }
      }
    }
    const int k = gzread(f_, buf, static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30)));
    if (k <= 0) {
      int errnum = 0;
      const char* msg = gzerror(f_, &errnum);
      if (k < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) read_error = msg != nullptr ? msg : "read error";
      return k < 0 ? -1 : 0;
    }
    return k;
  }
  bool cancelled = false;
  std::string read_error;

 private:
  gzFile f_;
  std::uint64_t total_;
  const KinetoOptions& opts_;
  std::int64_t asked_ = -1;  // file offset at the last progress call
};

struct GzCloser {
  void operator()(gzFile_s* f) const {
    if (f != nullptr) gzclose_r(f);
  }
};

}  // namespace shardscope::profiler::kineto_detail
