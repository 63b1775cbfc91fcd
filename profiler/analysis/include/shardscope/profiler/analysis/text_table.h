// Aligned plain-text tables for the command line's reports (`report`, the
// import summary): the first column left-aligned, the others right-aligned,
// two spaces between columns, trailing spaces trimmed.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace shardscope::profiler {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  // Columns from this one on are left-aligned (text such as file names).
  void leftFrom(std::size_t column) { left_from_ = column; }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& o, const std::string& indent = "  ") const {
    std::vector<std::size_t> w;
    for (const auto& r : rows_)
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    for (const auto& r : rows_) {
      std::string line = indent;
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (i) line += "  ";
        const std::string pad(w[i] - r[i].size(), ' ');
        line += i == 0 || i >= left_from_ ? r[i] + pad : pad + r[i];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      o << line << "\n";
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
  std::size_t left_from_ = static_cast<std::size_t>(-1);
};

}  // namespace shardscope::profiler
