// The GPUs a Kineto trace lists (private to profiler/import): its top-level deviceProperties,
// [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": ..., "computeMajor": 9, ...}, ...],
// which PyTorch writes before traceEvents and other tools may write after. Read once a file, out
// of the event loop. Header-only: the fuzz targets compile the importer's sources on their own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "import_gpus.h"
#include "json_scanner.h"
#include "kineto_values.h"
#include "shardscope/profiler/import/trace_import.h"

namespace shardscope::profiler::kineto_detail {

// One entry, at its '{': its id and name, listed when the name is a string that keeps some text.
inline bool deviceEntry(json::Scanner& sc, std::vector<ImportGpu>& gpus) {
  sc.bump();
  int device = -1;
  std::string name;
  int c = sc.peek();
  if (c != '}') {
    for (;;) {
      if (c != '"') return sc.expected("a string key");
      std::string_view k;
      if (!sc.string(k)) return false;
      const bool is_id = k == "id", is_name = k == "name";  // k is gone after the next call
      if (sc.peek() != ':') return sc.expected("':' after an object key");
      sc.bump();
      c = sc.peek();
      if (is_id && isNumberStart(c)) {
        json::NumberText n;
        if (!sc.number(n)) return false;
        device = smallInt(toInt(n), -1);
      } else if (is_name && c == '"') {
        std::string_view v;
        if (!sc.string(v)) return false;
        name = import_detail::gpuNameText(v);
      } else if (!sc.skipValue(3)) {
        return false;
      }
      c = sc.peek();
      if (c == ',') {
        sc.bump();
        c = sc.peek();
        continue;
      }
      if (c == '}') break;
      return sc.expected("',' or '}' after a member of a deviceProperties entry");
    }
  }
  sc.bump();
  import_detail::listGpu(gpus, device, name);
  return true;
}

// At deviceProperties' value: the entries with a name, in the file's order, replace `gpus`. What
// is not an array, not an object or has no string name lists nothing and is no error (the trace
// is still a trace); only the JSON's syntax can fail: false, the scanner holds the error.
[[gnu::cold, gnu::noinline]] inline bool readDeviceProperties(json::Scanner& sc, std::vector<ImportGpu>& gpus) {
  gpus.clear();
  if (sc.peek() != '[') return sc.skipValue(1);
  sc.bump();
  if (sc.peek() == ']') {
    sc.bump();
    return true;
  }
  for (;;) {
    if (sc.peek() == '{') {
      if (!deviceEntry(sc, gpus)) return false;
    } else if (!sc.skipValue(2)) {
      return false;
    }
    const int c = sc.peek();
    if (c == ',') {
      sc.bump();
      continue;
    }
    if (c == ']') {
      sc.bump();
      return true;
    }
    return sc.expected("',' or ']' after a deviceProperties entry");
  }
}

}  // namespace shardscope::profiler::kineto_detail
