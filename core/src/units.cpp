#include "shardscope/core/units.h"

#include <array>
#include <cmath>
#include <utility>

namespace shardscope::core {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The leading digits of `text` (may be empty).
std::string_view leadingDigits(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && isDigit(text[n])) ++n;
  return text.substr(0, n);
}
}  // namespace

std::optional<std::uint64_t> parseWholeNumber(std::string_view text, std::uint64_t min, std::uint64_t max) {
  if (text.empty() || leadingDigits(text).size() != text.size()) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : text) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> parseSize(std::string_view text) {
  const std::string_view digits = leadingDigits(text);
  const auto v = parseWholeNumber(digits);
  if (!v) return std::nullopt;
  const std::string_view suffix = text.substr(digits.size());
  static constexpr std::array<std::pair<std::string_view, int>, 9> kSuffixes{
      {{"B", 0}, {"K", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30}, {"T", 40}, {"TiB", 40}}};
  int shift = -1;
  if (suffix.empty()) shift = 0;
  for (const auto& [name, s] : kSuffixes)
    if (suffix == name) shift = s;
  if (shift < 0 || *v > (UINT64_MAX >> shift)) return std::nullopt;
  return *v << shift;
}

std::optional<std::chrono::nanoseconds> parseDuration(std::string_view text) {
  // Units from the largest down; a part's unit must come after the previous part's.
  static constexpr std::array<std::pair<std::string_view, double>, 6> kUnits{
      {{"h", 3600e9}, {"m", 60e9}, {"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1.0}}};
  if (text.empty()) return std::nullopt;
  double total_ns = 0.0;
  std::size_t next_unit = 0;
  while (!text.empty()) {
    const std::string_view whole = leadingDigits(text);
    std::string_view fraction;
    std::size_t used = whole.size();
    if (used < text.size() && text[used] == '.') {
      fraction = leadingDigits(text.substr(used + 1));
      if (fraction.empty()) return std::nullopt;
      used += 1 + fraction.size();
    }
    if (whole.empty()) return std::nullopt;
    std::size_t unit_end = used;
    while (unit_end < text.size() && !isDigit(text[unit_end])) ++unit_end;
    const std::string_view unit = text.substr(used, unit_end - used);
    std::size_t u = next_unit;
    while (u < kUnits.size() && kUnits[u].first != unit) ++u;
    if (u == kUnits.size()) return std::nullopt;  // unknown, missing, repeated or out of order
    double value = 0.0;
    for (const char c : whole) value = value * 10.0 + (c - '0');
    double scale = 0.1;
    for (const char c : fraction) {
      value += (c - '0') * scale;
      scale /= 10.0;
    }
    total_ns += value * kUnits[u].second;
    next_unit = u + 1;
    text.remove_prefix(unit_end);
  }
  if (!std::isfinite(total_ns) || total_ns >= 9.2e18) return std::nullopt;
  return std::chrono::nanoseconds(std::llround(total_ns));
}

}  // namespace shardscope::core
