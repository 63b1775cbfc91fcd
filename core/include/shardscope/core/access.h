// Measured access distributions (`shardscope.access/1`, docs/formats/access.md):
// per table, bounded-size counts of the ids a trainer or the engine looked
// up: the hottest ids with their counts and a histogram over equal row
// buckets. Applied to a model, a table's measured histogram replaces its
// assumed (zipf, uniform, hot-set) access, so the planner prices row-wise
// blocks from what was measured.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/model.h"
#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

inline constexpr std::size_t kMaxHotIds = 4096;          // per table
inline constexpr std::size_t kMaxAccessBuckets = 65536;  // per table

struct TableAccess {
  std::string name;
  std::uint64_t rows = 0;
  std::uint64_t lookups = 0;  // ids observed; = the sum of `buckets`
  // The hottest ids, most counted first: (id, count).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> hot;
  // Bucket i counts the ids with floor(id x B / rows) = i (B = buckets.size()).
  std::vector<std::uint64_t> buckets;
  bool operator==(const TableAccess&) const = default;
};

struct AccessFile {
  std::string source;         // what was measured: "engine run 3 of lab.runs.sqlite", a trainer
  std::uint64_t batches = 0;  // batches observed
  std::vector<TableAccess> tables;
  bool operator==(const AccessFile&) const = default;
};

// Errors name the source and the JSON path of every problem (at most 20).
[[nodiscard]] Result<AccessFile> accessFromJson(const nlohmann::json& j, const std::string& source);
[[nodiscard]] Result<AccessFile> loadAccessFile(const std::string& path);
[[nodiscard]] nlohmann::ordered_json toJson(const AccessFile& a);
// One `tables` entry (what a trace store keeps per table and run).
[[nodiscard]] nlohmann::ordered_json toJson(const TableAccess& t);

// The bucket of `id` in a table of `rows` rows with `buckets` buckets.
[[nodiscard]] std::size_t accessBucketOf(std::uint64_t id, std::uint64_t rows, std::size_t buckets);

// `model` with each table the file measures (same name and rows, some ids
// observed) given its measured histogram (AccessKind::Histogram). `measured`
// names the tables that took it; `problems` says why others did not (rows
// differ, no table of that name, nothing observed).
struct AppliedAccess {
  ModelSpec model;
  std::vector<std::string> measured;
  std::vector<std::string> problems;
};
[[nodiscard]] AppliedAccess applyAccess(const ModelSpec& model, const AccessFile& access);

// `project` with `access` (read from `file`) applied to its model and
// recorded as the project's attached access; `problems` as applyAccess's.
struct AttachedProject {
  Project project;
  std::vector<std::string> measured;
  std::vector<std::string> problems;
};
[[nodiscard]] AttachedProject attachAccess(const Project& project, const AccessFile& access, const std::string& file);

}  // namespace shardscope::core
