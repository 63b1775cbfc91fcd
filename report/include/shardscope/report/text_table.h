// Aligned plain-text tables, the one table of every text report (the
// command line's run, calibration and import reports, the local GPUs): by
// default the first column left-aligned and the others right-aligned, two
// spaces between columns, every column as wide as its widest cell, trailing
// spaces trimmed. Widths are terminal columns of UTF-8 text (textWidth), as
// cells hold names from the user's files.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope::report {

// The columns UTF-8 text takes in a terminal: one per code point, two for
// East Asian wide ones (CJK, Hangul, full-width forms), none for combining
// marks; a byte that is not UTF-8 counts as one.
[[nodiscard]] std::size_t textWidth(std::string_view text);

class TextTable {
 public:
  enum class Align { Left, Right };

  // The header is the first row.
  explicit TextTable(std::vector<std::string> header);

  // Columns from this one on are left-aligned (text such as file names).
  TextTable& leftFrom(std::size_t column);
  TextTable& align(std::size_t column, Align align);
  // Column i at least widths[i] wide (a fixed layout that stays put while the figures change).
  TextTable& minWidths(std::vector<std::size_t> widths);
  // Between two columns; two spaces by default.
  TextTable& separator(std::string separator);
  // Between column-1 and column, where it differs from the others.
  TextTable& separatorBefore(std::size_t column, std::string separator);

  void add(std::vector<std::string> row);
  // A line of its own between the rows (e.g. "... 24 more ranks ..."),
  // printed as given after the indent; it does not widen any column.
  void addLine(std::string line);
  // Every row, each line after `indent`.
  void print(std::ostream& o, const std::string& indent = "  ") const;
  [[nodiscard]] std::string text(const std::string& indent = "  ") const;

 private:
  [[nodiscard]] Align alignOf(std::size_t column) const;

  std::vector<std::vector<std::string>> rows_;
  std::vector<std::pair<std::size_t, std::string>> lines_;  // (rows before it, text)
  std::vector<std::optional<Align>> align_;
  std::vector<std::size_t> min_width_;
  std::size_t left_from_ = static_cast<std::size_t>(-1);
  std::string separator_ = "  ";
  std::vector<std::optional<std::string>> separator_before_;
};

}  // namespace shardscope::report
