// Tables <-> CSV. Format: docs/formats/model-csv.md. Each row is turned into
// the JSON a model file would hold and checked by json_model.cpp's reader;
// its JSON-pointer messages are mapped back to CSV lines and columns.
#include "shardscope/core/model_csv.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "json_parts.h"
#include "shardscope/core/json_io.h"

namespace shardscope::core {

namespace {
using detail::json;

bool isBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && isBlank(s.back())) s.remove_suffix(1);
  return s;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string inQuotes(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

// ---------------------------------------------------------------- splitting

struct CsvRecord {
  std::size_t line = 0;  // where the record starts (a quoted field may span lines)
  std::vector<std::string> fields;
};

struct CsvSyntaxError {
  std::size_t line = 0;
  std::size_t field = 0;  // 0-based
  std::string message;
};

// RFC 4180 records with the leniencies of hand-written and spreadsheet files:
// a UTF-8 BOM, LF, CRLF or CR line ends, blanks around fields, blank lines and
// `#` comment lines.
class CsvSplitter {
 public:
  explicit CsvSplitter(std::string_view text) : text_(text) {
    if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
  }

  // The next record that is not blank or a comment; false at the end or on
  // a syntax error (then `error` is set).
  bool next(CsvRecord& record, std::optional<CsvSyntaxError>& error) {
    while (pos_ < text_.size()) {
      skipBlanks();
      if (pos_ < text_.size() && text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
        skipLineEnd();
        continue;
      }
      record.line = line_;
      record.fields.clear();
      bool any_text = false;
      bool end = false;
      while (!end) {
        std::string field;
        bool was_quoted = false;
        if (!readField(record, field, was_quoted, error)) return false;
        any_text = any_text || was_quoted || !field.empty();
        record.fields.push_back(std::move(field));
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
        } else {
          skipLineEnd();
          end = true;
        }
      }
      if (any_text) return true;  // else a blank line or one of only commas
    }
    return false;
  }

 private:
  void skipBlanks() {
    while (pos_ < text_.size() && isBlank(text_[pos_])) ++pos_;
  }
  bool atLineEnd() const { return text_[pos_] == '\n' || text_[pos_] == '\r'; }
  void skipLineEnd() {
    if (pos_ >= text_.size()) return;
    if (text_[pos_] == '\r') {
      ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
    } else if (text_[pos_] == '\n') {
      ++pos_;
    } else {
      return;
    }
    ++line_;
  }

  bool readField(const CsvRecord& record, std::string& field, bool& was_quoted, std::optional<CsvSyntaxError>& error) {
    skipBlanks();
    if (pos_ < text_.size() && text_[pos_] == '"') {
      was_quoted = true;
      const std::size_t open_line = line_;
      ++pos_;
      for (;;) {
        if (pos_ >= text_.size()) {
          error = CsvSyntaxError{open_line, record.fields.size(),
                                 "a quoted field is not closed (its opening quote is on this line)"};
          return false;
        }
        const char c = text_[pos_];
        if (c == '"') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
            field += '"';
            pos_ += 2;
            continue;
          }
          ++pos_;
          break;
        }
        if (c == '\r' || c == '\n') {  // a line break inside quotes is part of the value
          skipLineEnd();
          field += '\n';
          continue;
        }
        field += c;
        ++pos_;
      }
      skipBlanks();
      if (pos_ < text_.size() && text_[pos_] != ',' && !atLineEnd()) {
        error = CsvSyntaxError{line_, record.fields.size(),
                               "unexpected text after a closing quote (a quote inside a quoted field is written \"\")"};
        return false;
      }
      return true;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ',' && !atLineEnd()) ++pos_;
    field = std::string(trim(text_.substr(start, pos_ - start)));
    return true;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
};

// ---------------------------------------------------------------- values

// The digits of a whole number written plainly ("40000000") or in groups of
// three ("40,000,000", "40_000_000"); nullopt for anything else.
std::optional<std::string> groupedDigits(std::string_view s) {
  std::string digits;
  std::size_t group = 0;
  bool grouped = false;
  char separator = 0;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digits += c;
      ++group;
    } else if ((c == ',' || c == '_') && group > 0 && (separator == 0 || separator == c)) {
      if (grouped ? group != 3 : group > 3) return std::nullopt;
      separator = c;
      grouped = true;
      group = 0;
    } else {
      return std::nullopt;
    }
  }
  if (digits.empty() || (grouped && group != 3)) return std::nullopt;
  return digits;
}

// A CSV cell as the JSON value a model file would hold, so the JSON reader's
// checks and messages apply: integers (digit groups "40,000,000" and
// "40_000_000" allowed), other numbers, else the text (which the reader then
// rejects as "got string ...").
json numberJson(std::string_view text) {
  std::string s(text);
  if (!s.empty() && s.front() == '+') s.erase(0, 1);
  if (std::optional<std::string> digits = groupedDigits(s)) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits->data(), digits->data() + digits->size(), v);
    if (ec == std::errc() && end == digits->data() + digits->size()) return v;
    return std::string(text);  // too large for 64 bits
  }
  if (s.size() > 1 && s.front() == '-' && s.find_first_not_of("0123456789", 1) == std::string::npos) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) return v;
  }
  double d = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(d)) return d;
  return std::string(text);
}

std::optional<double> parseDouble(std::string_view s) {
  double d = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

// "10%" -> 0.1, "0.1" -> 0.1.
std::optional<double> parseFraction(std::string_view s) {
  if (s.ends_with('%')) {
    auto v = parseDouble(s.substr(0, s.size() - 1));
    if (v) return *v / 100.0;
    return std::nullopt;
  }
  return parseDouble(s);
}

// A table in the JSON form of shardscope.model/1 (what toJson writes).
json tableJson(const TableSpec& t) {
  ModelSpec m;
  m.name = "table check";
  m.batch_size_per_gpu = 1;
  m.tables.push_back(t);
  return json(toJson(m)["tables"][0]);
}

// The CSV column and the wording for a problem the JSON reader reported at
// `subpath` of a table ("/dim", "/pooling/spread", "/access/alpha").
TableFieldProblem problemAt(std::string_view subpath, std::string message) {
  if (message.starts_with("missing required field")) message.replace(0, 22, "missing value");
  struct Mapping {
    std::string_view path;
    std::string_view column;
    std::string_view prefix;
  };
  static constexpr std::array<Mapping, 11> kMappings = {{
      {"/name", kCsvName, ""},
      {"/rows", kCsvRows, ""},
      {"/dim", kCsvDim, ""},
      {"/dtype", kCsvDType, ""},
      {"/pooling/spread", kCsvPoolingSpread, ""},
      {"/pooling/mean", kCsvPooling, ""},
      {"/pooling", kCsvPooling, ""},
      {"/access/alpha", kCsvAccess, "zipf alpha: "},
      {"/access/hot_fraction", kCsvAccess, "hot fraction: "},
      {"/access/hot_probability", kCsvAccess, "hot probability: "},
      {"/access/histogram", kCsvAccess, "histogram: "},
  }};
  for (const Mapping& m : kMappings) {
    if (subpath.starts_with(m.path)) return {std::string(m.column), std::string(m.prefix) + message};
  }
  if (subpath.starts_with("/access")) return {std::string(kCsvAccess), message};
  return {std::string(subpath), message};
}

// Checks one table, given as model-file JSON, with the model reader itself.
TableCheck checkTableJson(const json& table) {
  json model = json::object();
  model["name"] = "table check";
  model["batch_size_per_gpu"] = 1;
  model["tables"] = json::array({table});
  detail::JsonReader reader("");
  ModelSpec m = detail::readModelBody(reader, model, "");
  TableCheck check;
  if (reader.ok()) {
    check.table = std::move(m.tables.front());
    return check;
  }
  // The reader joins "<source>: <pointer>: <expectation>" lines; the source is
  // empty, so each line starts ": /tables/0".
  constexpr std::string_view kPrefix = ": /tables/0";
  std::istringstream lines(reader.error().message);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with(kPrefix)) continue;  // "... and K more problems"
    const std::string_view rest = std::string_view(line).substr(kPrefix.size());
    const auto colon = rest.find(": ");
    if (colon == std::string_view::npos) continue;
    check.problems.push_back(problemAt(rest.substr(0, colon), std::string(rest.substr(colon + 2))));
  }
  if (check.problems.empty()) check.problems.push_back({std::string(kCsvName), reader.error().message});
  return check;
}

// ---------------------------------------------------------------- reading

enum class Column { Name, Rows, Dim, DType, Pooling, PoolingSpread, Access, SizeGB, Count };

constexpr std::array<std::string_view, static_cast<std::size_t>(Column::Count)> kColumnNames = {
    kCsvName, kCsvRows, kCsvDim, kCsvDType, kCsvPooling, kCsvPoolingSpread, kCsvAccess, kCsvSizeGB};

class CsvTableReader {
 public:
  CsvTableReader(std::string_view text, const std::string& source) : splitter_(text), source_(source) {}

  Result<TablesCsv> read() {
    CsvRecord record;
    std::optional<CsvSyntaxError> syntax;
    if (!splitter_.next(record, syntax)) {
      if (syntax) return Error{syntaxMessage(*syntax)};
      return Error{source_ + ": no header line, expected one naming the columns, e.g. \"name,rows,dim\""};
    }
    if (!readHeader(record)) return error();
    std::unordered_map<std::string, std::size_t> line_of_name;
    while (splitter_.next(record, syntax)) {
      readRow(record, line_of_name);
    }
    if (syntax) problems_.push_back(syntaxMessage(*syntax));
    if (problems_.empty() && result_.tables.empty()) {
      problems_.push_back(source_ + ": no tables, expected at least one line after the header");
    }
    if (!problems_.empty()) return error();
    return std::move(result_);
  }

 private:
  std::string where(std::size_t line) const {
    std::string s = source_;
    s += ':';
    s += std::to_string(line);
    s += ": ";
    return s;
  }

  std::string columnName(std::size_t field) const {
    if (field < header_.size() && !header_names_[field].empty()) return inQuotes(header_names_[field]);
    std::string s = "field ";
    s += std::to_string(field + 1);
    return s;
  }

  std::string syntaxMessage(const CsvSyntaxError& e) const {
    std::string s = where(e.line);
    s += "column ";
    s += columnName(e.field);
    s += ": ";
    s += e.message;
    return s;
  }

  void problem(std::size_t line, std::string_view column, const std::string& message) {
    std::string s = where(line);
    s += "column ";
    s += inQuotes(column);
    s += ": ";
    s += message;
    problems_.push_back(std::move(s));
  }

  Error error() const { return detail::problemsError(problems_); }

  bool readHeader(const CsvRecord& record) {
    index_.fill(-1);
    for (std::size_t i = 0; i < record.fields.size(); ++i) {
      const std::string name = lowercase(trim(record.fields[i]));
      header_.push_back(Column::Count);
      header_names_.push_back(name);
      std::size_t known = 0;
      while (known < kColumnNames.size() && kColumnNames[known] != name) ++known;
      if (known == kColumnNames.size()) {
        std::string w = where(record.line);
        w += name.empty() ? "field " + std::to_string(i + 1) + " has no column name; ignored"
                          : "column " + inQuotes(name) + " is not a table field; ignored";
        result_.warnings.push_back(std::move(w));
        continue;
      }
      if (index_[known] >= 0) {
        std::string s = where(record.line);
        s += "column " + inQuotes(name) + " appears twice (fields " + std::to_string(index_[known] + 1) + " and " +
             std::to_string(i + 1) + ")";
        problems_.push_back(std::move(s));
        continue;
      }
      index_[known] = static_cast<int>(i);
      header_.back() = static_cast<Column>(known);
    }
    for (Column required : {Column::Name, Column::Rows, Column::Dim}) {
      if (index_[static_cast<std::size_t>(required)] >= 0) continue;
      std::string s = where(record.line);
      s += "missing required column " + inQuotes(kColumnNames[static_cast<std::size_t>(required)]) +
           " (the header must name at least name, rows and dim; it has: ";
      for (std::size_t i = 0; i < header_names_.size(); ++i) {
        if (i) s += ", ";
        s += header_names_[i].empty() ? std::string("(empty)") : header_names_[i];
      }
      s += ")";
      problems_.push_back(std::move(s));
    }
    return problems_.empty();
  }

  // The cell of `column` in `record`; nullptr when the column is absent or the cell empty.
  const std::string* cell(const CsvRecord& record, Column column) const {
    const int i = index_[static_cast<std::size_t>(column)];
    if (i < 0 || static_cast<std::size_t>(i) >= record.fields.size()) return nullptr;
    const std::string& s = record.fields[static_cast<std::size_t>(i)];
    return s.empty() ? nullptr : &s;
  }

  void readRow(const CsvRecord& record, std::unordered_map<std::string, std::size_t>& line_of_name) {
    // Extra fields are an error unless empty (trailing commas some tools write).
    bool extra_text = false;
    for (std::size_t i = header_.size(); i < record.fields.size(); ++i)
      extra_text = extra_text || !record.fields[i].empty();
    if (extra_text) {
      std::string s = where(record.line);
      s += std::to_string(record.fields.size()) + " fields, but the header names " + std::to_string(header_.size()) +
           " columns (quote a value that contains a comma)";
      problems_.push_back(std::move(s));
      return;
    }
    json t = json::object();
    if (const std::string* v = cell(record, Column::Name)) t["name"] = *v;
    if (const std::string* v = cell(record, Column::Rows)) t["rows"] = numberJson(*v);
    if (const std::string* v = cell(record, Column::Dim)) t["dim"] = numberJson(*v);
    if (const std::string* v = cell(record, Column::DType)) t["dtype"] = lowercase(*v);
    const std::string* mean = cell(record, Column::Pooling);
    if (const std::string* spread = cell(record, Column::PoolingSpread)) {
      json p = {{"kind", "uniform"}, {"spread", numberJson(*spread)}};
      if (mean) p["mean"] = numberJson(*mean);
      t["pooling"] = std::move(p);
    } else if (mean) {
      t["pooling"] = {{"kind", "fixed"}, {"mean", numberJson(*mean)}};
    }
    bool access_ok = true;
    if (const std::string* v = cell(record, Column::Access)) {
      Result<AccessSpec> access = accessFromText(*v);
      if (access) {
        TableSpec holder;
        holder.access = *access;
        t["access"] = tableJson(holder)["access"];
      } else {
        problem(record.line, kCsvAccess, access.error().message);
        access_ok = false;
      }
    }
    TableCheck check = checkTableJson(t);
    for (const TableFieldProblem& p : check.problems) problem(record.line, p.column, p.message);
    if (!check.ok() || !access_ok) return;
    const auto [it, inserted] = line_of_name.emplace(check.table.name, record.line);
    if (!inserted) {
      problem(record.line, kCsvName,
              "expected a unique table name, " + inQuotes(check.table.name) + " is also on line " +
                  std::to_string(it->second));
      return;
    }
    result_.tables.push_back(std::move(check.table));
  }

  CsvSplitter splitter_;
  std::string source_;
  std::vector<Column> header_;                                        // per field; Count: not a table field
  std::vector<std::string> header_names_;                             // per field, lower case
  std::array<int, static_cast<std::size_t>(Column::Count)> index_{};  // field of each column, -1: absent
  std::vector<std::string> problems_;
  TablesCsv result_;
};

// ---------------------------------------------------------------- writing

std::string csvField(std::string_view s) {
  const bool needs_quotes = s.empty() ? false
                                      : s.find_first_of(",\"\r\n") != std::string_view::npos || isBlank(s.front()) ||
                                            isBlank(s.back()) || s.front() == '#';
  if (!needs_quotes) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

std::string shortestNumberText(double v) {
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  if (ec != std::errc()) return "nan";
  return std::string(buf.data(), end);
}

TableCheck checkTable(const TableSpec& table) { return checkTableJson(tableJson(table)); }

std::string accessToText(const AccessSpec& access) {
  switch (access.kind) {
    case AccessKind::Uniform:
      return "uniform";
    case AccessKind::Zipf: {
      std::string s = "zipf:";
      s += shortestNumberText(access.alpha);
      return s;
    }
    case AccessKind::HotSet: {
      std::string s = "hot:";
      s += shortestNumberText(access.hot_fraction);
      s += ':';
      s += shortestNumberText(access.hot_probability);
      return s;
    }
    case AccessKind::Histogram: {
      std::string s = "histogram:";
      for (std::size_t i = 0; i < access.histogram.size(); ++i) {
        if (i) s += ';';
        s += shortestNumberText(access.histogram[i]);
      }
      return s;
    }
  }
  return "uniform";
}

Result<AccessSpec> accessFromText(std::string_view text) {
  static constexpr std::string_view kExpected =
      "expected \"uniform\", \"zipf:<alpha>\", \"hot:<fraction>:<probability>\" or "
      "\"histogram:<share>;<share>;...\", got ";
  const std::string s = lowercase(trim(text));
  std::vector<std::string> tokens;
  std::string token;
  for (std::size_t i = 0; i < s.size(); ++i) {
    // The arrow of "hot 10% → 90%" and "->" separate like blanks.
    std::size_t separator = 0;
    if (s[i] == ':' || s[i] == ';' || s[i] == ',' || isBlank(s[i]))
      separator = 1;
    else if (s.compare(i, 2, "->") == 0)
      separator = 2;
    else if (s.compare(i, 3, "\xE2\x86\x92") == 0)
      separator = 3;
    if (separator == 0) {
      token += s[i];
      continue;
    }
    if (!token.empty()) tokens.push_back(std::move(token));
    token.clear();
    i += separator - 1;
  }
  if (!token.empty()) tokens.push_back(std::move(token));
  const std::string original = inQuotes(trim(text));
  if (tokens.empty()) return Error{std::string(kExpected) + original};

  AccessSpec a;
  const std::string& kind = tokens.front();
  const std::size_t params = tokens.size() - 1;
  if (kind == "uniform") {
    if (params != 0) return Error{"uniform takes no parameters, got " + original};
    return a;
  }
  if (kind == "zipf") {
    std::optional<double> alpha = params == 1 ? parseDouble(tokens[1]) : std::nullopt;
    if (!alpha) return Error{"zipf takes one number, its alpha (e.g. \"zipf:1.05\"), got " + original};
    a.kind = AccessKind::Zipf;
    a.alpha = *alpha;
    return a;
  }
  if (kind == "hot" || kind == "hot_set") {
    std::optional<double> fraction = params == 2 ? parseFraction(tokens[1]) : std::nullopt;
    std::optional<double> probability = params == 2 ? parseFraction(tokens[2]) : std::nullopt;
    if (!fraction || !probability) {
      return Error{
          "hot takes two fractions or percentages, the share of rows that is hot and the share of ids "
          "that hit it (e.g. \"hot:0.1:0.9\" or \"hot 10% 90%\"), got " +
          original};
    }
    a.kind = AccessKind::HotSet;
    a.hot_fraction = *fraction;
    a.hot_probability = *probability;
    return a;
  }
  if (kind == "histogram") {
    if (params == 0) return Error{"histogram takes one or more shares (e.g. \"histogram:6;2;1;1\"), got " + original};
    a.kind = AccessKind::Histogram;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
      std::optional<double> share = parseDouble(tokens[i]);
      if (!share) return Error{"histogram share " + std::to_string(i) + " is not a number: " + inQuotes(tokens[i])};
      a.histogram.push_back(*share);
    }
    return a;
  }
  return Error{std::string(kExpected) + original};
}

Result<TablesCsv> tablesFromCsv(std::string_view text, const std::string& source) {
  return CsvTableReader(text, source).read();
}

Result<TablesCsv> loadTablesCsv(const std::string& path) {
  auto text = detail::readWholeFile(path, "a CSV file", "a header line and one line per table");
  if (!text) return text.error();
  return tablesFromCsv(*text, path);
}

std::string tablesToCsv(const std::vector<TableSpec>& tables) {
  std::string out;
  for (std::size_t i = 0; i < kColumnNames.size(); ++i) {
    if (i) out += ',';
    out += kColumnNames[i];
  }
  out += '\n';
  for (const TableSpec& t : tables) {
    out += csvField(t.name);
    out += ',';
    out += std::to_string(t.rows);
    out += ',';
    out += std::to_string(t.dim);
    out += ',';
    out += toString(t.dtype);
    out += ',';
    out += shortestNumberText(t.pooling.mean);
    out += ',';
    if (t.pooling.kind == PoolingKind::Uniform) out += shortestNumberText(t.pooling.spread);
    out += ',';
    out += csvField(accessToText(t.access));
    out += ',';
    std::array<char, 32> gb{};
    std::snprintf(gb.data(), gb.size(), "%.6g", static_cast<double>(t.weightBytes()) / 1e9);
    out += gb.data();
    out += '\n';
  }
  return out;
}

Status saveTablesCsv(const std::string& path, const std::vector<TableSpec>& tables) {
  return writeFileAtomic(path, tablesToCsv(tables));
}

}  // namespace shardscope::core
