// Collectives as NCCL runs them. Formulas, constants and their sources:
// docs/cost-model.md "Collectives". Units: bytes, GB/s = 1e9 B/s, us, ms.
#include "shardscope/planner/collectives.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "shardscope/planner/cost_model.h"

namespace shardscope::planner {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Achieved share of a link's bandwidth (docs/cost-model.md "Collectives").
constexpr double kNvlinkRing = 0.78;        // ring over NVLink: NCCL's NVLink tables, 370 of 450 GB/s on H100
constexpr double kNvls = 0.58;              // NVLS all-reduce algorithm bandwidth: 275 of 450 GB/s on H100
constexpr double kNic = 0.96;               // one NIC: ~48 of 50 GB/s (400G), 24 of 25 (200G)
constexpr double kTreeTwoNodes = 2 * 0.92;  // a tree over 2 nodes moves half the bytes over the network
constexpr double kTreeWide = 0.85;          // a tree over 3 and more nodes
constexpr double kAllToAllNet = 0.90;       // many peers at once over a NIC
// Protocols: LL moves 8 bytes with each 4-byte flag, Simple needs a
// round trip per chunk. Per-hop latency in units of the link's latency.
constexpr double kHopSimple = 3.0;
constexpr double kHopLL = 0.5;
constexpr double kBaseSimpleUs = 8.0;
constexpr double kBaseLLUs = 6.0;
constexpr double kNvlsHops = 20.0;  // NVLS latency, in NVLink latencies
// LL's share of the Simple bandwidth: half inside a node, NCCL's LL caps across nodes.
constexpr double kLLOneNode = 0.5;
constexpr double kLLTwoNodes = 0.12;
constexpr double kLLWide = 0.09;
// All-to-all latency: a base, log2 of the local peers over NVLink, and per remote node.
constexpr double kAllToAllBaseUs = 10.0;
constexpr double kAllToAllNetHops = 10.0;
constexpr double kAllToAllPerNode = 0.65;

double log2ceil(std::uint32_t n) { return n <= 1 ? 0.0 : std::ceil(std::log2(static_cast<double>(n))); }

// Time per byte (ms) of an algorithm bandwidth in GB/s.
double msPerByte(double algbw_gbps) { return algbw_gbps > 0 ? 1e3 / (algbw_gbps * 1e9) : kInf; }

CollectivePrice priced(CollectiveAlgorithm a, double latency_us, double algbw_gbps) {
  return {a, latency_us / 1e3, msPerByte(algbw_gbps)};
}
}  // namespace

std::string_view toString(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::RingLL:
      return "ring (LL)";
    case CollectiveAlgorithm::Tree:
      return "tree";
    case CollectiveAlgorithm::TreeLL:
      return "tree (LL)";
    case CollectiveAlgorithm::Nvls:
      return "NVLS";
    case CollectiveAlgorithm::NvlsTree:
      return "NVLS + tree";
    case CollectiveAlgorithm::Sharp:
      return "SHARP";
    case CollectiveAlgorithm::Direct:
      return "direct";
    case CollectiveAlgorithm::Linear:
      return "linear";
    case CollectiveAlgorithm::Measured:
      return "measured fit";
  }
  return "?";
}

std::string_view toString(CollectiveOp op) { return op == CollectiveOp::AllReduce ? "all_reduce" : "all_to_all"; }

double busBandwidthFactor(std::string_view op, int ranks) {
  if (ranks <= 1) return 1.0;
  const double n = ranks;
  if (op == "all_reduce") return 2.0 * (n - 1.0) / n;
  if (op == "all_to_all" || op == "all_gather" || op == "reduce_scatter") return (n - 1.0) / n;
  return 1.0;  // send/recv, broadcast, reduce
}

double busBandwidthFactor(CollectiveOp op, std::uint32_t ranks) {
  return busBandwidthFactor(toString(op), static_cast<int>(ranks));
}

double CollectivePrice::busBandwidthGbps(CollectiveOp op, std::uint32_t ranks, double bytes) const {
  const double t = ms(bytes);
  return t > 0 ? bytes / (t * 1e6) * busBandwidthFactor(op, ranks) : 0.0;
}

GroupShape shapeOf(const GroupTopology& t, std::uint32_t ranks) {
  GroupShape s;
  s.ranks = std::max<std::uint32_t>(1, ranks);
  s.nodes = std::max<std::uint32_t>(1, t.nodes_spanned);
  s.per_node = std::clamp<std::uint32_t>(t.max_members_per_node, 1, s.ranks);
  s.intra_node_peer_fraction = t.intra_node_peer_fraction;
  return s;
}

GroupShape worldShape(const Grid& grid) {
  GroupShape s;
  const std::uint32_t gpn = std::max<std::uint32_t>(1, grid.gpus_per_node);
  s.ranks = std::max<std::uint32_t>(1, grid.world_size);
  s.per_node = std::min(s.ranks, gpn);
  s.nodes = (s.ranks + s.per_node - 1) / s.per_node;
  s.intra_node_peer_fraction = s.ranks > 1 ? (s.per_node - 1.0) / (s.ranks - 1.0) : 1.0;
  return s;
}

CollectivePricer::CollectivePricer(const CostConstants& constants, std::uint32_t gpus_per_node,
                                   core::DeviceClass device)
    : k_(constants), gpus_per_node_(std::max<std::uint32_t>(1, gpus_per_node)), device_(device) {}

double CollectivePricer::congestion(std::uint32_t nodes) const {
  if (nodes <= 1 || k_.congestion_per_doubling <= 0) return 1.0;
  return std::max(0.5, 1.0 - k_.congestion_per_doubling * std::log2(static_cast<double>(nodes)));
}

double CollectivePricer::nicShareGbps(const GroupShape& s) const {
  const double nics = k_.nics_per_node ? k_.nics_per_node : gpus_per_node_;
  return nics * s.per_node / gpus_per_node_ * k_.inter_node_bandwidth_gbps * kNic * congestion(s.nodes);
}

const CollectiveFit* CollectivePricer::fitFor(CollectiveOp op, const GroupShape& s) const {
  const bool intra = s.nodes <= 1;
  const CollectiveFit& f = op == CollectiveOp::AllReduce ? (intra ? k_.all_reduce_intra_fit : k_.all_reduce_inter_fit)
                                                         : (intra ? k_.all_to_all_intra_fit : k_.all_to_all_inter_fit);
  return f.busbw_gbps > 0 ? &f : nullptr;
}

// CPU ranks (the engine's MPI or shared-memory collectives): one link per
// scope, a ring all-reduce and a pairwise all-to-all with log-depth latency.
CollectivePrice CollectivePricer::linear(CollectiveOp op, const GroupShape& s) const {
  const double n = s.ranks;
  const bool intra = s.nodes <= 1;
  const double bw = (intra ? k_.intra_node_bandwidth_gbps : k_.inter_node_bandwidth_gbps) * 1e9;
  const double lat = intra ? k_.intra_node_latency_us : k_.inter_node_latency_us;
  CollectivePrice p{CollectiveAlgorithm::Linear, 0.0, 0.0};
  if (op == CollectiveOp::AllReduce) {
    p.ms_per_byte = 2.0 * (n - 1.0) / n / bw * 1e3;
    p.latency_ms = 2.0 * log2ceil(s.ranks) * lat / 1e3;
  } else {
    const double f = s.intra_node_peer_fraction;
    p.ms_per_byte =
        (n - 1.0) / n *
        std::max(f / (k_.intra_node_bandwidth_gbps * 1e9), (1.0 - f) / (k_.inter_node_bandwidth_gbps * 1e9)) * 1e3;
    p.latency_ms = (1.0 + log2ceil(s.ranks)) * lat / 1e3;
  }
  return p;
}

std::vector<CollectivePrice> CollectivePricer::allReduceCandidates(const GroupShape& s) const {
  std::vector<CollectivePrice> out;
  if (s.ranks <= 1) return {{CollectiveAlgorithm::Ring, 0.0, 0.0}};
  if (device_ == core::DeviceClass::Cpu) return {linear(CollectiveOp::AllReduce, s)};
  const double n = s.ranks, L = s.per_node;
  const std::uint32_t K = s.nodes;
  const double a_in = k_.intra_node_latency_us, a_net = k_.inter_node_latency_us;
  const double nvlink = kNvlinkRing * k_.intra_node_bandwidth_gbps;
  const double ring_to_alg = n / (2.0 * (n - 1.0));  // nccl-tests busbw -> algorithm bandwidth
  // Ring: every rank's bytes pass every link; a node's ring edges leave through its NICs.
  const double ring_bus = K <= 1 ? nvlink : std::min(L > 1 ? nvlink : kInf, nicShareGbps(s));
  const double steps = 2.0 * (n - 1.0), net_steps = 2.0 * (K - 1.0);
  const double ll_share = K <= 1 ? kLLOneNode : (K == 2 ? kLLTwoNodes : kLLWide);
  out.push_back(priced(CollectiveAlgorithm::Ring,
                       kBaseSimpleUs + kHopSimple * ((steps - net_steps) * a_in + net_steps * a_net),
                       ring_bus * ring_to_alg));
  out.push_back(priced(CollectiveAlgorithm::RingLL,
                       kBaseLLUs + kHopLL * ((steps - net_steps) * a_in + net_steps * a_net),
                       ll_share * ring_bus * ring_to_alg));
  // NVLS: the NVSwitches reduce; each GPU writes its buffer once and reads the sum once.
  const bool nvls = k_.nvls && L > 1;
  const double nvls_bus_intra = kNvls * k_.intra_node_bandwidth_gbps * 2.0 * (L - 1.0) / L;
  if (nvls && K <= 1)
    out.push_back(priced(CollectiveAlgorithm::Nvls, kNvlsHops * a_in, kNvls * k_.intra_node_bandwidth_gbps));
  if (K > 1) {
    // Tree across nodes, a chain inside each node (and with NVLS, NVLS inside
    // each node instead). No tree beats reducing each node's share over its
    // members' NICs: a shard of S / L per NIC, all-reduced over K nodes,
    // algorithm bandwidth NIC_group x K / (2 (K - 1)) (one NIC for 2 ranks on 2 nodes).
    const double tree_net = nicShareGbps(s) * (K == 2 ? kTreeTwoNodes : kTreeWide);
    const double alg_cap = nicShareGbps(s) * K / (2.0 * (K - 1.0));
    const double depth = log2ceil(K);
    const auto tree = [&](CollectiveAlgorithm algo, double intra_bus, double lat, double share) {
      const double bus = std::min(L > 1 ? intra_bus : kInf, tree_net);
      out.push_back(priced(algo, lat, share * std::min(bus * ring_to_alg, alg_cap)));
    };
    tree(CollectiveAlgorithm::Tree, nvlink, kBaseSimpleUs + 2.0 * kHopSimple * ((L - 1.0) * a_in + depth * a_net), 1.0);
    tree(CollectiveAlgorithm::TreeLL, nvlink, kBaseLLUs + 2.0 * kHopLL * ((L - 1.0) * a_in + depth * a_net), ll_share);
    if (nvls)
      tree(CollectiveAlgorithm::NvlsTree, nvls_bus_intra, kNvlsHops * a_in + 2.0 * depth * kHopSimple * a_net, 1.0);
    // SHARP: the switches reduce; each node's share goes up and comes down once.
    if (k_.sharp) {
      const double intra_alg =
          L > 1 ? (nvls ? kNvls * k_.intra_node_bandwidth_gbps : nvlink * L / (2.0 * (L - 1.0))) : kInf;
      const double lat =
          (nvls ? kNvlsHops * a_in : kBaseSimpleUs + 2.0 * kHopSimple * (L - 1.0) * a_in) + 2.0 * kHopSimple * a_net;
      out.push_back(priced(CollectiveAlgorithm::Sharp, lat, std::min(intra_alg, nicShareGbps(s))));
    }
  }
  return out;
}

CollectivePrice CollectivePricer::allReduce(const GroupShape& s, double bytes) const {
  if (s.ranks <= 1) return {CollectiveAlgorithm::Ring, 0.0, 0.0};
  if (const CollectiveFit* f = fitFor(CollectiveOp::AllReduce, s))
    return {CollectiveAlgorithm::Measured, f->latency_us / 1e3,
            busBandwidthFactor(CollectiveOp::AllReduce, s.ranks) * msPerByte(f->busbw_gbps)};
  const auto all = allReduceCandidates(s);
  return *std::min_element(all.begin(), all.end(), [&](const CollectivePrice& a, const CollectivePrice& b) {
    return a.ms(bytes) < b.ms(bytes);
  });
}

CollectivePrice CollectivePricer::allToAll(const GroupShape& s, double /*bytes*/) const {
  if (s.ranks <= 1) return {CollectiveAlgorithm::Direct, 0.0, 0.0};
  if (const CollectiveFit* f = fitFor(CollectiveOp::AllToAll, s)) {
    // On CPU ranks a price is per byte sent + received (allToAllDuplex): half an NCCL-tests byte.
    const double per_byte = busBandwidthFactor(CollectiveOp::AllToAll, s.ranks) * msPerByte(f->busbw_gbps);
    return {CollectiveAlgorithm::Measured, f->latency_us / 1e3,
            device_ == core::DeviceClass::Cpu ? per_byte / 2.0 : per_byte};
  }
  if (device_ == core::DeviceClass::Cpu) return linear(CollectiveOp::AllToAll, s);
  const double n = s.ranks, L = s.per_node;
  // The share of a rank's buffer for peers on its node rides NVLink; the rest
  // leaves through the rank's share of the node's NICs, at the same time.
  const double nvlink = kNvlinkRing * k_.intra_node_bandwidth_gbps * 1e9;
  const double per_rank_net = nicShareGbps(s) / L / kNic * kAllToAllNet * 1e9;
  const double s_per_byte = std::max((L - 1.0) / n / nvlink, s.nodes > 1 ? (n - L) / n / per_rank_net : 0.0);
  const double a_in = k_.intra_node_latency_us, a_net = k_.inter_node_latency_us;
  double lat = kAllToAllBaseUs + a_in * log2ceil(s.per_node);
  if (s.nodes > 1) lat += kAllToAllNetHops * a_net + kAllToAllPerNode * (s.nodes - 1.0) * a_net;
  return {CollectiveAlgorithm::Direct, lat / 1e3, s_per_byte * 1e3};
}

CollectivePrice CollectivePricer::price(CollectiveOp op, const GroupShape& s, double bytes) const {
  return op == CollectiveOp::AllReduce ? allReduce(s, bytes) : allToAll(s, bytes);
}

}  // namespace shardscope::planner
