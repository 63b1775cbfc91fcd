#include "shardscope/core/store/store_types.h"

namespace shardscope::core::store {

std::string_view toText(RunKind kind) {
  switch (kind) {
    case RunKind::Emulate:
      return "emulate";
    case RunKind::Mpi:
      return "mpi";
    case RunKind::ImportKineto:
      return "import-kineto";
    case RunKind::ImportNsys:
      return "import-nsys";
    case RunKind::Cuda:
      return "cuda";
    case RunKind::ImportNccl:
      return "import-nccl";
    case RunKind::Unknown:
      break;
  }
  return "unknown";
}

std::string_view toText(RunStatus status) {
  switch (status) {
    case RunStatus::Running:
      return "running";
    case RunStatus::Complete:
      return "complete";
    case RunStatus::Failed:
      return "failed";
  }
  return "running";
}

RunKind runKindFromText(std::string_view text) {
  for (RunKind k : {RunKind::Emulate, RunKind::Mpi, RunKind::ImportKineto, RunKind::ImportNsys, RunKind::Cuda,
                    RunKind::ImportNccl}) {
    if (toText(k) == text) {
      return k;
    }
  }
  return RunKind::Unknown;
}

std::optional<RunStatus> runStatusFromText(std::string_view text) {
  for (RunStatus s : {RunStatus::Running, RunStatus::Complete, RunStatus::Failed}) {
    if (toText(s) == text) {
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace shardscope::core::store
