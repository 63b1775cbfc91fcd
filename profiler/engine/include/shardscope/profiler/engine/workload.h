// The engine's inputs: per table, the ids a batch of samples looks up, drawn
// from the table's access and pooling distributions (or replayed from a
// recorded id file). Counter-based, so any rank can generate exactly its own
// slice of the global batch, identically in every process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/access.h"
#include "shardscope/core/model.h"
#include "shardscope/core/result.h"
#include "shardscope/core/store/run_writer.h"

namespace shardscope::profiler {

// One table's ids for a run of samples, in CSR form like TorchRec's
// KeyedJaggedTensor: lengths[i] ids for sample i, ids of all samples concatenated.
struct Batch {
  std::vector<std::uint32_t> lengths;
  std::vector<std::uint64_t> ids;
  bool operator==(const Batch&) const = default;
};

// Recorded ids of `samples` samples for every table of a model (the replay
// file's content; docs/formats/workload-ids.md). tables[t].lengths.size() == samples.
struct IdTrace {
  std::uint64_t samples = 0;
  std::vector<std::uint64_t> rows;  // per table, every id of table t is < rows[t]
  std::vector<Batch> tables;
  bool operator==(const IdTrace&) const = default;
};

// Draws ids as a pure function of (seed, table, global sample index, slot):
// batch(t, 0, 100) equals batch(t, 0, 40) followed by batch(t, 40, 60), and
// the same seed gives the same ids in every process. Bit-identical across
// machines for uniform, hot-set and histogram tables (integer and basic IEEE
// arithmetic only); zipf draws also call log/exp and so are identical across
// machines that share a libm (glibc on x86-64/aarch64). Details and the
// pooling rules are in docs/formats/workload-ids.md.
class WorkloadGenerator {
 public:
  // Synthetic ids from the model's distributions.
  WorkloadGenerator(const core::ModelSpec& model, std::uint64_t seed);
  // Replayed ids: sample s of the trace is global sample s modulo
  // trace.samples, so any number of steps can run. The trace must match the
  // model (see readIdTrace); an empty trace yields empty samples.
  WorkloadGenerator(const core::ModelSpec& model, IdTrace trace);

  // Ids of table `table` for global samples [first_sample, first_sample + samples).
  [[nodiscard]] Batch batch(std::size_t table, std::uint64_t first_sample, std::uint32_t samples) const;
  [[nodiscard]] std::size_t tableCount() const { return tables_.size(); }
  [[nodiscard]] bool replaying() const { return replay_; }

  // Every table's ids for samples [first_sample, first_sample + samples), ready to write.
  [[nodiscard]] IdTrace record(std::uint64_t first_sample, std::uint32_t samples) const;

 private:
  struct TableSampler {
    core::TableSpec spec;
    std::uint64_t key = 0;                           // seed and table index, mixed
    std::uint64_t hot_rows = 0;                      // HotSet: rows [0, hot_rows) are hot
    std::vector<std::uint64_t> seg_begin;            // Histogram: segment starts (the planner's boundaries), plus rows
    std::vector<double> seg_cdf;                     // Histogram: cumulative share up to segment i's end; last = 1
    double zipf_h_x1 = 0, zipf_h_n = 0, zipf_s = 0;  // Zipf: rejection-inversion constants
    std::vector<std::uint64_t> replay_offsets;       // Replay: first id of each trace sample, plus end
  };

  [[nodiscard]] std::uint32_t length(const TableSampler& t, std::uint64_t sample) const;
  [[nodiscard]] std::uint64_t id(const TableSampler& t, std::uint64_t sample, std::uint32_t slot) const;

  std::vector<TableSampler> tables_;
  bool replay_ = false;
  IdTrace trace_;
};

// Binary id file (little-endian, docs/formats/workload-ids.md). Errors name the
// file, the byte offset and what was expected.
[[nodiscard]] core::Status writeIdTrace(const std::string& path, const IdTrace& trace);
// Reads and checks a file against `model`: table count and rows must match,
// every id in range, lengths summing to the id count, nothing truncated or trailing.
[[nodiscard]] core::Result<IdTrace> readIdTrace(const std::string& path, const core::ModelSpec& model);

// First global sample of `world_rank`'s batch in step `step` (warm-up steps
// count: measured step s is step warmup + s): ((step x N) + rank) x batch.
[[nodiscard]] inline std::uint64_t firstSampleOf(std::uint64_t step, std::uint32_t world_size, std::uint32_t world_rank,
                                                 std::uint32_t batch) {
  return (step * world_size + world_rank) * batch;
}

// Sample ranges [first, first + samples) whose ids a run looked up.
struct SampleRange {
  std::uint64_t first = 0;
  std::uint32_t samples = 0;
};

// What a run looked up in table `table` (a shardscope.access/1 entry): the
// ids of `ranges` counted into min(`buckets`, rows) equal row buckets
// (exact) and the `hot` most frequent ids. Bounded memory: ids are counted
// exactly in at most kAccessCountedIds distinct keys; an id seen after that
// is left out of the hot list (so every hot count is a lower bound).
// Every table's measuredAccess over `ranges`, stored in the run `writer` writes.
[[nodiscard]] core::Status storeTableAccess(core::store::RunWriter& writer, const WorkloadGenerator& workload,
                                            const core::ModelSpec& model, const std::vector<SampleRange>& ranges);

inline constexpr std::size_t kAccessCountedIds = std::size_t{1} << 16;
[[nodiscard]] core::TableAccess measuredAccess(const WorkloadGenerator& workload, const core::TableSpec& spec,
                                               std::size_t table, const std::vector<SampleRange>& ranges,
                                               std::size_t buckets = 1024, std::size_t hot = 256);

}  // namespace shardscope::profiler
