#include "table_options.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>

#include "shardscope/core/torchrec_sharding.h"

namespace shardscope::planner::detail {

using core::columnShardWidth;
using core::rowWiseBlocks;

namespace {
void finish(TableOption& o) {
  o.total_load = 0;
  o.max_piece = 0;
  o.min_piece = o.pieces.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  o.max_piece_memory = 0;
  o.piece_count = static_cast<std::uint32_t>(o.pieces.size());
  for (const auto& p : o.pieces) {
    o.total_load += p.load;
    o.max_piece = std::max(o.max_piece, p.load);
    o.min_piece = std::min(o.min_piece, p.load);
    o.max_piece_memory = std::max(o.max_piece_memory, p.memory);
  }
}

Piece makePiece(const CostModel& m, const Grid& g, const GridCosts& gc, std::uint32_t t, std::uint64_t ro,
                std::uint64_t rows, std::uint32_t co, std::uint32_t cols, int slot, int position) {
  Piece p{t, ro, rows, co, cols, slot, position, 0, 0};
  const ShardCost c = m.shardCost(t, ro, rows, cols, g, gc);
  p.load = c.load();
  p.memory = c.memory_bytes + c.buffer_bytes;
  return p;
}

// Row-wise over the whole group, TorchRec geometry. For TorchRec block k is
// fixed on group rank k and empty blocks are kept (TorchRec runs them: every
// rank writes partial pooled outputs); ShardScope's engine places the
// non-empty blocks anywhere. Equal blocks inside one access segment cost the
// same: price one, copy the rest.
template <class F>
void forEachRowWisePiece(const CostModel& model, const Grid& grid, const GridCosts& gc, std::uint32_t t,
                         core::PlanTarget target, F&& f) {
  const auto& spec = model.model().tables[t];
  const AccessProfile& profile = model.access(t);
  const bool torchrec = target == core::PlanTarget::TorchRec;
  std::size_t run_segment = SIZE_MAX;
  std::uint64_t run_rows = 0;
  Piece last;
  std::optional<Piece> empty;
  // Blocks ascend, so the segments of their first and last rows are found by walking forward.
  const std::size_t segments = profile.segmentCount();
  std::size_t sa = 0, sb = 0;
  auto advance = [&](std::size_t& seg, std::uint64_t row) {
    while (seg + 1 < segments && profile.segmentBegin(seg + 1) <= row) ++seg;
  };
  int k = 0;
  for (const auto& b : rowWiseBlocks(spec.rows, grid.group_size)) {
    const int position = torchrec ? k : -1;
    ++k;
    if (b.rows == 0) {
      if (!torchrec) continue;
      if (!empty) empty = makePiece(model, grid, gc, t, b.offset, 0, 0, spec.dim, -1, -1);
      empty->position = position;
      f(*empty);
      continue;
    }
    advance(sa, b.offset);
    advance(sb, b.offset + b.rows - 1);
    if (sa == sb && sa == run_segment && b.rows == run_rows) {
      last.row_offset = b.offset;
    } else {
      last = makePiece(model, grid, gc, t, b.offset, b.rows, 0, spec.dim, -1, -1);
      run_segment = sa == sb ? sa : SIZE_MAX;
      run_rows = b.rows;
    }
    last.position = position;
    f(last);
  }
}

// A table's rows over one node group (table_row_wise, or one column block of
// a grid): block j on rank j of the group's node group for TorchRec.
void addNodeGroupPieces(const CostModel& model, const Grid& grid, const GridCosts& gc, std::uint32_t t,
                        std::uint32_t col_offset, std::uint32_t cols, int slot, core::PlanTarget target,
                        std::vector<Piece>& out) {
  const bool torchrec = target == core::PlanTarget::TorchRec;
  int j = 0;
  for (const auto& b : rowWiseBlocks(model.model().tables[t].rows, grid.node_group_size)) {
    const int position = torchrec ? j : -1;
    ++j;
    if (b.rows == 0 && !torchrec) continue;
    out.push_back(makePiece(model, grid, gc, t, b.offset, b.rows, col_offset, cols, slot, position));
  }
}
}  // namespace

std::vector<Piece> piecesOf(const CostModel& model, const Grid& grid, const GridCosts& gc, std::uint32_t table,
                            const TableOption& option, core::PlanTarget target) {
  if (option.type != core::ShardingType::RowWise || !option.pieces.empty()) return option.pieces;
  std::vector<Piece> out;
  out.reserve(option.piece_count);
  forEachRowWisePiece(model, grid, gc, table, target, [&](const Piece& p) { out.push_back(p); });
  return out;
}

namespace {
// Forced and forbidden types, and pins (a pinned table's pieces must fit its
// pins), filter `all` into out.options; when nothing is left the constraint
// is reported and the unconstrained options are used.
void applyTypeConstraints(std::vector<TableOption> all, const core::TableConstraint* c, const core::TableSpec& spec,
                          const Grid& grid, std::size_t max_pieces, TableChoices& out) {
  using core::ShardingType;
  const std::uint32_t M = grid.group_size;
  const std::uint32_t L = grid.node_group_size;
  const auto fitsPins = [&](const TableOption& o) {
    return out.pins.empty() || !(o.type == ShardingType::DataParallel || o.piece_count > max_pieces ||
                                 o.type == ShardingType::TableRowWise || o.type == ShardingType::GridShard);
  };
  for (auto& o : all) {
    if (c && c->force && o.type != *c->force) continue;
    if (c && std::find(c->forbid.begin(), c->forbid.end(), o.type) != c->forbid.end()) continue;
    if (!fitsPins(o)) continue;
    out.options.push_back(std::move(o));
  }
  if (out.options.empty()) {
    std::string why = "no sharding type is left";
    if (c && c->force) {
      why = std::string("forced ") + core::toString(*c->force) + " is not possible here";
      if (*c->force == ShardingType::ColumnWise || *c->force == ShardingType::GridShard)
        why += " (dim " + std::to_string(spec.dim) + " has no column split of width >= 128, or too few ranks)";
      else if (*c->force == ShardingType::TableRowWise)
        why += " (node groups of " + std::to_string(L) + " rank(s) in a group of " + std::to_string(M) + ")";
      else if (!out.pins.empty())
        why += " with " + std::to_string(out.pins.size()) + " pinned rank(s)";
    }
    out.problems.push_back("table " + spec.name + ": constraint cannot be met: " + why +
                           "; using the unconstrained choice");
    for (auto& o : all) {
      if (fitsPins(o)) out.options.push_back(o);
    }
    if (out.options.empty()) out.options = std::move(all);
  }
}

TableChoices enumerateOptions(const CostModel& model, const Grid& grid, const GridCosts& gc, std::uint32_t t,
                              const core::Constraints& constraints, core::PlanTarget target, std::uint64_t capacity,
                              bool splits, const std::vector<TableOption>* unsplit = nullptr) {
  using core::ShardingType;
  // Options already priced in the first pass (unconstrained tables) are reused.
  auto reuse = [&](ShardingType type, std::vector<TableOption>& into) {
    if (!unsplit) return false;
    for (const auto& o : *unsplit)
      if (o.type == type) {
        into.push_back(o);
        return true;
      }
    return false;
  };
  TableChoices out;
  const auto& spec = model.model().tables[t];
  const std::uint32_t M = grid.group_size;
  const std::uint32_t L = grid.node_group_size;
  const core::TableConstraint* c = constraints.find(spec.name);
  if (c) {
    for (auto r : c->pin_ranks) {
      if (r < M)
        out.pins.push_back(r);
      else
        out.problems.push_back("table " + spec.name + ": pin to group rank " + std::to_string(r) +
                               " cannot be met: the sharding group has ranks 0.." + std::to_string(M - 1));
    }
    if (!c->pin_ranks.empty() && out.pins.empty())
      out.problems.push_back("table " + spec.name + ": no valid pinned rank left; placed freely");
  }
  const std::size_t max_pieces = out.pins.empty() ? M : out.pins.size();

  std::vector<TableOption> all;
  // table_wise
  if (!reuse(ShardingType::TableWise, all)) {
    TableOption o{ShardingType::TableWise, {makePiece(model, grid, gc, t, 0, spec.rows, 0, spec.dim, -1, -1)}};
    finish(o);
    all.push_back(std::move(o));
  }
  // row_wise over every rank of the group (TorchRec geometry)
  if (splits && M > 1 && spec.rows > 1) {
    TableOption o{ShardingType::RowWise, {}};
    forEachRowWisePiece(model, grid, gc, t, target, [&](const Piece& p) {
      o.total_load += p.load;
      o.max_piece = std::max(o.max_piece, p.load);
      o.min_piece = o.piece_count ? std::min(o.min_piece, p.load) : p.load;
      o.max_piece_memory = std::max(o.max_piece_memory, p.memory);
      ++o.piece_count;
    });
    if (o.piece_count > 1) all.push_back(std::move(o));
  }
  // column_wise: shards of TorchRec's width, placed table-wise
  const std::uint32_t width = columnShardWidth(spec.dim);
  const std::uint32_t ncols = spec.dim / width;
  if (ncols > 1 && ncols <= M && !reuse(ShardingType::ColumnWise, all)) {
    TableOption o{ShardingType::ColumnWise, {}};
    for (std::uint32_t k = 0; k < ncols; ++k)
      o.pieces.push_back(makePiece(model, grid, gc, t, 0, spec.rows, k * width, width, -1, -1));
    finish(o);
    all.push_back(std::move(o));
  }
  // table_row_wise (rows across one node group) and grid_shard (each column block so)
  if (splits && L > 1 && L < M && spec.rows > 1) {
    TableOption o{ShardingType::TableRowWise, {}};
    addNodeGroupPieces(model, grid, gc, t, 0, spec.dim, 0, target, o.pieces);
    finish(o);
    if (o.pieces.size() > 1) all.push_back(std::move(o));
    if (ncols > 1 && ncols * L <= M) {
      TableOption gopt{ShardingType::GridShard, {}};
      for (std::uint32_t k = 0; k < ncols; ++k)
        addNodeGroupPieces(model, grid, gc, t, k * width, width, static_cast<int>(k), target, gopt.pieces);
      finish(gopt);
      all.push_back(std::move(gopt));
    }
  }
  // data_parallel: a full copy on every rank
  if (!reuse(ShardingType::DataParallel, all)) {
    TableOption o{ShardingType::DataParallel, {}};
    const ShardCost dp = model.dataParallelCost(t, grid, gc);
    o.dp_load = dp.load();
    o.dp_memory = dp.memory_bytes;
    o.total_load = o.dp_load * M;
    o.max_piece = o.dp_load;
    o.max_piece_memory = dp.memory_bytes;
    all.push_back(std::move(o));
  }

  applyTypeConstraints(std::move(all), c, spec, grid, max_pieces, out);
  // Options whose biggest piece cannot fit any rank are kept last (reported when used).
  std::stable_sort(out.options.begin(), out.options.end(), [&](const TableOption& a, const TableOption& b) {
    const bool fa = a.max_piece_memory <= capacity, fb = b.max_piece_memory <= capacity;
    if (fa != fb) return fa;
    return a.total_load < b.total_load;
  });
  return out;
}

}  // namespace

std::vector<TableChoices> enumerateAllOptions(const CostModel& model, const Grid& grid, const GridCosts& gc,
                                              const core::Constraints& constraints, core::PlanTarget target,
                                              std::uint64_t capacity, double split_threshold) {
  const auto T = static_cast<std::uint32_t>(model.model().tables.size());
  std::vector<TableChoices> out;
  out.reserve(T);
  for (std::uint32_t t = 0; t < T; ++t)
    out.push_back(enumerateOptions(model, grid, gc, t, constraints, target, capacity, false));
  double sum = 0;
  for (const auto& c : out) {
    double m = std::numeric_limits<double>::infinity();
    for (const auto& o : c.options) m = std::min(m, o.total_load);
    sum += m;
  }
  const double mean_load = sum / grid.group_size;
  for (std::uint32_t t = 0; t < T; ++t) {
    const auto& first = out[t].options.front();
    double tw_piece = std::numeric_limits<double>::infinity();
    std::uint64_t tw_mem = 0;
    for (const auto& o : out[t].options)
      if (o.type == core::ShardingType::TableWise) {
        tw_piece = o.max_piece;
        tw_mem = o.max_piece_memory;
      }
    const bool constrained = constraints.find(model.model().tables[t].name) != nullptr;
    const bool heavy = tw_piece > split_threshold * mean_load || tw_mem > capacity || first.max_piece_memory > capacity;
    if (heavy || constrained)
      out[t] = enumerateOptions(model, grid, gc, t, constraints, target, capacity, true,
                                constrained ? nullptr : &out[t].options);
  }
  return out;
}

double lowerBoundOf(const std::vector<TableChoices>& choices, std::uint32_t M, std::uint64_t capacity,
                    const std::atomic<bool>* cancel) {
  // Per option: its total, its largest and smallest piece, whether it puts a
  // piece on every rank (row-wise over the group, data-parallel).
  struct Opt {
    double total, max_piece, min_piece;
    bool every_rank;
  };
  std::vector<std::vector<Opt>> usable(choices.size());
  std::vector<double> breaks;
  double biggest = 0;
  for (std::size_t t = 0; t < choices.size(); ++t) {
    const auto& opts = choices[t].options;
    const bool any_fits =
        std::any_of(opts.begin(), opts.end(), [&](auto& o) { return o.max_piece_memory <= capacity; });
    double min_piece = std::numeric_limits<double>::infinity();
    for (const auto& o : opts) {
      if (any_fits && o.max_piece_memory > capacity) continue;
      const double smallest = o.type == core::ShardingType::DataParallel ? o.max_piece : o.min_piece;
      const bool every = o.type == core::ShardingType::DataParallel || o.piece_count >= M;
      usable[t].push_back({o.total_load, o.max_piece, every ? smallest : 0.0, every});
      breaks.push_back(o.max_piece);
      min_piece = std::min(min_piece, o.max_piece);
    }
    biggest = std::max(biggest, min_piece);
  }
  // Suppose the slowest rank's load is T. Then every table uses an option
  // whose pieces are <= T ("allowed"), and
  //   (a) T >= (sum over tables of the cheapest allowed total) / M;
  //   (b) a table all of whose allowed options cover every rank puts at least
  //       its smallest piece on every rank (floor F), so the rank holding the
  //       heaviest unavoidable piece h has T >= F + h.
  // Between two consecutive piece sizes the allowed sets do not change, so
  // the smallest T meeting (a) and (b) is found interval by interval.
  std::sort(breaks.begin(), breaks.end());
  breaks.erase(std::unique(breaks.begin(), breaks.end()), breaks.end());
  breaks.push_back(std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i) {
    const double T0 = breaks[i];
    if (T0 < biggest) continue;
    if (cancel && i % 64 == 0 && cancel->load(std::memory_order_relaxed)) return T0;
    double sum = 0, floor = 0, heaviest = 0;
    for (const auto& opts : usable) {
      double best_total = std::numeric_limits<double>::infinity(), piece = std::numeric_limits<double>::infinity();
      double floor_t = std::numeric_limits<double>::infinity(), spread = std::numeric_limits<double>::infinity();
      bool all_every = true;
      for (const Opt& o : opts) {
        if (o.max_piece > T0) continue;
        best_total = std::min(best_total, o.total);
        piece = std::min(piece, o.max_piece);
        if (o.every_rank) {
          floor_t = std::min(floor_t, o.min_piece);
          spread = std::min(spread, o.max_piece - o.min_piece);
        } else {
          all_every = false;
        }
      }
      sum += best_total;
      if (all_every) {
        floor += floor_t;
        heaviest = std::max(heaviest, spread);  // its heaviest piece sits on a rank that already has floor_t
      } else {
        heaviest = std::max(heaviest, piece);
      }
    }
    const double need = std::max({T0, sum / M, floor + heaviest});
    if (need < breaks[i + 1]) return need;
  }
  return biggest;  // not reached: the last interval is unbounded
}

}  // namespace shardscope::planner::detail
