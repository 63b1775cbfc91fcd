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

#include "shardscope/core/json_reader.h"
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

namespace {
// Builds the document like nlohmann's own DOM parser, and knows where it is:
// a duplicate key, a number beyond a double and nesting deeper than
// kMaxJsonDepth stop the parse with the JSON path of the value. `Json` is
// nlohmann::json, or nlohmann::ordered_json to keep the members' order.
template <class Json>
class CheckedDomBuilder : public nlohmann::json_sax<Json> {
 public:
  using typename nlohmann::json_sax<Json>::number_integer_t;
  using typename nlohmann::json_sax<Json>::number_unsigned_t;
  using typename nlohmann::json_sax<Json>::number_float_t;
  using typename nlohmann::json_sax<Json>::string_t;
  using typename nlohmann::json_sax<Json>::binary_t;

  explicit CheckedDomBuilder(Json& root) : root_(root) {}

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t& /*text*/) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t /*elements*/) override { return open(Json::object()); }
  bool start_array(std::size_t /*elements*/) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    Json& obj = *stack_.back();
    if (obj.contains(k)) {
      problem_path_ = detail::childPath(pathHere(), k);
      problem_ = "duplicate key \"" + k + "\" (each key may appear once in an object)";
      return false;
    }
    keys_.back() = k;
    pending_.back() = true;
    member_ = &obj[k];
    return true;
  }
  bool parse_error(std::size_t position, const std::string& /*token*/, const nlohmann::detail::exception& e) override {
    error_position_ = position;
    problem_path_ = pathOfNext();
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    // nlohmann says "syntax error while parsing value - invalid literal; last read: 'x'"; keep it.
    if (auto p = what.find(": "); what.starts_with("parse error at") && p != std::string::npos)
      what = what.substr(p + 2);
    if (e.id == 406) what += " (numbers must fit a double, |x| < 1.8e308)";
    syntax_ = what;
    return false;
  }

  [[nodiscard]] const std::string& problem() const { return problem_; }
  [[nodiscard]] const std::string& syntax() const { return syntax_; }
  [[nodiscard]] const std::string& problemPath() const { return problem_path_; }
  [[nodiscard]] std::size_t errorPosition() const { return error_position_; }

 private:
  // The path of the container on top of the stack.
  std::string pathHere() const {
    std::string path;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i)
      path = stack_[i]->is_array() ? detail::childPath(path, stack_[i]->size() - 1) : detail::childPath(path, keys_[i]);
    return path;
  }
  // The path of the value being read when an error stopped the parse.
  std::string pathOfNext() const {
    if (stack_.empty()) return "";
    const Json& top = *stack_.back();
    if (top.is_array()) return detail::childPath(pathHere(), top.size());
    return pending_.back() ? detail::childPath(pathHere(), keys_.back()) : pathHere();
  }
  Json* place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (stack_.back()->is_array()) {
      stack_.back()->push_back(std::move(v));
      return &stack_.back()->back();
    }
    *member_ = std::move(v);
    pending_.back() = false;
    return member_;
  }
  bool put(Json v) {
    place(std::move(v));
    return true;
  }
  bool open(Json v) {
    if (stack_.size() >= kMaxJsonDepth) {
      problem_path_ = pathOfNext();
      problem_ = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    stack_.push_back(place(std::move(v)));
    keys_.emplace_back();
    pending_.push_back(false);
    return true;
  }
  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    pending_.pop_back();
    return true;
  }

  Json& root_;
  std::vector<Json*> stack_;
  std::vector<std::string> keys_;  // per open container: the object's current key
  std::vector<bool> pending_;      // per open container: a key was read, its value not yet
  Json* member_ = nullptr;
  std::string problem_, syntax_, problem_path_;
  std::size_t error_position_ = 0;
};

template <class Json>
Result<Json> parseChecked(std::string_view text, const std::string& source) {
  Json root;
  CheckedDomBuilder<Json> builder(root);
  const bool ok = Json::sax_parse(text.begin(), text.end(), &builder);
  if (ok) return root;
  const std::string& path = builder.problemPath();
  if (!builder.problem().empty()) {
    const std::string at = path.empty() ? "/" : path;
    return Error{source + ": " + at + ": " + builder.problem(), ErrorKind::InvalidInput, source, at};
  }
  // nlohmann's position is 1-based and points just past the offending character.
  const std::size_t at = builder.errorPosition() > 0 ? builder.errorPosition() - 1 : 0;
  return Error{source + ": not valid JSON at " + lineColumn(text, at) + (path.empty() ? "" : " (" + path + ")") + ": " +
                   builder.syntax(),
               ErrorKind::InvalidInput, source, path};
}
}  // namespace

Result<nlohmann::json> parseJsonText(std::string_view text, const std::string& source) {
  return parseChecked<nlohmann::json>(text, source);
}

Result<nlohmann::ordered_json> parseOrderedJsonText(std::string_view text, const std::string& source) {
  return parseChecked<nlohmann::ordered_json>(text, source);
}

Result<std::string> readWholeFile(const std::string& path, std::string_view kind, std::string_view empty_expectation) {
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
