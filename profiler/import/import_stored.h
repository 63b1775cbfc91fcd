// Rows that a trace describes itself (a ShardScope Chrome export: trace_import.h
// StoredRow) as the store sink holds them until they are written (private to
// profiler/import): their strings interned, and the class their span kind
// counts as in the step summaries. docs/formats/import-trace.md.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "shardscope/core/result.h"
#include "shardscope/core/store/store_types.h"
#include "shardscope/profiler/import/import_classify.h"
#include "shardscope/profiler/import/trace_import.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler::import_detail {

struct StoredInfo {
  core::store::StringId kind = core::store::kNoString;  // the span's kind; kNoString: a collectives row
  core::store::StringId table = core::store::kNoString;
  core::store::StringId op = core::store::kNoString;
  core::store::StringId group = core::store::kNoString;
  core::store::StringId algorithm = core::store::kNoString;
  core::store::StringId process_group = core::store::kNoString;
  std::int64_t step = -1, bytes = 0, seq = -1;
  int peers = 0;
  std::uint64_t* count = nullptr;  // the span kind's counter in the rank's report

  // The row's values, its strings interned by `intern` (std::string_view -> Result<StringId>); "" is none.
  template <class Intern>
  static core::Result<StoredInfo> of(const StoredRow& r, Intern intern) {
    StoredInfo x;
    x.step = r.step;
    x.bytes = r.bytes;
    x.seq = r.seq;
    x.peers = r.peers;
    const std::pair<std::string_view, core::store::StringId*> texts[] = {
        {r.kind, &x.kind},   {r.table, &x.table},         {r.op, &x.op},
        {r.group, &x.group}, {r.algorithm, &x.algorithm}, {r.process_group, &x.process_group}};
    for (const auto& [text, id] : texts) {
      if (text.empty()) continue;
      auto i = intern(text);
      if (!i) return i.error();
      *id = *i;
    }
    return x;
  }

  [[nodiscard]] core::store::Span span(int rank, int stream, core::store::StringId name, std::int64_t start_ns,
                                       std::int64_t end_ns, std::int64_t correlation) const {
    core::store::Span s;
    s.rank = rank;
    s.stream = stream;
    s.kind = kind;
    s.name = name;
    s.start_ns = start_ns;
    s.end_ns = end_ns;
    s.step = step;
    s.correlation = correlation;
    s.bytes = bytes;
    s.table = table;
    return s;
  }
  [[nodiscard]] core::store::Collective collective(int rank, std::int64_t start_ns, std::int64_t end_ns) const {
    core::store::Collective c;
    c.rank = rank;
    c.step = step;
    c.op = op;
    c.group = group;
    c.algorithm = algorithm;
    c.process_group = process_group;
    c.seq = seq;
    c.bytes = bytes;
    c.peers = peers;
    c.start_ns = start_ns;
    c.end_ns = end_ns;
    return c;
  }
};

// What a described span adds to its step's summary, as the class of a kernel
// would: embedding and dense time as themselves, the engine's and the
// imports' communication kinds as a collective (comm_ns), others nothing.
inline KernelClass summaryClass(std::string_view kind) {
  namespace k = span_kind;
  if (kind == k::kEmbFwd) return KernelClass::EmbFwd;
  if (kind == k::kEmbBwd) return KernelClass::EmbBwd;
  if (kind == k::kDense) return KernelClass::Dense;
  for (const std::string_view comm :
       {k::kA2aIds, k::kA2aPooled, k::kA2aGrads, k::kDpAllreduce, k::kReplicaSync, k::kDenseAllreduce,
        k::kReduceScatter, k::kAllGather, k::kSendRecv, k::kBroadcast, k::kReduce})
    if (kind == comm) return KernelClass::AllToAll;
  return KernelClass::Other;
}

}  // namespace shardscope::profiler::import_detail
