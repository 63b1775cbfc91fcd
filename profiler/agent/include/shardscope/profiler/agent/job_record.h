// A job's record in its folder (<store_dir>/jobs/<id>/job.json,
// `shardscope.agent-job/1`): what the agent said of it (its info), the spec
// it runs (admitted: on the agent's cluster, with its plan), who submitted it
// and, once it ended with a run, the run file fetch serves. The agent writes
// it at every state change, so a restart finds every job; reading one back
// checks it as a peer's message is checked (a record is a file anyone with
// the agent's user may have edited).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::profiler {

inline constexpr const char* kAgentJobSchema = "shardscope.agent-job/1";

// A finished job's run file (the snapshot fetch serves).
struct RunFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sha256;  // 64 lowercase hex digits; "" while the job has none
  std::int64_t run = 0;
  bool operator==(const RunFile&) const = default;
};

struct JobRecord {
  core::protocol::JobInfo info;
  core::protocol::JobSpec spec;
  RunFile run_file;                // its path is not recorded: run.sqlite beside the record
  std::string owner = "a client";  // who submitted it ("client 10.0.0.5:51234")
  bool operator==(const JobRecord&) const = default;
};

// The record's JSON text (one space of indent; a byte that is not UTF-8 replaced, never thrown).
[[nodiscard]] std::string jobRecordText(const JobRecord& record);

// Reads a record written by jobRecordText; `path` is the record's file (its
// folder's run.sqlite becomes run_file.path). Errors (InvalidInput) name the
// file and the JSON path: not JSON, not a shardscope.agent-job/1 record, a
// bad info or spec, a run file whose size, digest or run is malformed, an
// owner that is not a string, a job id other than the folder's name.
[[nodiscard]] core::Result<JobRecord> parseJobRecord(std::string_view text, const std::string& path);
// The record in the file `path` (parseJobRecord of its text); errors name the file.
[[nodiscard]] core::Result<JobRecord> loadJobRecord(const std::string& path);

}  // namespace shardscope::profiler
