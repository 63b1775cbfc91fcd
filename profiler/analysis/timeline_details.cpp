// The timeline's details as fields; docs/desktop/timeline.md ("Details").
#include "shardscope/profiler/analysis/timeline_details.h"

#include <algorithm>

#include "shardscope/core/summary.h"
#include "shardscope/core/time_text.h"

namespace shardscope::profiler {

namespace {

std::string duration(std::int64_t ns) { return core::formatDuration(std::chrono::nanoseconds(ns)); }

void add(Details& d, std::string label, std::string value) {
  if (!value.empty()) d.fields.push_back({std::move(label), std::move(value)});
}

// The stream of a row, or nothing for the step row (it has none of its own).
void addStream(Details& d, int stream) {
  if (stream >= 0) add(d, "stream", std::to_string(stream));
}

}  // namespace

std::string Details::value(std::string_view label) const {
  const auto it = std::find_if(fields.begin(), fields.end(), [label](const auto& f) { return f.label == label; });
  return it == fields.end() ? std::string() : it->value;
}

Details spanDetails(const TimelineItem& item, int rank, int stream, std::int64_t run_t0_ns,
                    const core::store::StringTable& strings) {
  const std::string name(strings.at(item.name));
  const std::string kind(strings.at(item.kind));
  const std::string cls(toString(item.cls));
  Details d;
  d.title = !name.empty() ? name : !kind.empty() ? kind : cls;
  add(d, "class", cls);
  if (kind != d.title) add(d, "kind", kind);
  add(d, "rank", std::to_string(rank));
  addStream(d, stream);
  add(d, "start", duration(item.start_ns - run_t0_ns));
  add(d, "duration", duration(item.end_ns - item.start_ns));
  if (item.step >= 0) add(d, "step", std::to_string(item.step));
  if (item.bytes > 0) add(d, "size", core::formatBytes(static_cast<std::uint64_t>(item.bytes)));
  if (item.correlation > 0) add(d, "CUPTI correlation", std::to_string(item.correlation));
  return d;
}

Details blockDetails(const DensityBlock& block, int rank, int stream, std::int64_t run_t0_ns) {
  Details d;
  d.title = std::to_string(block.count);
  d.title.append(block.count == 1 ? " span" : " spans merged");
  add(d, "rank", std::to_string(rank));
  addStream(d, stream);
  add(d, "from", duration(block.start_ns - run_t0_ns));
  add(d, "to", duration(block.end_ns - run_t0_ns));
  add(d, "busy", duration(block.busy_ns));
  add(d, "mostly", std::string(toString(block.dominant)));
  return d;
}

Details callDetails(const CollectiveCall& call) {
  Details d;
  d.title = call.op.empty() ? "collective call" : call.op;
  if (!call.process_group.empty()) d.title.append(" in ").append(call.process_group);
  if (call.step >= 0) add(d, "step", std::to_string(call.step));
  if (call.seq >= 0) add(d, "call in its group", std::string("#").append(std::to_string(call.seq)));
  if (call.bytes > 0) add(d, "size", core::formatBytes(static_cast<std::uint64_t>(call.bytes)));
  add(d, "ranks", std::to_string(call.arrivals.size()));
  if (call.arrivals.size() > 1 && call.last_rank >= 0) {
    add(d, "last in", std::string("rank ").append(std::to_string(call.last_rank)));
    add(d, "after the others' median", duration(call.last_by_ns));
  }
  return d;
}

}  // namespace shardscope::profiler
