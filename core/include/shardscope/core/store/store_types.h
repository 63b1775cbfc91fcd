// Value types stored in and read back from a ShardScope trace store: runs,
// ranks, spans, collectives and the per-step / per-table summaries. Plain
// data, no SQLite; see docs/formats/store.md for how each maps to a table.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::core::store {

// Strongly typed ids: a StringId is not a RunId.
enum class RunId : std::int64_t {};
enum class StringId : std::int64_t {};
enum class BookmarkId : std::int64_t {};
enum class NoteId : std::int64_t {};

// StringId 0 is never assigned; it marks "no string" (e.g. a span that
// touches no embedding table). Stored as NULL.
inline constexpr StringId kNoString{0};

// The schema version this build writes and the newest it can read.
// 2 added runs.config_json; a schema-1 file opened for writing is migrated
// in place (one ALTER TABLE), read-only opens read it as is.
inline constexpr int kSchemaVersion = 2;
// PRAGMA application_id of every trace store: ASCII "ShSc".
inline constexpr std::int32_t kApplicationId = 0x53685363;

enum class RunKind { Emulate, Mpi, ImportKineto, ImportNsys, Unknown };
enum class RunStatus { Running, Complete, Failed };

// Text stored in runs.kind / runs.status ("emulate", "import-kineto", ...).
[[nodiscard]] std::string_view toText(RunKind kind);
[[nodiscard]] std::string_view toText(RunStatus status);
// Unrecognised text (a kind added by a newer build) maps to RunKind::Unknown.
[[nodiscard]] RunKind runKindFromText(std::string_view text);
[[nodiscard]] std::optional<RunStatus> runStatusFromText(std::string_view text);

// What a writer knows when a run begins.
struct RunHeader {
  RunKind kind = RunKind::Emulate;
  std::string label;
  std::string modelJson;
  std::string clusterJson;
  std::string planJson;
  std::string configJson;  // how the run was made (engine: shardscope.engine-run/1); may be empty
};

struct RunRecord {
  RunId id{};
  RunKind kind = RunKind::Unknown;
  std::string kindText;  // as stored; differs from toText(kind) for Unknown
  RunStatus status = RunStatus::Running;
  std::string label;
  std::string modelJson;
  std::string clusterJson;
  std::string planJson;
  std::string configJson;  // "" for runs of schema-1 stores
  std::string createdAt;   // ISO 8601 UTC
  std::string finishedAt;  // empty while running or after a crash
  std::string error;       // reason given to fail()
  // A run is whole only when its writer called finish(). A crashed writer
  // leaves status Running forever.
  [[nodiscard]] bool isComplete() const { return status == RunStatus::Complete; }
};

struct RankInfo {
  int rank = 0;
  std::string host;
  int device = -1;
  int shardingGroup = -1;
  int replicaGroup = -1;
  friend bool operator==(const RankInfo&, const RankInfo&) = default;
};

// One interval on one stream of one rank, [startNs, endNs). A span with
// startNs == endNs is an instant.
struct Span {
  int rank = 0;
  int stream = 0;
  StringId kind = kNoString;
  StringId name = kNoString;
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  std::int64_t step = -1;        // -1: not inside a training step
  std::int64_t correlation = 0;  // 0: none
  std::int64_t bytes = 0;
  StringId table = kNoString;    // embedding table touched, if any
  friend bool operator==(const Span&, const Span&) = default;
};

struct Collective {
  int rank = 0;
  std::int64_t step = -1;
  StringId op = kNoString;         // "all_to_all", "reduce_scatter", ...
  StringId group = kNoString;      // rank list as text, e.g. "0,1,2,3"
  StringId algorithm = kNoString;  // "ring", "tree", ... or kNoString
  std::int64_t bytes = 0;
  int peers = 0;
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  friend bool operator==(const Collective&, const Collective&) = default;
};

// Per-step, per-rank totals so views draw bar charts without scanning spans.
struct StepSummary {
  std::int64_t step = 0;
  int rank = 0;
  std::int64_t embFwdNs = 0;
  std::int64_t embBwdNs = 0;
  std::int64_t denseNs = 0;
  std::int64_t commNs = 0;
  std::int64_t waitNs = 0;
  std::int64_t totalNs = 0;
  friend bool operator==(const StepSummary&, const StepSummary&) = default;
};

struct TableStat {
  int rank = 0;
  StringId table = kNoString;
  std::int64_t lookups = 0;
  std::int64_t uniqueRows = 0;
  std::int64_t timeNs = 0;
  friend bool operator==(const TableStat&, const TableStat&) = default;
};

// Span count and time range of one rank of one run, kept up to date by the
// writer at every commit.
struct SpanExtent {
  int rank = 0;
  std::int64_t spanCount = 0;
  std::int64_t minStartNs = 0;
  std::int64_t maxEndNs = 0;
  std::int64_t maxDurationNs = 0;
};

struct Bookmark {
  BookmarkId id{};
  RunId run{};
  std::int64_t tsNs = 0;
  std::string label;
  std::string createdAt;
};

struct Note {
  NoteId id{};
  RunId run{};
  std::string text;
  std::string createdAt;
};

// What `shardscope store info` prints.
struct RunSummary {
  RunRecord run;
  int rankCount = 0;
  std::int64_t spanCount = 0;
};

struct StoreInfo {
  std::filesystem::path path;
  int schemaVersion = 0;
  std::uint64_t fileSizeBytes = 0;  // the main file
  std::uint64_t walSizeBytes = 0;   // <file>-wal, 0 when absent
  std::vector<RunSummary> runs;
};

}  // namespace shardscope::core::store
