// Opening and querying a ShardScope trace store (one SQLite file, many runs).
// Opening validates the file (SQLite header, application id, schema version)
// and never rewrites an existing store; queries return value types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/span_summaries.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::core::store {

enum class OpenMode {
  ReadOnly,   // the file must exist and be a valid store
  ReadWrite,  // same, and bookmarks/notes may be added
  Create,     // like ReadWrite, but a missing file becomes a new empty store
};

namespace detail {
class Database;
}

// Interned strings of one store, id -> text.
class StringTable {
 public:
  StringTable() = default;
  explicit StringTable(std::unordered_map<std::int64_t, std::string> strings) : strings_(std::move(strings)) {}
  // "" for kNoString and for ids this table does not hold.
  [[nodiscard]] std::string_view at(StringId id) const;
  [[nodiscard]] std::size_t size() const { return strings_.size(); }
  // Calls f(StringId, std::string_view) for every string, in no particular order.
  template <class F>
  void forEach(F&& f) const {
    for (const auto& [id, text] : strings_) f(StringId{id}, std::string_view(text));
  }

 private:
  std::unordered_map<std::int64_t, std::string> strings_;
};

// A connection to one store. Move-only. Safe to use from one thread at a time;
// give each worker thread its own TraceStore. Reads see every committed batch,
// including those of runs that are still being written.
class TraceStore {
 public:
  TraceStore(TraceStore&&) noexcept;
  TraceStore& operator=(TraceStore&&) noexcept;
  ~TraceStore();

  [[nodiscard]] const std::filesystem::path& path() const;
  [[nodiscard]] int schemaVersion() const;

  [[nodiscard]] Result<std::vector<RunRecord>> listRuns() const;
  [[nodiscard]] Result<RunRecord> run(RunId id) const;
  [[nodiscard]] Result<std::vector<RankInfo>> ranks(RunId run) const;
  [[nodiscard]] Result<std::vector<SpanExtent>> spanExtents(RunId run) const;
  [[nodiscard]] Result<std::int64_t> spanCount(RunId run) const;

  // Spans of `ranks` that overlap [t0Ns, t1Ns): start_ns < t1Ns and
  // (end_ns > t0Ns, or an instant at start_ns >= t0Ns). Sorted by the order of
  // `ranks`, then by start_ns. Empty `ranks` means every rank of the run.
  [[nodiscard]] Result<std::vector<Span>> spansInWindow(RunId run, std::span<const int> ranks, std::int64_t t0Ns,
                                                        std::int64_t t1Ns) const;
  // The same with a window per rank: the spans of windows[i].rank overlapping
  // its window, window by window in the order given, each by start_ns.
  [[nodiscard]] Result<std::vector<Span>> spansInRankWindows(RunId run, std::span<const RankWindow> windows) const;

  // Span summaries (span_summaries.h; span_summaries.cpp). Building replaces
  // the run's summaries in one transaction (an error or a cancel leaves the
  // store as it was) and needs OpenMode::ReadWrite or Create. A store before
  // schema 5 (read-only) has none.
  [[nodiscard]] Status buildSpanSummaries(RunId run, const SpanSummaryOptions& options);
  // What is stored for the run, whatever its tag and format; nullopt: none.
  [[nodiscard]] Result<std::optional<SpanSummaryInfo>> spanSummaryInfo(RunId run) const;
  // The run's summaries when they are current: built with `tag`, in this
  // build's format, over the spans the run has now. nullopt otherwise.
  [[nodiscard]] Result<std::optional<SpanSummaryInfo>> currentSpanSummaries(RunId run, std::string_view tag) const;
  // A window at one level, handed to `visitor`. Errors: no current summaries
  // with request.tag, a level that was not built, a rank asked twice, a
  // damaged chunk, a store failure.
  [[nodiscard]] Status summaryWindow(const SummaryWindowRequest& request, SummaryVisitor& visitor) const;
  // Every rank's steps, by rank then start. Errors as summaryWindow.
  [[nodiscard]] Result<std::vector<SummarySpan>> summarySteps(RunId run, std::string_view tag) const;

  [[nodiscard]] Result<std::vector<StepSummary>> stepSummaries(RunId run) const;
  [[nodiscard]] Result<std::vector<TableStat>> tableStats(RunId run) const;
  // (table name, its shardscope.access/1 entry as JSON), by name; none for
  // runs without (imports, stores before schema 3).
  [[nodiscard]] Result<std::vector<std::pair<std::string, std::string>>> tableAccess(RunId run) const;
  [[nodiscard]] Result<std::vector<Collective>> collectives(RunId run) const;
  [[nodiscard]] Result<StringTable> strings() const;

  // User data. Adding needs OpenMode::ReadWrite or Create.
  [[nodiscard]] Result<BookmarkId> addBookmark(RunId run, std::int64_t tsNs, std::string_view label);
  [[nodiscard]] Result<std::vector<Bookmark>> bookmarks(RunId run) const;
  [[nodiscard]] Result<NoteId> addNote(RunId run, std::string_view text);
  [[nodiscard]] Result<std::vector<Note>> notes(RunId run) const;

  // Renames a run (its label). Needs OpenMode::ReadWrite or Create.
  [[nodiscard]] Status renameRun(RunId run, std::string_view label);
  // Deletes a run and everything recorded for it (spans, collectives, steps,
  // table stats, ranks, bookmarks, notes, span summaries), in one
  // transaction; other runs and the interned strings are not touched. A run
  // still being written ('running') is refused: mark it failed first
  // (failStaleRun) if its writer is gone. Needs OpenMode::ReadWrite or Create.
  [[nodiscard]] Status deleteRun(RunId run);

  // Marks a run whose writer died or was killed (still 'running') as failed
  // with `reason`. A complete or failed run is left as it is. Returns the
  // run's status afterwards. Needs OpenMode::ReadWrite or Create.
  [[nodiscard]] Result<RunStatus> failStaleRun(RunId run, std::string_view reason);

  // Copies run `sourceRun` of another store file (e.g. a snapshot fetched
  // from an agent, writeStoreSnapshot) into this store as a new run with the
  // same content, and returns its id (run_copy.cpp; docs/formats/store.md,
  // "Copying runs between stores"). Everything recorded for the run comes
  // along: the runs row (kind, status, label, JSON, times, error as they
  // are), ranks, spans, collectives, steps, table stats and access,
  // bookmarks, notes and span summaries; ids are new, string ids map onto
  // this store's strings. The source is read only, and may be of any schema
  // this build reads. One transaction: on any error nothing is imported.
  // Errors name the file: a missing or unreadable source, no such run, a
  // run still 'running' (refused), a damaged source. Needs
  // OpenMode::ReadWrite or Create.
  [[nodiscard]] Result<RunId> importRunFrom(const std::filesystem::path& source, RunId sourceRun);

 private:
  friend Result<TraceStore> openStore(const std::filesystem::path& path, OpenMode mode);
  TraceStore(std::unique_ptr<detail::Database> db, int schemaVersion);
  [[nodiscard]] Status requireRun(RunId run) const;

  std::unique_ptr<detail::Database> db_;
  int schemaVersion_ = 0;
};

// Opens (or with OpenMode::Create, creates) a store. Errors name the file:
// missing, empty, not SQLite, not a ShardScope store, newer schema, corrupt.
[[nodiscard]] Result<TraceStore> openStore(const std::filesystem::path& path, OpenMode mode = OpenMode::ReadOnly);

// Whether the file starts with SQLite's header: a trace store (or another
// SQLite database) rather than a project file. False when it cannot be read.
[[nodiscard]] bool isSqliteFile(const std::filesystem::path& path);

// Everything `store info` prints, read-only. Span counts come from the
// per-rank extents the writer maintains, so this is fast on large stores.
[[nodiscard]] Result<StoreInfo> inspectStore(const std::filesystem::path& path);

// Full integrity check (PRAGMA quick_check); reads every page, so it takes
// about a second per few hundred MB. Ok when the store is intact.
[[nodiscard]] Status verifyStore(const std::filesystem::path& path);

// Writes a consistent copy of the whole store `store` (what its write-ahead
// log holds included) to the new file `outPath`: one self-contained file
// (journal mode DELETE: reading it needs no -wal or -shm) that opens as a
// store of the same schema. Written under a private name beside `outPath`
// and linked into place only if `outPath` is still free: an existing
// `outPath` is refused, never replaced, and no reader sees a half-written
// copy (run_copy.cpp). Reads `store` only; writers may go on meanwhile.
[[nodiscard]] Status writeStoreSnapshot(const std::filesystem::path& store, const std::filesystem::path& outPath);

}  // namespace shardscope::core::store
