// shardscope-cli remote's command line: the agent to reach and how to trust
// it, the token (--token-file or $SHARDSCOPE_AGENT_TOKEN, never the command
// line), the command and, for submit, the job spec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent_client.h"
#include "shardscope/app/args.h"
#include "shardscope/core/protocol/messages.h"

namespace shardscope::app::cli {

// What the command line asks for.
struct RemoteOptions {
  remote::ConnectOptions connect;
  std::string command;
  std::vector<std::string> words;  // the command's positional arguments
  bool json = false, quiet = false, watch = false, fetch = false, keep_file = false;
  std::optional<std::string> store;
  core::protocol::JobSpec spec;
};

// Reads every option (usage errors printed): kExitOk, or the exit code.
[[nodiscard]] int parseRemoteArgs(Args& args, RemoteOptions& o);

}  // namespace shardscope::app::cli
