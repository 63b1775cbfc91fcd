// A validating, streaming JSON scanner (RFC 8259, UTF-8) over input read in
// chunks, for importers of huge trace files: the caller pulls values, keeps
// the few it needs and skips the rest without building strings. Any value
// may straddle a chunk boundary. Errors carry the byte offset, line, column.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace shardscope::profiler::json {

// Where the scanner's bytes come from, one chunk at a time.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Up to `n` bytes into `buf`: how many, 0 at the end, < 0 on a read error
  // (the source keeps the reason). Not called again after 0 or an error.
  virtual std::ptrdiff_t read(char* buf, std::size_t n) = 0;
};

// A JSON number as written. Text longer than kMaxText keeps its first
// kMaxText bytes and says so: callers treat such numbers alike whatever the
// chunking, so results never depend on where a chunk ends.
struct NumberText {
  static constexpr std::size_t kMaxText = 256;
  std::string_view text;
  bool truncated = false;
  bool integral = true;  // no fraction, no exponent
  bool exponent = false;
};

class Scanner {
 public:
  static constexpr int kMaxDepth = 1024;  // arrays/objects nested in one another

  Scanner(ChunkSource& source, std::size_t chunk_bytes);

  // The next byte after whitespace, not consumed; -1 at the end of the input.
  int peek() {
    if (p_ != e_) [[likely]] {
      const auto c = static_cast<unsigned char>(*p_);
      if (c > ' ') return c;
      if (c == ' ' && p_ + 1 != e_ && static_cast<unsigned char>(p_[1]) > ' ') return static_cast<unsigned char>(*++p_);
    }
    return peekSlow();
  }
  // Consumes the byte peek() returned.
  void bump() { ++p_; }
  // At the start: skips a UTF-8 byte order mark, if there is one.
  [[nodiscard]] bool byteOrderMark();

  // At '"': the decoded string, valid until the next call on the scanner.
  [[nodiscard]] bool string(std::string_view& out) {
    const char* s = p_ + 1;
    const char* q = findSpecial(s, e_);
    if (q != e_ && *q == '"') [[likely]] {
      out = std::string_view(s, static_cast<std::size_t>(q - s));
      p_ = q + 1;
      return true;
    }
    return stringSlow(&out);
  }
  // At '"': validates the string and moves past it.
  [[nodiscard]] bool skipString() {
    const char* q = findSpecial(p_ + 1, e_);
    if (q != e_ && *q == '"') [[likely]] {
      p_ = q + 1;
      return true;
    }
    return stringSlow(nullptr);
  }
  // At '-' or a digit: the number's text, valid until the next call.
  [[nodiscard]] bool number(NumberText& out);
  // At any value: validates it and moves past it. `outer`: arrays and
  // objects already open around it (nesting counts from the document's top).
  [[nodiscard]] bool skipValue(int outer = 0);

  // Record an error at the current byte and return false. expected():
  // "syntax error at line L, column C: expected <what>, found <next byte>".
  bool expected(std::string_view what);
  bool syntax(std::string_view what);  // "syntax error at line L, column C: <what>"
  bool fail(std::string_view what);    // <what> as it is

  [[nodiscard]] std::uint64_t offset() const { return base_ + static_cast<std::uint64_t>(p_ - buf0_); }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] std::uint64_t errorOffset() const { return error_offset_; }

 private:
  // First byte in [p, e) that a string's fast path cannot pass: '"', '\',
  // a control character or a non-ASCII byte (UTF-8 is checked apart).
  static const char* findSpecial(const char* p, const char* e) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (e - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Signed compare: bytes >= 0x80 are negative, so "< 0x20" also catches them.
      const __m128i m =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmplt_epi8(v, space));
      const int mask = _mm_movemask_epi8(m);
      if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
      p += 16;
    }
#endif
    while (p != e) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) return p;
      ++p;
    }
    return p;
  }

  int peekSlow();
  // The next byte without skipping whitespace (refills); -1 at the end.
  int peekRaw() { return p_ != e_ || refill() ? static_cast<unsigned char>(*p_) : -1; }
  bool refill();
  bool stringSlow(std::string_view* out);
  bool escape(std::string* out);
  bool utf8(std::string* out);
  bool hex4(unsigned& cp);
  bool literal();
  bool setError(std::string message);

  ChunkSource& source_;
  std::vector<char> buf_;
  const char* buf0_;
  const char* p_;
  const char* e_;
  std::uint64_t base_ = 0;  // offset of buf0_ in the input
  bool eof_ = false;
  std::uint64_t line_ = 1, line_start_ = 0;
  std::string scratch_;  // strings that straddle chunks or have escapes
  std::array<char, NumberText::kMaxText> num_{};
  std::array<std::uint64_t, kMaxDepth / 64> stack_{};  // skipValue: bit set = object
  std::string error_;
  std::uint64_t error_offset_ = 0;
};

}  // namespace shardscope::profiler::json
