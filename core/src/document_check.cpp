#include "shardscope/core/document_check.h"

#include "shardscope/core/access.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"

namespace shardscope::core {

Result<std::string> checkDocument(const std::string& path) {
  auto j = readJsonFile(path);
  if (!j) return j.error();
  auto kind = detectFormat(*j, path);
  if (!kind) return kind.error();
  switch (*kind) {
    case FormatKind::Model: {
      auto m = modelFromJson(*j, path);
      if (!m) return m.error();
      return "model \"" + m->name + "\": " + std::to_string(m->tables.size()) + " tables, " +
             formatBytes(m->totalWeightBytes()) + " of embedding weights";
    }
    case FormatKind::Cluster: {
      auto c = clusterFromJson(*j, path);
      if (!c) return c.error();
      return "cluster \"" + c->name + "\": " + std::to_string(c->nodes) + " x " + std::to_string(c->gpus_per_node) +
             " = " + std::to_string(c->worldSize()) + " GPUs (" + c->gpu.name + ")";
    }
    case FormatKind::Plan: {
      auto p = planFromJson(*j, path);
      if (!p) return p.error();
      return "plan for \"" + p->model + "\": " + std::to_string(p->world_size) + " GPUs as " +
             std::to_string(p->sharding_group_size) + " x " + std::to_string(p->replicas) + " (" + toString(p->layout) +
             "), " + std::to_string(p->tables.size()) + " tables";
    }
    case FormatKind::Calibration: {
      auto c = calibrationFromJson(*j, path);
      if (!c) return c.error();
      return "calibration from \"" + c->source + "\": " + std::to_string(c->coefficients.size()) + " coefficients";
    }
    case FormatKind::Project: {
      auto p = projectFromJson(*j, path);
      if (!p) return p.error();
      return "project \"" + p->name + "\": model \"" + p->model.name + "\" on " + p->cluster.name;
    }
    case FormatKind::Constraints: {
      auto c = constraintsFromJson(*j, path);
      if (!c) return c.error();
      return "constraints: " + std::to_string(c->tables.size()) + " table entries, " +
             std::to_string(c->rank_memory_caps.size()) + " rank memory caps";
    }
    case FormatKind::Access: {
      auto a = accessFromJson(*j, path);
      if (!a) return a.error();
      std::uint64_t lookups = 0;
      for (const auto& t : a->tables) lookups += t.lookups;
      return "measured access from \"" + a->source + "\": " + std::to_string(a->tables.size()) + " tables, " +
             std::to_string(lookups) + " ids over " + std::to_string(a->batches) + " batches";
    }
  }
  return Error{path + ": unsupported format"};
}

}  // namespace shardscope::core
