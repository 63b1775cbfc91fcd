// Why the agent refuses a client's request: the protocol's error code to
// answer with and the error (its json_path points into the request: "/job/nodes").
#pragma once

#include "shardscope/core/protocol/messages.h"
#include "shardscope/core/result.h"

namespace shardscope::profiler {

struct JobRefusal {
  core::protocol::ErrorCode code;
  core::Error error;
};

}  // namespace shardscope::profiler
