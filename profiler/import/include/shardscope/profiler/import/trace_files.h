// The trace files an import reads: each argument that is a file is taken as
// is; a folder is searched, down to `max_depth` levels of subfolders, for
// files whose names end in one of `suffixes` (sorted). One rule for every
// importer (Kineto, Nsight Systems, NCCL profiler plugin).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

// Errors name the folder: it cannot be listed, or holds no such file
// ("no *.jsonl files in the folder or its subfolders (down to 4 levels; --max-depth)").
[[nodiscard]] core::Result<std::vector<std::string>> expandTraceFolders(
    const std::vector<std::string>& inputs, int max_depth, std::initializer_list<std::string_view> suffixes);

}  // namespace shardscope::profiler
