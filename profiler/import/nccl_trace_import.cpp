// Import of the NCCL profiler plugin's traces (nccl_trace_import.h): every
// line of every file is checked first (with core::parseJsonText, so
// duplicate keys and syntax errors name their place), then the files are
// written as one run. docs/formats/nccl-trace.md, docs/nccl-profiler.md.
#include "shardscope/profiler/import/nccl_trace_import.h"
#include "shardscope/profiler/import/trace_files.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/run_writer.h"
#include "shardscope/profiler/import/import_classify.h"
#include "shardscope/profiler/trace/trace_recorder.h"

namespace shardscope::profiler {

namespace {

namespace fs = std::filesystem;
namespace st = core::store;
using json = nlohmann::json;

// Timestamps, byte counts and sequence numbers beyond 2^62 are not real ones.
constexpr std::int64_t kMaxValue = std::int64_t{1} << 62;
constexpr std::int64_t kMaxRanks = std::int64_t{1} << 24;
constexpr std::size_t kMaxLine = std::size_t{1} << 20;
constexpr std::size_t kChunk = std::size_t{64} << 10;
constexpr std::int64_t kCpuStream = 100000;  // the step spans' stream, as imported CPU events

std::string hex16(std::uint64_t h) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "0x";
  for (int shift = 60; shift >= 0; shift -= 4) s += kHex[(h >> shift) & 0xF];
  return s;
}

std::int64_t addSat(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::max() : r;
}

// What a value is, for "expected X, found Y".
std::string found(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::string: {
      std::string s = v.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "the string " + json(s).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return v.dump();
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    default:
      return "a value";
  }
}

// The members of one line's object, with errors "<file>: line N: /key: ...".
class Fields {
 public:
  Fields(const json& o, const std::string& file, std::int64_t line) : o_(o), file_(file), line_(line) {}

  [[nodiscard]] core::Error error(const std::string& path, const std::string& what) const {
    return core::Error{file_ + ": line " + std::to_string(line_) + ": " + path + ": " + what,
                       core::ErrorKind::InvalidInput, file_, path};
  }
  [[nodiscard]] const json* get(const char* key) const {
    auto it = o_.find(key);
    return it == o_.end() ? nullptr : &*it;
  }
  core::Status integer(const char* key, std::int64_t& out, std::int64_t lo, std::int64_t hi, const std::string& what,
                       bool required) const {
    const json* v = get(key);
    if (v == nullptr) return required ? missing(key, what) : core::Status(core::Ok{});
    const bool fits =
        v->is_number_integer() && !(v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t(hi));
    const std::int64_t n = fits ? v->get<std::int64_t>() : 0;
    if (!fits || n < lo || n > hi) return error(std::string("/") + key, "expected " + what + ", found " + found(*v));
    out = n;
    return core::Ok{};
  }
  core::Status integer(const char* key, int& out, std::int64_t lo, std::int64_t hi, const std::string& what,
                       bool required) const {
    std::int64_t n = out;
    if (auto s = integer(key, n, lo, hi, what, required); !s) return s;
    out = static_cast<int>(n);
    return core::Ok{};
  }
  core::Status text(const char* key, std::string& out, const std::string& what, bool required) const {
    const json* v = get(key);
    if (v == nullptr) return required ? missing(key, what) : core::Status(core::Ok{});
    if (!v->is_string() || v->get_ref<const std::string&>().size() > 4096)
      return error(std::string("/") + key, "expected " + what + ", found " + found(*v));
    out = v->get<std::string>();
    return core::Ok{};
  }
  core::Status flag(const char* key, bool& out) const {
    const json* v = get(key);
    if (v == nullptr) return core::Ok{};
    if (!v->is_boolean()) return error(std::string("/") + key, "expected true or false, found " + found(*v));
    out = v->get<bool>();
    return core::Ok{};
  }
  core::Status hash(const char* key, std::uint64_t& out) const {
    std::string s;
    const std::string what = "the communicator's hash, \"0x\" and up to 16 hex digits";
    if (auto r = text(key, s, what, true); !r) return r;
    const bool ok =
        s.size() > 2 && s.size() <= 18 && s[0] == '0' && s[1] == 'x' &&
        std::all_of(s.begin() + 2, s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    if (!ok) return error(std::string("/") + key, "expected " + what + ", found " + found(*get(key)));
    out = std::stoull(s.substr(2), nullptr, 16);
    return core::Ok{};
  }
  // The communicator a line names: comm, comm_hash, rank < nranks.
  core::Status comm(NcclTraceComm& c) const {
    if (auto s = text("comm", c.name, "the communicator's name (a string, may be empty)", true); !s) return s;
    if (auto s = hash("comm_hash", c.hash); !s) return s;
    if (auto s = integer("nranks", c.nranks, 1, kMaxRanks, "the communicator's size, a whole number >= 1", true); !s)
      return s;
    return integer("rank", c.rank, 0, c.nranks - 1,
                   "this process's rank in the communicator, 0.." + std::to_string(c.nranks - 1), true);
  }

 private:
  core::Status missing(const char* key, const std::string& what) const {
    return error(std::string("/") + key, "missing (expected " + what + ")");
  }
  const json& o_;
  const std::string& file_;
  std::int64_t line_;
};

core::Status readHeader(const Fields& f, NcclTraceHeader& h) {
  std::string schema;
  const std::string want = "\"" + std::string(kNcclTraceSchema) + "\"";
  if (auto s = f.text("schema", schema, want + " (the first line of a ShardScope NCCL profiler trace)", true); !s)
    return s;
  if (schema != kNcclTraceSchema) {
    const bool newer = schema.starts_with("shardscope.nccl-trace/");
    return f.error("/schema", newer ? "unsupported version \"" + schema + "\" (this build reads " + want + ")"
                                    : "expected " + want + ", found " + found(*f.get("schema")));
  }
  if (auto s = f.text("host", h.host, "the host name, a string", true); !s) return s;
  if (auto s = f.integer("pid", h.pid, 0, std::numeric_limits<std::int32_t>::max(), "the process id", true); !s)
    return s;
  if (auto s = f.integer("nranks", h.nranks, 1, kMaxRanks, "the job's size, a whole number >= 1", true); !s) return s;
  if (auto s =
          f.integer("rank", h.rank, 0, h.nranks - 1, "the process's rank, 0.." + std::to_string(h.nranks - 1), true);
      !s)
    return s;
  if (auto s = f.text("rank_source", h.rank_source, "a string", false); !s) return s;
  if (auto s = f.text("comm", h.comm, "the first communicator's name", false); !s) return s;
  return f.integer("time_ns", h.time_ns, 0, kMaxValue, "a time in ns >= 0", false);
}

core::Status readCall(const Fields& f, NcclTraceCall& c) {
  if (auto s = f.comm(c.comm); !s) return s;
  const std::string whole = "a whole number 0.." + std::to_string(kMaxValue);
  if (auto s = f.text("op", c.op, "the collective, e.g. \"all_reduce\"", true); !s) return s;
  if (c.op.empty() || c.op.size() > 32 || !std::all_of(c.op.begin(), c.op.end(), [](char x) {
        return (x >= 'a' && x <= 'z') || (x >= '0' && x <= '9') || x == '_';
      }))
    return f.error("/op",
                   "expected a collective such as \"all_reduce\" (lower case and '_'), found " + found(*f.get("op")));
  if (auto s = f.integer("seq", c.seq, 0, kMaxValue, "the call's sequence number, " + whole, true); !s) return s;
  if (auto s = f.integer("bytes", c.bytes, 0, kMaxValue, "the call's bytes, " + whole, true); !s) return s;
  if (auto s = f.integer("count", c.count, 0, kMaxValue, "the element count, " + whole, false); !s) return s;
  for (auto [key, out] :
       {std::pair{"func", &c.func}, {"datatype", &c.datatype}, {"algo", &c.algo}, {"proto", &c.proto}})
    if (auto s = f.text(key, *out, "a string", false); !s) return s;
  if (auto s = f.integer("root", c.root, 0, c.comm.nranks - 1, "the root's rank in the communicator", false); !s)
    return s;
  if (auto s = f.integer("channels", c.channels, 0, 4096, "NCCL's channel count", false); !s) return s;
  if (const json* p = f.get("peers"); p != nullptr) {
    if (!p->is_array() || p->size() > static_cast<std::size_t>(c.comm.nranks))
      return f.error("/peers", "expected an array of at most " + std::to_string(c.comm.nranks) +
                                   " ranks in the communicator, found " + found(*p));
    for (std::size_t i = 0; i < p->size(); ++i) {
      const json& v = (*p)[i];
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= c.comm.nranks)
        return f.error("/peers/" + std::to_string(i),
                       "expected a rank 0.." + std::to_string(c.comm.nranks - 1) + ", found " + found(v));
      c.peers.push_back(v.get<int>());
    }
    c.has_peers = true;
  }
  if (auto s = f.integer("start_ns", c.start_ns, 0, kMaxValue, "the call's start in ns, " + whole, true); !s) return s;
  if (auto s = f.integer("end_ns", c.end_ns, 0, kMaxValue, "the call's end in ns, " + whole, true); !s) return s;
  if (c.end_ns < c.start_ns)
    return f.error("/end_ns", "the call ends (" + std::to_string(c.end_ns) + ") before it starts (start_ns " +
                                  std::to_string(c.start_ns) + "); expected end_ns >= start_ns");
  const bool gs = f.get("gpu_start_ns") != nullptr, ge = f.get("gpu_end_ns") != nullptr;
  if (gs != ge)
    return f.error(gs ? "/gpu_end_ns" : "/gpu_start_ns", "missing (expected gpu_start_ns and gpu_end_ns together)");
  if (gs) {
    if (auto s = f.integer("gpu_start_ns", c.gpu_start_ns, 0, kMaxValue, "a GPU time in ns, " + whole, true); !s)
      return s;
    if (auto s = f.integer("gpu_end_ns", c.gpu_end_ns, 0, kMaxValue, "a GPU time in ns, " + whole, true); !s) return s;
    if (c.gpu_end_ns < c.gpu_start_ns)
      return f.error("/gpu_end_ns", "the call ends on the GPU (" + std::to_string(c.gpu_end_ns) +
                                        ") before it starts (gpu_start_ns " + std::to_string(c.gpu_start_ns) +
                                        "); expected gpu_end_ns >= gpu_start_ns");
  }
  if (auto s = f.integer("step", c.step, 0, kMaxValue, "the trainer's step, " + whole, false); !s) return s;
  if (auto s = f.flag("partial", c.partial); !s) return s;
  return f.flag("incomplete", c.incomplete);
}

// One file's lines, in order: the header, then comm, call and end lines.
class TraceReader {
 public:
  TraceReader(const std::string& path, const NcclCallFn& on_call) : path_(path), on_call_(on_call) {}

  core::Status line(std::string_view text, std::int64_t n, bool unterminated) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    static const json kNothing = json::object();
    const Fields blank(kNothing, path_, n);
    if (text.empty()) return blank.error("/", "empty line (expected a JSON object)");
    auto j = core::parseJsonText(text, path_ + ": line " + std::to_string(n));
    if (!j) {
      std::string msg = j.error().message;
      if (auto at = msg.find("at line 1, column "); at != std::string::npos) msg.replace(at, 18, "at column ");
      if (unterminated) msg += " (the last line has no newline: was the file cut short?)";
      return core::Error{msg, core::ErrorKind::InvalidInput, path_, j.error().json_path};
    }
    if (!j->is_object()) return blank.error("/", "expected a JSON object, found " + found(*j));
    const Fields f(*j, path_, n);
    ++sum_.lines;
    if (n == 1) return readHeader(f, sum_.header);
    std::string type;
    if (auto s = f.text("type", type, "\"call\", \"comm\" or \"end\"", true); !s) return s;
    if (type == "call") return call(f, n);
    if (type == "comm") {
      NcclTraceComm c;
      if (auto s = f.comm(c); !s) return s;
      return learn(f, c, n);
    }
    if (type == "end") {
      std::int64_t calls = 0, dropped = 0;
      if (auto s = f.integer("calls", calls, 0, kMaxValue, "the calls the plugin wrote", true); !s) return s;
      if (auto s = f.integer("dropped", dropped, 0, kMaxValue, "the events the plugin dropped", true); !s) return s;
      sum_.has_end = true;
      sum_.dropped = static_cast<std::uint64_t>(dropped);
      return core::Ok{};
    }
    return f.error("/type", "expected \"call\", \"comm\" or \"end\", found " + found(*f.get("type")));
  }
  NcclTraceSummary& summary() { return sum_; }

 private:
  core::Status call(const Fields& f, std::int64_t n) {
    NcclTraceCall c;
    c.line = n;
    if (auto s = readCall(f, c); !s) return s;
    if (auto s = learn(f, c.comm, n); !s) return s;
    ++sum_.calls;
    sum_.with_gpu_times += c.gpu_start_ns >= 0 ? 1 : 0;
    sum_.with_step += c.step >= 0 ? 1 : 0;
    sum_.partial += c.partial ? 1 : 0;
    sum_.incomplete += c.incomplete ? 1 : 0;
    return on_call_ ? on_call_(c) : core::Status(core::Ok{});
  }
  // A communicator is one rank of one size throughout a file.
  core::Status learn(const Fields& f, const NcclTraceComm& c, std::int64_t n) {
    auto [it, fresh] = seen_.try_emplace(c.hash, sum_.comms.size(), n);
    if (fresh) {
      sum_.comms.push_back(c);
      return core::Ok{};
    }
    const NcclTraceComm& was = sum_.comms[it->second.first];
    if (was.rank == c.rank && was.nranks == c.nranks) return core::Ok{};
    return f.error("/rank", "communicator " + hex16(c.hash) + " is rank " + std::to_string(c.rank) + " of " +
                                std::to_string(c.nranks) + " here, but rank " + std::to_string(was.rank) + " of " +
                                std::to_string(was.nranks) + " on line " + std::to_string(it->second.second) +
                                " (expected one rank per communicator in a process's file)");
  }

  const std::string& path_;
  const NcclCallFn& on_call_;
  NcclTraceSummary sum_;
  std::map<std::uint64_t, std::pair<std::size_t, std::int64_t>> seen_;  // hash -> (index in comms, first line)
};

// --- the import

// A communicator over all files: its members' global ranks by communicator rank.
struct CommInfo {
  std::string name, label, first_file;
  int nranks = 1;
  std::map<int, int> members;  // communicator rank -> global rank, of the files imported
  std::string group;           // "0,2,4,6" when every member was imported, else ""
};

// The communicator ranks no imported file holds, as ranges ("1-3, 7"), without listing them one by one.
std::string missingRanks(const CommInfo& ci) {
  std::string out;
  const auto gap = [&out](int a, int b) {  // [a, b]
    if (a > b) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(a);
    if (b > a) out += (b == a + 1 ? ", " : "-") + std::to_string(b);
  };
  int next = 0;
  for (const auto& [r, m] : ci.members) {
    gap(next, r - 1);
    next = r + 1;
  }
  gap(next, ci.nranks - 1);
  return out;
}

struct FileInfo {
  std::string path;
  std::uint64_t size = 0;
  NcclTraceSummary sum;
};

class Import {
 public:
  Import(const NcclImportOptions& o, NcclImportOutcome& out) : o_(o), out_(out) {}

  core::Status check(const std::vector<std::string>& paths);
  core::Status write(const fs::path& store);

 private:
  core::Status refuse(const std::string& what);
  core::Status checkComms();
  core::Status writeFile(st::RunWriter& w, const FileInfo& f);
  core::Status progress(std::uint64_t bytes, const std::string& file) {
    done_ += bytes;
    if (o_.progress) o_.progress(done_, total_ * 2, file);
    if (o_.cancel != nullptr && o_.cancel->load()) return core::Error{"cancelled", core::ErrorKind::Cancelled};
    return core::Ok{};
  }

  const NcclImportOptions& o_;
  NcclImportOutcome& out_;
  std::vector<FileInfo> files_;
  std::map<std::uint64_t, CommInfo> comms_;
  std::map<int, std::pair<int, int>> groups_;  // global rank -> (sharding group, replica group)
  std::vector<std::string> said_;
  std::uint64_t done_ = 0, total_ = 0;
};

core::Status Import::refuse(const std::string& what) {
  if (!o_.force) return core::Error{what + "; to import them anyway, give --force"};
  const std::string w = what + " (imported anyway: --force)";
  if (std::find(said_.begin(), said_.end(), w) == said_.end()) {
    said_.push_back(w);
    out_.warnings.push_back(w);
  }
  return core::Ok{};
}

core::Status Import::check(const std::vector<std::string>& paths) {
  if (paths.empty()) return core::Error{"import nccl: no files"};
  std::map<int, std::string> by_rank;
  for (const auto& p : paths) {
    std::error_code ec;
    FileInfo f;
    f.path = p;
    f.size = fs::file_size(p, ec);
    total_ += ec ? 0 : f.size;
    files_.push_back(std::move(f));
  }
  for (FileInfo& f : files_) {
    auto sum = readNcclTrace(f.path, {}, o_.cancel);
    if (!sum) return sum.error();
    f.sum = std::move(sum).value();
    const NcclTraceSummary& s = f.sum;
    const FileInfo& first = files_.front();
    if (auto [it, fresh] = by_rank.try_emplace(s.header.rank, f.path); !fresh)
      return core::Error{f.path + ": rank " + std::to_string(s.header.rank) + " was already imported from " +
                             it->second + " (duplicate rank: two files of the same rank?)",
                         core::ErrorKind::InvalidInput, f.path};
    if (s.header.nranks != first.sum.header.nranks)
      if (auto r = refuse(f.path + ": line 1: /nranks: " + std::to_string(s.header.nranks) + ", but " + first.path +
                          " says " + std::to_string(first.sum.header.nranks) +
                          " (traces of different jobs? expected one job size)");
          !r)
        return r;
    const std::int64_t a = s.header.time_ns, b = first.sum.header.time_ns;
    if (a > 0 && b > 0 && (a > b ? a - b : b - a) > kMaxBaseTimeApartNs)
      if (auto r = refuse(f.path + ": line 1: /time_ns is " +
                          std::to_string((a > b ? a - b : b - a) / 86'400'000'000'000) + " days away from " +
                          first.path + "'s (traces of different jobs? ranks of one job start within minutes)");
          !r)
        return r;
    if (auto r = progress(f.size, f.path); !r) return r;
  }
  return checkComms();
}

// Every communicator's members across the files; refuses layouts no single job has.
core::Status Import::checkComms() {
  const int world = files_.front().sum.header.nranks;
  // Named communicators of every rank: each file of one job shares at least one of a name with the others.
  std::map<std::string, std::pair<std::set<std::uint64_t>, std::string>> world_comms;  // name -> (hashes, file)
  for (const FileInfo& f : files_) {
    const int rank = f.sum.header.rank;
    std::map<std::string, std::set<std::uint64_t>> mine;
    for (const NcclTraceComm& c : f.sum.comms)
      if (c.nranks == world && world > 1 && !c.name.empty()) mine[c.name].insert(c.hash);
    for (const auto& [name, hashes] : mine) {
      auto [w, first] = world_comms.try_emplace(name, hashes, f.path);
      const auto& theirs = w->second.first;
      if (first || std::any_of(hashes.begin(), hashes.end(), [&](std::uint64_t h) { return theirs.contains(h); }))
        continue;
      if (auto r = refuse(f.path + ": communicator \"" + name + "\" (" + hex16(*hashes.begin()) + ") spans all " +
                          std::to_string(world) + " ranks, but " + w->second.second + "'s is " +
                          hex16(*theirs.begin()) + " (traces of different jobs? one job shares it across its ranks)");
          !r)
        return r;
    }
    for (const NcclTraceComm& c : f.sum.comms) {
      auto [it, fresh] = comms_.try_emplace(c.hash);
      CommInfo& ci = it->second;
      const std::string what = "communicator \"" + c.name + "\" (" + hex16(c.hash) + ")";
      if (fresh) {
        ci.name = c.name;
        ci.first_file = f.path;
        ci.nranks = c.nranks;
      } else if (ci.nranks != c.nranks) {
        if (auto r = refuse(f.path + ": " + what + " has " + std::to_string(c.nranks) + " ranks, but " + ci.first_file +
                            " says " + std::to_string(ci.nranks) + " (traces of different jobs?)");
            !r)
          return r;
        continue;
      }
      auto [m, added] = ci.members.try_emplace(c.rank, rank);
      if (!added && m->second != rank)
        if (auto r =
                refuse(f.path + ": rank " + std::to_string(c.rank) + " of " + what + " is rank " +
                       std::to_string(m->second) + "'s in another file (traces of different jobs, or a file twice?)");
            !r)
          return r;
    }
  }
  std::map<std::string, int> named;
  for (const auto& [hash, ci] : comms_) ++named[ci.name];
  std::map<std::string, std::vector<std::pair<int, std::uint64_t>>> by_name;  // for group numbers
  for (auto& [hash, ci] : comms_) {
    ci.label = ci.name.empty() ? "comm " + hex16(hash) : named[ci.name] > 1 ? ci.name + ":" + hex16(hash) : ci.name;
    int lowest = std::numeric_limits<int>::max();
    for (const auto& [r, m] : ci.members) lowest = std::min(lowest, m);
    if (static_cast<int>(ci.members.size()) == ci.nranks) {
      for (const auto& [r, m] : ci.members) ci.group += (ci.group.empty() ? "" : ",") + std::to_string(m);
    } else {
      out_.warnings.push_back(
          "communicator \"" + ci.label + "\": rank(s) " + missingRanks(ci) + " of " + std::to_string(ci.nranks) +
          " not imported: its calls have no rank list, and waits for the missing ranks are unknown");
    }
    by_name[ci.name].emplace_back(lowest, hash);
  }
  // The engine's communicators: a rank's sharding and replica groups, numbered by their lowest rank.
  for (const char* name : {"sharding", "replica"}) {
    auto& list = by_name[name];
    std::sort(list.begin(), list.end());
    for (std::size_t g = 0; g < list.size(); ++g)
      for (const auto& [r, m] : comms_[list[g].second].members)
        (std::string(name) == "sharding" ? groups_[m].first : groups_[m].second) = static_cast<int>(g);
  }
  return core::Ok{};
}

// The span kind of a call: the engine's names where the communicator says which sync it is.
std::string_view spanKind(KernelClass k, std::string_view comm) {
  switch (k) {
    case KernelClass::AllToAll:
      return span_kind::kA2aPooled;  // the phase is unknown without embedding kernels (as Kineto imports)
    case KernelClass::AllReduce:
      return comm == "replica"    ? span_kind::kReplicaSync
             : comm == "sharding" ? span_kind::kDpAllreduce
                                  : span_kind::kDenseAllreduce;
    default:
      return toText(k);
  }
}

struct StepTotals {
  std::int64_t start = std::numeric_limits<std::int64_t>::max(), end = 0, comm_ns = 0;
  void add(std::int64_t s, std::int64_t e) {
    start = std::min(start, s);
    end = std::max(end, e);
    comm_ns = addSat(comm_ns, e - s);
  }
};

core::Status Import::writeFile(st::RunWriter& w, const FileInfo& f) {
  const int rank = f.sum.header.rank;
  ImportedRank rep;
  rep.rank = rank;
  rep.source = f.path;
  rep.clock_reference = "CLOCK_REALTIME as recorded";
  std::map<std::int64_t, StepTotals> steps;
  StepTotals whole;
  std::map<std::string, std::uint64_t> skipped;
  auto call = [&](const NcclTraceCall& c) -> core::Status {
    const auto cls = kernelClassFromText(c.op);
    if (!cls || !isCollective(*cls)) {
      ++skipped[c.op];
      return core::Ok{};
    }
    const auto found_comm = comms_.find(c.comm.hash);
    if (found_comm == comms_.end())  // the file changed since it was checked
      return core::Error{f.path + ": line " + std::to_string(c.line) + ": communicator " + hex16(c.comm.hash) +
                         " was not in the file when it was checked (is it still being written?)"};
    const CommInfo& ci = found_comm->second;
    const bool gpu = c.gpu_start_ns >= 0;
    st::Span sp;
    sp.rank = rank;
    sp.stream = kCommStream;
    sp.start_ns = gpu ? c.gpu_start_ns : c.start_ns;
    sp.end_ns = gpu ? c.gpu_end_ns : c.end_ns;
    sp.step = c.step;
    sp.bytes = c.bytes;
    const std::string_view kind = spanKind(*cls, ci.name);
    auto k = w.intern(kind);
    auto name = w.intern((c.func.empty() ? c.op : c.func) + " on " + ci.label);
    auto op = w.intern(c.op);
    auto pg = w.intern(ci.label);
    const std::string algo = c.algo.empty() ? c.proto : c.proto.empty() ? c.algo : c.algo + "/" + c.proto;
    auto al = algo.empty() ? core::Result<st::StringId>(st::kNoString) : w.intern(algo);
    auto gr = ci.group.empty() ? core::Result<st::StringId>(st::kNoString) : w.intern(ci.group);
    for (const auto* r : {&k, &name, &op, &pg, &al, &gr})
      if (!r->ok()) return r->error();
    sp.kind = *k;
    sp.name = *name;
    if (auto a = w.addSpan(sp); !a) return a;
    st::Collective col;
    col.rank = rank;
    col.step = c.step;
    col.op = *op;
    col.group = *gr;
    col.algorithm = *al;
    col.bytes = c.bytes;
    col.peers =
        c.has_peers
            ? static_cast<int>(std::count_if(c.peers.begin(), c.peers.end(), [&](int p) { return p != c.comm.rank; }))
            : c.comm.nranks - 1;
    col.start_ns = sp.start_ns;
    col.end_ns = sp.end_ns;
    col.process_group = *pg;
    col.seq = c.seq;
    if (auto a = w.addCollective(col); !a) return a;
    ++rep.spans_by_kind[std::string(kind)];
    ++rep.collectives;
    ++out_.calls_by_op[c.op];
    rep.gpu_events += gpu ? 1 : 0;
    if (c.step >= 0) steps[c.step].add(sp.start_ns, sp.end_ns);
    whole.add(sp.start_ns, sp.end_ns);
    if (++rep.events % 4096 == 0 && o_.cancel != nullptr && o_.cancel->load())
      return core::Error{"cancelled", core::ErrorKind::Cancelled};
    return core::Ok{};
  };
  auto read = readNcclTrace(f.path, call, o_.cancel);
  if (!read) return read.error();
  for (const auto& [op, n] : skipped)
    out_.warnings.push_back(f.path + ": " + std::to_string(n) + " calls of op \"" + op +
                            "\" skipped (not a collective the store knows)");
  // Steps: the trainer's counter, else the whole trace as one step (its rows keep step -1: unknown).
  const bool counted = !steps.empty();
  if (!counted && rep.collectives > 0) steps[0] = whole;
  auto step_kind = w.intern(span_kind::kStep);
  if (!step_kind) return step_kind.error();
  for (const auto& [step, t] : steps) {
    auto name = w.intern(counted ? "ProfilerStep#" + std::to_string(step) : std::string("whole trace"));
    if (!name) return name.error();
    st::Span sp;
    sp.rank = rank;
    sp.stream = static_cast<int>(kCpuStream);
    sp.kind = *step_kind;
    sp.name = *name;
    sp.start_ns = t.start;
    sp.end_ns = t.end;
    sp.step = step;
    if (auto a = w.addSpan(sp); !a) return a;
    st::StepSummary sum;
    sum.step = step;
    sum.rank = rank;
    sum.comm_ns = t.comm_ns;
    sum.total_ns = t.end - t.start;
    if (auto a = w.addStepSummary(sum); !a) return a;
    ++rep.spans_by_kind[std::string(span_kind::kStep)];
  }
  rep.steps = static_cast<std::int64_t>(steps.size());
  rep.step_source = counted ? "trainer step counter" : "whole trace";
  st::RankInfo ri;
  ri.rank = rank;
  ri.host = f.sum.header.host;
  ri.sharding_group = groups_.contains(rank) ? groups_[rank].first : 0;
  ri.replica_group = groups_.contains(rank) ? groups_[rank].second : 0;
  if (auto a = w.addRank(ri); !a) return a;
  if (auto a = w.commit(); !a) return a;
  out_.calls += static_cast<std::uint64_t>(rep.collectives);
  out_.ranks.push_back(std::move(rep));
  return progress(f.size, f.path);
}

core::Status Import::write(const fs::path& store) {
  st::RunHeader h;
  h.kind = st::RunKind::ImportNccl;
  h.label = o_.label;
  if (h.label.empty()) {
    h.label = "nccl " + fs::path(files_.front().path).filename().string();
    if (files_.size() > 1) h.label += " (+" + std::to_string(files_.size() - 1) + ")";
  }
  h.model_json = o_.model_json;
  h.cluster_json = o_.cluster_json;
  h.plan_json = o_.plan_json;
  nlohmann::ordered_json cfg;
  cfg["schema"] = "shardscope.import/1";
  cfg["mode"] = std::string(st::toText(st::RunKind::ImportNccl));
  cfg["files"] = json::array();
  for (const FileInfo& f : files_) cfg["files"].push_back(f.path);
  h.config_json = cfg.dump(-1, ' ', false, json::error_handler_t::replace);
  auto w = st::RunWriter::begin(store, h);
  if (!w) return core::Error{w.error().message, core::ErrorKind::Io, store.string()};
  out_.run = w->run();
  for (const FileInfo& f : files_) {
    if (auto s = writeFile(*w, f); !s) {
      const auto marked = w->fail(s.error().kind == core::ErrorKind::Cancelled ? "cancelled" : s.error().message);
      const std::string run = "run " + std::to_string(static_cast<std::int64_t>(out_.run));
      core::Error e = s.error();
      e.message += "\n" + (marked ? run + " marked failed" : run + " left incomplete: " + marked.error().message);
      if (e.kind == core::ErrorKind::InvalidInput)
        e.kind = core::ErrorKind::Io;  // the file passed its check: the store failed
      return e;
    }
  }
  for (const FileInfo& f : files_) {
    const NcclTraceSummary& s = f.sum;
    if (!s.has_end)
      out_.warnings.push_back(f.path +
                              ": no end line: the process did not finalize its communicators (killed, or "
                              "still running?); calls after the plugin's last write are missing");
    if (s.dropped > 0)
      out_.warnings.push_back(f.path + ": the plugin dropped " + std::to_string(s.dropped) +
                              " events (its pool was full: raise SHARDSCOPE_NCCL_MAX_EVENTS); " +
                              std::to_string(s.partial) + " calls are partial");
    if (s.calls > s.with_gpu_times)
      out_.warnings.push_back(f.path + ": " + std::to_string(s.calls - s.with_gpu_times) + " of " +
                              std::to_string(s.calls) +
                              " calls have CPU times only (when NCCL enqueued them, not how long they ran): record "
                              "kernel events (SHARDSCOPE_NCCL_PROFILE_MASK=coll,p2p,kernel) for GPU times");
    if (s.calls == 0) out_.warnings.push_back(f.path + ": no calls recorded");
    if (s.incomplete > 0)
      out_.warnings.push_back(f.path + ": " + std::to_string(s.incomplete) +
                              " calls were written before all their kernel or proxy events were seen");
  }
  const int world = files_.front().sum.header.nranks;
  if (static_cast<int>(files_.size()) < world)
    out_.warnings.push_back("imported " + std::to_string(files_.size()) + " of " + std::to_string(world) + " ranks");
  if (files_.size() == 1)
    out_.warnings.push_back("one rank imported: no peer to compare with, so waits for peers are unknown");
  if (auto s = w->finish(); !s) return core::Error{s.error().message, core::ErrorKind::Io, store.string()};
  return core::Ok{};
}

}  // namespace

core::Result<NcclTraceSummary> readNcclTrace(const std::string& path, const NcclCallFn& on_call,
                                             const std::atomic<bool>* cancel) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return core::Error{path + ": is a folder (expected a .jsonl trace file)", core::ErrorKind::InvalidInput, path};
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error{path + ": cannot open: " + std::strerror(errno), core::ErrorKind::InvalidInput, path};
  TraceReader reader(path, on_call);
  std::string cur, chunk(kChunk, '\0');
  std::int64_t line = 0;
  for (;;) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    std::string_view rest(chunk.data(), got);
    while (!rest.empty()) {
      const std::size_t nl = rest.find('\n');
      const std::string_view piece = rest.substr(0, nl);
      if (cur.size() + piece.size() > kMaxLine)
        return core::Error{
            path + ": line " + std::to_string(line + 1) + ": longer than 1 MiB (expected one JSON object per line)",
            core::ErrorKind::InvalidInput, path};
      if (nl == std::string_view::npos) {
        cur.append(piece);
        break;
      }
      ++line;
      if (cur.empty()) {
        if (auto s = reader.line(piece, line, false); !s) return s.error();
      } else {
        cur.append(piece);
        if (auto s = reader.line(cur, line, false); !s) return s.error();
        cur.clear();
      }
      rest.remove_prefix(nl + 1);
      if (cancel != nullptr && line % 4096 == 0 && cancel->load())
        return core::Error{path + ": cancelled", core::ErrorKind::Cancelled, path};
    }
  }
  if (in.bad()) return core::Error{path + ": read error", core::ErrorKind::InvalidInput, path};
  if (!cur.empty())
    if (auto s = reader.line(cur, ++line, true); !s) return s.error();
  if (line == 0)
    return core::Error{path + ": empty file (expected a " + std::string(kNcclTraceSchema) + " header line)",
                       core::ErrorKind::InvalidInput, path};
  return std::move(reader.summary());
}

core::Result<std::vector<std::string>> expandNcclTraceInputs(const std::vector<std::string>& inputs, int max_depth) {
  return expandTraceFolders(inputs, max_depth, {".jsonl"});
}

core::Result<NcclImportOutcome> importNcclTraces(const std::vector<std::string>& files, const fs::path& store,
                                                 const NcclImportOptions& options) {
  NcclImportOutcome out;
  Import imp(options, out);
  if (auto s = imp.check(files); !s) return s.error();
  if (auto s = imp.write(store); !s) return s.error();
  return out;
}

}  // namespace shardscope::profiler
