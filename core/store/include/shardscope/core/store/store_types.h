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
// 2 added runs.config_json, 3 table_access, 4 collectives.process_group and
// collectives.seq, 5 the span summaries (span_summaries.h); an older file
// opened for writing is migrated in place (one transaction), read-only opens
// read it as is.
inline constexpr int kSchemaVersion = 5;
// PRAGMA application_id of every trace store: ASCII "ShSc".
inline constexpr std::int32_t kApplicationId = 0x53685363;

// Cuda: the engine on GPUs (in-process threads or one process per GPU); ImportNccl: NCCL profiler plugin traces.
enum class RunKind { Emulate, Mpi, ImportKineto, ImportNsys, Cuda, ImportNccl, Unknown };
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
  std::string model_json;
  std::string cluster_json;
  std::string plan_json;
  std::string config_json;  // how the run was made (engine: shardscope.engine-run/1); may be empty
};

struct RunRecord {
  RunId id{};
  RunKind kind = RunKind::Unknown;
  std::string kind_text;  // as stored; differs from toText(kind) for Unknown
  RunStatus status = RunStatus::Running;
  std::string label;
  std::string model_json;
  std::string cluster_json;
  std::string plan_json;
  std::string config_json;  // "" for runs of schema-1 stores
  std::string created_at;   // ISO 8601 UTC
  std::string finished_at;  // empty while running or after a crash
  std::string error;        // reason given to fail()
  // A run is whole only when its writer called finish(). A crashed writer
  // leaves status Running forever.
  [[nodiscard]] bool isComplete() const { return status == RunStatus::Complete; }
};

struct RankInfo {
  int rank = 0;
  std::string host;
  int device = -1;
  int sharding_group = -1;
  int replica_group = -1;
  friend bool operator==(const RankInfo&, const RankInfo&) = default;
};

// One interval on one stream of one rank, [start_ns, end_ns). A span with
// start_ns == end_ns is an instant.
struct Span {
  int rank = 0;
  int stream = 0;
  StringId kind = kNoString;
  StringId name = kNoString;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t step = -1;        // -1: not inside a training step
  std::int64_t correlation = 0;  // 0: none
  std::int64_t bytes = 0;
  StringId table = kNoString;  // embedding table touched, if any
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
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  StringId process_group = kNoString;  // the process group's name (schema 4), or kNoString
  std::int64_t seq = -1;               // the call's sequence number in its process group, -1 unknown
  friend bool operator==(const Collective&, const Collective&) = default;
};

// One rank's window [t0_ns, t1_ns) of a window query.
struct RankWindow {
  int rank = 0;
  std::int64_t t0_ns = 0;
  std::int64_t t1_ns = 0;
  friend bool operator==(const RankWindow&, const RankWindow&) = default;
};

// Per-step, per-rank totals so views draw bar charts without scanning spans.
struct StepSummary {
  std::int64_t step = 0;
  int rank = 0;
  std::int64_t emb_fwd_ns = 0;
  std::int64_t emb_bwd_ns = 0;
  std::int64_t dense_ns = 0;
  std::int64_t comm_ns = 0;
  std::int64_t wait_ns = 0;
  std::int64_t total_ns = 0;
  friend bool operator==(const StepSummary&, const StepSummary&) = default;
};

struct TableStat {
  int rank = 0;
  StringId table = kNoString;
  std::int64_t lookups = 0;
  std::int64_t unique_rows = 0;
  std::int64_t time_ns = 0;
  friend bool operator==(const TableStat&, const TableStat&) = default;
};

// Span count and time range of one rank of one run, kept up to date by the
// writer at every commit.
struct SpanExtent {
  int rank = 0;
  std::int64_t span_count = 0;
  std::int64_t min_start_ns = 0;
  std::int64_t max_end_ns = 0;
  std::int64_t max_duration_ns = 0;
};

struct Bookmark {
  BookmarkId id{};
  RunId run{};
  std::int64_t ts_ns = 0;
  std::string label;
  std::string created_at;
};

struct Note {
  NoteId id{};
  RunId run{};
  std::string text;
  std::string created_at;
};

// What `shardscope store info` prints.
struct RunSummary {
  RunRecord run;
  int rank_count = 0;
  std::int64_t span_count = 0;
};

struct StoreInfo {
  std::filesystem::path path;
  int schema_version = 0;
  std::uint64_t file_size_bytes = 0;  // the main file
  std::uint64_t wal_size_bytes = 0;   // <file>-wal, 0 when absent
  std::vector<RunSummary> runs;
};

}  // namespace shardscope::core::store
