// Writing one run into a trace store: rows are buffered and inserted in
// batches, one transaction per batch, so a killed writer leaves a readable
// store whose half run still says 'running'. Only finish() marks it complete.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string_view>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::core::store {

struct WriterOptions {
  // Buffered rows (all tables together) that trigger one batch commit.
  std::size_t rows_per_commit = 64 * 1024;
  // How long a commit waits for another writer of the same file.
  int busy_timeout_ms = 10'000;
};

// Move-only. Use from one thread. Dropping a writer that neither finished nor
// failed commits what it buffered and marks the run failed ("abandoned").
class RunWriter {
 public:
  // Creates the store when `path` does not exist; an existing file must be a
  // valid store. Inserts the run with status 'running'.
  [[nodiscard]] static Result<RunWriter> begin(const std::filesystem::path& path, const RunHeader& header,
                                               WriterOptions options = {});

  RunWriter(RunWriter&&) noexcept;
  RunWriter& operator=(RunWriter&&) noexcept;
  ~RunWriter();

  [[nodiscard]] RunId run() const;

  // Interned strings are shared by all runs of the store. Cached in memory;
  // a miss costs one small transaction.
  [[nodiscard]] Result<StringId> intern(std::string_view text);

  // Buffer rows. A row that is invalid on its own (end before start, unknown
  // string id) is refused with an error and the writer stays usable; a failed
  // commit breaks the writer and every later call returns that error.
  [[nodiscard]] Status addRank(const RankInfo& rank);
  [[nodiscard]] Status addSpan(const Span& span);
  [[nodiscard]] Status addSpans(std::span<const Span> spans);
  [[nodiscard]] Status addCollective(const Collective& collective);
  // Same (step, rank) or (rank, table) twice: the later row wins.
  [[nodiscard]] Status addStepSummary(const StepSummary& summary);
  [[nodiscard]] Status addTableStat(const TableStat& stat);
  // One table's measured access in this run: a shardscope.access/1 table
  // entry as JSON (docs/formats/access.md); written at once, replacing any
  // earlier one of the same table.
  [[nodiscard]] Status setTableAccess(std::string_view table, std::string_view access_json);
  // Replaces the run's configuration JSON (runs.config_json): for what is
  // known only at the end, such as a tracer's overhead and dropped records.
  [[nodiscard]] Status setConfig(std::string_view config_json);

  // Commits everything buffered now (readers see it afterwards).
  [[nodiscard]] Status commit();
  [[nodiscard]] std::int64_t committedSpans() const;

  // Commit the rest and mark the run complete / failed. After either, the
  // writer accepts nothing more.
  [[nodiscard]] Status finish();
  [[nodiscard]] Status fail(std::string_view reason);

 private:
  struct State;
  explicit RunWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace shardscope::core::store
