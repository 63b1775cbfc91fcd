// shardscope.cluster/1 <-> ClusterSpec. Format: docs/formats/cluster.md.
#include <array>
#include <limits>

#include "json_parts.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"

namespace shardscope::core {

namespace {
using detail::childPath;
using detail::json;
using detail::JsonReader;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::array<std::string_view, 4> kCollectiveOps = {"all_to_all", "all_reduce", "reduce_scatter", "all_gather"};
constexpr std::array<std::string_view, 2> kScopes = {"intra_node", "inter_node"};

LinkSpec readLink(JsonReader& r, const json& j, const std::string& path, std::string_view key) {
  LinkSpec l;
  const json* v = r.member(j, path, key, true, "an object with bandwidth_gbps and latency_us");
  const std::string lpath = childPath(path, key);
  if (!v || !r.expectObject(*v, lpath)) return l;
  if (auto x = r.number(*v, lpath, "bandwidth_gbps", true, 0.0, kInf, true)) l.bandwidth_gbps = *x;
  if (auto x = r.number(*v, lpath, "latency_us", true, 0.0, kInf)) l.latency_us = *x;
  return l;
}
NetworkSpec readNetwork(JsonReader& r, const json& j, const std::string& path) {
  NetworkSpec n;
  const json* v = r.member(j, path, "network", false, "");
  const std::string npath = childPath(path, "network");
  if (!v || !r.expectObject(*v, npath)) return n;
  if (auto x = r.integer(*v, npath, "nics_per_node", false, 1, kMaxGpusPerNode))
    n.nics_per_node = static_cast<std::uint32_t>(*x);
  if (auto b = r.boolean(*v, npath, "nvls", false)) n.nvls = *b;
  if (auto b = r.boolean(*v, npath, "sharp", false)) n.sharp = *b;
  if (auto x = r.number(*v, npath, "congestion_per_doubling", false, 0.0, 0.5)) n.congestion_per_doubling = *x;
  return n;
}
}  // namespace

namespace detail {

std::vector<CollectiveCurve> readCollectiveCurves(JsonReader& r, const json& j, const std::string& path) {
  std::vector<CollectiveCurve> curves;
  const json* v = r.member(j, path, "collectives", false, "");
  const std::string cpath = childPath(path, "collectives");
  if (!v || !r.expectArray(*v, cpath)) return curves;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& c = (*v)[i];
    const std::string ipath = childPath(cpath, i);
    if (!r.expectObject(c, ipath)) continue;
    CollectiveCurve curve;
    if (auto op = readEnum<std::size_t>(r, c, ipath, "op", kCollectiveOps, true)) curve.op = kCollectiveOps[*op];
    if (auto sc = readEnum<std::size_t>(r, c, ipath, "scope", kScopes, true)) curve.scope = kScopes[*sc];
    if (auto n = r.integer(c, ipath, "ranks", true, 2, kMaxWorldSize)) curve.ranks = static_cast<std::uint32_t>(*n);
    const json* pts = r.member(c, ipath, "points", true, "an array of {bytes, time_us}");
    const std::string ppath = childPath(ipath, "points");
    if (pts && r.expectArray(*pts, ppath)) {
      for (std::size_t k = 0; k < pts->size(); ++k) {
        const std::string kpath = childPath(ppath, k);
        if (!r.expectObject((*pts)[k], kpath)) continue;
        CollectivePoint p;
        if (auto b = r.integer((*pts)[k], kpath, "bytes", true, 1)) p.bytes = *b;
        if (auto t = r.number((*pts)[k], kpath, "time_us", true, 0.0, kInf, true)) p.time_us = *t;
        if (!curve.points.empty() && p.bytes <= curve.points.back().bytes)
          r.fail(childPath(kpath, "bytes"), "expected points sorted by increasing bytes");
        curve.points.push_back(p);
      }
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

nlohmann::ordered_json collectiveCurvesToJson(const std::vector<CollectiveCurve>& curves) {
  auto arr = nlohmann::ordered_json::array();
  for (const auto& c : curves) {
    nlohmann::ordered_json cj;
    cj["op"] = c.op;
    cj["scope"] = c.scope;
    cj["ranks"] = c.ranks;
    auto& pts = cj["points"] = nlohmann::ordered_json::array();
    for (const auto& p : c.points) pts.push_back({{"bytes", p.bytes}, {"time_us", p.time_us}});
    arr.push_back(std::move(cj));
  }
  return arr;
}

ClusterSpec readClusterBody(JsonReader& r, const json& j, const std::string& path) {
  ClusterSpec c;
  if (!r.expectObject(j, path)) return c;
  if (auto s = r.string(j, path, "name")) c.name = *s;
  const auto nodes = r.integer(j, path, "nodes", true, 1, kMaxWorldSize);
  const auto gpn = r.integer(j, path, "gpus_per_node", true, 1, kMaxGpusPerNode);
  if (nodes) c.nodes = static_cast<std::uint32_t>(*nodes);
  if (gpn) c.gpus_per_node = static_cast<std::uint32_t>(*gpn);
  const std::uint64_t world = nodes && gpn ? *nodes * *gpn : 0;
  const std::string product = nodes && gpn ? std::to_string(*nodes) + " x " + std::to_string(*gpn) : "";
  if (world > kMaxWorldSize)
    r.fail(childPath(path, "nodes"), "expected at most " + std::to_string(kMaxWorldSize) +
                                         " GPUs (nodes x gpus_per_node), got " + product + " = " +
                                         std::to_string(world));
  // world_size is optional; when given it must agree (catches hand edits of one field).
  if (auto n = r.integer(j, path, "world_size", false, 1); n && world && *n != world)
    r.fail(childPath(path, "world_size"), "expected nodes x gpus_per_node = " + product + " = " +
                                              std::to_string(world) + ", got " + std::to_string(*n));
  const json* g = r.member(j, path, "gpu", true, "an object describing the GPU kind");
  const std::string gpath = childPath(path, "gpu");
  if (g && r.expectObject(*g, gpath)) {
    if (auto s = r.string(*g, gpath, "name")) c.gpu.name = *s;
    static constexpr std::array<std::string_view, 2> kKinds = {"gpu", "cpu"};
    if (auto k = readEnum<std::size_t>(r, *g, gpath, "kind", kKinds, false))
      c.gpu.device = *k == 1 ? DeviceClass::Cpu : DeviceClass::Gpu;
    if (auto x = r.integer(*g, gpath, "hbm_bytes", true, 1, kMaxHbmBytes)) c.gpu.hbm_bytes = *x;
    if (auto x = r.number(*g, gpath, "hbm_bandwidth_gbps", true, 0.0, kInf, true)) c.gpu.hbm_bandwidth_gbps = *x;
    if (auto x = r.number(*g, gpath, "peak_dense_tflops", true, 0.0, kInf, true)) c.gpu.peak_dense_tflops = *x;
  }
  c.intra_node = readLink(r, j, path, "intra_node");
  c.inter_node = readLink(r, j, path, "inter_node");
  c.network = readNetwork(r, j, path);
  c.collectives = readCollectiveCurves(r, j, path);
  return c;
}

}  // namespace detail

nlohmann::ordered_json toJson(const ClusterSpec& c) {
  nlohmann::ordered_json j;
  j["schema"] = kClusterSchema;
  j["name"] = c.name;
  j["nodes"] = c.nodes;
  j["gpus_per_node"] = c.gpus_per_node;
  j["world_size"] = c.worldSize();
  j["gpu"] = {{"name", c.gpu.name},
              {"hbm_bytes", c.gpu.hbm_bytes},
              {"hbm_bandwidth_gbps", c.gpu.hbm_bandwidth_gbps},
              {"peak_dense_tflops", c.gpu.peak_dense_tflops}};
  if (c.gpu.device == DeviceClass::Cpu) j["gpu"]["kind"] = "cpu";
  j["intra_node"] = {{"bandwidth_gbps", c.intra_node.bandwidth_gbps}, {"latency_us", c.intra_node.latency_us}};
  j["inter_node"] = {{"bandwidth_gbps", c.inter_node.bandwidth_gbps}, {"latency_us", c.inter_node.latency_us}};
  nlohmann::ordered_json net;
  if (c.network.nics_per_node) net["nics_per_node"] = c.network.nics_per_node;
  net["nvls"] = c.network.nvls;
  net["sharp"] = c.network.sharp;
  if (c.network.congestion_per_doubling > 0) net["congestion_per_doubling"] = c.network.congestion_per_doubling;
  j["network"] = std::move(net);
  if (!c.collectives.empty()) j["collectives"] = detail::collectiveCurvesToJson(c.collectives);
  return j;
}

Result<ClusterSpec> clusterFromJson(const nlohmann::json& j, const std::string& source) {
  return detail::readDocument<ClusterSpec>(j, source, kClusterSchema, detail::readClusterBody);
}

}  // namespace shardscope::core
