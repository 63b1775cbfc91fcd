// libFuzzer targets for every JSON input ShardScope reads, one binary per
// format (SHARDSCOPE_FUZZ_FORMAT, set by tests/fuzz/CMakeLists.txt):
//   fuzz_model_json, fuzz_cluster_json, fuzz_plan_json, fuzz_torchrec_plan_json,
//   fuzz_calibration_json, fuzz_access_json.
//
// Build as for fuzz_kineto_import (tests/fuzz/fuzz_kineto_import.cpp), then
// `ninja -C build/fuzz fuzz_model_json ...`; run each seeded with its files:
//   scripts/fuzz-all 600     (every target, 10 minutes each; docs/BENCHMARKS.md)
//
// Each input is parsed the way the tools read a file (core::parseJsonText,
// then the format's reader). Checked, besides ASan/UBSan/LeakSanitizer:
// - an error names the source ("in.json: ...") and never escapes as an
//   exception;
// - what parseJsonText accepts nlohmann accepts, and a duplicate key or a
//   number beyond a double is refused;
// - a document the reader accepts is written back (toJson) and read again:
//   the writer's output is valid input. (Not byte for byte: a histogram is
//   normalised again on each read.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscope/core/access.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/torchrec_plan.h"

using namespace shardscope;

namespace {

[[noreturn]] void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "fuzz_json_input: %s %s\n", what, detail.c_str());
  std::abort();
}

void checkError(const core::Error& e) {
  if (!e.message.starts_with("in.json")) die("an error that does not name the file", e.message);
}

// Reads `j` as the format, writes what it read and reads that again.
template <class T, class Read, class Write>
void roundTrip(const nlohmann::json& j, Read read, Write write) {
  core::Result<T> first = read(j);
  if (!first) return checkError(first.error());
  const std::string text = write(*first).dump();
  auto again_json = core::parseJsonText(text, "in.json");
  if (!again_json) die("the writer's output is not JSON", again_json.error().message + "\n" + text);
  core::Result<T> second = read(*again_json);
  if (!second) die("the writer's output is refused", second.error().message + "\n" + text);
}

void fuzzOne(const nlohmann::json& j) {
  const std::string src = "in.json";
#if SHARDSCOPE_FUZZ_FORMAT == 0
  roundTrip<core::ModelSpec>(
      j, [&](const nlohmann::json& d) { return core::modelFromJson(d, src); },
      [](const core::ModelSpec& m) { return core::toJson(m); });
#elif SHARDSCOPE_FUZZ_FORMAT == 1
  roundTrip<core::ClusterSpec>(
      j, [&](const nlohmann::json& d) { return core::clusterFromJson(d, src); },
      [](const core::ClusterSpec& c) { return core::toJson(c); });
#elif SHARDSCOPE_FUZZ_FORMAT == 2
  roundTrip<core::ShardPlan>(
      j, [&](const nlohmann::json& d) { return core::planFromJson(d, src); },
      [](const core::ShardPlan& p) { return core::toJson(p); });
#elif SHARDSCOPE_FUZZ_FORMAT == 3
  // TorchRec plans are read, not written: the converted plan must be one our
  // own reader accepts.
  core::TorchRecImportOptions o;
  o.gpus_per_node = 8;
  auto p = core::shardPlanFromTorchRec(j, src, o);
  if (!p) return checkError(p.error());
  const std::string text = core::toJson(*p).dump();
  auto back = core::planFromJson(nlohmann::json::parse(text), "converted.json");
  if (!back) die("a converted TorchRec plan is refused by the plan reader", back.error().message + "\n" + text);
#elif SHARDSCOPE_FUZZ_FORMAT == 4
  roundTrip<core::Calibration>(
      j, [&](const nlohmann::json& d) { return core::calibrationFromJson(d, src); },
      [](const core::Calibration& c) { return core::toJson(c); });
#elif SHARDSCOPE_FUZZ_FORMAT == 5
  roundTrip<core::AccessFile>(
      j, [&](const nlohmann::json& d) { return core::accessFromJson(d, src); },
      [](const core::AccessFile& a) { return core::toJson(a); });
#else
#error "SHARDSCOPE_FUZZ_FORMAT must be 0..5"
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto j = core::parseJsonText(text, "in.json");
  if (!j) {
    checkError(j.error());
    return 0;
  }
  if (!nlohmann::json::accept(text.begin(), text.end())) die("parsed JSON that nlohmann rejects");
  try {
    fuzzOne(*j);
  } catch (const std::exception& e) {
    die("an exception escaped a reader", e.what());
  }
  return 0;
}
