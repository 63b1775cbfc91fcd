// Cross-file checks of an import and the text forms of its rows (import_checks.h).
#include "import_checks.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "shardscope/core/summary.h"
#include "shardscope/profiler/import/store_import_sink.h"

namespace shardscope::profiler::import_detail {

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

bool namesIteration(std::string_view name) {
  const std::string n = core::asciiLower(name);
  return n.find("forward") != std::string::npos && n.find("backward") == std::string::npos;
}

}  // namespace shardscope::profiler::import_detail
