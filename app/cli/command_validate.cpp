// shardscope-cli validate <file>...: load each file with the loader its
// schema names, print one line per file, exit 1 when any is invalid.
#include <iostream>

#include "cli.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/summary.h"

namespace shardscope::app::cli {

namespace {
// Returns a one-line description on success.
core::Result<std::string> validateOne(const std::string& path) {
  auto j = core::readJsonFile(path);
  if (!j) return j.error();
  auto kind = core::detectFormat(*j, path);
  if (!kind) return kind.error();
  switch (*kind) {
    case core::FormatKind::Model: {
      auto m = core::modelFromJson(*j, path);
      if (!m) return m.error();
      return "model \"" + m->name + "\": " + std::to_string(m->tables.size()) + " tables, " +
             core::formatBytes(m->totalWeightBytes()) + " of embedding weights";
    }
    case core::FormatKind::Cluster: {
      auto c = core::clusterFromJson(*j, path);
      if (!c) return c.error();
      return "cluster \"" + c->name + "\": " + std::to_string(c->nodes) + " x " + std::to_string(c->gpus_per_node) +
             " = " + std::to_string(c->worldSize()) + " GPUs (" + c->gpu.name + ")";
    }
    case core::FormatKind::Plan: {
      auto p = core::planFromJson(*j, path);
      if (!p) return p.error();
      return "plan for \"" + p->model + "\": " + std::to_string(p->world_size) + " GPUs as " +
             std::to_string(p->sharding_group_size) + " x " + std::to_string(p->replicas) + " (" +
             core::toString(p->layout) + "), " + std::to_string(p->tables.size()) + " tables";
    }
    case core::FormatKind::Calibration: {
      auto c = core::calibrationFromJson(*j, path);
      if (!c) return c.error();
      return "calibration from \"" + c->source + "\": " + std::to_string(c->coefficients.size()) + " coefficients";
    }
    case core::FormatKind::Project: {
      auto p = core::projectFromJson(*j, path);
      if (!p) return p.error();
      return "project \"" + p->name + "\": model \"" + p->model.name + "\" on " + p->cluster.name;
    }
    case core::FormatKind::Constraints: {
      auto c = core::constraintsFromJson(*j, path);
      if (!c) return c.error();
      return "constraints: " + std::to_string(c->tables.size()) + " table entries, " +
             std::to_string(c->rank_memory_caps.size()) + " rank memory caps";
    }
  }
  return core::Error{path + ": unsupported format"};
}
}  // namespace

int runValidate(Args args) {
  if (args.flag("--help")) {
    std::cout << "usage: shardscope-cli validate <file>...\n"
                 "Checks each file against the format its \"schema\" field names; prints every problem as\n"
                 "<file>: <JSON path>: <expectation>. Exit 0 when all are valid, 1 otherwise.\n";
    return kExitOk;
  }
  if (auto u = args.unknownOption()) return usageError("validate: unknown option " + *u);
  const auto files = args.positional();
  if (files.empty()) return usageError("validate needs at least one file");
  int rc = kExitOk;
  for (const auto& f : files) {
    auto r = validateOne(f);
    if (r) {
      std::cout << f << ": ok: " << *r << "\n";
    } else {
      std::cerr << r.error().message << "\n";
      rc = kExitInvalid;
    }
  }
  return rc;
}

}  // namespace shardscope::app::cli
