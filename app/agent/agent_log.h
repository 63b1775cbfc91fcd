// The agent's log: one line per event on stderr (journald keeps it), with a
// UTC time stamp. Anything a peer chose (addresses are ours; labels, job
// names, error texts may hold its bytes) goes through logSafe: control
// characters, bidirectional overrides and invalid UTF-8 become \xNN or
// \u{NNNN}, so a client cannot forge log lines. Tokens are never logged.
#pragma once

#include <string>
#include <string_view>

namespace shardscope::app::agent {

// "2026-12-07T15:04:05Z shardscope-agent: <line>\n" on stderr, written in one call.
void logLine(std::string_view line);

// `text` with every byte that is not printable, valid UTF-8 escaped, cut to
// `max_bytes` (an ellipsis marks the cut).
[[nodiscard]] std::string logSafe(std::string_view text, std::size_t max_bytes = 200);

}  // namespace shardscope::app::agent
