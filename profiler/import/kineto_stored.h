// The trace-store row a ShardScope Chrome export describes in an event's args
// (trace_import.h StoredRow), as the Kineto reader collects it (private to
// profiler/import). Read only in the events of a file whose otherData says it
// is an export (before traceEvents, as the export writes it), and checked only
// when an event carries "shardscope_kind" or "shardscope_collective"; PyTorch's
// own traces never get here. Header-only: the fuzz targets compile the
// importer's sources on their own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "json_scanner.h"
#include "kineto_keys.h"
#include "kineto_values.h"
#include "shardscope/profiler/import/kineto_import.h"
#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler::kineto_detail {

// The schemas of ShardScope's Chrome exports (kChromeExportSchema, kineto_import.h): a newer one is refused.
inline constexpr std::string_view kExportSchemaFamily = "shardscope.chrome-trace/";
inline constexpr std::string_view kNotWhole = "a number that is not a whole int64";

class StoredArgs {
 public:
  // Before each event.
  void reset() {
    marked_ = false;
    for (std::string* s : {&kind_, &op_, &table_, &group_, &algorithm_, &process_group_}) s->clear();
    step_ = seq_ = -1;
    bytes_ = peers_ = 0;
    bad_key_ = bad_expected_ = bad_found_ = {};
  }

  // The event describes a row (shardscope_kind or shardscope_collective, of any type).
  [[nodiscard]] bool marked() const { return marked_; }

  // At the value of a stored-row key (isStoredKey); false: the scanner's error.
  bool read(json::Scanner& sc, ArgKey key) {
    switch (key) {
      case ArgKey::StoredKind:
        marked_ = true;
        return text(sc, kind_, "shardscope_kind");
      case ArgKey::StoredOp:
        marked_ = true;
        return text(sc, op_, "shardscope_collective");
      case ArgKey::StoredTable:
        return text(sc, table_, "table");
      case ArgKey::StoredGroup:
        return text(sc, group_, "group");
      case ArgKey::StoredAlgorithm:
        return text(sc, algorithm_, "algorithm");
      case ArgKey::StoredProcessGroup:
        return text(sc, process_group_, "process_group");
      case ArgKey::StoredStep:
        return integer(sc, step_, "step");
      case ArgKey::StoredBytes:
        return integer(sc, bytes_, "bytes");
      case ArgKey::StoredPeers:
        return integer(sc, peers_, "peers");
      case ArgKey::StoredSeq:
        return integer(sc, seq_, "seq");
      default:
        return sc.skipValue(4);
    }
  }

  // A field the reader parses for every event (stream, correlation) had a type a row cannot have.
  void wrongType(ArgKey key, std::string_view found) {
    note(key == ArgKey::Stream ? "stream" : "correlation", "an integer", found);
  }

  // What is wrong with the row: where under the event's args ("" for args itself, "/step") and
  // what (": expected ..., found ..."); `what` is empty when nothing is.
  struct Problem {
    std::string where, what;
  };
  [[nodiscard]] Problem problem() const {
    if (!kind_.empty() && !op_.empty())
      return {"", ": shardscope_kind and shardscope_collective both given (expected one: a span or a collectives row)"};
    if (!bad_key_.empty())
      return {"/" + std::string(bad_key_),
              ": expected " + std::string(bad_expected_) + ", found " + std::string(bad_found_)};
    if (kind_.empty() && op_.empty())
      return {"/shardscope_kind", ": expected a span kind such as \"emb_fwd\", found an empty string"};
    if (peers_ < 0 || peers_ > (std::int64_t{1} << 24))
      return {"/peers", ": expected a count in 0.." + std::to_string(std::int64_t{1} << 24) + ", found " +
                            std::to_string(peers_)};
    return {};
  }

  // The row, valid while this object is unchanged (after problem() said nothing).
  [[nodiscard]] StoredRow row() const {
    StoredRow r;
    r.kind = kind_;
    r.op = op_;
    r.step = step_;
    r.bytes = bytes_;
    r.table = table_;
    r.group = group_;
    r.algorithm = algorithm_;
    r.process_group = process_group_;
    r.peers = static_cast<int>(peers_);
    r.seq = seq_;
    return r;
  }

 private:
  void note(std::string_view key, std::string_view expected, std::string_view found) {
    if (!bad_key_.empty()) return;  // the first one is reported
    bad_key_ = key;
    bad_expected_ = expected;
    bad_found_ = found;
  }
  bool text(json::Scanner& sc, std::string& out, std::string_view key) {
    const int c = sc.peek();
    if (c != '"') {
      note(key, key == "shardscope_kind" ? "a string (a span kind such as \"emb_fwd\")" : "a string", valueKind(c));
      return sc.skipValue(4);
    }
    std::string_view v;
    if (!sc.string(v)) return false;
    out.assign(v.data(), v.size());
    if (out.empty() && key == "shardscope_collective")
      note(key, "a collective op such as \"all_to_all\"", "an empty string");
    return true;
  }
  bool integer(json::Scanner& sc, std::int64_t& out, std::string_view key) {
    const int c = sc.peek();
    if (!isNumberStart(c)) {
      note(key, "an integer", valueKind(c));
      return sc.skipValue(4);
    }
    json::NumberText n;
    if (!sc.number(n)) return false;
    if (!exactInt(n, out)) note(key, "an integer", kNotWhole);
    return true;
  }

  bool marked_ = false;
  std::string kind_, op_, table_, group_, algorithm_, process_group_;
  std::int64_t step_ = -1, bytes_ = 0, peers_ = 0, seq_ = -1;
  // The first field of a wrong type (views of constants).
  std::string_view bad_key_, bad_expected_, bad_found_;
};

}  // namespace shardscope::profiler::kineto_detail
