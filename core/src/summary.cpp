#include "shardscope/core/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <iterator>
#include <string>

namespace shardscope::core {

std::string formatf(const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

std::string formatBytes(double bytes, const BytesFormat& format) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  constexpr int kLast = static_cast<int>(std::size(kUnits)) - 1;
  if (!std::isfinite(bytes)) return "?";
  int u = std::clamp(static_cast<int>(format.unit) - 1, 0, kLast);
  if (format.unit == ByteUnit::Auto)
    while (u < kLast && std::abs(std::ldexp(bytes, -10 * u)) >= 1024.0) ++u;
  const double v = std::ldexp(bytes, -10 * u);  // exact: a power of two
  const int decimals = u == 0 || (format.whole_from_ten && std::abs(v) >= 10.0) ? 0 : std::max(format.decimals, 0);
  std::string s = formatf("%.*f", decimals, v);
  if (format.trim_zeros && s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (format.digit_groups) s = groupDigits(s);
  if (format.unit_name) s += std::string(" ") + kUnits[u];
  return s;
}

std::string groupDigits(std::string_view number) {
  const std::size_t start = !number.empty() && (number[0] == '-' || number[0] == '+') ? 1 : 0;
  std::size_t end = start;
  while (end < number.size() && number[end] >= '0' && number[end] <= '9') ++end;
  std::string out(number.substr(0, start));
  for (std::size_t i = start; i < end; ++i) {
    if (i != start && (end - i) % 3 == 0) out.push_back(',');
    out.push_back(number[i]);
  }
  out += number.substr(end);
  return out;
}

std::string formatRelativeError(double fraction) {
  if (!std::isfinite(fraction)) return "-";
  if (fraction > 10.0) return formatf(fraction + 1.0 >= 100.0 ? "%.0fx" : "%.1fx", fraction + 1.0);
  return formatf("%+.1f%%", fraction * 100.0);
}

std::string formatErrorSize(double fraction) {
  if (!std::isfinite(fraction) || fraction < 0) return "-";
  const std::string text = formatRelativeError(fraction);
  return text.front() == '+' ? text.substr(1) : text;
}

std::string formatWithError(double value, double std_error) {
  if (!std::isfinite(value)) return "-";
  int exponent = 0;
  if (value != 0.0) exponent = static_cast<int>(std::floor(std::log10(std::abs(value)) / 3.0)) * 3;
  const double scale = std::pow(10.0, -exponent);
  const double v = value * scale;
  // Three significant digits of the value; the error to the same last digit.
  const double magnitude = std::abs(v);
  const int decimals = magnitude >= 100.0 ? 0 : magnitude >= 10.0 ? 1 : 2;
  std::string err = "?";
  if (std_error > 0.0 && std::isfinite(std_error)) {
    const double e = std_error * scale;
    // An error below the value's last digit keeps one significant digit of its own.
    err = e * std::pow(10.0, decimals) < 0.5 ? formatf("%.1g", e) : formatf("%.*f", decimals, e);
  }
  const std::string body = formatf("%.*f", decimals, v) + " \u00b1 " + err;
  return exponent == 0 ? body : "(" + body + ")e" + std::to_string(exponent);
}

std::string formatCount(double n) {
  if (n >= 1e10) return formatf("%.1fG", n / 1e9);
  if (n >= 1e9) return formatf("%.2fG", n / 1e9);
  if (n >= 1e7) return formatf("%.1fM", n / 1e6);
  if (n >= 1e6) return formatf("%.2fM", n / 1e6);
  if (n >= 1e4) return formatf("%.1fk", n / 1e3);
  return n == static_cast<double>(static_cast<long long>(n)) ? formatf("%.0f", n) : formatf("%.1f", n);
}

std::string describeAccess(const AccessSpec& a) {
  switch (a.kind) {
    case AccessKind::Uniform:
      return "uniform";
    case AccessKind::Zipf:
      return formatf("zipf %.2f", a.alpha);
    case AccessKind::HotSet:
      return formatf("hot %.0f%%", a.hot_probability * 100) + formatf(" on %.1f%% rows", a.hot_fraction * 100);
    case AccessKind::Histogram:
      return "histogram (" + std::to_string(a.histogram.size()) + " buckets)";
  }
  return "?";
}

std::string formatRankRanges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

std::string asciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace shardscope::core
