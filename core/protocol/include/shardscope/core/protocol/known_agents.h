// The agents a user trusts: each agent's certificate fingerprint, pinned on
// first use like ssh's known_hosts. A file of lines "host:port sha256:<hex>"
// ("#" comments and blank lines kept as they are); the default is
// $XDG_CONFIG_HOME/shardscope/known_agents (~/.config/... when unset).
// Plain C++: the desktop's Connections and `shardscope-cli remote` share it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/result.h"

namespace shardscope::core::protocol {

// "sha256:" + 64 lowercase hex digits from that form, upper case, or the
// colon-separated hex openssl prints ("SHA256 Fingerprint=AB:CD:..."
// without its prefix); nullopt for anything else.
[[nodiscard]] std::optional<std::string> normalizeFingerprint(std::string_view text);

[[nodiscard]] std::string defaultKnownAgentsPath();

class KnownAgents {
 public:
  enum class Verdict { Unknown, Match, Mismatch };
  struct Check {
    Verdict verdict = Verdict::Unknown;
    std::string pinned;    // the fingerprint on file (Match, Mismatch)
    std::size_t line = 0;  // its line in the file, 1-based
  };

  // A missing file is an empty list; a malformed line is an error naming the
  // file and line (never silently dropped: it might be the pin that matters).
  [[nodiscard]] static Result<KnownAgents> load(const std::string& path);

  // `address` is "host:port" as the user wrote it (lowercased host).
  [[nodiscard]] Check check(const std::string& address, const std::string& fingerprint) const;
  void pin(const std::string& address, const std::string& fingerprint);  // adds or replaces
  bool forget(const std::string& address);
  // Writes the file atomically, mode 0600, keeping comments and order.
  [[nodiscard]] Status save() const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  struct Line {
    std::string text;         // as read, for comments and blanks
    std::string address;      // empty for comments and blanks
    std::string fingerprint;  // normalized
  };
  std::string path_;
  std::vector<Line> lines_;
};

}  // namespace shardscope::core::protocol
