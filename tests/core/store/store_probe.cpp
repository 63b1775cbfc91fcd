// Test helper: one store operation in its own process, for the tests that
// need several processes at once (test_store_create_race) or another user
// (test_store_read_only). Prints what it found on stdout; on an error prints
// "error <kind>: <message>" on stderr and exits 1.
//
//   store_probe write <store> [<start at, ms since the epoch>]
//       waits until then, writes a run of 100 spans, prints "run <id>"
//   store_probe info <store>
//       inspectStore: prints "runs <n> complete <c>"
//   store_probe open-rw <store>
//       openStore(ReadWrite): prints "opened"
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/trace_store.h"

namespace st = shardscope::core::store;

namespace {

int report(const shardscope::core::Error& error) {
  std::fprintf(stderr, "error %s: %s\n", std::string(toString(error.kind)).c_str(), error.message.c_str());
  return 1;
}

int write(const char* path, long long startAtMs) {
  const auto start = std::chrono::system_clock::time_point(std::chrono::milliseconds(startAtMs));
  std::this_thread::sleep_until(start);
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.label = "raced";
  auto writer = st::RunWriter::begin(path, header);
  if (!writer) {
    return report(writer.error());
  }
  auto name = writer->intern("probe");
  if (!name) {
    return report(name.error());
  }
  for (int i = 0; i < 100; ++i) {
    st::Span s;
    s.rank = i % 4;
    s.kind = *name;
    s.name = *name;
    s.start_ns = i * 10;
    s.end_ns = s.start_ns + 5;
    if (auto a = writer->addSpan(s); !a) {
      return report(a.error());
    }
  }
  if (auto f = writer->finish(); !f) {
    return report(f.error());
  }
  std::printf("run %lld\n", static_cast<long long>(writer->run()));
  return 0;
}

int info(const char* path) {
  auto info = st::inspectStore(path);
  if (!info) {
    return report(info.error());
  }
  int complete = 0;
  for (const auto& r : info->runs) {
    complete += r.run.isComplete() ? 1 : 0;
  }
  std::printf("runs %zu complete %d\n", info->runs.size(), complete);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string op = argc >= 3 ? argv[1] : "";
  if (op == "write" && argc <= 4) {
    return write(argv[2], argc == 4 ? std::stoll(argv[3]) : 0);
  }
  if (op == "info" && argc == 3) {
    return info(argv[2]);
  }
  if (op == "open-rw" && argc == 3) {
    auto store = st::openStore(argv[2], st::OpenMode::ReadWrite);
    if (!store) {
      return report(store.error());
    }
    std::printf("opened\n");
    return 0;
  }
  std::fprintf(stderr, "usage: store_probe write|info|open-rw <store> [start ms]\n");
  return 2;
}
