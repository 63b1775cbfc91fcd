// The partitioner. A placement state keeps per-rank load and memory, an
// ordered index of ranks by load, and which (table, rank) pairs are taken;
// the greedy start and every improvement step (move, swap, split) go
// through canPlace/place/remove so constraints hold throughout.
#include "shardscope/planner/partitioner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "table_options.h"

namespace shardscope::planner {

namespace {
using detail::Piece;
using detail::TableChoices;
using detail::TableOption;
using Clock = std::chrono::steady_clock;

constexpr std::array<const char*, 8> kAlgorithmNames = {"optimized",          "random",         "round_robin",
                                                        "dim_greedy",         "size_greedy",    "lookup_greedy",
                                                        "size_lookup_greedy", "torchrec_greedy"};

struct State {
  const CostModel* model = nullptr;
  const Grid* grid = nullptr;
  GridCosts gc;
  core::PlanTarget target = core::PlanTarget::TorchRec;
  std::uint32_t M = 0;
  std::uint32_t L = 1;  // node group size: node group of rank r is r / L
  // Options are read-only once built; baselines and the optimizer share them.
  std::shared_ptr<const std::vector<TableChoices>> options_ptr;
  const std::vector<TableChoices>& choices() const { return *options_ptr; }
  std::vector<std::uint32_t> piece_count;      // pieces per table (distinctness only matters above 1)
  std::vector<int> chosen;                     // option index per table
  std::vector<Piece> pieces;                   // piece id -> piece
  std::vector<std::int64_t> piece_rank;        // -1 when not placed
  std::vector<std::vector<int>> table_pieces;  // table -> piece ids
  std::vector<double> load;
  std::vector<std::uint64_t> mem;
  double uniform_load = 0;  // data-parallel tables: the same on every rank
  std::uint64_t uniform_mem = 0;
  std::vector<std::uint64_t> cap;
  double bound = 0;  // lower bound on the slowest rank's load, over the options that fit min(cap)
  std::vector<std::vector<int>> rank_pieces;
  std::set<std::pair<double, std::uint32_t>> by_load;
  std::unordered_set<std::uint64_t> occupied;                        // (table << 32) | rank
  std::unordered_map<std::uint64_t, std::pair<int, int>> slot_node;  // (table<<32|slot) -> (node group, pieces there)

  static std::uint64_t key(std::uint32_t table, std::uint32_t rank) { return (std::uint64_t{table} << 32) | rank; }

  void setLoad(std::uint32_t r, double v) {
    by_load.erase({load[r], r});
    load[r] = v;
    by_load.insert({v, r});
  }

  std::uint32_t nodeGroupOf(std::uint32_t r) const { return r / L; }

  // The rank rule of the target: a positioned piece has one rank (in its node group).
  bool positionOk(const Piece& p, std::uint32_t r) const {
    if (p.position < 0) return true;
    return p.slot >= 0 ? r % L == static_cast<std::uint32_t>(p.position) : r == static_cast<std::uint32_t>(p.position);
  }

  bool canPlace(const Piece& p, std::uint32_t r, bool check_memory = true, std::uint64_t freed = 0) const {
    if (piece_count[p.table] > 1 && occupied.count(key(p.table, r))) return false;
    if (!positionOk(p, r)) return false;
    const auto& pins = choices()[p.table].pins;
    if (!pins.empty() && std::find(pins.begin(), pins.end(), r) == pins.end()) return false;
    if (p.slot >= 0) {
      auto it = slot_node.find(key(p.table, static_cast<std::uint32_t>(p.slot)));
      if (it != slot_node.end() && it->second.second > 0 &&
          static_cast<std::uint32_t>(it->second.first) != nodeGroupOf(r))
        return false;
    }
    if (check_memory && mem[r] + uniform_mem - freed + p.memory > cap[r]) return false;
    return true;
  }

  // Piece a (on rank ra) and piece b (on rank rb) may trade places. Two free
  // pieces of one table may always trade ranks (a row-wise permutation, for
  // ShardScope's engine); positioned pieces never move.
  bool canSwap(const Piece& a, std::uint32_t ra, const Piece& b, std::uint32_t rb) const {
    if (a.table != b.table && ((piece_count[a.table] > 1 && occupied.count(key(a.table, rb))) ||
                               (piece_count[b.table] > 1 && occupied.count(key(b.table, ra)))))
      return false;
    if (!positionOk(a, rb) || !positionOk(b, ra)) return false;
    auto pinned_ok = [&](const Piece& p, std::uint32_t r) {
      const auto& pins = choices()[p.table].pins;
      return pins.empty() || std::find(pins.begin(), pins.end(), r) != pins.end();
    };
    auto slot_ok = [&](const Piece& p, std::uint32_t r) {
      if (p.slot < 0) return true;
      auto it = slot_node.find(key(p.table, static_cast<std::uint32_t>(p.slot)));
      return it == slot_node.end() || static_cast<std::uint32_t>(it->second.first) == nodeGroupOf(r);
    };
    if (!pinned_ok(a, rb) || !pinned_ok(b, ra) || !slot_ok(a, rb) || !slot_ok(b, ra)) return false;
    return mem[rb] + uniform_mem - b.memory + a.memory <= cap[rb] &&
           mem[ra] + uniform_mem - a.memory + b.memory <= cap[ra];
  }

  void place(int id, std::uint32_t r) {
    const Piece& p = pieces[id];
    piece_rank[id] = r;
    rank_pieces[r].push_back(id);
    if (piece_count[p.table] > 1) occupied.insert(key(p.table, r));
    mem[r] += p.memory;
    setLoad(r, load[r] + p.load);
    if (p.slot >= 0) {
      auto& sn = slot_node[key(p.table, static_cast<std::uint32_t>(p.slot))];
      if (sn.second == 0) sn.first = static_cast<int>(nodeGroupOf(r));
      ++sn.second;
    }
  }

  void remove(int id) {
    const Piece& p = pieces[id];
    const auto r = static_cast<std::uint32_t>(piece_rank[id]);
    auto& rp = rank_pieces[r];
    rp.erase(std::find(rp.begin(), rp.end(), id));
    if (piece_count[p.table] > 1) occupied.erase(key(p.table, r));
    mem[r] -= p.memory;
    setLoad(r, load[r] - p.load);
    piece_rank[id] = -1;
    if (p.slot >= 0) --slot_node[key(p.table, static_cast<std::uint32_t>(p.slot))].second;
  }

  // Pieces of the table's slot (a node group's worth: L at most).
  std::uint32_t slotSize(const Piece& p) const {
    std::uint32_t n = 0;
    for (int id : table_pieces[p.table]) n += pieces[id].slot == p.slot;
    return n;
  }

  // The first piece of a node-bound slot chooses the node group: the least
  // loaded one that has a rank for it and room for the rest of the slot
  // (ranks not already holding a piece of the table).
  std::optional<std::uint32_t> firstOfSlot(const Piece& p, bool check_memory) const {
    const std::uint32_t groups = M / L, need = slotSize(p);
    std::vector<double> group_load(groups, 0.0);
    for (std::uint32_t r = 0; r < M; ++r) group_load[nodeGroupOf(r)] += load[r];
    std::vector<std::uint32_t> order(groups);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return group_load[a] < group_load[b]; });
    for (auto n : order) {
      std::uint32_t free_ranks = 0, best = M;
      for (std::uint32_t r = n * L; r < (n + 1) * L; ++r) {
        if (!occupied.count(key(p.table, r))) ++free_ranks;
        if (canPlace(p, r, check_memory) && (best == M || load[r] < load[best])) best = r;
      }
      if (best < M && free_ranks >= need) return best;
    }
    return std::nullopt;
  }

  // The least-loaded rank that can take the piece under the target's rules;
  // relaxes memory rather than drop a piece (evaluation reports what does not
  // fit), never the rank rules.
  std::uint32_t bestRank(const Piece& p) const {
    if (p.position >= 0 && p.slot < 0) return static_cast<std::uint32_t>(p.position);  // the only rank it may take
    if (p.slot >= 0) {
      auto it = slot_node.find(key(p.table, static_cast<std::uint32_t>(p.slot)));
      if (it == slot_node.end() || it->second.second == 0) {
        if (auto r = firstOfSlot(p, true)) return *r;
        if (auto r = firstOfSlot(p, false)) return *r;
      }
    }
    for (const auto& [l, r] : by_load)
      if (canPlace(p, r)) return r;
    for (const auto& [l, r] : by_load)
      if (canPlace(p, r, false)) return r;
    // Not reached: options are enumerated only where their rank rules can be met.
    return by_load.begin()->second;
  }

  // Adds table t's option `o` (pieces unplaced, or data-parallel applied).
  std::vector<int> addOption(std::uint32_t t, int o) {
    chosen[t] = o;
    const TableOption& opt = choices()[t].options[o];
    std::vector<int> ids;
    if (opt.type == core::ShardingType::DataParallel) {
      // The same on every rank: kept aside, it never changes which rank is heavier.
      uniform_load += opt.dp_load;
      uniform_mem += opt.dp_memory;
      return ids;
    }
    const std::vector<Piece> built = detail::piecesOf(*model, *grid, gc, t, opt, target);
    piece_count[t] = static_cast<std::uint32_t>(built.size());
    for (const auto& p : built) {
      ids.push_back(static_cast<int>(pieces.size()));
      pieces.push_back(p);
      piece_rank.push_back(-1);
    }
    table_pieces[t] = ids;
    return ids;
  }

  void dropOption(std::uint32_t t) {
    const TableOption& opt = choices()[t].options[chosen[t]];
    if (opt.type == core::ShardingType::DataParallel) {
      uniform_load -= opt.dp_load;
      uniform_mem -= opt.dp_memory;
      return;
    }
    for (int id : table_pieces[t])
      if (piece_rank[id] >= 0) remove(id);
    table_pieces[t].clear();  // piece ids stay allocated but unused
  }

  void placeLongestFirst(std::vector<int> ids) {
    // A table with one piece per rank (row-wise over the group) is placed by
    // pairing its heaviest pieces with the least-loaded ranks: the same
    // result as longest-first, without scanning past ranks it already holds.
    std::vector<int> rest;
    std::unordered_map<std::uint32_t, std::vector<int>> full;
    for (int id : ids) {
      const Piece& p = pieces[id];
      if (piece_count[p.table] == M && p.slot < 0 && p.position < 0 && choices()[p.table].pins.empty())
        full[p.table].push_back(id);
      else
        rest.push_back(id);
    }
    for (auto& [t, tids] : full) {
      std::stable_sort(tids.begin(), tids.end(), [&](int a, int b) { return pieces[a].load > pieces[b].load; });
      std::vector<std::uint32_t> ranks;
      for (const auto& [l, r] : by_load) ranks.push_back(r);
      std::vector<int> later;
      for (std::size_t i = 0; i < tids.size(); ++i) {
        if (canPlace(pieces[tids[i]], ranks[i]))
          place(tids[i], ranks[i]);
        else
          later.push_back(tids[i]);
      }
      for (int id : later) place(id, bestRank(pieces[id]));
    }
    std::stable_sort(rest.begin(), rest.end(), [&](int a, int b) { return pieces[a].load > pieces[b].load; });
    for (int id : rest) place(id, bestRank(pieces[id]));
  }

  // Loads in by_load leave out the data-parallel part every rank carries
  // (uniform_load); maxLoad() is the real slowest-rank load.
  double maxLoad() const { return by_load.rbegin()->first + uniform_load; }
  double rawMaxLoad() const { return by_load.rbegin()->first; }  // comparable with by_load entries
  std::uint32_t maxRank() const { return by_load.rbegin()->second; }

  std::vector<core::TablePlacement> placements() const {
    std::vector<core::TablePlacement> out;
    const auto& tables = model->model().tables;
    for (std::uint32_t t = 0; t < tables.size(); ++t) {
      core::TablePlacement tp;
      tp.name = tables[t].name;
      tp.rows = tables[t].rows;
      tp.dim = tables[t].dim;
      tp.sharding_type = choices()[t].options[chosen[t]].type;
      if (tp.sharding_type == core::ShardingType::DataParallel) {
        for (std::uint32_t r = 0; r < M; ++r) tp.shards.push_back({r, 0, tp.rows, 0, tp.dim});
      } else {
        for (int id : table_pieces[t]) {
          const Piece& p = pieces[id];
          tp.shards.push_back({static_cast<std::uint32_t>(piece_rank[id]), p.row_offset, p.rows, p.col_offset, p.cols});
        }
      }
      out.push_back(std::move(tp));
    }
    return out;
  }
};

State makeState(const CostModel& model, const Grid& grid, const core::Constraints& constraints, core::PlanTarget target,
                const std::atomic<bool>* cancel) {
  State s;
  s.model = &model;
  s.grid = &grid;
  s.gc = model.gridCosts(grid);
  s.target = target;
  s.M = grid.group_size;
  s.L = std::max<std::uint32_t>(1, grid.node_group_size);
  s.load.assign(s.M, 0.0);
  s.mem.assign(s.M, 0);
  s.cap.assign(s.M, s.gc.hbm_capacity_bytes);
  for (const auto& c : constraints.rank_memory_caps)
    if (c.group_rank < s.M) {
      const std::uint64_t fixed = s.gc.dense_reserve_bytes + s.gc.buffer_bytes;
      s.cap[c.group_rank] = std::min(s.cap[c.group_rank], c.bytes > fixed ? c.bytes - fixed : 0);
    }
  s.rank_pieces.resize(s.M);
  for (std::uint32_t r = 0; r < s.M; ++r) s.by_load.insert({0.0, r});
  const auto T = static_cast<std::uint32_t>(model.model().tables.size());
  const std::uint64_t cap = *std::min_element(s.cap.begin(), s.cap.end());
  s.options_ptr = std::make_shared<const std::vector<TableChoices>>(
      detail::enumerateAllOptions(model, grid, s.gc, constraints, target, cap));
  s.bound = detail::lowerBoundOf(s.choices(), s.M, cap, cancel);
  s.piece_count.assign(T, 0);
  s.chosen.assign(T, 0);
  s.table_pieces.resize(T);
  return s;
}

// --- the optimizing partitioner -------------------------------------------

// One improvement step on the most loaded rank: the best move, else the best
// swap, else split its heaviest piece's table finer. False when none helps.
bool improveOnce(State& s) {
  const std::uint32_t r = s.maxRank();
  const double lmax = s.rawMaxLoad();
  const double eps = 1e-9 * std::max(1.0, lmax);
  std::vector<int> on_r = s.rank_pieces[r];
  std::sort(on_r.begin(), on_r.end(), [&](int a, int b) { return s.pieces[a].load > s.pieces[b].load; });

  // Move: the lightest feasible target gives the lowest pair maximum.
  int best_id = -1;
  std::uint32_t best_q = 0;
  double best_pair = lmax;
  for (int id : on_r) {
    const Piece& p = s.pieces[id];
    for (const auto& [lq, q] : s.by_load) {
      if (lq + p.load >= lmax - eps) break;
      if (q == r || !s.canPlace(p, q)) continue;
      const double pair = std::max(lmax - p.load, lq + p.load);
      if (pair < best_pair - eps) {
        best_pair = pair;
        best_id = id;
        best_q = q;
      }
      break;
    }
  }
  if (best_id >= 0) {
    s.remove(best_id);
    s.place(best_id, best_q);
    return true;
  }

  // Swap a heavy piece of r with a lighter one elsewhere.
  int sa = -1, sb = -1;
  best_pair = lmax;
  std::size_t scanned = 0;
  for (const auto& [lq, q] : s.by_load) {
    if (lq >= lmax - eps || ++scanned > 256) break;
    if (q == r) continue;
    for (int a : on_r) {
      const Piece& pa = s.pieces[a];
      for (int b : s.rank_pieces[q]) {
        const Piece& pb = s.pieces[b];
        const double d = pa.load - pb.load;
        if (d <= eps || lq + d >= lmax - eps) continue;
        const double pair = std::max(lmax - d, lq + d);
        if (pair >= best_pair - eps) continue;
        if (!s.canSwap(pa, r, pb, q)) continue;
        best_pair = pair;
        sa = a;
        sb = b;
      }
    }
  }
  if (sa >= 0) {
    const std::uint32_t q = static_cast<std::uint32_t>(s.piece_rank[sb]);
    s.remove(sa);
    s.remove(sb);
    s.place(sa, q);
    s.place(sb, r);
    return true;
  }

  // Split: re-shard the table of r's heaviest piece with an option of smaller pieces.
  for (int id : on_r) {
    const std::uint32_t t = s.pieces[id].table;
    const int current = s.chosen[t];
    const double piece_load = s.pieces[id].load;
    for (int o = 0; o < static_cast<int>(s.choices()[t].options.size()); ++o) {
      const TableOption& opt = s.choices()[t].options[o];
      // Another option with smaller pieces, or the same node-bound option re-placed on another node.
      const bool replace_same = o == current && s.pieces[id].slot >= 0;
      if ((o == current && !replace_same) || opt.type == core::ShardingType::DataParallel ||
          (!replace_same && opt.max_piece >= piece_load - eps))
        continue;
      if (opt.max_piece_memory > *std::max_element(s.cap.begin(), s.cap.end())) continue;
      std::vector<std::pair<int, std::uint32_t>> old;
      for (int pid : s.table_pieces[t]) old.push_back({pid, static_cast<std::uint32_t>(s.piece_rank[pid])});
      const std::size_t before = s.pieces.size();
      s.dropOption(t);
      s.placeLongestFirst(s.addOption(t, o));
      if (s.rawMaxLoad() < lmax - eps) return true;
      s.dropOption(t);  // revert, and free the trial pieces
      s.pieces.resize(before);
      s.piece_rank.resize(before);
      s.chosen[t] = current;
      s.piece_count[t] = static_cast<std::uint32_t>(old.size());
      std::vector<int> ids;
      for (const auto& [pid, rank] : old) {
        s.place(pid, rank);
        ids.push_back(pid);
      }
      s.table_pieces[t] = ids;
    }
  }
  return false;
}

void improve(State& s, const PlannerOptions& opt) {
  const auto start = Clock::now();
  for (std::uint32_t step = 0; step < opt.max_improvement_steps; ++step) {
    if (std::chrono::duration<double, std::milli>(Clock::now() - start).count() > opt.time_budget_ms) break;
    if (opt.cancel && opt.cancel->load(std::memory_order_relaxed)) break;
    if (!improveOnce(s)) break;
  }
}

State optimized(const State& proto, const PlannerOptions& opt) {
  State s = proto;
  const std::uint64_t cap = *std::min_element(s.cap.begin(), s.cap.end());
  const double lb = s.bound;
  std::vector<int> ids;
  for (std::uint32_t t = 0; t < s.choices().size(); ++t) {
    const auto& options = s.choices()[t].options;
    // Cheapest option whose pieces are no larger than the bound; else the finest.
    int pick = -1;
    for (int o = 0; o < static_cast<int>(options.size()) && pick < 0; ++o)
      if (options[o].max_piece <= lb * (1 + 1e-9) && options[o].max_piece_memory <= cap) pick = o;
    // Else the option with the smallest pieces among those that fit, else the smallest in memory.
    if (pick < 0)
      pick = static_cast<int>(std::min_element(options.begin(), options.end(),
                                               [&](auto& a, auto& b) {
                                                 const bool fa = a.max_piece_memory <= cap,
                                                            fb = b.max_piece_memory <= cap;
                                                 if (fa != fb) return fa;
                                                 return fa ? a.max_piece < b.max_piece
                                                           : a.max_piece_memory < b.max_piece_memory;
                                               }) -
                              options.begin());
    auto added = s.addOption(t, pick);
    ids.insert(ids.end(), added.begin(), added.end());
  }
  s.placeLongestFirst(ids);
  improve(s, opt);
  return s;
}

// --- baselines ---------------------------------------------------------------

State baseline(const State& proto, Algorithm algo, std::uint64_t seed) {
  State s = proto;
  const CostModel& model = *s.model;
  const auto& tables = model.model().tables;
  const auto T = static_cast<std::uint32_t>(tables.size());
  // Table-wise where it fits on a rank, row-wise across the group where it does not.
  const std::uint64_t cap = *std::min_element(s.cap.begin(), s.cap.end());
  std::vector<std::vector<int>> ids(T);
  for (std::uint32_t t = 0; t < T; ++t) {
    const auto& options = s.choices()[t].options;
    int pick = -1;
    for (int o = 0; o < static_cast<int>(options.size()) && pick < 0; ++o)
      if (options[o].type == core::ShardingType::TableWise && options[o].max_piece_memory <= cap) pick = o;
    for (int o = 0; o < static_cast<int>(options.size()) && pick < 0; ++o)
      if (options[o].type == core::ShardingType::RowWise) pick = o;
    if (pick < 0) pick = 0;
    ids[t] = s.addOption(t, pick);
  }
  auto keyOf = [&](std::uint32_t t) -> double {
    const auto& spec = tables[t];
    switch (algo) {
      case Algorithm::DimGreedy:
        return spec.dim;
      case Algorithm::SizeGreedy:
        return static_cast<double>(spec.rows) * spec.dim;
      case Algorithm::LookupGreedy:
        return spec.dim * spec.pooling.mean;
      case Algorithm::SizeLookupGreedy:
        return spec.dim * spec.pooling.mean * std::log10(static_cast<double>(spec.rows) + 1);
      case Algorithm::TorchRecGreedy:
        return static_cast<double>(s.choices()[t].options[s.chosen[t]].max_piece_memory);
      default:
        return 0;
    }
  };
  std::vector<std::uint32_t> order(T);
  std::iota(order.begin(), order.end(), 0u);
  if (algo != Algorithm::Random && algo != Algorithm::RoundRobin)
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return keyOf(a) > keyOf(b); });
  std::mt19937_64 rng(seed);
  std::uint32_t next = 0;
  for (auto t : order) {
    if (s.piece_count[t] == s.M && (algo != Algorithm::Random && algo != Algorithm::RoundRobin)) {
      s.placeLongestFirst(ids[t]);  // one piece per rank: pairing, as the greedy would
      continue;
    }
    for (int id : ids[t]) {
      const Piece& p = s.pieces[id];
      std::uint32_t r = 0;
      if (algo == Algorithm::Random || algo == Algorithm::RoundRobin) {
        // Random / next rank in turn, among ranks with room.
        std::vector<std::uint32_t> ok;
        for (std::uint32_t q = 0; q < s.M; ++q)
          if (s.canPlace(p, q)) ok.push_back(q);
        if (ok.empty()) {
          r = s.bestRank(p);
        } else if (algo == Algorithm::Random) {
          r = ok[std::uniform_int_distribution<std::size_t>(0, ok.size() - 1)(rng)];
        } else {
          auto it = std::lower_bound(ok.begin(), ok.end(), next % s.M);
          r = it == ok.end() ? ok.front() : *it;
          next = r + 1;
        }
      } else {
        r = s.bestRank(p);  // least running cost among ranks with room
      }
      s.place(id, r);
    }
  }
  return s;
}

GridResult finish(const State& s, const CostModel& model, const Grid& grid, const core::Constraints& constraints,
                  Algorithm algo) {
  GridResult r = evaluatePlacement(model, grid, s.placements(), constraints, s.target, toString(algo), s.bound);
  std::vector<std::string> problems;
  for (const auto& c : constraints.tables) {
    const auto& tables = model.model().tables;
    if (std::none_of(tables.begin(), tables.end(), [&](const auto& t) { return t.name == c.table; }))
      problems.push_back("constraint for table " + c.table + " cannot be met: the model has no such table");
  }
  for (const auto& c : s.choices()) problems.insert(problems.end(), c.problems.begin(), c.problems.end());
  r.problems.insert(r.problems.begin(), problems.begin(), problems.end());
  return r;
}
}  // namespace

const char* toString(Algorithm a) { return kAlgorithmNames[static_cast<std::size_t>(a)]; }

std::optional<Algorithm> algorithmFromString(std::string_view s) {
  for (std::size_t i = 0; i < kAlgorithmNames.size(); ++i)
    if (s == kAlgorithmNames[i]) return static_cast<Algorithm>(i);
  return std::nullopt;
}

const std::vector<Algorithm>& allAlgorithms() {
  static const std::vector<Algorithm> all = {
      Algorithm::Optimized,  Algorithm::Random,       Algorithm::RoundRobin,       Algorithm::DimGreedy,
      Algorithm::SizeGreedy, Algorithm::LookupGreedy, Algorithm::SizeLookupGreedy, Algorithm::TorchRecGreedy};
  return all;
}

const std::vector<Algorithm>& baselineAlgorithms() {
  static const std::vector<Algorithm> b(allAlgorithms().begin() + 1, allAlgorithms().end());
  return b;
}

double lowerBoundMs(const CostModel& model, const Grid& grid, const core::Constraints& constraints,
                    core::PlanTarget target) {
  const GridCosts gc = model.gridCosts(grid);
  return detail::lowerBoundOf(detail::enumerateAllOptions(model, grid, gc, constraints, target, gc.hbm_capacity_bytes),
                              grid.group_size, gc.hbm_capacity_bytes);
}

GridResult planGrid(const CostModel& model, const Grid& grid, const core::Constraints& constraints,
                    const PlannerOptions& options) {
  const auto stopped = [&] { return options.cancel && options.cancel->load(); };
  const auto cancelled = [&] {
    GridResult r;
    r.grid = grid;
    r.cancelled = true;
    return r;
  };
  const State proto = makeState(model, grid, constraints, options.target, options.cancel);
  if (stopped()) return cancelled();
  if (options.algorithm != Algorithm::Optimized)
    return finish(baseline(proto, options.algorithm, options.seed), model, grid, constraints, options.algorithm);
  State best = optimized(proto, options);
  if (options.compare_baselines && best.maxLoad() > proto.bound * (1 + 1e-9)) {  // at the bound nothing can beat it
    // Never worse than the greedy heuristics: improve the best of them too and keep the winner.
    for (auto algo : {Algorithm::TorchRecGreedy, Algorithm::SizeLookupGreedy, Algorithm::LookupGreedy}) {
      if (stopped()) return cancelled();
      State b = baseline(proto, algo, options.seed);
      if (b.maxLoad() < best.maxLoad() * (1 - 1e-12)) {
        improve(b, options);
        if (b.maxLoad() < best.maxLoad()) best = std::move(b);
      }
    }
  }
  if (stopped()) return cancelled();
  return finish(best, model, grid, constraints, Algorithm::Optimized);
}

}  // namespace shardscope::planner
