#include "shardscope/core/protocol/safe_text.h"

#include <algorithm>
#include <array>

namespace shardscope::core::protocol {

namespace {

// The length of the valid UTF-8 sequence at `s[i]` and its code point; 0
// when invalid (a stray continuation byte, a truncated or overlong sequence,
// a surrogate, past U+10FFFF).
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
  static constexpr std::array<char32_t, 5> kMin = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool control(char32_t cp) { return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0); }

bool bidi(char32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
         cp == 0x061c;
}

// `value` in uppercase hex, at least `digits` of them.
std::string hex(unsigned value, int digits) {
  static constexpr std::string_view kDigits = "0123456789ABCDEF";
  std::string out;
  for (int shift = 28; shift >= 0; shift -= 4) {
    const unsigned d = (value >> shift) & 0xfu;
    if (!out.empty() || d != 0 || shift < 4 * digits) out += kDigits[d];
  }
  return out;
}

std::string escape(char32_t cp) {
  return cp < 0x100 ? "\\x" + hex(static_cast<unsigned>(cp), 2) : "\\u{" + hex(static_cast<unsigned>(cp), 4) + "}";
}

std::string escaped(std::string_view text, bool double_backslash, bool keep_newlines, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  for (std::size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) {
      out += "\u2026";
      break;
    }
    char32_t cp = 0;
    const std::size_t n = utf8At(text, i, cp);
    if (n == 0) {
      out += escape(static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if ((control(cp) && !(keep_newlines && cp == '\n')) || bidi(cp)) {
      out += escape(cp);
    } else {
      if (cp == '\\' && double_backslash) out += '\\';
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace

std::optional<UnsafeText> findUnsafe(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    const std::size_t n = utf8At(text, i, cp);
    if (n == 0) return UnsafeText{i, "byte 0x" + hex(static_cast<unsigned char>(text[i]), 2) + ", not UTF-8"};
    if (control(cp)) return UnsafeText{i, "control character U+" + hex(static_cast<unsigned>(cp), 4)};
    if (bidi(cp))
      return UnsafeText{i, "U+" + hex(static_cast<unsigned>(cp), 4) + ", a bidirectional formatting character"};
    i += n;
  }
  return std::nullopt;
}

std::string quoteText(std::string_view text, std::size_t max_bytes) { return escaped(text, true, false, max_bytes); }

std::string safeText(std::string_view text, bool keep_newlines, std::size_t max_bytes) {
  return escaped(text, false, keep_newlines, max_bytes);
}

}  // namespace shardscope::core::protocol
