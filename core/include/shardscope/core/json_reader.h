// The one checked JSON reader of every format (core's files, the agent's
// protocol and config): validation that remembers where it is. Every problem
// is recorded as "<source>: <JSON pointer>: <expectation>", and reading goes
// on so a user sees all problems of a file at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "shardscope/core/result.h"

namespace shardscope::core {

using json = nlohmann::json;

// Child JSON pointer: childPath("/tables", 3) == "/tables/3".
[[nodiscard]] std::string childPath(const std::string& parent, std::string_view key);
[[nodiscard]] std::string childPath(const std::string& parent, std::size_t index);
// A short, printable form of a value for messages ("string \"abc\"", "-3").
[[nodiscard]] std::string describe(const json& j);

class JsonReader {
 public:
  explicit JsonReader(std::string source) : source_(std::move(source)) {}

  void fail(const std::string& path, const std::string& expectation);
  [[nodiscard]] bool ok() const { return problems_.empty(); }
  [[nodiscard]] std::size_t problemCount() const { return problems_.size(); }
  [[nodiscard]] Error error() const;
  [[nodiscard]] const std::string& source() const { return source_; }

  // Checks `j` is an object; records a problem otherwise.
  bool expectObject(const json& j, const std::string& path);
  bool expectArray(const json& j, const std::string& path);

  // A member of an object, or nullptr (and a problem when `required`).
  const json* member(const json& obj, const std::string& path, std::string_view key, bool required,
                     std::string_view what);

  // Typed fields. A missing required field or a value of the wrong type or
  // range records a problem and returns nullopt.
  std::optional<std::string> string(const json& obj, const std::string& path, std::string_view key,
                                    bool required = true, bool allow_empty = false);
  std::optional<std::uint64_t> integer(const json& obj, const std::string& path, std::string_view key, bool required,
                                       std::uint64_t min, std::uint64_t max = UINT64_MAX);
  std::optional<double> number(const json& obj, const std::string& path, std::string_view key, bool required,
                               double min, double max, bool min_exclusive = false);
  std::optional<bool> boolean(const json& obj, const std::string& path, std::string_view key, bool required);

  // Value-level forms for array elements.
  std::optional<std::uint64_t> integerValue(const json& v, const std::string& path, std::uint64_t min,
                                            std::uint64_t max = UINT64_MAX);
  std::optional<double> numberValue(const json& v, const std::string& path, double min, double max,
                                    bool min_exclusive = false);

  // Checks `schema` equals `expected` ("shardscope.model/1"); names newer
  // versions and other formats precisely.
  bool schema(const json& root, std::string_view expected);

 private:
  std::string source_;
  std::vector<std::string> problems_;
  std::string first_path_;  // the JSON pointer of the first problem, for Error::json_path
};

// The problems of one file as one error: the first 20, one per line, then
// how many more there were. Shared by every reader (JSON, CSV).
[[nodiscard]] Error problemsError(const std::vector<std::string>& problems);

// The whole content of a text file; errors name the file: not found, a
// directory (expected `kind`), unreadable, or empty (`empty_expectation`).
[[nodiscard]] Result<std::string> readWholeFile(const std::string& path, std::string_view kind,
                                                std::string_view empty_expectation);

// core's own readers name these as detail:: (json_parts.h).
namespace detail {
using core::childPath;
using core::describe;
using core::JsonReader;
using core::problemsError;
using core::readWholeFile;
using json = nlohmann::json;
}  // namespace detail

}  // namespace shardscope::core
