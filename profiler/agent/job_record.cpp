#include "shardscope/profiler/agent/job_record.h"

#include <cstdint>
#include <filesystem>
#include <limits>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/json_reader.h"

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;
namespace proto = core::protocol;
using nlohmann::json;

core::Error recordError(const std::string& path, const std::string& at, const std::string& what) {
  return core::Error{path + ": " + at + ": " + what, core::ErrorKind::InvalidInput, path, at};
}

// The run file's size, digest and run (its path is the folder's run.sqlite).
core::Result<RunFile> readRunFile(const json& j, const std::string& path) {
  core::JsonReader r(path);
  RunFile f;
  f.path = (fs::path(path).parent_path() / "run.sqlite").string();
  if (!r.expectObject(j, "/run_file")) return r.error();
  if (auto v = r.integer(j, "/run_file", "size", false, 0)) f.size = *v;
  if (auto v = r.string(j, "/run_file", "sha256", false, true)) f.sha256 = *v;
  if (auto v = r.integer(j, "/run_file", "run", false, 0, std::numeric_limits<std::int64_t>::max()))
    f.run = static_cast<std::int64_t>(*v);
  if (!r.ok()) return r.error();
  return f;
}

}  // namespace

std::string jobRecordText(const JobRecord& record) {
  json j;
  j["schema"] = kAgentJobSchema;
  j["info"] = proto::toJson(record.info);
  j["spec"] = proto::toJson(record.spec);
  if (!record.run_file.sha256.empty())
    j["run_file"] = {{"size", record.run_file.size}, {"sha256", record.run_file.sha256}, {"run", record.run_file.run}};
  j["owner"] = record.owner;
  // Replaced, not thrown, should a byte that is not UTF-8 still get here.
  return j.dump(1, ' ', false, json::error_handler_t::replace);
}

core::Result<JobRecord> parseJobRecord(std::string_view text, const std::string& path) {
  auto j = core::parseJsonText(text, path);
  if (!j) return j.error();
  if (!j->is_object() || !j->contains("info") || !j->contains("spec"))
    return recordError(path, "/", std::string("not a ") + kAgentJobSchema + " record");
  auto info = proto::parseJobInfo((*j)["info"], path, "/info");
  if (!info) return info.error();
  auto spec = proto::parseJobSpec((*j)["spec"], path, "/spec");
  if (!spec) return spec.error();
  JobRecord record{std::move(info).value(), std::move(spec).value(), {}, "a client"};
  if (const auto owner = j->find("owner"); owner != j->end()) {
    if (!owner->is_string()) return recordError(path, "/owner", "expected a string, got " + core::describe(*owner));
    record.owner = owner->get<std::string>();
  }
  if (const auto run_file = j->find("run_file"); run_file != j->end()) {
    auto f = readRunFile(*run_file, path);
    if (!f) return f.error();
    record.run_file = std::move(f).value();
  }
  const std::string folder = fs::path(path).parent_path().filename().string();
  if (record.info.job != folder)
    return recordError(path, "/info/job", "it names job " + record.info.job + ", not its folder's (" + folder + ")");
  return record;
}

core::Result<JobRecord> loadJobRecord(const std::string& path) {
  auto text = core::readWholeFile(path, "a job record", std::string("a ") + kAgentJobSchema + " record");
  if (!text) return text.error();
  return parseJobRecord(*text, path);
}

}  // namespace shardscope::profiler
