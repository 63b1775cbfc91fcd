#include "shardscope/report/text_table.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace shardscope::report {

namespace {
bool wide(char32_t c) {
  return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF && c != 0x303F) || (c >= 0xAC00 && c <= 0xD7A3) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
         (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) || (c >= 0x20000 && c <= 0x3FFFD);
}
bool combining(char32_t c) {
  return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x20D0 && c <= 0x20FF) ||
         (c >= 0xFE20 && c <= 0xFE2F) || c == 0x200B || c == 0x200D;
}
}  // namespace

std::size_t textWidth(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    const std::size_t length = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    char32_t c = length == 1 ? b : length == 2 ? (b & 0x1Fu) : length == 3 ? (b & 0x0Fu) : (b & 0x07u);
    bool valid = length != 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xC0u) == 0x80u;
      c = (c << 6) | (next & 0x3Fu);
    }
    if (!valid) {  // one column for a byte that does not start a whole sequence
      ++width;
      ++i;
      continue;
    }
    width += combining(c) ? 0 : wide(c) ? 2 : 1;
    i += length;
  }
  return width;
}

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
      w[i] = std::max(w[i], textWidth(r[i]));
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
      const std::string pad(w[i] - textWidth(r[i]), ' ');
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
