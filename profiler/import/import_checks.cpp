// Cross-file checks of an import and the text forms of its rows (import_checks.h), and the
// element sizes of trace dtypes (store_import_sink.h).
#include "import_checks.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"
#include "shardscope/profiler/import/store_import_sink.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler {

int dtypeBytes(std::string_view d) {
  std::string t(d);
  for (char& c : t)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (t.starts_with("c10::")) t.erase(0, 5);
  if (t.starts_with("torch.")) t.erase(0, 6);
  if (t == "float" || t == "float32" || t == "int" || t == "int32" || t == "uint32") return 4;
  if (t == "double" || t == "float64" || t == "long" || t == "int64" || t == "uint64" || t == "complexfloat") return 8;
  if (t == "half" || t == "float16" || t == "bfloat16" || t == "short" || t == "int16") return 2;
  if (t == "byte" || t == "char" || t == "bool" || t == "uint8" || t == "int8" || t.starts_with("float8")) return 1;
  return 0;
}

namespace import_detail {

core::Status JobChecks::refuse(const std::string& what) {
  if (!force_) return core::Error{what + "; to import them anyway, give --force"};
  const std::string w = what + " (imported anyway: --force)";
  if (std::find(said_.begin(), said_.end(), w) == said_.end()) {
    said_.push_back(w);
    if (warnings_ != nullptr) warnings_->push_back(w);
  }
  return core::Ok{};
}

core::Status JobChecks::worldSize(const ImportRankInfo& r) {
  if (r.world_size <= 0) return core::Ok{};
  if (world_size_ <= 0) {
    world_size_ = r.world_size;
    world_source_ = r.source;
    return core::Ok{};
  }
  if (r.world_size == world_size_) return core::Ok{};
  return refuse(r.source + ": distributedInfo.world_size: " + std::to_string(r.world_size) + ", but " + world_source_ +
                " says " + std::to_string(world_size_) + " (traces of different jobs? expected one world size)");
}

core::Status JobChecks::processGroup(std::string_view name, std::string_view ranks, const std::string& source) {
  if (name.empty() || ranks.empty()) return core::Ok{};
  auto it = groups_.find(name);
  if (it == groups_.end()) {
    groups_.emplace(std::string(name), std::pair{std::string(ranks), source});
    return core::Ok{};
  }
  if (it->second.first == ranks) return core::Ok{};
  return refuse(source + ": process group \"" + std::string(name) + "\" has ranks " + std::string(ranks) + ", but " +
                it->second.second + " says " + it->second.first +
                " (traces of different jobs? expected one process-group layout)");
}

core::Status JobChecks::baseTime(const ImportRankInfo& r) {
  if (r.base_time_ns == 0) return core::Ok{};
  if (base_ == 0) {
    base_ = r.base_time_ns;
    base_source_ = r.source;
    return core::Ok{};
  }
  const double apart = std::abs(static_cast<double>(r.base_time_ns) - static_cast<double>(base_));
  if (apart <= static_cast<double>(kMaxBaseTimeApartNs)) return core::Ok{};
  char days[32];
  std::snprintf(days, sizeof days, "%.1f", apart / 86400e9);
  return refuse(r.source + ": baseTimeNanoseconds is " + days + " days away from " + base_source_ +
                "'s (traces of different jobs? ranks of one job start their profilers within minutes)");
}

core::Status JobChecks::all(const ImportRankInfo& r) {
  if (auto s = worldSize(r); !s) return s;
  for (const auto& [name, ranks] : r.process_groups)
    if (auto s = processGroup(name, groupText(ranks).first, r.source); !s) return s;
  return baseTime(r);
}

std::pair<std::string, int> groupText(std::string_view s) {
  std::string out;
  int n = 0;
  std::int64_t v = 0;
  const char* p = s.data();
  const char* e = p + s.size();
  while (p < e) {
    if (*p >= '0' && *p <= '9') {
      auto r = std::from_chars(p, e, v);
      if (r.ec != std::errc()) return {"", 0};  // out of range: not a rank list
      if (!out.empty()) out += ',';
      out += std::to_string(v);
      ++n;
      p = r.ptr;
    } else if (*p == '[' || *p == ']' || *p == ',' || *p == ' ') {
      ++p;
    } else {
      return {"", 0};
    }
  }
  return {out, n};
}

void warnMissingWork(const std::vector<ImportedRank>& ranks, std::vector<std::string>& warnings) {
  std::vector<int> no_emb, no_gpu, no_coll;
  for (const auto& r : ranks) {
    if (r.stored > 0) continue;  // rows a ShardScope export described: not a trainer's trace
    const auto has = [&](std::string_view k) { return r.spans_by_kind.contains(std::string(k)); };
    if (r.gpu_events == 0) {
      no_gpu.push_back(r.rank);
      continue;
    }
    if (!has(span_kind::kEmbFwd) && !has(span_kind::kEmbBwd)) no_emb.push_back(r.rank);
    if (r.collectives == 0) no_coll.push_back(r.rank);
  }
  if (!no_gpu.empty())
    warnings.push_back("no GPU events (kernels, memcpy, memset) in rank(s) " + core::formatRankRanges(no_gpu) +
                       ": the trace was recorded without CUDA activity (PyTorch: ProfilerActivity.CUDA; nsys: "
                       "--trace=cuda), so it has no embedding time, collectives, busy or idle time");
  if (!no_emb.empty())
    warnings.push_back("no embedding kernels (emb_fwd / emb_bwd) in rank(s) " + core::formatRankRanges(no_emb) +
                       ": embedding compute reads 0 and its imbalance is n/a; if the trainer's lookups run in "
                       "kernels of other names, import again with --rules");
  if (!no_coll.empty())
    warnings.push_back("no collective kernels in rank(s) " + core::formatRankRanges(no_coll) +
                       ": no waits and no bus bandwidth for them (a single-GPU job, or NCCL kernels not traced)");
}

std::string configWithGpus(std::string_view config_json, const std::vector<ImportedRank>& ranks) {
  // A caller's text that is not a JSON object is kept as it is (the run's store takes it unread).
  auto parsed = core::parseOrderedJsonText(config_json, "runs.config_json");
  if (!parsed || !parsed->is_object()) return std::string(config_json);
  nlohmann::ordered_json& config = *parsed;
  std::vector<const ImportedRank*> by_rank;
  for (const ImportedRank& r : ranks) by_rank.push_back(&r);
  std::stable_sort(by_rank.begin(), by_rank.end(), [](const auto* a, const auto* b) { return a->rank < b->rank; });
  auto& gpus = config["gpus"] = nlohmann::ordered_json::array();
  for (const ImportedRank* r : by_rank) gpus.push_back(r->gpu);
  // The names are UTF-8 as the importers keep them; replace rather than throw should a sink's caller give other bytes.
  return config.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

bool namesIteration(std::string_view name) {
  const std::string n = core::asciiLower(name);
  return n.find("forward") != std::string::npos && n.find("backward") == std::string::npos;
}

}  // namespace import_detail

}  // namespace shardscope::profiler
