// What the store sink checks across the files of one import (private to
// profiler/import): that they are traces of one job (one world size, one rank
// list per process group, base times within a day), and the small text forms
// its rows and messages use. docs/import.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shardscope/core/result.h"
#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler {
struct ImportedRank;
}

namespace shardscope::profiler::import_detail {

// Traces of different jobs are refused (an error naming both files and the
// reason), or with `force` imported with that reason as a warning.
class JobChecks {
 public:
  JobChecks(bool force, std::vector<std::string>* warnings) : force_(force), warnings_(warnings) {}

  // The file's world size against the first file's that had one.
  [[nodiscard]] core::Status worldSize(const ImportRankInfo& rank);
  // A process group's rank list (text "0,1,2,3") against the one another file gave it.
  [[nodiscard]] core::Status processGroup(std::string_view name, std::string_view ranks, const std::string& source);
  // The file's base time (baseTimeNanoseconds) against the first file's.
  [[nodiscard]] core::Status baseTime(const ImportRankInfo& rank);
  // Everything the file's info says (world size, its pg_config, base time).
  [[nodiscard]] core::Status all(const ImportRankInfo& rank);

  [[nodiscard]] int worldSize() const { return world_size_; }

 private:
  core::Status refuse(const std::string& what);
  bool force_;
  std::vector<std::string>* warnings_;
  int world_size_ = -1;
  std::string world_source_;
  std::int64_t base_ = 0;
  std::string base_source_;
  std::map<std::string, std::pair<std::string, std::string>, std::less<>> groups_;  // name -> (ranks, source)
  std::vector<std::string> said_;  // forced warnings already given (one per reason)
};

// "[0, 2, 4]" -> ("0,2,4", 3); anything that is not a list of numbers -> ("", 0).
[[nodiscard]] std::pair<std::string, int> groupText(std::string_view s);

// What a run without embedding kernels, GPU events or collectives cannot show, as warnings naming
// the ranks concerned (ranks of a ShardScope export, whose rows the file described, are not).
void warnMissingWork(const std::vector<ImportedRank>& ranks, std::vector<std::string>& warnings);

// The run's configuration (runs.config_json) with "gpus": each imported rank's GPU name, in rank
// order, "" for a rank whose file names none (docs/formats/import-trace.md); a configuration that
// is not a JSON object comes back as it was.
[[nodiscard]] std::string configWithGpus(std::string_view config_json, const std::vector<ImportedRank>& ranks);

// Whether an annotation's name marks a training iteration when a trace has no
// ProfilerStep: it names a forward pass ("## forward ##", "DistributedDataParallel.forward"),
// not a backward one.
[[nodiscard]] bool namesIteration(std::string_view name);

}  // namespace shardscope::profiler::import_detail
