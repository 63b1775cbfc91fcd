// Embedding tables as CSV (one table per line, columns by header name) and
// the text forms of single table fields that CSV files and table editors
// share. Values are checked with the rules of shardscope.model/1 (the JSON
// reader's own code), so every format accepts exactly the same tables.
// Format: docs/formats/model-csv.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/model.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

// The CSV columns a table is read from and written to.
inline constexpr std::string_view kCsvName = "name";
inline constexpr std::string_view kCsvRows = "rows";
inline constexpr std::string_view kCsvDim = "dim";
inline constexpr std::string_view kCsvDType = "dtype";
inline constexpr std::string_view kCsvPooling = "pooling";
inline constexpr std::string_view kCsvPoolingSpread = "pooling_spread";
inline constexpr std::string_view kCsvAccess = "access";
inline constexpr std::string_view kCsvSizeGB = "size_gb";  // written for people, ignored on read

// One problem with one field of a table: `column` is the CSV column it
// belongs to ("dim", "pooling_spread", "access"), `message` the expectation
// ("expected a positive multiple of 4, got 6").
struct TableFieldProblem {
  std::string column;
  std::string message;
};

struct TableCheck {
  TableSpec table;                          // as a model file would load it (histogram shares normalised)
  std::vector<TableFieldProblem> problems;  // empty: the table is valid
  [[nodiscard]] bool ok() const { return problems.empty(); }
};

// Checks one table against the rules of shardscope.model/1 (name non-empty,
// rows > 0, dim a positive multiple of 4, pooling mean > 0 and spread <= mean,
// access parameters in range). Uniqueness of names is the caller's business.
[[nodiscard]] TableCheck checkTable(const TableSpec& table);

// Access distribution as text: "uniform", "zipf:1.05", "hot:0.1:0.9",
// "histogram:0.5;0.3;0.2". The reader also takes spaces for ':' ("zipf
// 1.05"), percentages for the hot set ("hot 10% 90%"), an arrow between
// them ("hot 10% → 90%", as the desktop shows it), "hot_set" for "hot", and
// any letter case. It checks the syntax only; checkTable checks the ranges.
[[nodiscard]] std::string accessToText(const AccessSpec& access);
[[nodiscard]] Result<AccessSpec> accessFromText(std::string_view text);

// The shortest decimal text that reads back as exactly `v` ("1.05", "3", "1e-06").
[[nodiscard]] std::string shortestNumberText(double v);

struct TablesCsv {
  std::vector<TableSpec> tables;
  // Things that were read past but not used ("column \"owner\" is not a table
  // field; ignored"), already prefixed with source and line.
  std::vector<std::string> warnings;
};

// Reads tables from CSV text. `source` names the input in messages; every
// problem reads `<source>:<line>: column "<column>": <expectation>`, one per
// line, at most 20. Empty input or a header without tables is an error.
[[nodiscard]] Result<TablesCsv> tablesFromCsv(std::string_view text, const std::string& source);
[[nodiscard]] Result<TablesCsv> loadTablesCsv(const std::string& path);

// Header and one line per table, LF line ends, fields quoted only where needed;
// tablesFromCsv(tablesToCsv(t)) gives t back.
[[nodiscard]] std::string tablesToCsv(const std::vector<TableSpec>& tables);
// Writes atomically (temp file + rename): a failed write leaves the old file.
[[nodiscard]] Status saveTablesCsv(const std::string& path, const std::vector<TableSpec>& tables);

}  // namespace shardscope::core
