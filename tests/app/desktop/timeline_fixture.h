// A generated engine-shaped run for the timeline's tests and bench: per rank
// and step an input span, the id all-to-all, one forward span per table, the
// pooled all-to-all, dense, the gradient all-to-all, one backward span per
// table, the dense all-reduce and the replica sync, inside a step span.
// Collectives end together on every rank (the last arrival plus a transfer
// time), so ranks that arrive early wait; `straggler` computes slower every
// seventh step. Collective rows carry process groups and sequence numbers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/core/store/run_writer.h"

namespace shardscope::testing {

struct TimelineRunShape {
  int ranks = 4;
  int steps = 30;
  int tables = 6;
  int straggler = 2;                   // -1: none
  std::int64_t t0_ns = 1'000'000'000;  // the first step's start
};

struct TimelineRunFacts {
  core::store::RunId run{};
  std::int64_t spans = 0;
  std::int64_t collectives = 0;
  std::int64_t t0_ns = 0;
  std::int64_t t1_ns = 0;
};

inline core::Result<TimelineRunFacts> writeTimelineRun(const std::filesystem::path& path,
                                                       const TimelineRunShape& shape) {
  namespace st = core::store;
  st::RunHeader header;
  header.kind = st::RunKind::Emulate;
  header.label = "generated timeline";
  st::WriterOptions options;
  options.rows_per_commit = 256 * 1024;
  auto w = st::RunWriter::begin(path, header, options);
  if (!w) return w.error();
  auto id = [&w](const std::string& text) { return w->intern(text).value(); };
  const st::StringId k_step = id("step"), k_input = id("input"), k_fwd = id("emb_fwd"), k_bwd = id("emb_bwd"),
                     k_dense = id("dense"), k_ids = id("a2a_ids"), k_pooled = id("a2a_pooled"),
                     k_grads = id("a2a_grads"), k_ar = id("dense_allreduce"), k_sync = id("replica_sync");
  const st::StringId op_a2a = id("all_to_all"), op_ar = id("all_reduce");
  const st::StringId pg_shard = id("sharding"), pg_world = id("world"), pg_replica = id("replica");
  std::string all;
  for (int r = 0; r < shape.ranks; ++r) all += (r ? "," : "") + std::to_string(r);
  const st::StringId group = id(all);
  std::vector<st::StringId> tables;
  for (int t = 0; t < shape.tables; ++t) tables.push_back(id("table_" + std::to_string(t)));
  for (int r = 0; r < shape.ranks; ++r) {
    if (auto s = w->addRank({r, "host0", r, 0, r}); !s) return s.error();
  }
  TimelineRunFacts facts;
  facts.run = w->run();
  facts.t0_ns = shape.t0_ns;
  std::vector<std::int64_t> cur(static_cast<std::size_t>(shape.ranks), shape.t0_ns);
  std::vector<st::Span> spans;
  std::int64_t seq_shard = 0, seq_world = 0, seq_replica = 0;
  auto rankSlow = [&shape](int r, int s) { return r == shape.straggler && s % 7 == 3 ? 1.6 : 1.0 + 0.05 * r; };
  for (int s = 0; s < shape.steps; ++s) {
    spans.clear();
    const std::vector<std::int64_t> step_start = cur;
    auto own = [&](int r, st::StringId kind, st::StringId name, std::int64_t dur, std::int64_t bytes = 0) {
      auto& t = cur[static_cast<std::size_t>(r)];
      spans.push_back(
          {r, 0, kind, name, t, t + dur, s, static_cast<std::int64_t>(spans.size()) + 1, bytes, st::kNoString});
      t += dur;
    };
    auto sync = [&](st::StringId kind, st::StringId op, st::StringId pg, std::int64_t& seq, std::int64_t transfer,
                    std::int64_t bytes) -> core::Status {
      const std::int64_t last = *std::max_element(cur.begin(), cur.end());
      for (int r = 0; r < shape.ranks; ++r) {
        auto& t = cur[static_cast<std::size_t>(r)];
        spans.push_back({r, 1, kind, kind, t, last + transfer, s, 0, bytes, st::kNoString});
        st::Collective c{r, s, op, group, st::kNoString, bytes, shape.ranks - 1, t, last + transfer, pg, seq};
        if (auto st = w->addCollective(c); !st) return st;
        ++facts.collectives;
        t = last + transfer;
      }
      ++seq;
      return core::Ok{};
    };
    for (int r = 0; r < shape.ranks; ++r) own(r, k_input, k_input, 10'000);
    if (auto st = sync(k_ids, op_a2a, pg_shard, seq_shard, 40'000, 64 << 10); !st) return st.error();
    for (int r = 0; r < shape.ranks; ++r) {
      for (int t = 0; t < shape.tables; ++t) {
        own(r, k_fwd, tables[static_cast<std::size_t>(t)],
            static_cast<std::int64_t>((15'000 + 2'000 * t) * rankSlow(r, s)), 4096);
      }
    }
    if (auto st = sync(k_pooled, op_a2a, pg_shard, seq_shard, 80'000, 1 << 20); !st) return st.error();
    for (int r = 0; r < shape.ranks; ++r) own(r, k_dense, k_dense, 150'000);
    if (auto st = sync(k_grads, op_a2a, pg_shard, seq_shard, 80'000, 1 << 20); !st) return st.error();
    for (int r = 0; r < shape.ranks; ++r) {
      for (int t = 0; t < shape.tables; ++t) {
        own(r, k_bwd, tables[static_cast<std::size_t>(t)],
            static_cast<std::int64_t>((25'000 + 3'000 * t) * rankSlow(r, s)), 4096);
      }
    }
    if (auto st = sync(k_ar, op_ar, pg_world, seq_world, 120'000, 8 << 20); !st) return st.error();
    if (auto st = sync(k_sync, op_ar, pg_replica, seq_replica, 60'000, 4 << 20); !st) return st.error();
    for (int r = 0; r < shape.ranks; ++r) {
      const auto u = static_cast<std::size_t>(r);
      spans.push_back({r, 0, k_step, k_step, step_start[u], cur[u], s, 0, 0, st::kNoString});
      facts.t1_ns = std::max(facts.t1_ns, cur[u]);
      cur[u] += 5'000 * (r + 1);  // host gap before the next step, longer on higher ranks
    }
    facts.spans += static_cast<std::int64_t>(spans.size());
    std::sort(spans.begin(), spans.end(), [](const st::Span& a, const st::Span& b) {
      return std::pair{a.rank, a.start_ns} < std::pair{b.rank, b.start_ns};
    });
    if (auto st = w->addSpans(spans); !st) return st.error();
  }
  if (auto st = w->finish(); !st) return st.error();
  return facts;
}

}  // namespace shardscope::testing
