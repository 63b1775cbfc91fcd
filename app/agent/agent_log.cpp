#include "agent_log.h"

#include <unistd.h>

#include <cstdio>

#include "shardscope/core/time_text.h"

namespace shardscope::app::agent {

namespace {

// The length of the valid UTF-8 sequence at `s[i]` and its code point; 0 when invalid.
std::size_t utf8At(std::string_view s, std::size_t i, char32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n = 0;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  if ((b0 & 0xe0) == 0xc0) {
    n = 2;
    cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    n = 3;
    cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    n = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3f);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Code points a log line must not carry as they are: C0/C1 controls, DEL,
// and the bidirectional embeddings, overrides and isolates.
bool unsafe(char32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

}  // namespace

std::string logSafe(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  char buf[16];
  for (std::size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += "\u2026";
      break;
    }
    char32_t cp = 0;
    const std::size_t n = utf8At(text, i, cp);
    if (n == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[i])));
      out += buf;
      ++i;
    } else if (unsafe(cp)) {
      if (cp < 0x100)
        std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(cp));
      else
        std::snprintf(buf, sizeof buf, "\\u{%04X}", static_cast<unsigned>(cp));
      out += buf;
      i += n;
    } else {
      if (cp == '\\') out += '\\';
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

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
