// The agent protocol's messages other than jobs (messages_job.cpp): hello,
// describe, watch/cancel, list, fetch and their answers, errors, the members
// they share (message_fields.h) and base64 for chunk data.
#include "shardscope/core/protocol/messages.h"

#include <algorithm>
#include <array>

#include "message_fields.h"
#include "shardscope/core/json_io.h"
#include "shardscope/core/limits.h"
#include "shardscope/core/protocol/frame.h"
#include "shardscope/core/protocol/safe_text.h"

namespace shardscope::core::protocol {

namespace detail {

namespace {

std::string rangeText(std::uint64_t min, std::uint64_t max) {
  return "a whole number in " + std::to_string(min) + ".." + std::to_string(max);
}

std::string signedRangeText(std::int64_t min, std::int64_t max) {
  return "a whole number in " + std::to_string(min) + ".." + std::to_string(max);
}

std::string wordsText(std::span<const std::string_view> words) {
  std::string s = "one of";
  for (std::size_t i = 0; i < words.size(); ++i) s += std::string(i ? ", \"" : " \"") + std::string(words[i]) + "\"";
  return s;
}

}  // namespace

std::string describe(const json& j) {
  if (j.is_string()) return "string \"" + quoteText(j.get_ref<const std::string&>(), 40) + "\"";
  return core::detail::describe(j);
}

Status openMessage(const json& m, const std::string& source, std::string_view type) {
  if (auto s = checkEnvelope(m, source); !s) return s;
  if (m["type"].get_ref<const std::string&>() != type) {
    return Error{source + ": /type: expected \"" + std::string(type) + "\", got " + describe(m["type"]),
                 ErrorKind::InvalidInput, source, "/type"};
  }
  return Ok{};
}

json messageHead(std::string_view type, std::uint64_t id) {
  json j = {{"v", kProtocolVersion}, {"type", type}};
  if (id != 0) j["id"] = id;
  return j;
}

std::uint64_t requestId(JsonReader& r, const json& m) {
  return whole(r, m, "", "id", true, 1, kMaxMessageInteger).value_or(0);
}

std::uint64_t answerId(JsonReader& r, const json& m) {
  return whole(r, m, "", "id", false, 0, kMaxMessageInteger).value_or(0);
}

std::optional<std::uint64_t> wholeValue(JsonReader& r, const json& v, const std::string& path, std::uint64_t min,
                                        std::uint64_t max) {
  std::optional<std::uint64_t> value;
  if (v.is_number_unsigned()) {
    value = v.get<std::uint64_t>();
  } else if (v.is_number_integer() && v.get<std::int64_t>() >= 0) {
    value = static_cast<std::uint64_t>(v.get<std::int64_t>());
  }
  if (!value || *value < min || *value > max) {
    r.fail(path, "expected " + rangeText(min, max) + ", got " + describe(v));
    return std::nullopt;
  }
  return value;
}

std::optional<std::uint64_t> whole(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                   bool required, std::uint64_t min, std::uint64_t max) {
  const json* v = r.member(obj, path, key, required, rangeText(min, max));
  if (!v) return std::nullopt;
  return wholeValue(r, *v, childPath(path, key), min, max);
}

std::optional<std::int64_t> signedWhole(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                        bool required, std::int64_t min, std::int64_t max) {
  const json* v = r.member(obj, path, key, required, signedRangeText(min, max));
  if (!v) return std::nullopt;
  std::optional<std::int64_t> value;
  if (v->is_number_integer()) {  // also true for unsigned: those up to INT64_MAX read as they are
    if (!v->is_number_unsigned() || v->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX))
      value = v->get<std::int64_t>();
  }
  if (!value || *value < min || *value > max) {
    r.fail(childPath(path, key), "expected " + signedRangeText(min, max) + ", got " + describe(*v));
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> text(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                bool required) {
  return r.string(obj, path, key, required, true);
}

std::optional<std::string> label(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                 bool required) {
  auto s = r.string(obj, path, key, required, true);
  if (!s) return std::nullopt;
  if (s->size() > kMaxLabelBytes) {
    r.fail(childPath(path, key), "expected a label of at most " + std::to_string(kMaxLabelBytes) + " bytes, got " +
                                     std::to_string(s->size()));
    return std::nullopt;
  }
  if (!checkSafeName(r, *s, childPath(path, key), "a label")) return std::nullopt;
  return s;
}

bool checkSafeName(JsonReader& r, std::string_view text, const std::string& path, std::string_view what) {
  const auto bad = findUnsafe(text);
  if (!bad) return true;
  r.fail(path, "expected " + std::string(what) +
                   " without control characters, bidirectional formatting characters or bytes that are not "
                   "UTF-8, got " +
                   bad->what + " at byte " + std::to_string(bad->offset));
  return false;
}

std::optional<std::string> jobId(JsonReader& r, const json& obj, const std::string& path, std::string_view key) {
  const json* v = r.member(obj, path, key, true, "a job id (\"j\" and 1-12 digits)");
  if (!v) return std::nullopt;
  if (!v->is_string() || !validJobId(v->get_ref<const std::string&>())) {
    r.fail(childPath(path, key), "expected a job id (\"j\" and 1-12 digits), got " + describe(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::string> sha256(JsonReader& r, const json& obj, const std::string& path, std::string_view key) {
  const json* v = r.member(obj, path, key, true, "a SHA-256 (64 lowercase hex digits)");
  if (!v) return std::nullopt;
  const auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  if (!v->is_string() || v->get_ref<const std::string&>().size() != 64 ||
      !std::ranges::all_of(v->get_ref<const std::string&>(), hex)) {
    r.fail(childPath(path, key), "expected a SHA-256 (64 lowercase hex digits), got " + describe(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<std::size_t> wordValue(JsonReader& r, const json& v, const std::string& path,
                                     std::span<const std::string_view> words) {
  if (v.is_string()) {
    const auto it = std::ranges::find(words, v.get_ref<const std::string&>());
    if (it != words.end()) return static_cast<std::size_t>(it - words.begin());
  }
  r.fail(path, "expected " + wordsText(words) + ", got " + describe(v));
  return std::nullopt;
}

std::optional<std::size_t> word(JsonReader& r, const json& obj, const std::string& path, std::string_view key,
                                bool required, std::span<const std::string_view> words) {
  const json* v = r.member(obj, path, key, required, wordsText(words));
  if (!v) return std::nullopt;
  return wordValue(r, *v, childPath(path, key), words);
}

const json* array(JsonReader& r, const json& obj, const std::string& path, std::string_view key, bool required) {
  const json* v = r.member(obj, path, key, required, "an array");
  if (!v || !r.expectArray(*v, childPath(path, key))) return nullptr;
  return v;
}

const json* object(JsonReader& r, const json& obj, const std::string& path, std::string_view key, bool required) {
  const json* v = r.member(obj, path, key, required, "an object");
  if (!v || !r.expectObject(*v, childPath(path, key))) return nullptr;
  return v;
}

Error prefixed(Error e, const std::string& source, const std::string& prefix) {
  // Core's readers quote what they read as it is: made safe here, where a peer's part enters a message.
  e.json_path = safeText((e.json_path.empty() || e.json_path == "/") ? prefix : prefix + e.json_path, false);
  e.file = source;
  const std::string head = source + ": /";
  std::string out;
  std::size_t at = 0;
  while (at <= e.message.size()) {
    std::size_t end = e.message.find('\n', at);
    if (end == std::string::npos) end = e.message.size();
    const std::string_view line = std::string_view(e.message).substr(at, end - at);
    if (!out.empty() || at > 0) out += '\n';
    if (line.starts_with(head)) {
      std::string_view rest = line.substr(head.size() - 1);  // from the path's "/"
      if (rest.starts_with("/: ")) rest.remove_prefix(1);    // the part's root is the prefix itself
      out += source + ": " + prefix + std::string(rest);
    } else {
      out += line;
    }
    at = end + 1;
  }
  e.message = safeText(out);
  return e;
}

}  // namespace detail

using detail::childPath;
using detail::JsonReader;
using json = nlohmann::json;

namespace {

constexpr std::array<std::string_view, 12> kErrorCodes = {
    "bad_frame",        "bad_message", "unknown_type", "not_authenticated", "auth_failed",     "no_such_job",
    "job_not_finished", "no_run",      "invalid_job",  "limit_exceeded",    "launcher_failed", "internal"};
constexpr std::array<std::string_view, 4> kAgentLaunchers = {"emulate-only", "mpirun", "srun", "sbatch"};
constexpr std::array<std::string_view, 2> kJobModes = {"emulate", "mpi"};

constexpr std::uint64_t kMaxHostCpus = 1u << 20;

}  // namespace

std::string_view toString(ErrorCode code) { return kErrorCodes.at(static_cast<std::size_t>(code)); }

std::optional<ErrorCode> errorCodeFromString(std::string_view s) {
  const auto it = std::ranges::find(kErrorCodes, s);
  if (it == kErrorCodes.end()) return std::nullopt;
  return static_cast<ErrorCode>(it - kErrorCodes.begin());
}

std::uint64_t messageId(const nlohmann::json& message) {
  if (!message.is_object()) return 0;
  const auto it = message.find("id");
  if (it == message.end()) return 0;
  std::uint64_t id = 0;
  if (it->is_number_unsigned())
    id = it->get<std::uint64_t>();
  else if (it->is_number_integer() && it->get<std::int64_t>() > 0)
    id = static_cast<std::uint64_t>(it->get<std::int64_t>());
  return id <= kMaxMessageInteger ? id : 0;
}

std::string messageType(const nlohmann::json& message) {
  if (!message.is_object()) return {};
  const auto it = message.find("type");
  return it != message.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// ---- hello / describe -------------------------------------------------------

json toJson(const Hello& m) {
  json j = detail::messageHead("hello", m.id);
  j["client"] = m.client;
  j["token"] = m.token;
  return j;
}

json toJson(const Welcome& m) {
  json j = detail::messageHead("welcome", m.id);
  j["agent"] = m.agent;
  j["host"] = m.host;
  return j;
}

json toJson(const DescribeRequest& m) { return detail::messageHead("describe", m.id); }

Result<Hello> parseHello(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "hello"); !s) return s.error();
  JsonReader r(source);
  Hello h;
  h.id = detail::requestId(r, m);
  if (auto s = r.string(m, "", "client")) h.client = *s;
  if (auto s = detail::text(r, m, "", "token", true)) {
    if (s->size() > kMaxTokenBytes)
      r.fail("/token", "expected a token of at most " + std::to_string(kMaxTokenBytes) + " bytes, got " +
                           std::to_string(s->size()));
    h.token = std::move(*s);
  }
  if (!r.ok()) return r.error();
  return h;
}

Result<Welcome> parseWelcome(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "welcome"); !s) return s.error();
  JsonReader r(source);
  Welcome w;
  w.id = detail::answerId(r, m);
  if (auto s = r.string(m, "", "agent")) w.agent = *s;
  if (auto s = r.string(m, "", "host")) w.host = *s;
  if (!r.ok()) return r.error();
  return w;
}

Result<DescribeRequest> parseDescribeRequest(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "describe"); !s) return s.error();
  JsonReader r(source);
  DescribeRequest d;
  d.id = detail::requestId(r, m);
  if (!r.ok()) return r.error();
  return d;
}

// ---- description ------------------------------------------------------------

namespace {

// What a job may take and ask for: the limits past max_jobs, and "jobs".
void writeJobLimits(const Description& m, json& j) {
  const JobLimits& l = m.job_limits;
  j["limits"]["job_memory_bytes"] = l.job_memory_bytes;
  j["limits"]["total_memory_bytes"] = l.total_memory_bytes;
  j["limits"]["job_threads"] = l.job_threads;
  j["limits"]["job_seconds"] = l.job_seconds;
  json shapes = json::array();
  for (const auto& s : m.shapes)
    shapes.push_back({{"nodes", s.nodes}, {"world_size", s.world_size}, {"grids", s.grids}});
  j["jobs"] = {{"shapes", std::move(shapes)}};
}

// Both optional: an older agent says neither.
void readJobLimits(JsonReader& r, const json& m, Description& d) {
  if (const json* limits = detail::object(r, m, "", "limits", false)) {
    JobLimits& l = d.job_limits;
    if (auto x = detail::whole(r, *limits, "/limits", "job_memory_bytes", false, 0, kMaxMessageInteger))
      l.job_memory_bytes = *x;
    if (auto x = detail::whole(r, *limits, "/limits", "total_memory_bytes", false, 0, kMaxMessageInteger))
      l.total_memory_bytes = *x;
    if (auto x = detail::whole(r, *limits, "/limits", "job_threads", false, 0, UINT32_MAX))
      l.job_threads = static_cast<std::uint32_t>(*x);
    if (auto x = detail::whole(r, *limits, "/limits", "job_seconds", false, 0, UINT32_MAX))
      l.job_seconds = static_cast<std::uint32_t>(*x);
  }
  const json* jobs = detail::object(r, m, "", "jobs", false);
  if (jobs == nullptr) return;
  const json* shapes = detail::array(r, *jobs, "/jobs", "shapes", true);
  if (shapes == nullptr) return;
  for (std::size_t i = 0; i < shapes->size(); ++i) {
    const std::string path = childPath("/jobs/shapes", i);
    const json& s = (*shapes)[i];
    if (!r.expectObject(s, path)) return;
    JobShape shape;
    if (auto x = detail::whole(r, s, path, "nodes", true, 1, kMaxWorldSize))
      shape.nodes = static_cast<std::uint32_t>(*x);
    if (auto x = detail::whole(r, s, path, "world_size", true, 1, kMaxWorldSize))
      shape.world_size = static_cast<std::uint32_t>(*x);
    if (const json* grids = detail::array(r, s, path, "grids", true)) {
      for (std::size_t k = 0; k < grids->size() && k < kMaxWorldSize; ++k)
        if (auto g = detail::wholeValue(r, (*grids)[k], childPath(childPath(path, "grids"), k), 1, kMaxWorldSize))
          shape.grids.push_back(static_cast<std::uint32_t>(*g));
    }
    d.shapes.push_back(std::move(shape));
  }
}

}  // namespace

json toJson(const Description& m) {
  json j = detail::messageHead("description", m.id);
  j["agent"] = m.agent;
  json hosts = json::array();
  for (const auto& h : m.hosts) {
    json gpus = json::array();
    for (const auto& g : h.gpus)
      gpus.push_back({{"index", g.index}, {"name", g.name}, {"memory_bytes", g.memory_bytes}});
    hosts.push_back({{"name", h.name}, {"cpus", h.cpus}, {"memory_bytes", h.memory_bytes}, {"gpus", std::move(gpus)}});
  }
  j["hosts"] = std::move(hosts);
  j["cuda_version"] = m.cuda_version;
  j["nccl_version"] = m.nccl_version;
  j["engine_version"] = m.engine_version;
  j["gpu_engine"] = m.gpu_engine;
  j["launcher"] = m.launcher;
  j["modes"] = m.modes;
  j["cluster"] = json(core::toJson(m.cluster));
  j["limits"] = {{"max_ranks", m.max_ranks}, {"max_steps", m.max_steps}, {"max_jobs", m.max_jobs}};
  writeJobLimits(m, j);
  return j;
}

namespace {

HostInfo readHost(JsonReader& r, const json& h, const std::string& path) {
  HostInfo host;
  if (!r.expectObject(h, path)) return host;
  if (auto s = r.string(h, path, "name")) host.name = *s;
  if (auto x = detail::whole(r, h, path, "cpus", true, 0, kMaxHostCpus)) host.cpus = static_cast<std::uint32_t>(*x);
  if (auto x = detail::whole(r, h, path, "memory_bytes", true, 0, kMaxMessageInteger)) host.memory_bytes = *x;
  const std::string gpath = childPath(path, "gpus");
  if (const json* gpus = detail::array(r, h, path, "gpus", true)) {
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      const std::string ipath = childPath(gpath, i);
      const json& g = (*gpus)[i];
      if (!r.expectObject(g, ipath)) continue;
      GpuInfo gpu;
      if (auto x = detail::whole(r, g, ipath, "index", true, 0, kMaxGpusPerNode - 1))
        gpu.index = static_cast<std::uint32_t>(*x);
      if (auto s = detail::text(r, g, ipath, "name", true)) gpu.name = *s;
      if (auto x = detail::whole(r, g, ipath, "memory_bytes", true, 0, kMaxHbmBytes)) gpu.memory_bytes = *x;
      host.gpus.push_back(std::move(gpu));
    }
  }
  return host;
}

void readLimits(JsonReader& r, const json& m, Description& d) {
  const json* limits = detail::object(r, m, "", "limits", true);
  if (!limits) return;
  if (auto x = detail::whole(r, *limits, "/limits", "max_ranks", true, 0, kMaxWorldSize))
    d.max_ranks = static_cast<std::uint32_t>(*x);
  if (auto x = detail::whole(r, *limits, "/limits", "max_steps", true, 0, kMaxJobSteps))
    d.max_steps = static_cast<std::uint32_t>(*x);
  if (auto x = detail::whole(r, *limits, "/limits", "max_jobs", true, 0, UINT32_MAX))
    d.max_jobs = static_cast<std::uint32_t>(*x);
}

}  // namespace

Result<Description> parseDescription(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "description"); !s) return s.error();
  JsonReader r(source);
  Description d;
  d.id = detail::answerId(r, m);
  if (auto s = r.string(m, "", "agent")) d.agent = *s;
  if (const json* hosts = detail::array(r, m, "", "hosts", true)) {
    for (std::size_t i = 0; i < hosts->size(); ++i) d.hosts.push_back(readHost(r, (*hosts)[i], childPath("/hosts", i)));
  }
  if (auto s = detail::text(r, m, "", "cuda_version", true)) d.cuda_version = *s;
  if (auto s = detail::text(r, m, "", "nccl_version", true)) d.nccl_version = *s;
  if (auto s = r.string(m, "", "engine_version")) d.engine_version = *s;
  if (auto b = r.boolean(m, "", "gpu_engine", true)) d.gpu_engine = *b;
  if (auto w = detail::word(r, m, "", "launcher", true, kAgentLaunchers)) d.launcher = kAgentLaunchers.at(*w);
  if (const json* modes = detail::array(r, m, "", "modes", true)) {
    for (std::size_t i = 0; i < modes->size(); ++i) {
      if (auto w = detail::wordValue(r, (*modes)[i], childPath("/modes", i), kJobModes))
        d.modes.emplace_back(kJobModes.at(*w));
    }
  }
  readLimits(r, m, d);
  readJobLimits(r, m, d);
  const json* cluster = detail::object(r, m, "", "cluster", true);
  if (!r.ok()) return r.error();
  auto c = clusterFromJson(*cluster, source);
  if (!c) return detail::prefixed(c.error(), source, "/cluster");
  d.cluster = std::move(c).value();
  return d;
}

// ---- watch, cancel, list ----------------------------------------------------

json toJson(const JobRequest& m, std::string_view type) {
  json j = detail::messageHead(type, m.id);
  j["job"] = m.job;
  return j;
}

json toJson(const ListRequest& m) { return detail::messageHead("list", m.id); }

Result<JobRequest> parseJobRequest(const json& m, const std::string& source) {
  if (auto s = checkEnvelope(m, source); !s) return s.error();
  const std::string type = messageType(m);
  if (type != "watch" && type != "cancel") {
    return Error{source + ": /type: expected \"watch\" or \"cancel\", got \"" + quoteText(type) + "\"",
                 ErrorKind::InvalidInput, source, "/type"};
  }
  JsonReader r(source);
  JobRequest q;
  q.id = detail::requestId(r, m);
  if (auto s = detail::jobId(r, m, "", "job")) q.job = *s;
  if (!r.ok()) return r.error();
  return q;
}

Result<ListRequest> parseListRequest(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "list"); !s) return s.error();
  JsonReader r(source);
  ListRequest q;
  q.id = detail::requestId(r, m);
  if (!r.ok()) return r.error();
  return q;
}

// ---- fetch, chunk -----------------------------------------------------------

json toJson(const FetchRequest& m) {
  json j = detail::messageHead("fetch", m.id);
  j["job"] = m.job;
  j["offset"] = m.offset;
  j["length"] = m.length;
  return j;
}

json toJson(const Chunk& m) {
  json j = detail::messageHead("chunk", m.id);
  j["job"] = m.job;
  j["offset"] = m.offset;
  j["total"] = m.total;
  j["sha256"] = m.sha256;
  j["run"] = m.run;
  j["data"] = base64Encode(m.data);
  return j;
}

Result<FetchRequest> parseFetchRequest(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "fetch"); !s) return s.error();
  JsonReader r(source);
  FetchRequest q;
  q.id = detail::requestId(r, m);
  if (auto s = detail::jobId(r, m, "", "job")) q.job = *s;
  if (auto x = detail::whole(r, m, "", "offset", true, 0, kMaxMessageInteger)) q.offset = *x;
  if (auto x = detail::whole(r, m, "", "length", true, 1, kMaxChunkBytes)) q.length = *x;
  if (!r.ok()) return r.error();
  return q;
}

namespace {

// The chunk's data: base64 of at most kMaxChunkBytes, inside [0, total) from `offset`.
void readChunkData(JsonReader& r, const json& m, Chunk& c, bool offset_ok) {
  const json* v = r.member(m, "", "data", true, "base64 (RFC 4648, with padding)");
  if (!v) return;
  constexpr std::uint64_t kMaxText = (kMaxChunkBytes + 2) / 3 * 4;
  if (!v->is_string()) {
    r.fail("/data", "expected base64 (RFC 4648, with padding), got " + detail::describe(*v));
  } else if (v->get_ref<const std::string&>().size() > kMaxText) {
    r.fail("/data", "expected at most " + std::to_string(kMaxChunkBytes) + " bytes, got " +
                        std::to_string(v->get_ref<const std::string&>().size()) + " characters of base64");
  } else if (auto bytes = base64Decode(v->get_ref<const std::string&>()); !bytes) {
    r.fail("/data", "expected base64 (RFC 4648, with padding), got " + detail::describe(*v));
  } else if (bytes->size() > kMaxChunkBytes) {
    r.fail("/data",
           "expected at most " + std::to_string(kMaxChunkBytes) + " bytes, got " + std::to_string(bytes->size()));
  } else if (offset_ok && bytes->size() > c.total - c.offset) {
    r.fail("/data", "expected at most the " + std::to_string(c.total - c.offset) + " bytes from offset " +
                        std::to_string(c.offset) + " to the file's end, got " + std::to_string(bytes->size()));
  } else {
    c.data = std::move(*bytes);
  }
}

}  // namespace

Result<Chunk> parseChunk(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "chunk"); !s) return s.error();
  JsonReader r(source);
  Chunk c;
  c.id = detail::answerId(r, m);
  if (auto s = detail::jobId(r, m, "", "job")) c.job = *s;
  const auto total = detail::whole(r, m, "", "total", true, 0, kMaxMessageInteger);
  if (total) c.total = *total;
  const auto offset = detail::whole(r, m, "", "offset", true, 0, kMaxMessageInteger);
  if (offset) c.offset = *offset;
  const bool offset_ok = total && offset && *offset <= *total;
  if (total && offset && !offset_ok)
    r.fail("/offset",
           "expected an offset within the file's " + std::to_string(*total) + " bytes, got " + std::to_string(*offset));
  if (auto s = detail::sha256(r, m, "", "sha256")) c.sha256 = *s;
  if (auto x = detail::signedWhole(r, m, "", "run", true, 0, static_cast<std::int64_t>(kMaxMessageInteger))) c.run = *x;
  readChunkData(r, m, c, offset_ok);
  if (!r.ok()) return r.error();
  return c;
}

// ---- errors -----------------------------------------------------------------

json toJson(const ErrorMessage& m) {
  json j = detail::messageHead("error", 0);
  j["id"] = m.id;
  j["code"] = toString(m.code);
  j["message"] = m.message;
  if (!m.path.empty()) j["path"] = m.path;
  return j;
}

Result<ErrorMessage> parseErrorMessage(const json& m, const std::string& source) {
  if (auto s = detail::openMessage(m, source, "error"); !s) return s.error();
  JsonReader r(source);
  ErrorMessage e;
  e.id = detail::answerId(r, m);
  if (auto w = detail::word(r, m, "", "code", true, kErrorCodes)) e.code = static_cast<ErrorCode>(*w);
  if (auto s = detail::text(r, m, "", "message", true)) e.message = *s;
  if (auto s = detail::text(r, m, "", "path", false)) {
    if (!s->empty() && s->front() != '/')
      r.fail("/path", "expected a JSON pointer (\"\" or starting with \"/\"), got " + detail::describe(m["path"]));
    e.path = *s;
  }
  if (!r.ok()) return r.error();
  return e;
}

ErrorMessage errorReply(std::uint64_t id, ErrorCode code, const Error& error) {
  // Every message quotes peer text safely; an error from elsewhere (a job's refusal) may not.
  return ErrorMessage{id, code, safeText(error.message), safeText(error.json_path, false)};
}

// ---- base64 -----------------------------------------------------------------

namespace {

constexpr std::string_view kBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::uint8_t kNotBase64 = 0xff;

constexpr std::array<std::uint8_t, 256> kBase64Values = [] {
  std::array<std::uint8_t, 256> values{};
  values.fill(kNotBase64);
  for (std::size_t i = 0; i < kBase64Alphabet.size(); ++i)
    values.at(static_cast<unsigned char>(kBase64Alphabet[i])) = static_cast<std::uint8_t>(i);
  return values;
}();

std::uint32_t sextet(char c) { return kBase64Values[static_cast<unsigned char>(c)]; }

}  // namespace

std::string base64Encode(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  char* o = out.data();
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (std::uint32_t{in[i + 1]} << 8) | in[i + 2];
    *o++ = kBase64Alphabet[v >> 18];
    *o++ = kBase64Alphabet[(v >> 12) & 63];
    *o++ = kBase64Alphabet[(v >> 6) & 63];
    *o++ = kBase64Alphabet[v & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    const std::uint32_t v = (std::uint32_t{in[i]} << 16) | (rest == 2 ? std::uint32_t{in[i + 1]} << 8 : 0u);
    *o++ = kBase64Alphabet[v >> 18];
    *o++ = kBase64Alphabet[(v >> 12) & 63];
    if (rest == 2) *o = kBase64Alphabet[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  if (text.empty()) return std::string();
  const std::size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  std::string out(text.size() / 4 * 3 - pad, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  const std::size_t full = text.size() - 4;  // every quad but the last
  std::uint32_t bad = 0;
  for (std::size_t i = 0; i < full; i += 4) {
    const std::uint32_t a = sextet(text[i]), b = sextet(text[i + 1]), c = sextet(text[i + 2]), d = sextet(text[i + 3]);
    bad |= a | b | c | d;
    const std::uint32_t v = (a << 18) | (b << 12) | (c << 6) | d;
    *o++ = static_cast<unsigned char>(v >> 16);
    *o++ = static_cast<unsigned char>(v >> 8);
    *o++ = static_cast<unsigned char>(v);
  }
  // The last quad: 4 - pad sextets; the bits past the last byte must be zero (one encoding per byte string).
  const std::uint32_t a = sextet(text[full]), b = sextet(text[full + 1]);
  const std::uint32_t c = pad < 2 ? sextet(text[full + 2]) : 0, d = pad < 1 ? sextet(text[full + 3]) : 0;
  bad |= a | b | c | d;
  if (bad & 0xc0u) return std::nullopt;  // kNotBase64 sets the bits no sextet has
  const std::uint32_t v = (a << 18) | (b << 12) | (c << 6) | d;
  if ((pad == 2 && (v & 0xffffu) != 0) || (pad == 1 && (v & 0xffu) != 0)) return std::nullopt;
  *o++ = static_cast<unsigned char>(v >> 16);
  if (pad < 2) *o++ = static_cast<unsigned char>(v >> 8);
  if (pad < 1) *o = static_cast<unsigned char>(v);
  return out;
}

bool validJobId(std::string_view job) {
  return job.size() >= 2 && job.size() <= 13 && job.front() == 'j' &&
         std::ranges::all_of(job.substr(1), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace shardscope::core::protocol
