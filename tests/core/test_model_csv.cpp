// Tables as CSV: what loads, what is rejected and how each rejection names
// the file, the line and the column; and that writing then reading gives
// the same tables back.
#include <QTemporaryDir>
#include <QtTest>

#include "shardscope/core/model_csv.h"
#include "shardscope/core/presets.h"

using namespace shardscope::core;

namespace {

TablesCsv load(std::string_view text) {
  Result<TablesCsv> r = tablesFromCsv(text, "tables.csv");
  if (!r) qFatal("unexpected CSV error: %s", r.error().message.c_str());
  return std::move(r).value();
}

QString errorOf(std::string_view text) {
  Result<TablesCsv> r = tablesFromCsv(text, "tables.csv");
  if (r) return {};
  return QString::fromStdString(r.error().message);
}

#define EXPECT_ERROR(text, expected)                                              \
  do {                                                                            \
    const QString e_ = errorOf(text);                                             \
    QVERIFY2(!e_.isEmpty(), "the CSV was accepted");                              \
    QVERIFY2(e_.contains(QString::fromUtf8(expected)), qPrintable("got: " + e_)); \
  } while (false)

TableSpec table(std::string name, std::uint64_t rows, std::uint32_t dim) {
  TableSpec t;
  t.name = std::move(name);
  t.rows = rows;
  t.dim = dim;
  return t;
}

}  // namespace

class TestModelCsv : public QObject {
  Q_OBJECT
 private slots:
  // ---- reading

  void readsEveryColumn() {
    const TablesCsv r = load(
        "name,rows,dim,dtype,pooling,pooling_spread,access\n"
        "user,40000000,128,fp16,3,,zipf:1.05\n"
        "item,2000000,64,bf16,10,4,hot:0.01:0.9\n"
        "page,100000,32,int8,2.5,,histogram:6;2;1;1\n"
        "country,250,16,fp32,1,,uniform\n");
    QCOMPARE(r.tables.size(), 4u);
    QVERIFY(r.warnings.empty());
    const TableSpec& user = r.tables[0];
    QCOMPARE(user.name, std::string("user"));
    QCOMPARE(user.rows, 40000000u);
    QCOMPARE(user.dim, 128u);
    QVERIFY(user.dtype == DType::FP16);
    QVERIFY(user.pooling.kind == PoolingKind::Fixed);
    QCOMPARE(user.pooling.mean, 3.0);
    QVERIFY(user.access.kind == AccessKind::Zipf);
    QCOMPARE(user.access.alpha, 1.05);
    const TableSpec& item = r.tables[1];
    QVERIFY(item.dtype == DType::BF16);
    QVERIFY(item.pooling.kind == PoolingKind::Uniform);
    QCOMPARE(item.pooling.mean, 10.0);
    QCOMPARE(item.pooling.spread, 4.0);
    QVERIFY(item.access.kind == AccessKind::HotSet);
    QCOMPARE(item.access.hot_fraction, 0.01);
    QCOMPARE(item.access.hot_probability, 0.9);
    const TableSpec& page = r.tables[2];
    QVERIFY(page.dtype == DType::INT8);
    QCOMPARE(page.pooling.mean, 2.5);
    QVERIFY(page.access.kind == AccessKind::Histogram);
    QCOMPARE(page.access.histogram, (std::vector<double>{0.6, 0.2, 0.1, 0.1}));  // normalised like JSON
    QVERIFY(r.tables[3].access.kind == AccessKind::Uniform);
  }

  void optionalColumnsDefaultLikeTheModelFormat() {
    const TablesCsv r = load("name,rows,dim\na,1000,64\n");
    QCOMPARE(r.tables.size(), 1u);
    QVERIFY(r.tables[0].dtype == DType::FP32);
    QVERIFY(r.tables[0].pooling == PoolingSpec{});
    QVERIFY(r.tables[0].access == AccessSpec{});
  }

  void emptyOptionalCellsAndMissingTrailingCellsTakeDefaults() {
    const TablesCsv r = load("name,rows,dim,dtype,pooling,access\na,1000,64,,,\nb,2000,32\n");
    QCOMPARE(r.tables.size(), 2u);
    QVERIFY(r.tables[1].dtype == DType::FP32);
    QCOMPARE(r.tables[1].pooling.mean, 1.0);
  }

  void headerNamesAreCaseInsensitiveInAnyOrder() {
    const TablesCsv r = load(" DIM , Name,ROWS,DType\n64,a,10,FP16\n");
    QCOMPARE(r.tables.size(), 1u);
    QCOMPARE(r.tables[0].name, std::string("a"));
    QCOMPARE(r.tables[0].dim, 64u);
    QCOMPARE(r.tables[0].rows, 10u);
    QVERIFY(r.tables[0].dtype == DType::FP16);
  }

  void acceptsBomCrlfBlankLinesAndComments() {
    const TablesCsv r = load(
        "\xEF\xBB\xBF# exported by hand\r\n"
        "name,rows,dim\r\n"
        "\r\n"
        "a,10,4\r\n"
        "   \r\n"
        ",,\r\n"
        "# a comment with \"quotes, and commas\r\n"
        "b,20,8");  // no final line end
    QCOMPARE(r.tables.size(), 2u);
    QCOMPARE(r.tables[0].name, std::string("a"));
    QCOMPARE(r.tables[1].name, std::string("b"));
    QCOMPARE(r.tables[1].dim, 8u);
  }

  void quotedFieldsHoldCommasQuotesAndLineBreaks() {
    const TablesCsv r = load(
        "name,rows,dim\n"
        "\"ads, clicks\",10,4\n"
        "\"the \"\"big\"\" one\",20,8\n"
        "\"two\nlines\",30,12\n"
        "  \" padded \" ,40,16\n");
    QCOMPARE(r.tables.size(), 4u);
    QCOMPARE(r.tables[0].name, std::string("ads, clicks"));
    QCOMPARE(r.tables[1].name, std::string("the \"big\" one"));
    QCOMPARE(r.tables[2].name, std::string("two\nlines"));
    QCOMPARE(r.tables[3].name, std::string(" padded "));  // inside quotes blanks are kept
  }

  void countsMayBeGroupedOrInExponentForm() {
    const TablesCsv r = load("name,rows,dim\na,\"40,000,000\",128\nb,4e7,128\nc,40_000_000,128\nd,+7,4\n");
    QCOMPARE(r.tables.size(), 4u);
    for (int i = 0; i < 3; ++i) QCOMPARE(r.tables[static_cast<std::size_t>(i)].rows, 40000000u);
    QCOMPARE(r.tables[3].rows, 7u);
  }

  void rowsBeyond32BitsLoad() {
    const TablesCsv r = load("name,rows,dim\nhuge,12000000000,4\n");
    QCOMPARE(r.tables[0].rows, 12000000000ull);
  }

  void accessAcceptsTheDesktopSpellings() {
    const TablesCsv r = load(
        "name,rows,dim,access\n"
        "a,10,4,zipf 1.05\n"
        "b,10,4,\"hot 10% \xE2\x86\x92 90%\"\n"
        "c,10,4,HOT_SET:0.1:0.9\n"
        "d,10,4,hot 10% -> 90%\n"
        "e,10,4,Uniform\n");
    QCOMPARE(r.tables[0].access.alpha, 1.05);
    for (std::size_t i = 1; i < 4; ++i) {
      QVERIFY(r.tables[i].access.kind == AccessKind::HotSet);
      QCOMPARE(r.tables[i].access.hot_fraction, 0.1);
      QCOMPARE(r.tables[i].access.hot_probability, 0.9);
    }
    QVERIFY(r.tables[4].access.kind == AccessKind::Uniform);
  }

  void unknownColumnsAreIgnoredWithAWarning() {
    const TablesCsv r = load("name,owner,rows,dim,\na,team x,10,4,\n");
    QCOMPARE(r.tables.size(), 1u);
    QCOMPARE(r.warnings.size(), 2u);
    QCOMPARE(QString::fromStdString(r.warnings[0]),
             QString("tables.csv:1: column \"owner\" is not a table field; ignored"));
    QCOMPARE(QString::fromStdString(r.warnings[1]), QString("tables.csv:1: field 5 has no column name; ignored"));
  }

  void sizeColumnIsReadPastSilently() {
    const TablesCsv r = load("name,rows,dim,size_gb\na,10,4,999\n");
    QCOMPARE(r.tables.size(), 1u);
    QVERIFY(r.warnings.empty());
    QCOMPARE(r.tables[0].weightBytes(), 160u);  // computed, never taken from the file
  }

  // ---- rejecting: each message names file, line and column

  void rejectsDimNotMultipleOfFour() {
    EXPECT_ERROR("name,rows,dim\na,10,8\n\nb,10,6\n",
                 "tables.csv:4: column \"dim\": expected a positive multiple of 4, got 6");
  }

  void rejectsDimOutOfRange() {
    EXPECT_ERROR("name,rows,dim\na,10,0\n", "tables.csv:2: column \"dim\": expected an integer in [1, 65536], got 0");
    EXPECT_ERROR("name,rows,dim\na,10,70000\n", "tables.csv:2: column \"dim\": expected an integer in [1, 65536]");
  }

  void rejectsRowsThatAreNotAPositiveWholeNumber() {
    EXPECT_ERROR("name,rows,dim\na,0,4\n",
                 "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656], got 0");
    EXPECT_ERROR("name,rows,dim\na,-3,4\n",
                 "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656], got -3");
    EXPECT_ERROR(
        "name,rows,dim\na,10.5,4\n",
        "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656], got 10.5 (not a whole number)");
    EXPECT_ERROR("name,rows,dim\na,lots,4\n",
                 "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656], got string \"lots\"");
    EXPECT_ERROR("name,rows,dim\na,\"1,2345\",4\n",
                 "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656], got string");
    EXPECT_ERROR("name,rows,dim\na,99999999999999999999999,4\n",
                 "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656]");
    EXPECT_ERROR("name,rows,dim\na,inf,4\n",
                 "tables.csv:2: column \"rows\": expected an integer in [1, 281474976710656], got string \"inf\"");
  }

  void rejectsEmptyRequiredCells() {
    EXPECT_ERROR("name,rows,dim\na,,4\n",
                 "tables.csv:2: column \"rows\": missing value (expected an integer in [1, 281474976710656])");
    EXPECT_ERROR("name,rows,dim\n,10,4\n", "tables.csv:2: column \"name\": missing value");
    EXPECT_ERROR("name,rows,dim\na,10\n", "tables.csv:2: column \"dim\": missing value");
  }

  void rejectsUnknownDtype() {
    EXPECT_ERROR(
        "name,rows,dim,dtype\na,10,4,fp64\n",
        "tables.csv:2: column \"dtype\": expected one of \"fp32\", \"fp16\", \"bf16\", \"int8\", got string \"fp64\"");
  }

  void rejectsBadPooling() {
    EXPECT_ERROR("name,rows,dim,pooling\na,10,4,0\n",
                 "tables.csv:2: column \"pooling\": expected a number in (0, 65536], got 0");
    EXPECT_ERROR("name,rows,dim,pooling\na,10,4,many\n",
                 "tables.csv:2: column \"pooling\": expected a number in (0, 65536]");
    EXPECT_ERROR("name,rows,dim,pooling,pooling_spread\na,10,4,2,3\n",
                 "tables.csv:2: column \"pooling_spread\": expected spread <= mean");
    EXPECT_ERROR("name,rows,dim,pooling,pooling_spread\na,10,4,,3\n",
                 "tables.csv:2: column \"pooling\": missing value");
    EXPECT_ERROR("name,rows,dim,pooling,pooling_spread\na,10,4,3,-1\n",
                 "tables.csv:2: column \"pooling_spread\": expected a number >= 0, got -1");
  }

  void rejectsBadAccessSyntax() {
    EXPECT_ERROR("name,rows,dim,access\na,10,4,pareto:2\n",
                 "tables.csv:2: column \"access\": expected \"uniform\", \"zipf:<alpha>\", "
                 "\"hot:<fraction>:<probability>\" or \"histogram:<share>;<share>;...\", got \"pareto:2\"");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,zipf\n", "tables.csv:2: column \"access\": zipf takes one number");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,zipf:x\n", "tables.csv:2: column \"access\": zipf takes one number");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,hot:0.1\n", "tables.csv:2: column \"access\": hot takes two fractions");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,uniform:3\n",
                 "tables.csv:2: column \"access\": uniform takes no parameters");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,histogram:1;x\n",
                 "tables.csv:2: column \"access\": histogram share 2 is not a number");
  }

  void rejectsAccessParametersOutOfRange() {
    EXPECT_ERROR("name,rows,dim,access\na,10,4,zipf:12\n",
                 "tables.csv:2: column \"access\": zipf alpha: expected a number in (0, 10], got 12");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,zipf:0\n", "tables.csv:2: column \"access\": zipf alpha: expected");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,hot:150%:90%\n",
                 "tables.csv:2: column \"access\": hot fraction: expected a number in (0, 1], got 1.5");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,hot:0.1:0\n",
                 "tables.csv:2: column \"access\": hot probability: expected a number in (0, 1], got 0");
    EXPECT_ERROR("name,rows,dim,access\na,10,4,histogram:0;0\n",
                 "tables.csv:2: column \"access\": histogram: expected shares that sum to more than 0");
  }

  void rejectsDuplicateNamesNamingTheFirstLine() {
    EXPECT_ERROR("name,rows,dim\na,10,4\nb,10,4\na,20,4\n",
                 "tables.csv:4: column \"name\": expected a unique table name, \"a\" is also on line 2");
  }

  void rejectsMissingRequiredColumns() {
    EXPECT_ERROR("name,rows,dtype\na,10,fp32\n",
                 "tables.csv:1: missing required column \"dim\" (the header must name at least name, rows and dim; "
                 "it has: name, rows, dtype)");
  }

  void rejectsAColumnNamedTwice() {
    EXPECT_ERROR("name,rows,dim,Rows\na,10,4,10\n", "tables.csv:1: column \"rows\" appears twice (fields 2 and 4)");
  }

  void rejectsMoreFieldsThanTheHeader() {
    EXPECT_ERROR("name,rows,dim\nads, clicks,10,4\n",
                 "tables.csv:2: 4 fields, but the header names 3 columns (quote a value that contains a comma)");
  }

  void emptyFieldsPastTheHeaderAreAllowed() {
    const TablesCsv r = load("name,rows,dim\na,10,4,,\nb,10,4,\n");
    QCOMPARE(r.tables.size(), 2u);
  }

  void rejectsAnUnclosedQuoteAtItsOpeningLine() {
    EXPECT_ERROR("name,rows,dim\na,10,4\n\"b,10,4\nc,10,4\n",
                 "tables.csv:3: column \"name\": a quoted field is not closed");
  }

  void rejectsTextAfterAClosingQuote() {
    EXPECT_ERROR("name,rows,dim\n\"a\"b,10,4\n",
                 "tables.csv:2: column \"name\": unexpected text after a closing quote");
  }

  void linesAfterAMultiLineFieldKeepTheirNumbers() {
    EXPECT_ERROR("name,rows,dim\n\"x\ny\",10,4\nb,10,6\n", "tables.csv:4: column \"dim\"");
  }

  void rejectsEmptyInputAndAHeaderWithoutTables() {
    EXPECT_ERROR("", "tables.csv: no header line");
    EXPECT_ERROR("\n\n# nothing\n", "tables.csv: no header line");
    EXPECT_ERROR("name,rows,dim\n", "tables.csv: no tables, expected at least one line after the header");
  }

  void reportsEveryProblemOfTheFileUpToTwenty() {
    std::string text = "name,rows,dim\n";
    for (int i = 0; i < 25; ++i) {
      text += 't';
      text += std::to_string(i);
      text += ",10,6\n";
    }
    text += "ok,10,4\na,0,5\n";
    const QString e = errorOf(text);
    QCOMPARE(e.count('\n'), 20);  // 20 problems and the "more" line
    QVERIFY2(e.startsWith("tables.csv:2: column \"dim\""), qPrintable(e));
    QVERIFY2(e.endsWith("... and 7 more problems"), qPrintable(e));
    // Both problems of one line are reported.
    const QString two = errorOf("name,rows,dim\na,0,5\n");
    QVERIFY2(two.contains("tables.csv:2: column \"rows\"") && two.contains("tables.csv:2: column \"dim\""),
             qPrintable(two));
  }

  // ---- files

  void missingFileIsNamed() {
    auto r = loadTablesCsv("/nonexistent/dir/tables.csv");
    QVERIFY(!r.ok());
    QVERIFY2(r.error().message.starts_with("/nonexistent/dir/tables.csv: cannot open"), r.error().message.c_str());
  }

  void emptyFileIsNamed() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string path = dir.filePath("empty.csv").toStdString();
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    auto r = loadTablesCsv(path);
    QVERIFY(!r.ok());
    QCOMPARE(QString::fromStdString(r.error().message),
             QString::fromStdString(path + ": the file is empty, "
                                           "expected a header line and one line per table"));
  }

  // ---- writing

  void writesAHeaderAndQuotesOnlyWhereNeeded() {
    TableSpec plain = table("plain", 40000000, 128);
    plain.access.kind = AccessKind::Zipf;
    plain.access.alpha = 1.05;
    TableSpec odd = table("ads, \"clicks\"", 10, 4);
    odd.dtype = DType::FP16;
    odd.pooling = {PoolingKind::Uniform, 20.0, 5.0};
    const std::string csv = tablesToCsv({plain, odd});
    QCOMPARE(QString::fromStdString(csv), QString("name,rows,dim,dtype,pooling,pooling_spread,access,size_gb\n"
                                                  "plain,40000000,128,fp32,1,,zipf:1.05,20.48\n"
                                                  "\"ads, \"\"clicks\"\"\",10,4,fp16,20,5,uniform,8e-08\n"));
  }

  void roundTripsEveryKindOfTable() {
    std::vector<TableSpec> tables;
    TableSpec a = table("user", 12000000000ull, 128);
    a.dtype = DType::BF16;
    a.pooling.mean = 2.7182818284590451;
    a.access.kind = AccessKind::Zipf;
    a.access.alpha = 1.0 / 3.0;
    tables.push_back(a);
    TableSpec b = table("# not a comment", 7, 4);
    b.pooling = {PoolingKind::Uniform, 10.0, 0.0};
    b.access.kind = AccessKind::HotSet;
    b.access.hot_fraction = 0.012345678901234567;
    b.access.hot_probability = 1.0;
    tables.push_back(b);
    TableSpec c = table(" two\nlines ", 100, 16);
    c.dtype = DType::INT8;
    c.access.kind = AccessKind::Histogram;
    c.access.histogram = {0.75, 0.25};
    tables.push_back(c);
    const TablesCsv back = load(tablesToCsv(tables));
    QCOMPARE(back.tables.size(), tables.size());
    for (std::size_t i = 0; i < tables.size(); ++i) QVERIFY2(back.tables[i] == tables[i], tables[i].name.c_str());
  }

  void roundTripsThePresetsThroughAFile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const char* name : {"dcnv2", "criteo_kaggle"}) {
      const ModelSpec model = modelPreset(name).value();
      const std::string path = dir.filePath(QString::fromLatin1(name) + ".csv").toStdString();
      const Status saved = saveTablesCsv(path, model.tables);
      QVERIFY2(saved.ok(), saved.ok() ? "" : saved.error().message.c_str());
      auto loaded = loadTablesCsv(path);
      QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
      QVERIFY(loaded->tables == model.tables);
    }
  }

  void saveToAMissingDirectoryFailsNamingThePath() {
    const Status saved = saveTablesCsv("/nonexistent/dir/out.csv", {table("a", 1, 4)});
    QVERIFY(!saved.ok());
    QVERIFY2(saved.error().message.starts_with("/nonexistent/dir/out.csv: cannot write"),
             saved.error().message.c_str());
  }

  // ---- single fields, as table editors use them

  void accessTextRoundTrips() {
    for (const char* text : {"uniform", "zipf:1.05", "hot:0.1:0.9", "histogram:0.5;0.25;0.25"}) {
      auto a = accessFromText(text);
      QVERIFY2(a.ok(), text);
      QCOMPARE(QString::fromStdString(accessToText(*a)), QString::fromLatin1(text));
    }
    QVERIFY(!accessFromText("").ok());
    QVERIFY(!accessFromText("   ").ok());
  }

  void checkTableAppliesTheModelRules() {
    QVERIFY(checkTable(table("a", 10, 4)).ok());
    const TableCheck bad_dim = checkTable(table("a", 10, 6));
    QCOMPARE(bad_dim.problems.size(), 1u);
    QCOMPARE(QString::fromStdString(bad_dim.problems[0].column), QString("dim"));
    QCOMPARE(QString::fromStdString(bad_dim.problems[0].message), QString("expected a positive multiple of 4, got 6"));
    TableSpec t = table("", 0, 4);
    t.access.kind = AccessKind::Zipf;  // alpha 0: out of range
    const TableCheck many = checkTable(t);
    QStringList columns;
    for (const auto& p : many.problems) columns << QString::fromStdString(p.column);
    QCOMPARE(columns, (QStringList{"name", "rows", "access"}));
  }

  void checkTableNormalisesHistograms() {
    TableSpec t = table("a", 10, 4);
    t.access.kind = AccessKind::Histogram;
    t.access.histogram = {3.0, 1.0};
    const TableCheck c = checkTable(t);
    QVERIFY(c.ok());
    QCOMPARE(c.table.access.histogram, (std::vector<double>{0.75, 0.25}));
  }
};

QTEST_MAIN(TestModelCsv)
#include "test_model_csv.moc"
