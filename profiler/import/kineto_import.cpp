// Kineto (PyTorch profiler) JSON importer: nlohmann SAX over a chunked zlib
// reader (gzread reads plain files as they are, so gzip is found by its
// magic bytes). Only the current event's fields are held; see docs/import.md.
#include "shardscope/profiler/kineto_import.h"

#include <zlib.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <memory>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

namespace shardscope::profiler {

namespace {

using namespace std::string_view_literals;

constexpr std::size_t kChunk = 1 << 20;
constexpr double kMaxAbsUs = 4.0e15;  // |ts|, |dur| in us; 4e18 ns leaves room for ts + dur

// Decompressing chunk reader; the iterator below walks it byte by byte.
class ChunkReader {
 public:
  ChunkReader(gzFile f, std::uint64_t total, const KinetoOptions& o) : f_(f), total_(total), opts_(o) {
    buf_.resize(kChunk);
  }
  bool refill() {
    if (eof_) return false;
    if (opts_.progress && !opts_.progress(static_cast<std::uint64_t>(gzoffset(f_)), total_)) {
      cancelled_ = true;
      eof_ = true;
      return false;
    }
    const int n = gzread(f_, buf_.data(), static_cast<unsigned>(buf_.size()));
    if (n <= 0) {
      eof_ = true;
      int errnum = 0;
      const char* msg = gzerror(f_, &errnum);
      if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) read_error_ = msg != nullptr ? msg : "read error";
      return false;
    }
    consumed_ += static_cast<std::uint64_t>(p_ - base_);
    base_ = buf_.data();
    p_ = base_;
    e_ = base_ + n;
    return true;
  }
  [[nodiscard]] std::uint64_t consumed() const { return consumed_ + static_cast<std::uint64_t>(p_ - base_); }
  // The adapter keeps its own position: only the current chunk is known here.
  [[nodiscard]] std::string chunkRange() const {
    return "bytes " + std::to_string(consumed_) + "-" + std::to_string(consumed_ + static_cast<std::uint64_t>(e_ - base_));
  }
  const char* p_ = nullptr;
  const char* e_ = nullptr;
  bool cancelled_ = false;
  std::string read_error_;

 private:
  gzFile f_;
  std::uint64_t total_;
  const KinetoOptions& opts_;
  std::vector<char> buf_;
  const char* base_ = nullptr;
  std::uint64_t consumed_ = 0;
  bool eof_ = false;
};

// nlohmann input adapter over the reader: one compare per byte on the hot
// path (the iterator adapter would compare two iterators per byte).
class ChunkAdapter {
 public:
  using char_type = char;
  explicit ChunkAdapter(ChunkReader* r) : r_(r), p_(r->p_), e_(r->e_) {}
  std::char_traits<char>::int_type get_character() {
    if (p_ != e_) [[likely]]
      return std::char_traits<char>::to_int_type(*p_++);
    return slow();
  }

 private:
  [[gnu::noinline]] std::char_traits<char>::int_type slow() {
    r_->p_ = p_;
    if (!r_->refill()) return std::char_traits<char>::eof();
    p_ = r_->p_;
    e_ = r_->e_;
    return std::char_traits<char>::to_int_type(*p_++);
  }
  ChunkReader* r_;
  const char* p_;
  const char* e_;
};

// Microseconds as JSON text -> ns, exactly for plain decimals.
std::int64_t usTextToNs(const std::string& s, double v) {
  if (s.find_first_of("eE") != std::string::npos) return std::llround(v * 1000.0);
  const char* p = s.data();
  const char* end = p + s.size();
  bool neg = false;
  if (p < end && *p == '-') {
    neg = true;
    ++p;
  }
  std::int64_t ip = 0;
  auto r = std::from_chars(p, end, ip);
  if (r.ec != std::errc()) return std::llround(v * 1000.0);
  p = r.ptr;
  std::int64_t frac = 0;
  int digits = 0;
  bool round_up = false;
  if (p < end && *p == '.') {
    ++p;
    while (p < end && *p >= '0' && *p <= '9') {
      if (digits < 3) {
        frac = frac * 10 + (*p - '0');
        ++digits;
      } else if (digits == 3) {
        round_up = *p >= '5';
        ++digits;
      }
      ++p;
    }
  }
  for (int d = std::min(digits, 3); d < 3; ++d) frac *= 10;
  const std::int64_t ns = ip * 1000 + frac + (round_up ? 1 : 0);
  return neg ? -ns : ns;
}

std::string lowerAscii(std::string_view s) {
  std::string o(s);
  for (char& c : o)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return o;
}

enum class TopKey { None, TraceEvents, DistributedInfo, BaseTime, Other };
enum class EvKey { None, Name, Ph, Cat, Ts, Dur, Pid, Tid, Args, Other };
enum class ArgKey { None, Correlation, Stream, Device, Collective, InNelems, OutNelems, GroupSize, Dtype, PgRanks, Other };
enum class DistKey { None, Rank, WorldSize, Backend, Other };

class Handler {
 public:
  using json = nlohmann::json;
  Handler(TraceEventSink* sink, ImportRankInfo& info, KinetoStats& stats, bool prepass)
      : sink_(sink), info_(info), stats_(stats), prepass_(prepass) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(std::int64_t v) { return num(v, static_cast<double>(v), nullptr); }
  bool number_unsigned(std::uint64_t v) {
    return num(static_cast<std::int64_t>(std::min<std::uint64_t>(v, INT64_MAX)), static_cast<double>(v), nullptr);
  }
  bool number_float(double v, const std::string& s) {
    return num(std::fabs(v) < 9.0e18 ? static_cast<std::int64_t>(v) : 0, v, &s);
  }
  bool binary(json::binary_t&) { return true; }

  bool string(std::string& v) {
    if (depth_ == 3 && in_event_) {
      switch (ev_key_) {
        case EvKey::Name: name_.swap(v); break;
        case EvKey::Ph: ph_.swap(v); break;
        case EvKey::Cat: cat_.swap(v); break;
        case EvKey::Tid: tid_ = parseIdText(v); break;
        case EvKey::Pid: pid_ = parseIdText(v); break;
        default: break;
      }
    } else if (depth_ == 4 && in_args_) {
      switch (arg_key_) {
        case ArgKey::Collective: collective_.swap(v); break;
        case ArgKey::Dtype: dtype_.swap(v); break;
        case ArgKey::PgRanks: pg_ranks_.swap(v); break;
        default: break;
      }
    } else if (depth_ == 2 && in_dist_ && dist_key_ == DistKey::Backend) {
      info_.backend = v;
    } else if (depth_ == 1 && top_key_ == TopKey::BaseTime) {
      std::int64_t b = 0;
      if (std::from_chars(v.data(), v.data() + v.size(), b).ec == std::errc()) info_.base_time_ns = b;
    }
    return true;
  }

  bool start_object(std::size_t) {
    ++depth_;
    if (depth_ == 2 && top_key_ == TopKey::TraceEvents) {
      error_ = "traceEvents: expected an array of trace events, found an object";
      return false;
    }
    if (depth_ == 2 && top_key_ == TopKey::DistributedInfo) in_dist_ = true;
    else if (depth_ == 3 && in_events_) beginEvent();
    else if (depth_ == 4 && in_event_ && ev_key_ == EvKey::Args) in_args_ = true;
    return true;
  }
  bool end_object() {
    bool ok = true;
    if (depth_ == 2 && in_dist_) {
      in_dist_ = false;
      seen_dist_ = true;
      if (prepass_) {
        done_early_ = true;
        ok = false;  // stop: the prepass has what it came for
      }
    } else if (depth_ == 3 && in_event_) {
      in_event_ = false;
      ok = prepass_ || endEvent();
    } else if (depth_ == 4 && in_args_) {
      in_args_ = false;
    }
    --depth_;
    return ok;
  }
  bool start_array(std::size_t) {
    ++depth_;
    if (depth_ == 1) {
      error_ = "expected a JSON object at the top level (a Kineto trace), found an array";
      return false;
    }
    if (depth_ == 2 && top_key_ == TopKey::TraceEvents) {
      if (seen_events_) {
        error_ = "traceEvents appears twice";
        return false;
      }
      seen_events_ = true;
      if (!prepass_ && !seen_dist_ && !prepass_done_) {
        need_prepass_ = true;
        return false;
      }
      in_events_ = true;
      if (!prepass_) return begin();
    } else if (depth_ == 5 && in_args_ && arg_key_ == ArgKey::PgRanks) {
      in_pgr_ = true;
      pg_ranks_ = "[";
    }
    return true;
  }
  bool end_array() {
    if (depth_ == 2 && in_events_) in_events_ = false;
    else if (depth_ == 5 && in_pgr_) {
      in_pgr_ = false;
      pg_ranks_ += "]";
    }
    --depth_;
    return true;
  }
  bool key(std::string& key_text) {
    const std::string_view k = key_text;  // size compared first, no strlen
    if (depth_ == 1) {
      top_key_ = k == "traceEvents"sv           ? TopKey::TraceEvents
                 : k == "distributedInfo"sv     ? TopKey::DistributedInfo
                 : k == "baseTimeNanoseconds"sv ? TopKey::BaseTime
                                              : TopKey::Other;
    } else if (depth_ == 3 && in_event_) {
      ev_key_ = k == "name"sv   ? EvKey::Name
                : k == "ph"sv   ? EvKey::Ph
                : k == "cat"sv  ? EvKey::Cat
                : k == "ts"sv   ? EvKey::Ts
                : k == "dur"sv  ? EvKey::Dur
                : k == "pid"sv  ? EvKey::Pid
                : k == "tid"sv  ? EvKey::Tid
                : k == "args"sv ? EvKey::Args
                              : EvKey::Other;
    } else if (depth_ == 4 && in_args_) {
      arg_key_ = k == "correlation"sv           ? ArgKey::Correlation
                 : k == "stream"sv              ? ArgKey::Stream
                 : k == "device"sv              ? ArgKey::Device
                 : k == "Collective name"sv     ? ArgKey::Collective
                 : k == "In msg nelems"sv       ? ArgKey::InNelems
                 : k == "Out msg nelems"sv      ? ArgKey::OutNelems
                 : k == "Group size"sv          ? ArgKey::GroupSize
                 : k == "dtype"sv               ? ArgKey::Dtype
                 : k == "Process Group Ranks"sv ? ArgKey::PgRanks
                                              : ArgKey::Other;
    } else if (depth_ == 2 && in_dist_) {
      dist_key_ = k == "rank"sv         ? DistKey::Rank
                  : k == "world_size"sv ? DistKey::WorldSize
                  : k == "backend"sv    ? DistKey::Backend
                                      : DistKey::Other;
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    std::string what = ex.what();
    if (auto p = what.find("] "); p != std::string::npos && what.starts_with("[json.exception")) what.erase(0, p + 2);
    parse_error_ = what;
    parse_pos_ = position;
    return false;
  }

  // Called when the first event can be announced (traceEvents opened).
  bool begin() {
    if (info_.rank < 0 && fallback_rank_ >= 0) {
      info_.rank = fallback_rank_;
      stats_.rank_from_fallback = true;
    }
    if (info_.rank < 0) {
      error_ = "distributedInfo.rank: missing (expected the rank of this file; give one with a fallback rank)";
      return false;
    }
    auto s = sink_->beginRank(info_);
    if (!s) {
      error_ = s.error().message;
      return false;
    }
    began_ = true;
    return true;
  }

  TraceEventSink* sink_;
  ImportRankInfo& info_;
  KinetoStats& stats_;
  bool prepass_;
  bool prepass_done_ = false;
  bool need_prepass_ = false;
  bool done_early_ = false;
  bool seen_dist_ = false;
  bool seen_events_ = false;
  bool began_ = false;
  int fallback_rank_ = -1;
  std::string error_;
  std::string parse_error_;
  std::size_t parse_pos_ = 0;

 private:
  static std::int64_t parseIdText(const std::string& v) {
    // tids like "stream 7" or "7"; take the last run of digits.
    std::int64_t x = 0;
    auto p = v.find_last_of("0123456789");
    if (p == std::string::npos) return 0;
    auto b = v.find_last_not_of("0123456789", p);
    b = b == std::string::npos ? 0 : b + 1;
    (void)std::from_chars(v.data() + b, v.data() + p + 1, x);
    return x;
  }

  bool num(std::int64_t iv, double dv, const std::string* text) {
    if (depth_ == 3 && in_event_) {
      switch (ev_key_) {
        case EvKey::Ts:
        case EvKey::Dur: {
          // Beyond ~126 years in ns the sums below could overflow: such a time is invalid.
          if (!(std::fabs(dv) < kMaxAbsUs)) {
            bad_time_ = true;
            break;
          }
          const std::int64_t ns = text != nullptr ? usTextToNs(*text, dv) : iv * 1000;
          if (ev_key_ == EvKey::Ts) {
            ts_ = ns;
            has_ts_ = true;
          } else {
            dur_ = ns;
            has_dur_ = true;
          }
          break;
        }
        case EvKey::Pid: pid_ = iv; break;
        case EvKey::Tid: tid_ = iv; break;
        default: break;
      }
    } else if (depth_ == 4 && in_args_) {
      switch (arg_key_) {
        case ArgKey::Correlation: correlation_ = iv; break;
        case ArgKey::Stream: stream_ = iv; has_stream_ = true; break;
        case ArgKey::Device: device_ = static_cast<int>(iv); break;
        case ArgKey::InNelems: in_nelems_ = iv; break;
        case ArgKey::OutNelems: out_nelems_ = iv; break;
        case ArgKey::GroupSize: group_size_ = static_cast<int>(iv); break;
        default: break;
      }
    } else if (depth_ == 5 && in_pgr_) {
      if (pg_ranks_.size() > 1) pg_ranks_ += ", ";
      pg_ranks_ += std::to_string(iv);
    } else if (depth_ == 2 && in_dist_) {
      if (dist_key_ == DistKey::Rank) info_.rank = static_cast<int>(iv);
      else if (dist_key_ == DistKey::WorldSize) info_.world_size = static_cast<int>(iv);
    } else if (depth_ == 1 && top_key_ == TopKey::BaseTime) {
      info_.base_time_ns = iv;
    }
    return true;
  }

  void beginEvent() {
    in_event_ = true;
    ev_key_ = EvKey::None;
    name_.clear();
    ph_.clear();
    cat_.clear();
    collective_.clear();
    dtype_.clear();
    pg_ranks_.clear();
    has_ts_ = has_dur_ = has_stream_ = bad_time_ = false;
    ts_ = dur_ = pid_ = tid_ = correlation_ = stream_ = in_nelems_ = out_nelems_ = 0;
    device_ = -1;
    group_size_ = 0;
  }

  bool endEvent() {
    if (ph_.size() != 1 || ph_[0] != 'X') {
      if (stats_.other_phases.size() < 64 || stats_.other_phases.count(ph_) != 0) ++stats_.other_phases[ph_];
      return true;
    }
    if (cat_ != last_cat_text_) {
      last_cat_text_ = cat_;
      const std::string c = lowerAscii(cat_);
      last_known_ = true;
      if (c == "kernel") last_kind_ = TraceEventKind::Kernel;
      else if (c == "gpu_memcpy" || c == "memcpy") last_kind_ = TraceEventKind::Memcpy;
      else if (c == "gpu_memset" || c == "memset") last_kind_ = TraceEventKind::Memset;
      else if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime") last_kind_ = TraceEventKind::Runtime;
      else if (c == "cpu_op" || c == "operator") last_kind_ = TraceEventKind::CpuOp;
      else if (c == "user_annotation") last_kind_ = TraceEventKind::Annotation;
      else if (c == "gpu_user_annotation") last_kind_ = TraceEventKind::GpuAnnotation;
      else last_known_ = false;
    }
    if (!last_known_) {
      const std::string key = cat_.empty() ? std::string("(no cat)") : cat_;
      if (stats_.unknown_cats.size() < 64 || stats_.unknown_cats.count(key) != 0) ++stats_.unknown_cats[key];
      else ++stats_.unknown_cats["(other)"];
      return true;
    }
    if (!has_ts_ || !has_dur_ || bad_time_) {
      ++stats_.missing_time;
      return true;
    }
    TraceEvent e;
    e.kind = last_kind_;
    e.name = name_;
    e.start_ns = ts_;
    e.end_ns = ts_ + std::max<std::int64_t>(0, dur_);
    const bool gpu = e.kind == TraceEventKind::Kernel || e.kind == TraceEventKind::Memcpy ||
                     e.kind == TraceEventKind::Memset || e.kind == TraceEventKind::GpuAnnotation;
    e.device = device_ >= 0 ? device_ : (gpu ? static_cast<int>(pid_) : -1);
    e.stream = gpu && has_stream_ ? stream_ : tid_;
    e.correlation = correlation_;
    if ((e.kind == TraceEventKind::CpuOp || e.kind == TraceEventKind::Annotation) && name_.starts_with("ProfilerStep#")) {
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
    e.group_size = group_size_;
    e.group_ranks = pg_ranks_;
    ++stats_.events;
    if (cat_ != by_cat_key_) {
      by_cat_key_ = cat_;
      by_cat_ = &stats_.by_cat[cat_];
    }
    ++*by_cat_;
    auto s = sink_->event(e);
    if (!s) {
      error_ = s.error().message;
      return false;
    }
    return true;
  }

  int depth_ = 0;
  TopKey top_key_ = TopKey::None;
  EvKey ev_key_ = EvKey::None;
  ArgKey arg_key_ = ArgKey::None;
  DistKey dist_key_ = DistKey::None;
  bool in_events_ = false, in_event_ = false, in_args_ = false, in_pgr_ = false, in_dist_ = false;
  std::string name_, ph_, cat_, collective_, dtype_, pg_ranks_;
  bool has_ts_ = false, has_dur_ = false, has_stream_ = false, bad_time_ = false;
  std::int64_t ts_ = 0, dur_ = 0, pid_ = 0, tid_ = 0, correlation_ = 0, stream_ = 0, in_nelems_ = 0, out_nelems_ = 0;
  int device_ = -1, group_size_ = 0;
  std::string last_cat_text_ = "\x01";
  bool last_known_ = false;
  TraceEventKind last_kind_ = TraceEventKind::Kernel;
  std::string by_cat_key_ = "\x01";
  std::uint64_t* by_cat_ = nullptr;
};

struct GzCloser {
  void operator()(gzFile_s* f) const {
    if (f != nullptr) gzclose_r(f);
  }
};

// One pass over the file. Returns the handler's outcome; `bytes` = JSON bytes read.
core::Status pass(const std::string& path, Handler& h, const KinetoOptions& options, std::uint64_t& bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return core::Error{path + ": cannot read the file (" + ec.message() + ")"};
  std::unique_ptr<gzFile_s, GzCloser> f(gzopen(path.c_str(), "rb"));
  if (!f) return core::Error{path + ": cannot open the file"};
  gzbuffer(f.get(), 256 * 1024);
  ChunkReader reader(f.get(), static_cast<std::uint64_t>(size), options);
  bool ok = false;
  try {
    nlohmann::detail::parser<nlohmann::json, ChunkAdapter> parser(ChunkAdapter(&reader), nullptr, true, false);
    ok = parser.sax_parse(&h, true);
  } catch (const std::exception& e) {
    return core::Error{path + ": " + reader.chunkRange() + ": " + e.what()};
  }
  bytes = reader.consumed();
  if (reader.cancelled_) return core::Error{path + ": cancelled"};
  if (ok || h.done_early_ || h.need_prepass_) return core::Ok{};
  if (!h.error_.empty()) {
    if (h.error_.starts_with(path)) return core::Error{h.error_};
    return core::Error{path + ": " + reader.chunkRange() + ": " + h.error_};
  }
  std::string msg = path + ": byte " + std::to_string(h.parse_pos_) + ": ";
  if (!reader.read_error_.empty()) msg += "truncated or corrupt gzip stream (" + reader.read_error_ + "); ";
  msg += h.parse_error_.empty() ? std::string("invalid JSON") : h.parse_error_;
  return core::Error{msg};
}

}  // namespace

core::Result<KinetoStats> importKineto(const std::string& path, TraceEventSink& sink, const KinetoOptions& options) {
  KinetoStats stats;
  ImportRankInfo info;
  info.source = path;
  std::uint64_t bytes = 0;
  {
    Handler h(&sink, info, stats, false);
    h.fallback_rank_ = options.fallback_rank;
    auto s = pass(path, h, options, bytes);
    if (!s) return s.error();
    if (!h.need_prepass_) {
      if (!h.seen_events_) return core::Error{path + ": traceEvents: missing (expected an array of trace events)"};
      stats.bytes_json = bytes;
      if (auto u = sink.updateRank(info); !u) return u.error();
      if (auto e = sink.endRank(); !e) return e.error();
      return stats;
    }
  }
  // distributedInfo (if any) follows traceEvents: find it, then read again.
  stats.two_passes = true;
  {
    KinetoStats scratch;
    Handler pre(&sink, info, scratch, true);
    auto s = pass(path, pre, options, bytes);
    if (!s) return s.error();
  }
  if (info.rank < 0) {
    if (options.fallback_rank < 0)
      return core::Error{path + ": distributedInfo.rank: missing (expected the rank of this file)"};
    info.rank = options.fallback_rank;
    stats.rank_from_fallback = true;
  }
  Handler h(&sink, info, stats, false);
  h.prepass_done_ = true;
  auto s = pass(path, h, options, bytes);
  if (!s) return s.error();
  if (!h.seen_events_) return core::Error{path + ": traceEvents: missing (expected an array of trace events)"};
  stats.bytes_json = bytes;
  if (auto u = sink.updateRank(info); !u) return u.error();
  if (auto e = sink.endRank(); !e) return e.error();
  return stats;
}

}  // namespace shardscope::profiler
