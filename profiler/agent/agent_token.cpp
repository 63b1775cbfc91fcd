#include "shardscope/profiler/agent/agent_token.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "shardscope/core/protocol/messages.h"

namespace shardscope::profiler {

namespace {
core::Error usage(std::string message) { return core::Error{std::move(message), core::ErrorKind::Usage}; }
}  // namespace

core::Result<std::string> readTokenFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return usage("token file " + path +
                 " does not exist: write a random token into it, e.g. `(umask 077; head -c 32 "
                 "/dev/urandom | base64 > " +
                 path + ")` as the agent's user");
  if (!S_ISREG(st.st_mode)) return usage("token file " + path + " is not a regular file");
  if (st.st_uid != ::geteuid())
    return usage("token file " + path + " belongs to another user: it must be the agent user's own");
  if ((st.st_mode & 077) != 0) return usage("token file " + path + " is readable by other users: chmod 600 " + path);
  std::ifstream in(path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) token.pop_back();
  if (token.size() < kMinTokenBytes)
    return usage("token file " + path + " holds a token of " + std::to_string(token.size()) +
                 " bytes on its first line; use at least " + std::to_string(kMinTokenBytes));
  if (token.size() > core::protocol::kMaxTokenBytes)
    return usage("token file " + path + ": the token is longer than " + std::to_string(core::protocol::kMaxTokenBytes) +
                 " bytes");
  return token;
}

bool tokenMatches(const std::string& given, const std::string& token) {
  const std::size_t n = std::max(given.size(), token.size());
  unsigned diff = given.size() == token.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const auto a = static_cast<unsigned char>(i < given.size() ? given[i] : 0);
    const auto b = static_cast<unsigned char>(i < token.size() ? token[i] : 0);
    diff |= static_cast<unsigned>(a ^ b);
  }
  return diff == 0;
}

}  // namespace shardscope::profiler
