// Kineto (PyTorch profiler) JSON importer: a parser for the Kineto layout on
// the streaming JSON scanner (json_scanner.h) over a chunked zlib reader
// (gz_source.h). Only the current event's fields are held; see docs/import.md.
// A ShardScope Chrome export (otherData's schema before traceEvents) is read by
// its own instance of the event loop, whose events describe their store rows
// (kineto_stored.h, docs/formats/import-trace.md).
#include "shardscope/profiler/import/kineto_import.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

#include "gz_source.h"
#include "json_scanner.h"
#include "kineto_devices.h"
#include "kineto_keys.h"
#include "kineto_stored.h"
#include "kineto_values.h"

namespace shardscope::profiler {

namespace {

using namespace kineto_detail;
using namespace std::string_view_literals;

// Bytes parsed per read: small enough that the buffer stays in the L2 cache
// while the scanner walks it (1 MiB chunks parsed ~15% slower).
constexpr std::size_t kChunk = 64 << 10;
// What the reader learnt of the file besides its events.
struct FileState {
  bool seen_events = false;
  bool seen_dist = false;
  bool export_file = false;  // otherData said a ShardScope export before traceEvents
  int file_rank = -1;        // distributedInfo.rank
};

// One pass over the document; events go to the sink. When traceEvents comes
// before distributedInfo the rank is provisional (the fallback) until the
// end, where the file's own wins (ImportRankInfo::rank_final).
constexpr const char* kEmptyFile = "empty file (expected a Kineto JSON trace)";

class KinetoReader {
 public:
  KinetoReader(json::Scanner& sc, TraceEventSink& sink, ImportRankInfo& info, KinetoStats& stats, int fallback_rank,
               FileState& fs)
      : sc_(sc), sink_(sink), info_(info), stats_(stats), fallback_rank_(fallback_rank), fs_(fs) {}

  // Why the sink refused an event, when it did (the scanner holds its message).
  [[nodiscard]] const std::optional<core::Error>& sinkError() const { return sink_error_; }
  // The JSON path of the error, when it is about a value rather than the syntax.
  [[nodiscard]] const std::string& errorPath() const { return error_path_; }
  [[nodiscard]] bool empty() const { return empty_; }

  // false: the error is in the scanner.
  bool document() {
    if (!sc_.byteOrderMark()) return false;
    int c = sc_.peek();
    if (c == -1 && sc_.offset() == 0) {  // a gzip file with nothing inside
      empty_ = true;
      return sc_.fail(kEmptyFile);
    }
    if (c != '{') {
      const std::string_view kind = valueKind(c);
      if (kind.empty()) return sc_.expected("'{' (a Kineto trace is a JSON object)");
      std::string m = "expected a JSON object at the top level (a Kineto trace), found ";
      m += kind;
      return sc_.fail(m);
    }
    sc_.bump();
    c = sc_.peek();
    if (c != '}') {
      for (;;) {
        if (c != '"') return sc_.expected("a string key");
        std::string_view k;
        if (!sc_.string(k)) return false;
        const TopKey key = topKey(k);
        if (sc_.peek() != ':') return sc_.expected("':' after an object key");
        sc_.bump();
        if (!topValue(key)) return false;
        c = sc_.peek();
        if (c == ',') {
          sc_.bump();
          c = sc_.peek();
          continue;
        }
        if (c == '}') break;
        return sc_.expected("',' or '}' after a top-level member");
      }
    }
    sc_.bump();
    if (sc_.peek() != -1) return sc_.expected("the end of the input after the top-level object");
    return true;
  }

 private:
  bool topValue(TopKey key) {
    const int c = sc_.peek();
    switch (key) {
      case TopKey::TraceEvents: {
        if (c != '[') {
          const std::string_view kind = valueKind(c);
          if (kind.empty()) return sc_.expected("a value");
          std::string m = "traceEvents: expected an array of trace events, found ";
          m += kind;
          return sc_.fail(m);
        }
        if (fs_.seen_events) return sc_.fail("traceEvents appears twice");
        fs_.seen_events = true;
        // A ShardScope export's events describe their rows: read by their own instance of the
        // event loop, so that PyTorch's traces run the loop as it was.
        return begin() && (fs_.export_file ? exportEvents() : events<false>());
      }
      case TopKey::DistributedInfo:
        if (c != '{') return sc_.skipValue(1);
        if (!distributedInfo()) return false;
        if (fs_.seen_events && !fs_.seen_dist) stats_.rank_after_events = true;
        fs_.seen_dist = true;
        return true;
      case TopKey::BaseTime:
        if (isNumberStart(c)) {
          json::NumberText n;
          if (!sc_.number(n)) return false;
          info_.base_time_ns = toInt(n);
          return true;
        }
        if (c == '"') {
          std::string_view v;
          if (!sc_.string(v)) return false;
          std::int64_t b = 0;
          if (std::from_chars(v.data(), v.data() + v.size(), b).ec == std::errc()) info_.base_time_ns = b;
          return true;
        }
        return sc_.skipValue(1);
      case TopKey::OtherData:
        return c == '{' ? otherData() : sc_.skipValue(1);
      case TopKey::DeviceProperties:
        return readDeviceProperties(sc_, info_.gpus);
      case TopKey::Other:
        break;
    }
    return sc_.skipValue(1);
  }

  // A value error at a JSON path ("/traceEvents/3/args/step: expected ...").
  bool failAt(std::string path, std::string_view what) {
    std::string m = path;
    m += what;
    error_path_ = std::move(path);
    return sc_.fail(m);
  }

  // otherData: Chrome's free-form metadata. A ShardScope export says there, under its schema,
  // the store time of ts 0 (origin_ns); other tools' otherData is skipped. Cold (once a file), as
  // is all of the export's code: GCC then leaves the event loop's inlining as it was.
  [[gnu::cold]] bool otherData() {
    std::string schema;
    std::int64_t origin = 0;
    bool has_origin = false;
    std::string_view origin_found = "nothing";
    const bool ok = members("',' or '}' after a member of otherData", [&](std::string_view k) {
      const bool is_schema = k == "schema"sv, is_origin = k == "origin_ns"sv;
      if (!colon()) return false;
      if (is_schema) return stringInto(schema, 2);
      const int c = sc_.peek();
      if (!is_origin) return sc_.skipValue(2);
      if (!isNumberStart(c)) {
        origin_found = valueKind(c);
        return sc_.skipValue(2);
      }
      json::NumberText n;
      if (!sc_.number(n)) return false;
      has_origin = exactInt(n, origin);
      if (!has_origin) origin_found = "a number that is not a whole int64";
      return true;
    });
    if (!ok) return false;
    if (!schema.starts_with(kExportSchemaFamily)) return true;
    if (schema != kChromeExportSchema)
      return failAt("/otherData/schema", ": \"" + schema + "\" is not a format this build reads (expected \"" +
                                             std::string(kChromeExportSchema) + "\")");
    if (!has_origin)
      return failAt("/otherData/origin_ns",
                    ": expected an integer (the store time of ts 0, in ns), found " + std::string(origin_found));
    info_.time_origin_ns = origin;
    fs_.export_file = !fs_.seen_events;
    return true;
  }

  // Members of an object: at '{'; `member(key)` reads each value.
  template <class Member>
  bool members(std::string_view what, Member member) {
    sc_.bump();
    int c = sc_.peek();
    if (c != '}') {
      for (;;) {
        if (c != '"') return sc_.expected("a string key");
        std::string_view k;
        if (!sc_.string(k)) return false;
        if (!member(k)) return false;
        c = sc_.peek();
        if (c == ',') {
          sc_.bump();
          c = sc_.peek();
          continue;
        }
        if (c == '}') break;
        return sc_.expected(what);
      }
    }
    sc_.bump();
    return true;
  }
  bool colon() {
    if (sc_.peek() != ':') return sc_.expected("':' after an object key");
    sc_.bump();
    return true;
  }
  bool number(std::int64_t& out) {
    json::NumberText n;
    if (!sc_.number(n)) return false;
    out = toInt(n);
    return true;
  }
  // A string value into `out`; other values are skipped (`depth`: the
  // arrays and objects open around it, for the scanner's nesting limit).
  bool stringInto(std::string& out, int depth) {
    if (sc_.peek() != '"') return sc_.skipValue(depth);
    std::string_view v;
    if (!sc_.string(v)) return false;
    out.assign(v.data(), v.size());
    return true;
  }

  bool distributedInfo() {
    return members("',' or '}' after a member of distributedInfo", [this](std::string_view k) {
      const DistKey key = distKey(k);
      if (!colon()) return false;
      const int c = sc_.peek();
      std::int64_t v = 0;
      switch (key) {
        case DistKey::Rank:
        case DistKey::WorldSize:
          if (!isNumberStart(c)) return sc_.skipValue(2);
          if (!number(v)) return false;
          (key == DistKey::Rank ? fs_.file_rank : info_.world_size) = smallInt(v, -1);
          return true;
        case DistKey::Backend:
          return stringInto(info_.backend, 2);
        case DistKey::PgConfig:
          return c == '[' ? pgConfig() : sc_.skipValue(2);
        case DistKey::Other:
          break;
      }
      return sc_.skipValue(2);
    });
  }

  // distributedInfo.pg_config: [{"pg_name": "0", "ranks": [0, 1], ...}, ...].
  bool pgConfig() {
    sc_.bump();
    int c = sc_.peek();
    if (c == ']') {
      sc_.bump();
      return true;
    }
    for (;;) {
      if (c == '{') {
        std::string name, ranks;
        const bool ok = members("',' or '}' after a member of a pg_config entry", [&](std::string_view k) {
          const bool is_name = k == "pg_name"sv, is_ranks = k == "ranks"sv;
          if (!colon()) return false;
          if (is_name) return stringInto(name, 4);
          if (!is_ranks) return sc_.skipValue(4);
          if (sc_.peek() != '[') return stringInto(ranks, 4);
          if (!groupRanks()) return false;
          ranks = pg_ranks_;
          return true;
        });
        if (!ok) return false;
        if (!name.empty() && !ranks.empty() && info_.process_groups.size() < 4096)
          info_.process_groups.emplace_back(std::move(name), std::move(ranks));
      } else if (!sc_.skipValue(3)) {
        return false;
      }
      c = sc_.peek();
      if (c == ',') {  // another entry must follow: "[{...},]" is not JSON
        sc_.bump();
        c = sc_.peek();
        continue;
      }
      if (c == ']') break;
      return sc_.expected("',' or ']' after a pg_config entry");
    }
    sc_.bump();
    return true;
  }

  // The rank, before the events: the file's own when distributedInfo came
  // first; else the fallback, final when distributedInfo came without a rank,
  // provisional when it may still follow.
  bool begin() {
    info_.rank_final = fs_.seen_dist;
    if (fs_.file_rank >= 0) {
      info_.rank = fs_.file_rank;
    } else if (fs_.seen_dist && fallback_rank_ < 0) {
      return sc_.fail("distributedInfo.rank: missing (expected the rank of this file; give it with --rank)");
    } else {
      info_.rank = fallback_rank_;
      stats_.rank_from_fallback = fs_.seen_dist;
    }
    if (auto s = sink_.beginRank(info_); !s) return sinkFailed(s.error());
    return true;
  }

  // An export's events, out of line: the top level then holds one event loop, PyTorch's.
  [[gnu::cold, gnu::noinline]] bool exportEvents() { return events<true>(); }

  template <bool kExport>
  bool events() {
    sc_.bump();
    int c = sc_.peek();
    if (c == ']') {
      sc_.bump();
      return true;
    }
    for (;;) {
      if (c == '{') {
        if (!event<kExport>()) return false;
      } else if (!sc_.skipValue(2)) {
        return false;
      }
      if constexpr (kExport) ++index_;
      c = sc_.peek();
      if (c == ',') {
        sc_.bump();
        c = sc_.peek();
        continue;
      }
      if (c == ']') {
        sc_.bump();
        return true;
      }
      return sc_.expected("',' or ']' after a trace event");
    }
  }

  // One event; kExport: of a ShardScope export, whose args may describe the event's row.
  template <bool kExport>
  bool event() {
    name_.clear();
    ph_.clear();
    cat_.clear();
    collective_.clear();
    dtype_.clear();
    pg_ranks_.clear();
    pg_name_.clear();
    seq_ = -1;
    if constexpr (kExport) stored_.reset();
    has_ts_ = has_dur_ = has_stream_ = bad_time_ = false;
    ts_ = dur_ = pid_ = tid_ = correlation_ = stream_ = in_nelems_ = out_nelems_ = group_size_ = 0;
    device_ = -1;
    // Flattened: what it calls from this file is inlined into it, as GCC chose to before the
    // export's loop was added; left to its heuristics it then inlined less and parsing ran ~8%
    // slower (tests/bench/import).
    const auto member = [this](std::string_view k) __attribute__((flatten)) {
      const EvKey key = evKey(k);
      if (!colon()) return false;
      const int c = sc_.peek();
      switch (key) {
        case EvKey::Name:
          return stringInto(name_, 3);
        case EvKey::Ph:
          return stringInto(ph_, 3);
        case EvKey::Cat:
          return stringInto(cat_, 3);
        case EvKey::Ts:
        case EvKey::Dur: {
          if (!isNumberStart(c)) return sc_.skipValue(3);
          json::NumberText n;
          if (!sc_.number(n)) return false;
          std::int64_t ns = 0;
          if (!usToNs(n, ns)) {
            bad_time_ = true;
          } else if (key == EvKey::Ts) {
            ts_ = ns;
            has_ts_ = true;
          } else {
            dur_ = ns;
            has_dur_ = true;
          }
          return true;
        }
        case EvKey::Pid:
        case EvKey::Tid: {
          std::int64_t& out = key == EvKey::Pid ? pid_ : tid_;
          if (isNumberStart(c)) return number(out);
          if (c != '"') return sc_.skipValue(3);
          std::string_view v;
          if (!sc_.string(v)) return false;
          out = idFromText(v);
          return true;
        }
        case EvKey::Args:
          return c == '{' ? args<kExport>() : sc_.skipValue(3);
        case EvKey::Other:
          break;
      }
      return sc_.skipValue(3);
    };
    const bool ok = members("',' or '}' after a member of a trace event", member);
    if constexpr (kExport)
      if (ok && stored_.marked() && ph_.size() == 1 && ph_[0] == 'X') return storedEvent();
    return ok && endEvent();
  }

  // An export's stream or correlation: as any trace's, and noted for a described row when it is
  // not an integer.
  [[gnu::cold]] bool rowNumber(ArgKey key, int c) {
    if (!isNumberStart(c)) {
      stored_.wrongType(key, valueKind(c));
      return sc_.skipValue(4);
    }
    json::NumberText n;
    if (!sc_.number(n)) return false;
    if (!n.integral || n.truncated) stored_.wrongType(key, kNotWhole);
    (key == ArgKey::Stream ? stream_ : correlation_) = toInt(n);
    has_stream_ = has_stream_ || key == ArgKey::Stream;
    return true;
  }

  template <bool kExport>
  bool args() {
    return members("',' or '}' after a member of args", [this](std::string_view k) {
      ArgKey key = argKey(k);
      if constexpr (kExport)
        if (key == ArgKey::Other) key = storedArgKey(k);
      if (!colon()) return false;
      const int c = sc_.peek();
      std::int64_t v = 0;
      switch (key) {
        case ArgKey::Collective:
          return stringInto(collective_, 4);
        case ArgKey::Dtype:
          return stringInto(dtype_, 4);
        case ArgKey::PgRanks:
          if (c == '[') return groupRanks();
          return stringInto(pg_ranks_, 4);
        case ArgKey::PgName:
          return stringInto(pg_name_, 4);
        case ArgKey::Seq:
          if (c == '"') {  // older traces write numbers as strings
            std::string text;
            if (!stringInto(text, 4)) return false;
            std::int64_t n = -1;
            if (std::from_chars(text.data(), text.data() + text.size(), n).ec == std::errc() && n >= 0) seq_ = n;
            return true;
          }
          break;
        case ArgKey::Other:
          return sc_.skipValue(4);
        default:
          if constexpr (kExport)
            if (isStoredKey(key)) return stored_.read(sc_, key);
          break;
      }
      if constexpr (kExport)
        if (key == ArgKey::Stream || key == ArgKey::Correlation) return rowNumber(key, c);
      if (!isNumberStart(c)) return sc_.skipValue(4);
      if (!number(v)) return false;
      switch (key) {
        case ArgKey::Correlation:
          correlation_ = v;
          break;
        case ArgKey::Stream:
          stream_ = v;
          has_stream_ = true;
          break;
        case ArgKey::Device:
          device_ = smallInt(v, -1);
          break;
        case ArgKey::InNelems:
          in_nelems_ = v;
          break;
        case ArgKey::OutNelems:
          out_nelems_ = v;
          break;
        case ArgKey::GroupSize:
          group_size_ = v;
          break;
        case ArgKey::Seq:
          seq_ = v >= 0 ? v : -1;
          break;
        default:
          break;
      }
      return true;
    });
  }

  // "Process Group Ranks": [0, 1] -> "[0, 1]" (the text newer traces write).
  bool groupRanks() {
    sc_.bump();
    pg_ranks_.assign(1, '[');
    int c = sc_.peek();
    if (c != ']') {
      for (;;) {
        if (isNumberStart(c)) {
          std::int64_t v = 0;
          if (!number(v)) return false;
          if (pg_ranks_.size() > 1) pg_ranks_ += ", ";
          pg_ranks_ += std::to_string(v);
        } else if (!sc_.skipValue(5)) {
          return false;
        }
        c = sc_.peek();
        if (c == ',') {
          sc_.bump();
          c = sc_.peek();
          continue;
        }
        if (c == ']') break;
        return sc_.expected("',' or ']' after an array element");
      }
    }
    sc_.bump();
    pg_ranks_ += ']';
    return true;
  }

  // Categories seen, with their kind and counter (the few distinct ones repeat).
  struct Category {
    std::string text;
    bool known = false;
    TraceEventKind kind = TraceEventKind::Kernel;
    std::uint64_t* count = nullptr;  // stats_.by_cat or unknown_cats entry, made on first use
  };
  Category& category() {
    if (last_cat_ < cats_.size() && cats_[last_cat_].text == cat_) return cats_[last_cat_];
    for (std::size_t i = 0; i < cats_.size(); ++i)
      if (cats_[i].text == cat_) return cats_[last_cat_ = i];
    Category c;
    c.text = cat_;
    const std::string l = lowerAscii(cat_);
    c.known = true;
    if (l == "kernel")
      c.kind = TraceEventKind::Kernel;
    else if (l == "gpu_memcpy" || l == "memcpy")
      c.kind = TraceEventKind::Memcpy;
    else if (l == "gpu_memset" || l == "memset")
      c.kind = TraceEventKind::Memset;
    else if (l == "cuda_runtime" || l == "cuda_driver" || l == "runtime")
      c.kind = TraceEventKind::Runtime;
    else if (l == "cpu_op" || l == "operator")
      c.kind = TraceEventKind::CpuOp;
    else if (l == "user_annotation")
      c.kind = TraceEventKind::Annotation;
    else if (l == "gpu_user_annotation")
      c.kind = TraceEventKind::GpuAnnotation;
    else
      c.known = false;
    if (cats_.size() >= 64) {  // a trace with that many categories: no cache, one slot reused
      cats_.back() = std::move(c);
      last_cat_ = cats_.size() - 1;
      return cats_.back();
    }
    cats_.push_back(std::move(c));
    last_cat_ = cats_.size() - 1;
    return cats_.back();
  }
  // Counters, made on first use as before (the maps never shrink, so a
  // category that spilled into "(other)" stays there).
  std::uint64_t& knownCount(Category& c) {
    if (c.count == nullptr) c.count = &stats_.by_cat[c.text];
    return *c.count;
  }
  std::uint64_t& unknownCount(Category& c) {
    if (c.count == nullptr) {
      const std::string key = c.text.empty() ? std::string("(no cat)") : c.text;
      auto& m = stats_.unknown_cats;
      c.count = m.size() < 64 || m.count(key) != 0 ? &m[key] : &m["(other)"];
    }
    return *c.count;
  }
  void countPhase() {
    if (ph_ == last_ph_ && last_ph_count_ != nullptr) {
      ++*last_ph_count_;
      return;
    }
    auto& m = stats_.other_phases;
    if (m.size() >= 64 && m.count(ph_) == 0) return;
    last_ph_ = ph_;
    last_ph_count_ = &m[ph_];
    ++*last_ph_count_;
  }

  bool endEvent() {
    if (ph_.size() != 1 || ph_[0] != 'X') {
      countPhase();
      return true;
    }
    Category& cat = category();
    if (!cat.known) {
      ++unknownCount(cat);
      return true;
    }
    if (!has_ts_ || !has_dur_ || bad_time_) {
      ++stats_.missing_time;
      return true;
    }
    TraceEvent e;
    e.kind = cat.kind;
    e.name = name_;
    e.start_ns = ts_;
    e.end_ns = ts_ + std::max<std::int64_t>(0, dur_);
    const bool gpu = e.kind == TraceEventKind::Kernel || e.kind == TraceEventKind::Memcpy ||
                     e.kind == TraceEventKind::Memset || e.kind == TraceEventKind::GpuAnnotation;
    e.device = device_ >= 0 ? device_ : (gpu ? smallInt(pid_, -1) : -1);
    e.stream = gpu && has_stream_ ? stream_ : tid_;
    e.correlation = correlation_;
    if ((e.kind == TraceEventKind::CpuOp || e.kind == TraceEventKind::Annotation) &&
        name_.starts_with("ProfilerStep#")) {
      std::int64_t n = -1;
      const char* b = name_.data() + 13;
      if (std::from_chars(b, name_.data() + name_.size(), n).ec == std::errc() && n >= 0) {
        e.kind = TraceEventKind::ProfilerStep;
        e.step = n;
      }
    }
    e.collective = collective_;
    e.in_nelems = in_nelems_;
    e.out_nelems = out_nelems_;
    e.dtype = dtype_;
    e.group_size = smallInt(group_size_, 0);
    e.group_ranks = pg_ranks_;
    e.process_group = pg_name_;
    e.seq = seq_;
    ++stats_.events;
    ++knownCount(cat);
    if (auto s = sink_.event(e); !s) return sinkFailed(s.error());
    return true;
  }

  // An event that describes its trace-store row (a ShardScope export): checked, then given to the
  // sink as it is, whatever its category. pid is the rank there: rows of another rank in the
  // file mean an export of several ranks in one file, which is not one rank's trace.
  [[gnu::cold]] bool storedEvent() {
    const std::string at = "/traceEvents/" + std::to_string(index_);
    if (const auto p = stored_.problem(); !p.what.empty()) return failAt(at + "/args" + p.where, p.what);
    if (!has_ts_ || !has_dur_ || bad_time_) {
      ++stats_.missing_time;
      return true;
    }
    const std::int64_t stream = has_stream_ ? stream_ : tid_;
    if (stream < std::numeric_limits<int>::min() || stream > std::numeric_limits<int>::max())
      return failAt(at + (has_stream_ ? "/args/stream" : "/tid"),
                    ": expected a stream number of 32 bits, found " + std::to_string(stream));
    if (stored_pid_ && pid_ != *stored_pid_)
      return failAt(at + "/pid",
                    ": rank " + std::to_string(pid_) + " after rows of rank " + std::to_string(*stored_pid_) +
                        " (an export of several ranks in one file: export one file per rank to import it)");
    if (info_.rank_final && pid_ != info_.rank)
      return failAt(at + "/pid", ": " + std::to_string(pid_) + ", but distributedInfo.rank is " +
                                     std::to_string(info_.rank) + " (in a ShardScope export pid is the rank)");
    stored_pid_ = pid_;
    const StoredRow row = stored_.row();
    TraceEvent e;
    e.name = name_;
    e.start_ns = ts_;
    e.end_ns = ts_ + std::max<std::int64_t>(0, dur_);
    e.device = device_;
    e.stream = stream;
    e.correlation = correlation_;
    e.stored = &row;
    ++stats_.events;
    ++stats_.stored;
    if (auto s = sink_.event(e); !s) return sinkFailed(s.error());
    return true;
  }

  bool sinkFailed(const core::Error& e) {
    sink_error_ = e;
    return sc_.fail(e.message);
  }

  json::Scanner& sc_;
  TraceEventSink& sink_;
  std::optional<core::Error> sink_error_;  // the sink's error, kind kept (a full disk is I/O)
  std::string error_path_;                 // failAt's JSON path
  bool empty_ = false;
  ImportRankInfo& info_;
  KinetoStats& stats_;
  int fallback_rank_;
  FileState& fs_;

  // The current event.
  std::string name_, ph_, cat_, collective_, dtype_, pg_ranks_, pg_name_;
  std::int64_t seq_ = -1;
  bool has_ts_ = false, has_dur_ = false, has_stream_ = false, bad_time_ = false;
  std::int64_t ts_ = 0, dur_ = 0, pid_ = 0, tid_ = 0, correlation_ = 0, stream_ = 0, in_nelems_ = 0, out_nelems_ = 0;
  std::int64_t group_size_ = 0;
  int device_ = -1;
  StoredArgs stored_;                       // the row a ShardScope export describes, if it does
  std::uint64_t index_ = 0;                 // an export's event's index in traceEvents
  std::optional<std::int64_t> stored_pid_;  // the pid (rank) of the file's first described row

  std::vector<Category> cats_;
  std::size_t last_cat_ = 0;
  std::string last_ph_;
  std::uint64_t* last_ph_count_ = nullptr;
};

// Reads the file into the sink; `bytes` = JSON bytes read.
core::Status readFile(const std::string& path, TraceEventSink& sink, ImportRankInfo& info, KinetoStats& stats,
                      const KinetoOptions& options, FileState& fs, std::uint64_t& bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return core::Error{path + ": cannot read the file (" + ec.message() + ")"};
  if (size == 0) return core::Error{path + ": " + kEmptyFile};
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) return core::Error{path + ": cannot open the file"};
  gzbuffer(f.get(), 32 * 1024);  // half a chunk or less: gzread then fills the chunk directly
  GzSource source(f.get(), static_cast<std::uint64_t>(size), options);
  json::Scanner sc(source, options.chunk_bytes > 0 ? options.chunk_bytes : kChunk);
  KinetoReader reader(sc, sink, info, stats, options.fallback_rank, fs);
  const bool ok = reader.document();
  bytes = sc.offset();
  if (source.cancelled) return core::Error{path + ": cancelled"};
  if (ok && source.read_error.empty()) return core::Ok{};
  if (!ok && reader.sinkError()) return *reader.sinkError();  // the sink's, naming the file
  if (!ok && reader.empty() && source.read_error.empty()) return core::Error{path + ": " + kEmptyFile};
  const std::string json_path = ok ? std::string() : reader.errorPath();
  std::string msg = path;
  msg += ": byte ";
  msg += std::to_string(ok ? sc.offset() : sc.errorOffset());
  msg += ": ";
  if (!source.read_error.empty()) {
    msg += gzdirect(f.get()) ? "read error (" : "truncated or corrupt gzip stream (";
    msg += source.read_error;
    msg += ok ? ")" : "); ";
  }
  if (!ok) msg += sc.error();
  return core::Error{msg, core::ErrorKind::InvalidInput, path, json_path};
}

}  // namespace

core::Result<KinetoStats> importKineto(const std::string& path, TraceEventSink& sink, const KinetoOptions& options) {
  KinetoStats stats;
  ImportRankInfo info;
  info.source = path;
  std::uint64_t bytes = 0;
  FileState fs;
  if (auto s = readFile(path, sink, info, stats, options, fs, bytes); !s) return s.error();
  if (!fs.seen_events) return core::Error{path + ": traceEvents: missing (expected an array of trace events)"};
  if (!info.rank_final) {  // distributedInfo followed the events, or there is none
    if (fs.file_rank >= 0) {
      info.rank = fs.file_rank;
    } else if (options.fallback_rank >= 0) {
      info.rank = options.fallback_rank;
      stats.rank_from_fallback = true;
    } else {
      return core::Error{path +
                         ": distributedInfo.rank: missing (expected the rank of this file; give it with --rank)"};
    }
    info.rank_final = true;
  }
  stats.bytes_json = bytes;
  if (auto u = sink.updateRank(info); !u) return u.error();
  if (auto e = sink.endRank(); !e) return e.error();
  return stats;
}

}  // namespace shardscope::profiler
