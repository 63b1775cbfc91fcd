// shardscope-cli remote's text: a job as one line, an agent's description.
#pragma once

#include <string>

#include "shardscope/core/protocol/messages.h"

namespace shardscope::app::cli {

[[nodiscard]] std::string jobLine(const core::protocol::JobInfo& j);
// As text, or as the protocol's JSON with `json`.
void printDescription(const core::protocol::Description& d, bool json);

}  // namespace shardscope::app::cli
