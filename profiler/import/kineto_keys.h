// The keys of a Kineto trace that the importer reads (private to profiler/import): each key
// name to what it means, compared in place by length first, because the event loop looks up
// every key of every event. Header-only: the fuzz targets compile the importer's sources on
// their own.
#pragma once

#include <string_view>

namespace shardscope::profiler::kineto_detail {

enum class TopKey { TraceEvents, DistributedInfo, BaseTime, OtherData, DeviceProperties, Other };
enum class EvKey { Name, Ph, Cat, Ts, Dur, Pid, Tid, Args, Other };
// Args of PyTorch's events, then those of the rows a ShardScope Chrome export describes
// (kineto_stored.h: read only in an export's events).
enum class ArgKey {
  Correlation,
  Stream,
  Device,
  Collective,
  InNelems,
  OutNelems,
  GroupSize,
  Dtype,
  PgRanks,
  PgName,
  Seq,
  StoredKind,          // "shardscope_kind"
  StoredOp,            // "shardscope_collective"
  StoredStep,          // "step"
  StoredBytes,         // "bytes"
  StoredTable,         // "table"
  StoredGroup,         // "group"
  StoredPeers,         // "peers"
  StoredAlgorithm,     // "algorithm"
  StoredProcessGroup,  // "process_group"
  StoredSeq,           // "seq"
  Other
};
enum class DistKey { Rank, WorldSize, Backend, PgConfig, Other };

inline bool isStoredKey(ArgKey k) { return k >= ArgKey::StoredKind && k != ArgKey::Other; }

using namespace std::string_view_literals;

inline TopKey topKey(std::string_view k) {
  if (k == "traceEvents"sv) return TopKey::TraceEvents;
  if (k == "distributedInfo"sv) return TopKey::DistributedInfo;
  if (k == "baseTimeNanoseconds"sv) return TopKey::BaseTime;
  if (k == "otherData"sv) return TopKey::OtherData;
  if (k == "deviceProperties"sv) return TopKey::DeviceProperties;
  return TopKey::Other;
}

inline EvKey evKey(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "ph"sv) return EvKey::Ph;
      if (k == "ts"sv) return EvKey::Ts;
      break;
    case 3:
      if (k == "cat"sv) return EvKey::Cat;
      if (k == "dur"sv) return EvKey::Dur;
      if (k == "pid"sv) return EvKey::Pid;
      if (k == "tid"sv) return EvKey::Tid;
      break;
    case 4:
      if (k == "name"sv) return EvKey::Name;
      if (k == "args"sv) return EvKey::Args;
      break;
    default:
      break;
  }
  return EvKey::Other;
}

inline ArgKey argKey(std::string_view k) {
  switch (k.size()) {
    case 3:
      return k == "Seq"sv ? ArgKey::Seq : ArgKey::Other;
    case 5:
      return k == "dtype"sv ? ArgKey::Dtype : ArgKey::Other;
    case 6:
      return k == "stream"sv ? ArgKey::Stream : k == "device"sv ? ArgKey::Device : ArgKey::Other;
    case 10:
      return k == "Group size"sv ? ArgKey::GroupSize : ArgKey::Other;
    case 11:
      return k == "correlation"sv ? ArgKey::Correlation : ArgKey::Other;
    case 13:
      return k == "In msg nelems"sv ? ArgKey::InNelems : ArgKey::Other;
    case 14:
      return k == "Out msg nelems"sv ? ArgKey::OutNelems : ArgKey::Other;
    case 15:
      return k == "Collective name"sv ? ArgKey::Collective : ArgKey::Other;
    case 18:
      return k == "Process Group Name"sv ? ArgKey::PgName : ArgKey::Other;
    case 19:
      return k == "Process Group Ranks"sv ? ArgKey::PgRanks : ArgKey::Other;
    default:
      return ArgKey::Other;
  }
}

// The keys of a row a ShardScope export describes (kineto_stored.h), for the args argKey does not
// know: looked up apart, only in an export's events, so that PyTorch's keys cost what they did.
inline ArgKey storedArgKey(std::string_view k) {
  switch (k.size()) {
    case 3:
      return k == "seq"sv ? ArgKey::StoredSeq : ArgKey::Other;
    case 4:
      return k == "step"sv ? ArgKey::StoredStep : ArgKey::Other;
    case 5:
      if (k == "bytes"sv) return ArgKey::StoredBytes;
      if (k == "table"sv) return ArgKey::StoredTable;
      if (k == "group"sv) return ArgKey::StoredGroup;
      return k == "peers"sv ? ArgKey::StoredPeers : ArgKey::Other;
    case 9:
      return k == "algorithm"sv ? ArgKey::StoredAlgorithm : ArgKey::Other;
    case 13:
      return k == "process_group"sv ? ArgKey::StoredProcessGroup : ArgKey::Other;
    case 15:
      return k == "shardscope_kind"sv ? ArgKey::StoredKind : ArgKey::Other;
    case 21:
      return k == "shardscope_collective"sv ? ArgKey::StoredOp : ArgKey::Other;
    default:
      return ArgKey::Other;
  }
}

inline DistKey distKey(std::string_view k) {
  if (k == "rank"sv) return DistKey::Rank;
  if (k == "world_size"sv) return DistKey::WorldSize;
  if (k == "backend"sv) return DistKey::Backend;
  if (k == "pg_config"sv) return DistKey::PgConfig;
  return DistKey::Other;
}

}  // namespace shardscope::profiler::kineto_detail
