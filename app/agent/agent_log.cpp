#include "agent_log.h"

#include <unistd.h>

#include "shardscope/core/protocol/safe_text.h"
#include "shardscope/core/time_text.h"

namespace shardscope::app::agent {

std::string logSafe(std::string_view text, std::size_t max_bytes) { return core::protocol::quoteText(text, max_bytes); }

void logLine(std::string_view line) {
  std::string out = core::utcNowIso8601() + " shardscope-agent: ";
  out.append(line);
  out += '\n';
  // One write: lines of two threads never interleave.
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::write(STDERR_FILENO, out.data() + done, out.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace shardscope::app::agent
