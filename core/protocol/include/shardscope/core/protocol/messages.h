// The agent protocol's messages (docs/agent-protocol.md "Messages"): what a
// client (the desktop, shardscope-cli remote) and shardscope-agent say to
// each other inside frames (frame.h). Every message is a JSON object with
// "v", "type" and, for requests and their answers, the client's request "id"
// (a positive integer echoed by every message that answers it, events of a
// watch included). Each message has a struct, a toJson and a parse that
// names the JSON path of what is wrong. Plain C++ (no Qt).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::core::protocol {

// The most a fetch asks for in one chunk (raw bytes; base64 in the frame).
inline constexpr std::uint64_t kMaxChunkBytes = 4u << 20;
// Limits on what a job spec may ask for (an agent's config may lower them).
inline constexpr std::uint32_t kMaxJobSteps = 100000;
inline constexpr std::uint32_t kMaxJobWarmup = 10000;
inline constexpr std::uint64_t kMaxJobSeed = std::uint64_t{1} << 53;
inline constexpr std::size_t kMaxLabelBytes = 200;
inline constexpr std::size_t kMaxTokenBytes = 4096;
// The largest frame a peer may send before it has authenticated: a hello
// (its token, client name and envelope) fits with room to spare, and a
// flood of half-sent frames holds at most this much per connection.
inline constexpr std::size_t kMaxHelloFrameBytes = 16384;
// Request ids, offsets and counts stay below 2^53 (exact in every JSON reader).
inline constexpr std::uint64_t kMaxMessageInteger = (std::uint64_t{1} << 53) - 1;

// Error codes (the "code" of an error message).
enum class ErrorCode {
  BadFrame,          // the frame or its JSON envelope is malformed (the connection is closed)
  BadMessage,        // a known type with a member missing or of the wrong kind ("path" names it)
  UnknownType,       // a type this peer does not know
  NotAuthenticated,  // anything but hello before a successful hello
  AuthFailed,        // wrong token (answered after a back-off; the connection is closed)
  NoSuchJob,
  JobNotFinished,  // fetch of a job that has not ended
  NoRun,           // fetch of a job that ended without a run
  InvalidJob,      // the job spec does not validate (model, cluster, plan; "path" names it)
  LimitExceeded,   // too many jobs, ranks, steps, connections, a chunk too large
  LauncherFailed,  // the launcher could not be started
  Internal,
};
[[nodiscard]] std::string_view toString(ErrorCode code);
[[nodiscard]] std::optional<ErrorCode> errorCodeFromString(std::string_view s);

// The request id of a message ("id"), 0 when absent (events of no request).
[[nodiscard]] std::uint64_t messageId(const nlohmann::json& message);
// The "type" of a message whose envelope was checked.
[[nodiscard]] std::string messageType(const nlohmann::json& message);

// ---- hello / auth -----------------------------------------------------------
struct Hello {  // client -> agent, first message
  std::uint64_t id = 0;
  std::string client;  // "shardscope-cli 0.1.0"
  std::string token;
  bool operator==(const Hello&) const = default;
};
struct Welcome {  // agent -> client: "welcome"
  std::uint64_t id = 0;
  std::string agent;  // "shardscope-agent 0.1.0 on <host>"
  std::string host;
  bool operator==(const Welcome&) const = default;
};

// ---- describe ---------------------------------------------------------------
struct DescribeRequest {  // "describe"
  std::uint64_t id = 0;
  bool operator==(const DescribeRequest&) const = default;
};
struct GpuInfo {
  std::uint32_t index = 0;
  std::string name;
  std::uint64_t memory_bytes = 0;
  bool operator==(const GpuInfo&) const = default;
};
struct HostInfo {
  std::string name;
  std::uint32_t cpus = 0;
  std::uint64_t memory_bytes = 0;
  std::vector<GpuInfo> gpus;
  bool operator==(const HostInfo&) const = default;
};

// A job shape an agent runs: `nodes` whole nodes of its cluster (world size
// nodes x gpus_per_node), and the sharding group sizes a grid may ask for.
struct JobShape {
  std::uint32_t nodes = 0;
  std::uint32_t world_size = 0;
  std::vector<std::uint32_t> grids;  // the divisors of world_size, ascending
  bool operator==(const JobShape&) const = default;
};

// What one job may take of an agent's machine (0: not said, an older agent).
struct JobLimits {
  std::uint64_t job_memory_bytes = 0;    // one job's processes on the machine
  std::uint64_t total_memory_bytes = 0;  // all running jobs together
  std::uint32_t job_threads = 0;         // kernel threads per job
  std::uint32_t job_seconds = 0;         // wall time per job
  bool operator==(const JobLimits&) const = default;
};

struct Description {  // agent -> client: "description"
  std::uint64_t id = 0;
  std::string agent;               // as in Welcome
  std::vector<HostInfo> hosts;     // the agent's own host (and others its config names)
  std::string cuda_version;        // "" when none
  std::string nccl_version;        // "" when none
  std::string engine_version;      // "0.1.0"
  bool gpu_engine = false;         // built with CUDA, NCCL and CUPTI
  std::string launcher;            // "emulate-only", "mpirun", "srun", "sbatch"
  std::vector<std::string> modes;  // the job modes it accepts: "emulate", "mpi"
  ClusterSpec cluster;             // the cluster jobs are planned and run on
  std::uint32_t max_ranks = 0;
  std::uint32_t max_steps = 0;
  std::uint32_t max_jobs = 0;    // jobs queued or running at once
  JobLimits job_limits;          // in "limits" with the three above
  std::vector<JobShape> shapes;  // what a spec's nodes and grid may ask for ("jobs"); empty from an older agent
  bool operator==(const Description&) const = default;
};

// ---- jobs -------------------------------------------------------------------
enum class JobMode { Emulate, Mpi };
enum class JobDevice { Cpu, Cuda };
struct JobSpec {
  std::string label;                  // <= kMaxLabelBytes, safe text (safe_text.h)
  Project project;                    // model, cluster (world size N), constraints, calibration, sync interval
  std::optional<ShardPlan> plan;      // what runs; absent: the planner's plan for `grid` (or the sweep's best)
  std::optional<std::uint32_t> grid;  // sharding group size M (a divisor of N); only without a plan
  // Whole nodes of the agent's cluster to run on (absent: all of them). The
  // agent runs jobs on its own cluster only: the project's cluster is what
  // the client planned with, and never reaches the agent's launcher.
  std::optional<std::uint32_t> nodes;
  JobMode mode = JobMode::Emulate;
  JobDevice device = JobDevice::Cpu;
  std::uint32_t steps = 5;          // 1..kMaxJobSteps
  std::uint32_t warmup = 1;         // 0..kMaxJobWarmup
  std::uint64_t seed = 1;           // 1..2^53
  std::uint32_t batch = 0;          // 0: the model's
  std::uint32_t sync_interval = 0;  // 0: the project's
  bool trace_spans = true;
  bool all_groups = false;
  bool operator==(const JobSpec&) const = default;
};
struct SubmitRequest {  // "submit"
  std::uint64_t id = 0;
  JobSpec job;
  bool operator==(const SubmitRequest&) const = default;
};

enum class JobState { Queued, Running, Complete, Failed, Cancelled };
[[nodiscard]] std::string_view toString(JobState s);
[[nodiscard]] bool finished(JobState s);  // complete, failed or cancelled

struct JobProgress {
  std::string stage;  // "emulate", "mpi x8", "queued in slurm"
  std::uint64_t done = 0;
  std::uint64_t total = 0;
  std::string text;
  bool operator==(const JobProgress&) const = default;
};
struct JobInfo {
  std::string job;  // the agent's job id: "j" + digits
  std::string label;
  std::string model;  // the model's name (optional in the JSON: "" when absent)
  JobState state = JobState::Queued;
  std::string mode;      // "emulate", "mpi"
  std::string launcher;  // "in-process", "mpirun", "srun", "sbatch"
  std::uint32_t world_size = 0;
  std::uint32_t group_size = 0;  // M of the plan that runs (0 until planned)
  std::string created;           // ISO 8601 UTC
  std::string started;           // "" until it starts
  std::string finished;          // "" until it ends
  JobProgress progress;
  std::int64_t run = 0;                  // its run id in the agent's job store (0: none yet)
  std::string scheduler_job;             // Slurm's job id for sbatch jobs
  std::int32_t exit_code = 0;            // the launcher's (128 + signal when killed)
  std::string error;                     // why it failed
  std::vector<std::string> stderr_tail;  // a failed launcher's last stderr lines
  bool operator==(const JobInfo&) const = default;
};

struct JobRequest {  // "watch", "cancel": one job
  std::uint64_t id = 0;
  std::string job;
  bool operator==(const JobRequest&) const = default;
};
struct ListRequest {  // "list"
  std::uint64_t id = 0;
  bool operator==(const ListRequest&) const = default;
};
struct JobMessage {  // agent -> client: "job" (answers submit, watch, cancel; a watch's state changes)
  std::uint64_t id = 0;
  JobInfo info;
  bool operator==(const JobMessage&) const = default;
};
struct ProgressEvent {  // agent -> client: "progress" (a watch's progress)
  std::uint64_t id = 0;
  std::string job;
  JobProgress progress;
  std::vector<double> step_ms;  // a measured step's time per rank, when the progress is a step
  bool operator==(const ProgressEvent&) const = default;
};
struct JobList {  // agent -> client: "jobs"
  std::uint64_t id = 0;
  std::vector<JobInfo> jobs;  // oldest first
  bool operator==(const JobList&) const = default;
};

// ---- fetch ------------------------------------------------------------------
struct FetchRequest {  // "fetch": bytes [offset, offset + length) of the job's run file
  std::uint64_t id = 0;
  std::string job;
  std::uint64_t offset = 0;
  std::uint64_t length = kMaxChunkBytes;  // 1..kMaxChunkBytes
  bool operator==(const FetchRequest&) const = default;
};
struct Chunk {  // agent -> client: "chunk"
  std::uint64_t id = 0;
  std::string job;
  std::uint64_t offset = 0;
  std::uint64_t total = 0;  // the file's size
  std::string sha256;       // of the whole file (64 lowercase hex digits)
  std::string data;         // the raw bytes (base64 in the frame)
  std::int64_t run = 0;     // the run's id inside the file
  bool operator==(const Chunk&) const = default;
};

// ---- errors -----------------------------------------------------------------
struct ErrorMessage {    // "error"
  std::uint64_t id = 0;  // of the request it answers, 0 when none
  ErrorCode code = ErrorCode::Internal;
  std::string message;
  std::string path;  // the JSON path in the request, where known
  bool operator==(const ErrorMessage&) const = default;
};

// Each toJson gives a whole message (v, type, id and members).
[[nodiscard]] nlohmann::json toJson(const Hello& m);
[[nodiscard]] nlohmann::json toJson(const Welcome& m);
[[nodiscard]] nlohmann::json toJson(const DescribeRequest& m);
[[nodiscard]] nlohmann::json toJson(const Description& m);
[[nodiscard]] nlohmann::json toJson(const SubmitRequest& m);
[[nodiscard]] nlohmann::json toJson(const JobRequest& m, std::string_view type);  // "watch" or "cancel"
[[nodiscard]] nlohmann::json toJson(const ListRequest& m);
[[nodiscard]] nlohmann::json toJson(const JobMessage& m);
[[nodiscard]] nlohmann::json toJson(const ProgressEvent& m);
[[nodiscard]] nlohmann::json toJson(const JobList& m);
[[nodiscard]] nlohmann::json toJson(const FetchRequest& m);
[[nodiscard]] nlohmann::json toJson(const Chunk& m);
[[nodiscard]] nlohmann::json toJson(const ErrorMessage& m);
[[nodiscard]] nlohmann::json toJson(const JobInfo& info);  // the bare object (inside "job" and "jobs")
[[nodiscard]] nlohmann::json toJson(const JobSpec& spec);  // the bare object (inside "submit")

// Each parse takes a message whose envelope was checked (checkEnvelope) and
// of its type; `source` names the peer ("agent host:port", "client 10.0.0.5")
// in errors, whose json_path points at the member (e.g. "/job/plan/tables/3").
// Unknown members are ignored (a newer peer may add some).
[[nodiscard]] Result<Hello> parseHello(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<Welcome> parseWelcome(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<DescribeRequest> parseDescribeRequest(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<Description> parseDescription(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<SubmitRequest> parseSubmitRequest(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<JobRequest> parseJobRequest(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<ListRequest> parseListRequest(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<JobMessage> parseJobMessage(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<ProgressEvent> parseProgressEvent(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<JobList> parseJobList(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<FetchRequest> parseFetchRequest(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<Chunk> parseChunk(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<ErrorMessage> parseErrorMessage(const nlohmann::json& m, const std::string& source);
[[nodiscard]] Result<JobSpec> parseJobSpec(const nlohmann::json& j, const std::string& source,
                                           const std::string& path);  // `path`: where j sits ("/job")
[[nodiscard]] Result<JobInfo> parseJobInfo(const nlohmann::json& j, const std::string& source, const std::string& path);

// The error message an Error becomes when answering request `id`: its
// json_path as "path"; `code` says what kind of failure it was.
[[nodiscard]] ErrorMessage errorReply(std::uint64_t id, ErrorCode code, const Error& error);

// Base64 (RFC 4648, with padding) for chunk data; decode refuses anything else.
[[nodiscard]] std::string base64Encode(std::string_view bytes);
[[nodiscard]] std::optional<std::string> base64Decode(std::string_view text);

// A job id the agent could have made: "j" followed by 1-12 digits.
[[nodiscard]] bool validJobId(std::string_view job);

}  // namespace shardscope::core::protocol
