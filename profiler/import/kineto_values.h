// Values of a Kineto trace's JSON as the importer reads them (private to
// profiler/import): times in microseconds to exact nanoseconds, integer
// fields, thread and stream ids written as text, and the words of messages.
// Header-only: the fuzz targets compile the importer's sources on their own.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "json_scanner.h"

namespace shardscope::profiler::kineto_detail {

// |ts|, |dur| below 4e15 us: 4e18 ns leaves room for ts + dur in an int64.
inline constexpr std::int64_t kMaxAbsUs = 4'000'000'000'000'000;

// A rank, world size, device or group size from the trace: values outside
// 0..2^24 are not real ones and become `unknown` instead of wrapping.
inline int smallInt(std::int64_t v, int unknown) {
  return v >= 0 && v <= (std::int64_t{1} << 24) ? static_cast<int>(v) : unknown;
}

// Microseconds as JSON text -> ns, exactly for plain decimals (the 4th
// decimal rounds half up); false when out of range.
inline bool usToNs(const json::NumberText& n, std::int64_t& ns) {
  const std::string_view s = n.text;
  if (n.exponent) {
    double v = 0;
    if (n.truncated || std::from_chars(s.data(), s.data() + s.size(), v).ec != std::errc()) return false;
    if (!(std::fabs(v) < static_cast<double>(kMaxAbsUs))) return false;
    ns = std::llround(v * 1000.0);
    return true;
  }
  // A plain decimal keeps its integer part and first decimals even when truncated.
  const char* p = s.data();
  const char* end = p + s.size();
  const bool neg = *p == '-';
  p += neg ? 1 : 0;
  std::int64_t ip = 0;
  const char* q = p;
  for (; q != end && *q != '.'; ++q) {
    if (q - p >= 16) return false;  // >= 1e16 us
    ip = ip * 10 + (*q - '0');
  }
  if (ip >= kMaxAbsUs) return false;
  std::int64_t frac = 0;
  int digits = 0;
  bool round_up = false;
  if (q != end) {
    for (++q; q != end && digits < 4; ++q, ++digits) {
      if (digits < 3)
        frac = frac * 10 + (*q - '0');
      else
        round_up = *q >= '5';
    }
  }
  for (int d = std::min(digits, 3); d < 3; ++d) frac *= 10;
  ns = ip * 1000 + frac + (round_up ? 1 : 0);
  if (neg) ns = -ns;
  return true;
}

// A JSON number as an integer field: integers as they are (clamped at
// INT64_MAX; below INT64_MIN: 0), others truncated toward zero (0 beyond
// +-9e18, and for numbers too long to keep).
inline std::int64_t toInt(const json::NumberText& n) {
  const std::string_view s = n.text;
  if (n.truncated) return 0;
  if (n.integral) {
    if (s[0] != '-') {
      std::uint64_t u = 0;
      if (std::from_chars(s.data(), s.data() + s.size(), u).ec != std::errc()) return 0;
      return static_cast<std::int64_t>(std::min<std::uint64_t>(u, INT64_MAX));
    }
    std::int64_t v = 0;
    if (std::from_chars(s.data(), s.data() + s.size(), v).ec != std::errc()) return 0;
    return v;
  }
  double v = 0;
  if (std::from_chars(s.data(), s.data() + s.size(), v).ec != std::errc()) return 0;
  return std::fabs(v) < 9.0e18 ? static_cast<std::int64_t>(v) : 0;
}

// A JSON number as a field a ShardScope export wrote (kineto_stored.h): an integer that fits an
// int64 exactly; false for fractions, exponents and anything beyond int64.
inline bool exactInt(const json::NumberText& n, std::int64_t& out) {
  if (!n.integral || n.truncated) return false;
  return std::from_chars(n.text.data(), n.text.data() + n.text.size(), out).ec == std::errc();
}

// tids like "stream 7" or "7": the last run of digits.
inline std::int64_t idFromText(std::string_view v) {
  std::int64_t x = 0;
  const auto p = v.find_last_of("0123456789");
  if (p == std::string_view::npos) return 0;
  auto b = v.find_last_not_of("0123456789", p);
  b = b == std::string_view::npos ? 0 : b + 1;
  (void)std::from_chars(v.data() + b, v.data() + p + 1, x);
  return x;
}

inline bool isNumberStart(int c) { return c == '-' || (c >= '0' && c <= '9'); }

inline std::string_view valueKind(int c) {
  switch (c) {
    case '{':
      return "an object";
    case '[':
      return "an array";
    case '"':
      return "a string";
    case 't':
    case 'f':
      return "a boolean";
    case 'n':
      return "null";
    default:
      return isNumberStart(c) ? "a number" : "";
  }
}

inline std::string lowerAscii(std::string_view s) {
  std::string o(s);
  for (char& c : o)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return o;
}

}  // namespace shardscope::profiler::kineto_detail
