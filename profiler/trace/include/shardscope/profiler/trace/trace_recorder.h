// The engine's tracer: cheap in-memory recording of spans, collectives,
// per-step and per-table totals of one rank (or of every rank, in emulate
// mode), then one flush into a trace-store run. Names and conventions are in
// docs/formats/engine-trace.md; analysis reads runs by those names.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::profiler {

// Span kinds (Span::kind) the engine writes; see docs/formats/engine-trace.md.
namespace span_kind {
inline constexpr std::string_view kStep = "step";
inline constexpr std::string_view kInput = "input";           // generating / routing ids (not counted as load)
inline constexpr std::string_view kEmbFwd = "emb_fwd";        // one shard's pooled lookup; name = table
inline constexpr std::string_view kEmbBwd = "emb_bwd";        // one shard's backward + fused update; name = table
inline constexpr std::string_view kA2aIds = "a2a_ids";        // input-id all-to-all
inline constexpr std::string_view kA2aPooled = "a2a_pooled";  // pooled embeddings all-to-all (forward)
inline constexpr std::string_view kA2aGrads = "a2a_grads";    // gradient all-to-all (backward)
inline constexpr std::string_view kDense = "dense";           // dense stand-in (GEMMs)
inline constexpr std::string_view kReplicaSync = "replica_sync";
inline constexpr std::string_view kDenseAllreduce = "dense_allreduce";
inline constexpr std::string_view kDpAllreduce = "dp_allreduce";  // data-parallel tables' gradients in the group
// Collectives only imported traces have (docs/formats/import-trace.md); each
// is also the op of its `collectives` rows.
inline constexpr std::string_view kReduceScatter = "reduce_scatter";
inline constexpr std::string_view kAllGather = "all_gather";
inline constexpr std::string_view kSendRecv = "send_recv";
inline constexpr std::string_view kBroadcast = "broadcast";
inline constexpr std::string_view kReduce = "reduce";
}  // namespace span_kind

// A collective's group as engine traces name it: its global ranks, "0,2,4,6".
[[nodiscard]] std::string joinRanks(const std::vector<std::uint32_t>& ranks);

inline constexpr int kComputeStream = 0;
inline constexpr int kCommStream = 1;

[[nodiscard]] inline std::int64_t traceNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Recorded rows use recorder-local string indices; flush() interns them.
// Disabled recorders keep only step summaries and table stats (what the
// analysis needs), so "tracing off" is the baseline of the overhead bar.
class TraceRecorder {
 public:
  explicit TraceRecorder(bool spans_enabled = true);

  [[nodiscard]] bool spansEnabled() const { return spans_enabled_; }
  [[nodiscard]] std::uint32_t name(std::string_view text);  // local string index, interned once

  struct SpanRec {
    int rank = 0;
    int stream = kComputeStream;
    std::uint32_t kind = 0, name = 0, table = 0;  // local string indices; table 0 = none (index 0 is "")
    std::int64_t start_ns = 0, end_ns = 0, step = -1, bytes = 0;
    std::int64_t correlation = 0;  // CUPTI's correlation id of a GPU record; 0: none
  };
  struct CollectiveRec {
    int rank = 0;
    std::int64_t step = -1;
    std::uint32_t op = 0, group = 0;  // op: "all_to_all" | "all_reduce"; group: "0,2,4,6"
    std::int64_t bytes = 0;
    int peers = 0;
    std::int64_t start_ns = 0, end_ns = 0;
    std::uint32_t process_group = 0;  // "sharding", "replica", "world"; 0 = unknown
    std::uint32_t algorithm = 0;      // NCCL's "RING/LL" when the kernel records say; 0 = unknown
    std::int64_t seq = -1;            // the call's number in its process group, -1 unknown
  };

  void span(const SpanRec& s) {
    if (spans_enabled_) spans_.push_back(s);
  }
  void collective(const CollectiveRec& c) {
    if (spans_enabled_) collectives_.push_back(c);
  }
  void stepSummary(const core::store::StepSummary& s) { steps_.push_back(s); }
  // Adds to the (rank, table) totals.
  void tableStat(int rank, std::uint32_t table, std::int64_t lookups, std::int64_t unique_rows, std::int64_t time_ns);
  void rankInfo(const core::store::RankInfo& r) { ranks_.push_back(r); }

  // Shifts every timestamp by offset_ns (aligning a rank's clock to rank 0's).
  void shift(std::int64_t offset_ns);

  // Byte form for sending to rank 0 (MPI) and back; deserialize checks sizes.
  [[nodiscard]] std::vector<std::byte> serialize() const;
  [[nodiscard]] static core::Result<TraceRecorder> deserialize(std::span<const std::byte> bytes);
  // Appends another recorder's rows (its strings re-indexed).
  void merge(const TraceRecorder& other);

  // Writes everything into the run (interning strings), without finishing it.
  [[nodiscard]] core::Status flush(core::store::RunWriter& writer) const;

  [[nodiscard]] std::size_t spanCount() const { return spans_.size(); }
  [[nodiscard]] const std::vector<SpanRec>& spans() const { return spans_; }
  // The collectives as recorded, to refine from what a tracer saw later (times, algorithm).
  [[nodiscard]] std::vector<CollectiveRec>& collectives() { return collectives_; }
  [[nodiscard]] const std::string& text(std::uint32_t index) const { return strings_.at(index); }
  [[nodiscard]] const std::vector<core::store::StepSummary>& stepSummaries() const { return steps_; }

 private:
  bool spans_enabled_ = true;
  std::vector<std::string> strings_{std::string()};
  std::unordered_map<std::string, std::uint32_t> index_;
  std::vector<SpanRec> spans_;
  std::vector<CollectiveRec> collectives_;
  std::vector<core::store::StepSummary> steps_;
  struct TableTotals {
    int rank = 0;
    std::uint32_t table = 0;
    std::int64_t lookups = 0, unique_rows = 0, time_ns = 0;
  };
  std::vector<TableTotals> tables_;
  std::vector<core::store::RankInfo> ranks_;
};

}  // namespace shardscope::profiler
