// Checking any ShardScope JSON file by the format its "schema" field names
// (model, cluster, plan, calibration, project, constraints) and describing
// it in one line: what `shardscope-cli validate` reports per file.
#pragma once

#include <string>

#include "shardscope/core/result.h"

namespace shardscope::core {

// On success "model \"dcnv2\": 26 tables, 97.4 GiB of embedding weights"
// (and the like for every format); the error lists the file's problems.
[[nodiscard]] Result<std::string> checkDocument(const std::string& path);

}  // namespace shardscope::core
