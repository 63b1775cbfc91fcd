#include "shardscope/report/text_table.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace shardscope::report {

TextTable::TextTable(std::vector<std::string> header) { rows_.push_back(std::move(header)); }

TextTable& TextTable::leftFrom(std::size_t column) {
  left_from_ = column;
  return *this;
}

TextTable& TextTable::align(std::size_t column, Align align) {
  if (align_.size() <= column) align_.resize(column + 1);
  align_[column] = align;
  return *this;
}

TextTable& TextTable::minWidths(std::vector<std::size_t> widths) {
  min_width_ = std::move(widths);
  return *this;
}

TextTable& TextTable::separator(std::string separator) {
  separator_ = std::move(separator);
  return *this;
}

TextTable& TextTable::separatorBefore(std::size_t column, std::string separator) {
  if (separator_before_.size() <= column) separator_before_.resize(column + 1);
  separator_before_[column] = std::move(separator);
  return *this;
}

void TextTable::add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

void TextTable::addLine(std::string line) { lines_.emplace_back(rows_.size(), std::move(line)); }

TextTable::Align TextTable::alignOf(std::size_t column) const {
  if (column < align_.size() && align_[column]) return *align_[column];
  return column == 0 || column >= left_from_ ? Align::Left : Align::Right;
}

void TextTable::print(std::ostream& o, const std::string& indent) const {
  std::vector<std::size_t> w = min_width_;
  for (const auto& r : rows_)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (w.size() <= i) w.push_back(0);
      w[i] = std::max(w[i], r[i].size());
    }
  auto free_line = lines_.begin();
  auto printLinesBefore = [&](std::size_t row) {
    for (; free_line != lines_.end() && free_line->first <= row; ++free_line) o << indent << free_line->second << "\n";
  };
  for (std::size_t row = 0; row < rows_.size(); ++row) {
    printLinesBefore(row);
    const auto& r = rows_[row];
    std::string line = indent;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i) line += i < separator_before_.size() && separator_before_[i] ? *separator_before_[i] : separator_;
      const std::string pad(w[i] - r[i].size(), ' ');
      line += alignOf(i) == Align::Left ? r[i] + pad : pad + r[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    o << line << "\n";
  }
  printLinesBefore(rows_.size());
}

std::string TextTable::text(const std::string& indent) const {
  std::ostringstream o;
  print(o, indent);
  return o.str();
}

}  // namespace shardscope::report
