// What the timeline's details panel says about a clicked span, a density
// block of merged spans or a collective call: only the fields that have a
// value (no stream of a step row, no step or sequence number -1, no
// correlation 0, no empty name), durations and positions as people read
// them (core::formatDuration; positions since the run's first span), sizes
// in binary units (core::formatBytes). The page only lays the fields out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shardscope/core/store/trace_store.h"
#include "shardscope/profiler/analysis/timeline_inspect.h"
#include "shardscope/profiler/analysis/timeline_window.h"

namespace shardscope::profiler {

struct DetailField {
  std::string label;  // "duration"
  std::string value;  // "12.3 µs"
  friend bool operator==(const DetailField&, const DetailField&) = default;
};

struct Details {
  std::string title;  // the span's name (else its kind, else its class), "12 spans merged", "all_to_all in sharding"
  std::vector<DetailField> fields;
  // The value of the field `label`, "" when there is none.
  [[nodiscard]] std::string value(std::string_view label) const;
};

// A span drawn on its own on (rank, stream) of a run whose first span starts at run_t0_ns.
[[nodiscard]] Details spanDetails(const TimelineItem& item, int rank, int stream, std::int64_t run_t0_ns,
                                  const core::store::StringTable& strings);
// Spans narrower than a pixel merged into one block.
[[nodiscard]] Details blockDetails(const DensityBlock& block, int rank, int stream, std::int64_t run_t0_ns);
// A collective call on every member rank: op and group, step, sequence number,
// size, ranks and the one that arrived last (the page lists the arrivals).
[[nodiscard]] Details callDetails(const CollectiveCall& call);

}  // namespace shardscope::profiler
