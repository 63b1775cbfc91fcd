#include "shardscope/core/json_reader.h"

#include <cmath>
#include <sstream>

namespace shardscope::core {

namespace {
constexpr std::size_t kMaxReportedProblems = 20;

std::string displayPath(const std::string& path) { return path.empty() ? std::string("/") : path; }

std::string rangeText(std::uint64_t min, std::uint64_t max) {
  std::ostringstream s;
  if (max == UINT64_MAX) {
    s << (min == 0 ? "an integer >= 0" : min == 1 ? "an integer > 0" : "an integer >= " + std::to_string(min));
  } else {
    s << "an integer in [" << min << ", " << max << "]";
  }
  return s.str();
}

std::string rangeText(double min, double max, bool min_exclusive) {
  std::ostringstream s;
  s << "a number ";
  if (std::isinf(max)) {
    s << (min_exclusive ? "> " : ">= ") << min;
  } else {
    s << "in " << (min_exclusive ? "(" : "[") << min << ", " << max << "]";
  }
  return s.str();
}

// Escape a key for a JSON pointer (RFC 6901).
std::string escapeKey(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}
}  // namespace

std::string childPath(const std::string& parent, std::string_view key) { return parent + "/" + escapeKey(key); }
std::string childPath(const std::string& parent, std::size_t index) { return parent + "/" + std::to_string(index); }

std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return std::string("boolean ") + (j.get<bool>() ? "true" : "false");
    case json::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > 40) {
        std::size_t cut = 37;  // never inside a UTF-8 sequence: back to the byte that starts one
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
        s = s.substr(0, cut) + "...";
      }
      return "string \"" + s + "\"";
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return j.dump();
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    default:
      return "an unsupported value";
  }
}

void JsonReader::fail(const std::string& path, const std::string& expectation) {
  if (problems_.empty()) first_path_ = displayPath(path);
  problems_.push_back(source_ + ": " + displayPath(path) + ": " + expectation);
}

Error problemsError(const std::vector<std::string>& problems) {
  std::string msg;
  for (std::size_t i = 0; i < problems.size() && i < kMaxReportedProblems; ++i) {
    if (i) msg += '\n';
    msg += problems[i];
  }
  if (problems.size() > kMaxReportedProblems) {
    msg += "\n... and " + std::to_string(problems.size() - kMaxReportedProblems) + " more problems";
  }
  return Error{msg};
}

Error JsonReader::error() const {
  Error e = problemsError(problems_);
  e.file = source_;
  e.json_path = first_path_;
  return e;
}

bool JsonReader::expectObject(const json& j, const std::string& path) {
  if (j.is_object()) return true;
  fail(path, "expected an object, got " + describe(j));
  return false;
}

bool JsonReader::expectArray(const json& j, const std::string& path) {
  if (j.is_array()) return true;
  fail(path, "expected an array, got " + describe(j));
  return false;
}

const json* JsonReader::member(const json& obj, const std::string& path, std::string_view key, bool required,
                               std::string_view what) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || (it->is_null() && required)) {
    if (required) fail(childPath(path, key), "missing required field (expected " + std::string(what) + ")");
    return nullptr;
  }
  if (it->is_null()) return nullptr;  // optional and explicitly null
  return &*it;
}

std::optional<std::string> JsonReader::string(const json& obj, const std::string& path, std::string_view key,
                                              bool required, bool allow_empty) {
  const json* v = member(obj, path, key, required, allow_empty ? "a string" : "a non-empty string");
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    fail(childPath(path, key), "expected a string, got " + describe(*v));
    return std::nullopt;
  }
  std::string s = v->get<std::string>();
  if (s.empty() && !allow_empty) {
    fail(childPath(path, key), "expected a non-empty string");
    return std::nullopt;
  }
  return s;
}

std::optional<std::uint64_t> JsonReader::integerValue(const json& v, const std::string& path, std::uint64_t min,
                                                      std::uint64_t max) {
  std::optional<std::uint64_t> value;
  if (v.is_number_unsigned()) {
    value = v.get<std::uint64_t>();
  } else if (v.is_number_integer()) {
    if (v.get<std::int64_t>() >= 0) value = static_cast<std::uint64_t>(v.get<std::int64_t>());
  } else if (v.is_number_float()) {
    // Accept integral floats such as 4e7 that people write by hand.
    const double d = v.get<double>();
    if (std::isfinite(d) && d >= 0 && d <= 9007199254740992.0 && std::floor(d) == d) {
      value = static_cast<std::uint64_t>(d);
    } else if (std::isfinite(d) && std::floor(d) != d) {
      fail(path, "expected " + rangeText(min, max) + ", got " + describe(v) + " (not a whole number)");
      return std::nullopt;
    }
  } else {
    fail(path, "expected " + rangeText(min, max) + ", got " + describe(v));
    return std::nullopt;
  }
  if (!value || *value < min || *value > max) {
    fail(path, "expected " + rangeText(min, max) + ", got " + describe(v));
    return std::nullopt;
  }
  return value;
}

std::optional<std::uint64_t> JsonReader::integer(const json& obj, const std::string& path, std::string_view key,
                                                 bool required, std::uint64_t min, std::uint64_t max) {
  const json* v = member(obj, path, key, required, rangeText(min, max));
  if (!v) return std::nullopt;
  return integerValue(*v, childPath(path, key), min, max);
}

std::optional<double> JsonReader::numberValue(const json& v, const std::string& path, double min, double max,
                                              bool min_exclusive) {
  if (!v.is_number()) {
    fail(path, "expected " + rangeText(min, max, min_exclusive) + ", got " + describe(v));
    return std::nullopt;
  }
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || (min_exclusive && d == min) || d > max) {
    fail(path, "expected " + rangeText(min, max, min_exclusive) + ", got " + describe(v));
    return std::nullopt;
  }
  return d;
}

std::optional<double> JsonReader::number(const json& obj, const std::string& path, std::string_view key, bool required,
                                         double min, double max, bool min_exclusive) {
  const json* v = member(obj, path, key, required, rangeText(min, max, min_exclusive));
  if (!v) return std::nullopt;
  return numberValue(*v, childPath(path, key), min, max, min_exclusive);
}

std::optional<bool> JsonReader::boolean(const json& obj, const std::string& path, std::string_view key, bool required) {
  const json* v = member(obj, path, key, required, "true or false");
  if (!v) return std::nullopt;
  if (!v->is_boolean()) {
    fail(childPath(path, key), "expected true or false, got " + describe(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

bool JsonReader::schema(const json& root, std::string_view expected) {
  if (!expectObject(root, "")) return false;
  auto s = string(root, "", "schema");
  if (!s) return false;
  const std::string_view got = *s;
  if (got == expected) return true;
  const auto slash_e = expected.rfind('/');
  const auto slash_g = got.rfind('/');
  const std::string_view family = expected.substr(0, slash_e);
  if (slash_g != std::string_view::npos && got.substr(0, slash_g) == family) {
    fail("/schema", "version \"" + std::string(got) + "\" is not supported by this build, which reads \"" +
                        std::string(expected) + "\" (a newer ShardScope wrote it?)");
  } else {
    fail("/schema", "expected \"" + std::string(expected) + "\", got " + describe(root.at("schema")) +
                        (got.starts_with("shardscope.") ? " (a different ShardScope format)" : ""));
  }
  return false;
}

}  // namespace shardscope::core
