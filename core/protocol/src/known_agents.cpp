#include "shardscope/core/protocol/known_agents.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "shardscope/core/json_io.h"

namespace shardscope::core::protocol {

namespace {
bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a])) != 0) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])) != 0) --b;
  return std::string(s.substr(a, b - a));
}

// "host:port" with a non-empty host (or "[v6]") and a port 1..65535.
bool validAddress(const std::string& a) {
  const std::size_t colon = a.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= a.size() || a.size() - colon > 6) return false;
  const std::string port = a.substr(colon + 1);
  if (!std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) return false;
  const long p = std::strtol(port.c_str(), nullptr, 10);
  const std::string host = a.substr(0, colon);
  const bool v6 = host.front() == '[' && host.back() == ']';
  if (!v6 && host.find(':') != std::string::npos) return false;  // an IPv6 address needs its brackets
  return p >= 1 && p <= 65535 && a.find_first_of(" \t") == std::string::npos;
}
}  // namespace

std::optional<std::string> normalizeFingerprint(std::string_view text) {
  std::string t = lower(trim(text));
  if (t.rfind("sha256:", 0) == 0)
    t = t.substr(7);
  else if (t.rfind("sha256 fingerprint=", 0) == 0)
    t = t.substr(19);
  std::string hex;
  for (char c : t) {
    if (c == ':') continue;
    if (!isHex(c)) return std::nullopt;
    hex += c;
  }
  if (hex.size() != 64) return std::nullopt;
  return "sha256:" + hex;
}

std::string defaultKnownAgentsPath() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  const std::string base = (xdg != nullptr && *xdg != '\0') ? std::string(xdg)
                           : (home != nullptr)              ? std::string(home) + "/.config"
                                                            : std::string(".config");
  return base + "/shardscope/known_agents";
}

Result<KnownAgents> KnownAgents::load(const std::string& path) {
  KnownAgents k;
  k.path_ = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return k;  // no file yet: nothing pinned
  std::ifstream in(path);
  if (!in)
    return Error{"cannot read " + path + " (the pinned agents): fix its permissions; it is never replaced unread",
                 ErrorKind::Io, path};
  std::size_t number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    Line line{raw, {}, {}};
    const std::string t = trim(raw);
    if (!t.empty() && t.front() != '#') {
      const std::size_t space = t.find_first_of(" \t");
      const std::string address = space == std::string::npos ? t : lower(t.substr(0, space));
      const auto fp = space == std::string::npos ? std::nullopt : normalizeFingerprint(t.substr(space + 1));
      if (!validAddress(address) || !fp)
        return Error{path + ":" + std::to_string(number) + ": expected \"host:port sha256:<64 hex digits>\", got \"" +
                         raw.substr(0, 120) + "\" (fix or delete this line)",
                     ErrorKind::InvalidInput, path};
      line.address = address;
      line.fingerprint = *fp;
    }
    k.lines_.push_back(std::move(line));
  }
  return k;
}

KnownAgents::Check KnownAgents::check(const std::string& address, const std::string& fingerprint) const {
  const std::string a = lower(address);
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    if (lines_[i].address != a) continue;
    const auto fp = normalizeFingerprint(fingerprint);
    return {fp && *fp == lines_[i].fingerprint ? Verdict::Match : Verdict::Mismatch, lines_[i].fingerprint, i + 1};
  }
  return {};
}

void KnownAgents::pin(const std::string& address, const std::string& fingerprint) {
  const std::string a = lower(address);
  const std::string fp = normalizeFingerprint(fingerprint).value_or(fingerprint);
  for (auto& l : lines_)
    if (l.address == a) {
      l.fingerprint = fp;
      l.text = a + " " + fp;
      return;
    }
  lines_.push_back({a + " " + fp, a, fp});
}

bool KnownAgents::forget(const std::string& address) {
  const std::string a = lower(address);
  const auto before = lines_.size();
  lines_.erase(std::remove_if(lines_.begin(), lines_.end(), [&](const Line& l) { return l.address == a; }),
               lines_.end());
  return lines_.size() != before;
}

Status KnownAgents::save() const {
  std::error_code ec;
  const auto dir = std::filesystem::path(path_).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  std::string text;
  for (const auto& l : lines_) text += l.text + "\n";
  if (auto s = writeFileAtomic(path_, text); !s) return s;
  ::chmod(path_.c_str(), 0600);
  return Ok{};
}

}  // namespace shardscope::core::protocol
