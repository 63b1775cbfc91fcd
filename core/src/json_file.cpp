// Reading and writing JSON files: syntax errors with line and column, format
// detection by schema, and atomic writes that never lose the old file.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "json_reader.h"
#include "shardscope/core/json_io.h"

namespace shardscope::core {

namespace {
// Line and column of a byte offset, for parse errors.
std::string lineColumn(std::string_view text, std::size_t offset) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

template <class T, class F>
Result<T> loadWith(const std::string& path, F from) {
  auto j = readJsonFile(path);
  if (!j) return j.error();
  return from(*j, path);
}
}  // namespace

Result<nlohmann::json> parseJsonText(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's byte is 1-based and points just past the offending character.
    const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
    // nlohmann says "[json.exception.parse_error.101] parse error at line L, column C: <why>"; keep <why>.
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    if (auto p = what.find(": "); what.starts_with("parse error at") && p != std::string::npos)
      what = what.substr(p + 2);
    return Error{source + ": not valid JSON at " + lineColumn(text, at) + ": " + what, ErrorKind::InvalidInput, source};
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (1e400): nlohmann says where only in its text.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    return Error{source + ": not valid JSON: " + what + " (numbers must fit a double, |x| < 1.8e308)",
                 ErrorKind::InvalidInput, source};
  }
}

Result<std::string> detail::readWholeFile(const std::string& path, std::string_view kind,
                                          std::string_view empty_expectation) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    std::string msg = path + ": is a directory, expected ";
    msg += kind;
    return Error{msg, ErrorKind::InvalidInput, path};
  }
  // An input that cannot be read is an invalid input (exit code 1 of the CLI), not an Io failure.
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open: " + std::strerror(errno), ErrorKind::InvalidInput, path};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Error{path + ": read error", ErrorKind::InvalidInput, path};
  std::string text = ss.str();
  if (text.empty()) {
    std::string msg = path + ": the file is empty, expected ";
    msg += empty_expectation;
    return Error{msg, ErrorKind::InvalidInput, path};
  }
  return text;
}

Result<nlohmann::json> readJsonFile(const std::string& path) {
  auto text = detail::readWholeFile(path, "a JSON file", "a JSON document");
  if (!text) return text.error();
  return parseJsonText(*text, path);
}

Result<ModelSpec> loadModel(const std::string& path) { return loadWith<ModelSpec>(path, modelFromJson); }
Result<ClusterSpec> loadCluster(const std::string& path) { return loadWith<ClusterSpec>(path, clusterFromJson); }
Result<ShardPlan> loadPlan(const std::string& path) { return loadWith<ShardPlan>(path, planFromJson); }
Result<Calibration> loadCalibration(const std::string& path) {
  return loadWith<Calibration>(path, calibrationFromJson);
}
Result<Project> loadProject(const std::string& path) { return loadWith<Project>(path, projectFromJson); }

Result<FormatKind> detectFormat(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) return Error{source + ": /: expected an object with a \"schema\" field"};
  auto it = j.find("schema");
  if (it == j.end() || !it->is_string())
    return Error{source + ": /schema: missing or not a string (expected e.g. \"shardscope.model/1\")"};
  const std::string s = it->get<std::string>();
  const std::pair<std::string_view, FormatKind> known[] = {
      {"shardscope.model/", FormatKind::Model},     {"shardscope.cluster/", FormatKind::Cluster},
      {"shardscope.plan/", FormatKind::Plan},       {"shardscope.calibration/", FormatKind::Calibration},
      {"shardscope.project/", FormatKind::Project}, {"shardscope.constraints/", FormatKind::Constraints},
      {"shardscope.access/", FormatKind::Access}};
  for (const auto& [prefix, kind] : known)
    if (s.starts_with(prefix)) return kind;  // the loader checks the version
  return Error{source +
               ": /schema: expected one of shardscope.model/1, shardscope.cluster/1, shardscope.plan/1, "
               "shardscope.calibration/1, shardscope.project/1, shardscope.constraints/1, shardscope.access/1, got \"" +
               s + "\""};
}

Status writeFileAtomic(const std::string& path, std::string_view bytes) {
  namespace fs = std::filesystem;
  const std::string tmp = path + ".tmp-shardscope";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{path + ": cannot write: " + std::strerror(errno), ErrorKind::Io, path};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return Error{path + ": write failed (disk full?); the previous file is unchanged", ErrorKind::Io, path};
    }
  }
  // Make the new bytes durable before they replace the old file.
  if (int fd = ::open(tmp.c_str(), O_RDONLY); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error{path + ": cannot replace the file: " + ec.message() + "; the previous file is unchanged",
                 ErrorKind::Io, path};
  }
  return Ok{};
}

Status writeJsonFile(const std::string& path, const nlohmann::ordered_json& j) {
  std::string text = j.dump(2);
  text += '\n';
  return writeFileAtomic(path, text);
}

}  // namespace shardscope::core
