// The one text table of the text reports: column widths from the widest
// cell (or a fixed minimum), alignment per column, the separator, the
// indent, and no trailing spaces.
#include <QtTest>
#include <string>

#include "shardscope/report/text_table.h"

using shardscope::report::TextTable;

class TestTextTable : public QObject {
  Q_OBJECT
 private slots:
  void firstColumnLeftTheOthersRight() {
    TextTable t({"rank", "ms", ""});
    t.add({"0", "1.500", ""});
    t.add({"12", "10.250", "<- straggler"});
    QCOMPARE(t.text(), std::string("  rank      ms\n"
                                   "  0      1.500\n"
                                   "  12    10.250  <- straggler\n"));
    QCOMPARE(t.text(""), std::string("rank      ms\n"
                                     "0      1.500\n"
                                     "12    10.250  <- straggler\n"));
  }

  void columnsAlignedAsAsked() {
    TextTable t({"GPU", "name", "SMs", "PCI"});
    t.align(0, TextTable::Align::Right).align(1, TextTable::Align::Left).leftFrom(3);
    t.add({"10", "H100", "132", "0000:1b:00.0"});
    QCOMPARE(t.text(""), std::string("GPU  name  SMs  PCI\n"
                                     " 10  H100  132  0000:1b:00.0\n"));
  }

  void aFixedLayoutKeepsItsWidthsAndGrowsPastThem() {
    TextTable t({"run", "table", "err"});
    t.separator(" ").minWidths({5, 8, 6}).align(0, TextTable::Align::Right).align(1, TextTable::Align::Left);
    t.add({"1", "cat_0", "-1.0%"});
    QCOMPARE(t.text(), std::string("    run table       err\n"
                                   "      1 cat_0     -1.0%\n"));
    t.add({"2", "a_long_table_name", "+2.5%"});
    QCOMPARE(t.text(), std::string("    run table                err\n"
                                   "      1 cat_0              -1.0%\n"
                                   "      2 a_long_table_name  +2.5%\n"));
  }

  void oneSeparatorCanDiffer() {
    TextTable t({"M", "gap", "fits"});
    t.separator(" ").separatorBefore(2, "  ").minWidths({3, 5}).align(2, TextTable::Align::Left);
    t.add({"8", "1.5%", "yes"});
    QCOMPARE(t.text(""), std::string("M     gap  fits\n"
                                     "8    1.5%  yes\n"));
  }

  void widthsCountColumnsNotBytes() {
    QCOMPARE(shardscope::report::textWidth("cafe"), std::size_t{4});
    QCOMPARE(shardscope::report::textWidth("caf\xc3\xa9"), std::size_t{4});               // é: two bytes, one column
    QCOMPARE(shardscope::report::textWidth("cafe\xcc\x81"), std::size_t{4});              // e + combining acute
    QCOMPARE(shardscope::report::textWidth("\xe7\x94\xa8\xe6\x88\xb7"), std::size_t{4});  // 用户: two wide
    QCOMPARE(shardscope::report::textWidth("a\xff\xc3"), std::size_t{3});                 // not UTF-8: a column a byte
    TextTable t({"table", "rows"});
    t.add({"caf\xc3\xa9_table", "10"});
    t.add({"\xe7\x94\xa8\xe6\x88\xb7", "2000"});
    QCOMPARE(t.text(""), std::string("table       rows\n"
                                     "caf\xc3\xa9_table    10\n"
                                     "\xe7\x94\xa8\xe6\x88\xb7        2000\n"));
  }

  void freeLinesStayWhereAddedAndWidenNoColumn() {
    TextTable t({"rank", "ms"});
    t.addLine("after the header");
    t.add({"0", "1.5"});
    t.addLine("... 38 more ranks ...");
    t.add({"39", "2.25"});
    t.addLine("end");
    QCOMPARE(t.text(""), std::string("rank    ms\n"
                                     "after the header\n"
                                     "0      1.5\n"
                                     "... 38 more ranks ...\n"
                                     "39    2.25\n"
                                     "end\n"));
  }
};

QTEST_APPLESS_MAIN(TestTextTable)
#include "test_text_table.moc"
