// The agent's token: the shared secret clients say hello with, read from the
// config's token_file, and compared so that the time taken does not say how
// much of a guess was right. Tokens are never logged.
#pragma once

#include <cstddef>
#include <string>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

inline constexpr std::size_t kMinTokenBytes = 16;

// Reads the token file: it must belong to this user and be readable by
// nobody else (mode 0600 or stricter); the token is its first line (trailing
// white space dropped), 16 bytes to the protocol's kMaxTokenBytes. Errors
// (Usage) say how to fix it.
[[nodiscard]] core::Result<std::string> readTokenFile(const std::string& path);

// Whether `given` is `token`, looking at every byte of the longer one
// whatever the first difference.
[[nodiscard]] bool tokenMatches(const std::string& given, const std::string& token);

}  // namespace shardscope::profiler
