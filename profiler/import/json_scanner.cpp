// The scanner's slow paths: strings with escapes, non-ASCII text or a chunk
// boundary inside, numbers, literals, skipping nested values, errors. The
// fast paths (whitespace, plain strings) are inline in json_scanner.h.
#include "json_scanner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace shardscope::profiler::json {

namespace {

// UTF-8 (RFC 3629): the length of the sequence a lead byte starts (0: not a
// lead byte) and the range its second byte must be in (no overlongs, no
// surrogates, nothing past U+10FFFF).
struct Lead {
  int n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
};
Lead utf8Lead(unsigned char c) {
  if (c >= 0xC2 && c <= 0xDF) return {2, 0x80, 0xBF};
  if (c == 0xE0) return {3, 0xA0, 0xBF};
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return {3, 0x80, 0xBF};
  if (c == 0xED) return {3, 0x80, 0x9F};
  if (c == 0xF0) return {4, 0x90, 0xBF};
  if (c >= 0xF1 && c <= 0xF3) return {4, 0x80, 0xBF};
  if (c == 0xF4) return {4, 0x80, 0x8F};
  return {};
}
// A sequence inside [s, e): its length, 0 when ill-formed, -1 when cut by e.
int utf8InChunk(const char* s, const char* e) {
  const Lead l = utf8Lead(static_cast<unsigned char>(*s));
  if (l.n == 0) return 0;
  for (int i = 1; i < l.n; ++i) {
    if (s + i == e) return -1;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < (i == 1 ? l.lo : 0x80) || c > (i == 1 ? l.hi : 0xBF)) return 0;
  }
  return l.n;
}
void appendUtf8(std::string& out, unsigned cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The number grammar as a state machine, so a number can be fed in pieces.
enum class Num : std::uint8_t { Start, Minus, Zero, Int, Dot, Frac, E, ESign, Exp };
bool accepting(Num s) { return s == Num::Zero || s == Num::Int || s == Num::Frac || s == Num::Exp; }

// Consumes bytes of [p, e) while the grammar allows; returns where it stopped.
const char* feed(Num& s, NumberText& n, const char* p, const char* e) {
  while (p != e) {
    const char c = *p;
    switch (s) {
      case Num::Start:
        if (c == '-') {
          s = Num::Minus;
          ++p;
          continue;
        }
        [[fallthrough]];
      case Num::Minus:
        if (c == '0')
          s = Num::Zero;
        else if (c >= '1' && c <= '9')
          s = Num::Int;
        else
          return p;
        ++p;
        continue;
      case Num::Int:
        while (p != e && isDigit(*p)) ++p;
        if (p == e) return p;
        [[fallthrough]];
      case Num::Zero:
        if (*p == '.') {
          s = Num::Dot;
          n.integral = false;
        } else if (*p == 'e' || *p == 'E') {
          s = Num::E;
          n.integral = false;
          n.exponent = true;
        } else {
          return p;
        }
        ++p;
        continue;
      case Num::Dot:
        if (!isDigit(c)) return p;
        s = Num::Frac;
        ++p;
        continue;
      case Num::Frac:
        while (p != e && isDigit(*p)) ++p;
        if (p == e) return p;
        if (*p != 'e' && *p != 'E') return p;
        s = Num::E;
        n.exponent = true;
        ++p;
        continue;
      case Num::E:
        if (c == '+' || c == '-') {
          s = Num::ESign;
          ++p;
          continue;
        }
        [[fallthrough]];
      case Num::ESign:
        if (!isDigit(c)) return p;
        s = Num::Exp;
        ++p;
        continue;
      case Num::Exp:
        while (p != e && isDigit(*p)) ++p;
        return p;
    }
  }
  return p;
}

std::string describe(int c) {
  if (c < 0) return "the end of the input";
  char b[16];
  if (c > 0x20 && c < 0x7F)
    std::snprintf(b, sizeof b, "'%c'", c);
  else
    std::snprintf(b, sizeof b, "byte 0x%02X", static_cast<unsigned>(c));
  return b;
}

}  // namespace

Scanner::Scanner(ChunkSource& source, std::size_t chunk_bytes) : source_(source) {
  buf_.resize(std::max<std::size_t>(chunk_bytes, 1));
  buf0_ = buf_.data();
  p_ = e_ = buf0_;
  scratch_.reserve(256);
}

bool Scanner::refill() {
  if (eof_) return false;
  base_ += static_cast<std::uint64_t>(e_ - buf0_);
  p_ = e_ = buf0_;
  const std::ptrdiff_t n = source_.read(buf_.data(), buf_.size());
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  e_ = buf0_ + std::min<std::size_t>(static_cast<std::size_t>(n), buf_.size());
  return true;
}

int Scanner::peekSlow() {
  for (;;) {
    while (p_ != e_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == ' ' || c == '\t' || c == '\r') {
        ++p_;
      } else if (c == '\n') {
        ++p_;
        ++line_;
        line_start_ = offset();
      } else {
        return c;
      }
    }
    if (!refill()) return -1;
  }
}

bool Scanner::byteOrderMark() {
  if (peekRaw() != 0xEF) return true;
  bump();
  if (peekRaw() != 0xBB) return expected("byte 0xBB (a byte order mark is EF BB BF)");
  bump();
  if (peekRaw() != 0xBF) return expected("byte 0xBF (a byte order mark is EF BB BF)");
  bump();
  return true;
}

bool Scanner::stringSlow(std::string_view* out) {
  std::string* copy = nullptr;  // set once the value has to be assembled in scratch_
  ++p_;                         // the opening quote: peek() saw it in this chunk
  const char* seg = p_;
  for (;;) {
    p_ = findSpecial(p_, e_);
    if (p_ != e_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        if (out != nullptr) {
          if (copy == nullptr) {
            *out = std::string_view(seg, static_cast<std::size_t>(p_ - seg));
          } else {
            copy->append(seg, p_);
            *out = *copy;
          }
        }
        ++p_;
        return true;
      }
      if (c < 0x20) {
        char b[96];
        std::snprintf(b, sizeof b, "invalid string: control character U+%04X must be escaped", c);
        return syntax(b);
      }
      if (c >= 0x80) {
        const int n = utf8InChunk(p_, e_);
        if (n > 0) {
          p_ += n;
          continue;
        }
        // Ill-formed or cut: utf8() below finds the offending byte.
      }
    }
    // An escape, a UTF-8 sequence cut by the chunk's end, or the end itself.
    if (out != nullptr) {
      if (copy == nullptr) {
        scratch_.clear();
        copy = &scratch_;
      }
      copy->append(seg, p_);
    }
    if (p_ == e_) {
      if (!refill()) return expected("'\"' closing a string");
    } else if (*p_ == '\\') {
      if (!escape(copy)) return false;
    } else if (!utf8(copy)) {
      return false;
    }
    seg = p_;
  }
}

bool Scanner::utf8(std::string* out) {
  const auto c0 = static_cast<unsigned char>(*p_);
  const Lead l = utf8Lead(c0);
  for (int i = 0; i < std::max(l.n, 1); ++i) {
    const int c = peekRaw();
    if (c < 0) return expected("the rest of a UTF-8 sequence in a string");
    const bool ok = i == 0 ? l.n > 0 : c >= (i == 1 ? l.lo : 0x80) && c <= (i == 1 ? l.hi : 0xBF);
    if (!ok) {
      char b[64];
      std::snprintf(b, sizeof b, "invalid string: ill-formed UTF-8 (byte 0x%02X)", static_cast<unsigned>(c));
      return syntax(b);
    }
    if (out != nullptr) *out += static_cast<char>(c);
    bump();
  }
  return true;
}

bool Scanner::hex4(unsigned& cp) {
  cp = 0;
  for (int i = 0; i < 4; ++i) {
    const int c = peekRaw();
    unsigned v = 0;
    if (c >= '0' && c <= '9')
      v = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      v = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      v = static_cast<unsigned>(c - 'A' + 10);
    else
      return expected("4 hex digits after '\\u'");
    cp = cp * 16 + v;
    bump();
  }
  return true;
}

bool Scanner::escape(std::string* out) {
  bump();  // the backslash
  const int c = peekRaw();
  char plain = 0;
  switch (c) {
    case '"':
      plain = '"';
      break;
    case '\\':
      plain = '\\';
      break;
    case '/':
      plain = '/';
      break;
    case 'b':
      plain = '\b';
      break;
    case 'f':
      plain = '\f';
      break;
    case 'n':
      plain = '\n';
      break;
    case 'r':
      plain = '\r';
      break;
    case 't':
      plain = '\t';
      break;
    case 'u':
      break;
    default:
      return expected("an escape ('\"', '\\', '/', 'b', 'f', 'n', 'r', 't' or 'u') after '\\'");
  }
  bump();
  if (c != 'u') {
    if (out != nullptr) *out += plain;
    return true;
  }
  unsigned cp = 0;
  if (!hex4(cp)) return false;
  if (cp >= 0xDC00 && cp <= 0xDFFF) return expected("a \\u escape that is not a lone low surrogate (U+DC00..U+DFFF)");
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (peekRaw() != '\\') return expected("'\\u' with a low surrogate (U+DC00..U+DFFF) after a high surrogate");
    bump();
    if (peekRaw() != 'u') return expected("'u' (a low surrogate U+DC00..U+DFFF after a high surrogate)");
    bump();
    unsigned lo = 0;
    if (!hex4(lo)) return false;
    if (lo < 0xDC00 || lo > 0xDFFF) return expected("a low surrogate (U+DC00..U+DFFF) after a high surrogate");
    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
  }
  if (out != nullptr) appendUtf8(*out, cp);
  return true;
}

bool Scanner::number(NumberText& out) {
  out = NumberText{};
  Num state = Num::Start;
  const char* s = p_;
  const char* q = feed(state, out, s, e_);
  if (q != e_) [[likely]] {  // ends inside this chunk
    p_ = q;
    if (!accepting(state)) return expected("a digit (invalid number)");
    const auto len = static_cast<std::size_t>(q - s);
    out.truncated = len > NumberText::kMaxText;
    out.text = std::string_view(s, std::min(len, NumberText::kMaxText));
    return true;
  }
  // Cut by the chunk's end: keep the first kMaxText bytes while feeding the rest.
  std::size_t len = 0;
  for (;;) {
    const auto n = static_cast<std::size_t>(q - s);
    if (len < num_.size()) std::memcpy(num_.data() + len, s, std::min(n, num_.size() - len));
    len += n;
    p_ = q;
    if (q != e_ || !refill()) break;
    s = p_;
    q = feed(state, out, s, e_);
  }
  if (!accepting(state)) return expected("a digit (invalid number)");
  out.truncated = len > NumberText::kMaxText;
  out.text = std::string_view(num_.data(), std::min(len, NumberText::kMaxText));
  return true;
}

bool Scanner::literal() {
  const char* word = *p_ == 't' ? "true" : *p_ == 'f' ? "false" : "null";
  const std::size_t n = std::strlen(word);
  if (static_cast<std::size_t>(e_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
    p_ += n;
    return true;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (peekRaw() != word[i]) {
      std::string what = "the literal ";
      what += word;
      return expected(what);
    }
    bump();
  }
  return true;
}

bool Scanner::skipValue(int outer) {
  const int max_depth = kMaxDepth - std::clamp(outer, 0, kMaxDepth);
  int depth = 0;
  const auto key = [this] {
    if (peek() != '"') return expected("a string key");
    if (!skipString()) return false;
    if (peek() != ':') return expected("':' after an object key");
    bump();
    return true;
  };
  for (;;) {
    const int c = peek();
    if (c == '"') {
      if (!skipString()) return false;
    } else if (c == '{' || c == '[') {
      if (depth == max_depth) return syntax("arrays and objects nested more than 1024 deep");
      const bool object = c == '{';
      auto& word = stack_[static_cast<std::size_t>(depth) / 64];
      const std::uint64_t bit = std::uint64_t{1} << (depth % 64);
      word = object ? word | bit : word & ~bit;
      ++depth;
      bump();
      if (peek() == (object ? '}' : ']')) {
        bump();
        --depth;
      } else {
        if (object && !key()) return false;
        continue;  // the first member's value
      }
    } else if (c == 't' || c == 'f' || c == 'n') {
      if (!literal()) return false;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      NumberText n;
      if (!number(n)) return false;
    } else {
      return expected("a value");
    }
    // After a value: close what ends here, then the next member or element.
    for (;;) {
      if (depth == 0) return true;
      const bool object = ((stack_[static_cast<std::size_t>(depth - 1) / 64] >> ((depth - 1) % 64)) & 1) != 0;
      const int d = peek();
      if (d == ',') {
        bump();
        if (object && !key()) return false;
        break;
      }
      if (d != (object ? '}' : ']'))
        return expected(object ? "',' or '}' after an object member" : "',' or ']' after an array element");
      bump();
      --depth;
    }
  }
}

bool Scanner::setError(std::string message) {
  if (error_.empty()) {
    error_ = std::move(message);
    error_offset_ = offset();
  }
  return false;
}

bool Scanner::fail(std::string_view what) { return setError(std::string(what)); }

bool Scanner::syntax(std::string_view what) {
  std::string m = "syntax error at line ";
  m += std::to_string(line_);
  m += ", column ";
  m += std::to_string(offset() - line_start_ + 1);
  m += ": ";
  m += what;
  return setError(std::move(m));
}

bool Scanner::expected(std::string_view what) {
  const int c = peekRaw();
  std::string m;
  if (c < 0) {
    m = "unexpected end of input; expected ";
    m += what;
  } else {
    m = "expected ";
    m += what;
    m += ", found ";
    m += describe(c);
  }
  return syntax(m);
}

}  // namespace shardscope::profiler::json
