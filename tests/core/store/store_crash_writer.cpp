// Test helper for test_store_crash: writes spans into a new run forever,
// committing every 500 spans and printing "committed <n>" after each commit
// ("ready" after the first). The test kills it with SIGKILL.
#include <chrono>
#include <cstdio>

#include "shardscope/core/store/run_writer.h"

namespace st = shardscope::core::store;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: store_crash_writer <store>\n");
    return 2;
  }
  st::RunHeader header;
  header.kind = st::RunKind::Mpi;
  header.label = "killed mid-write";
  st::WriterOptions options;
  options.rows_per_commit = 1'000'000;  // commit only when we say so
  auto writer = st::RunWriter::begin(argv[1], header, options);
  if (!writer) {
    std::fprintf(stderr, "%s\n", writer.error().message.c_str());
    return 1;
  }
  auto name = writer->intern("crash_span");
  if (!name) {
    return 1;
  }
  // Never outlive a test that died without killing us.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::int64_t t = 0;
  for (int batch = 0; std::chrono::steady_clock::now() < deadline; ++batch) {
    for (int i = 0; i < 500; ++i, t += 10) {
      st::Span s;
      s.rank = i % 8;
      s.kind = *name;
      s.name = *name;
      s.start_ns = t;
      s.end_ns = t + 5;
      if (!writer->addSpan(s)) {
        return 1;
      }
    }
    if (auto s = writer->commit(); !s) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      return 1;
    }
    std::printf("committed %lld\n", static_cast<long long>(writer->committedSpans()));
    if (batch == 0) {
      std::printf("ready\n");
    }
    std::fflush(stdout);
  }
  return 3;
}
