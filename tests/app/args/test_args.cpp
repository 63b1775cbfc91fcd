// The argument parser shardscope-cli and shardscope-engine share: options in
// both spellings, flags, what remains, and the first problem a command
// reports once it has taken its options.
#include <QtTest>

#include <string>
#include <vector>

#include "shardscope/app/args.h"

using shardscope::app::Args;
using shardscope::app::parsePositive;

class TestArgs : public QObject {
  Q_OBJECT

 private slots:
  void optionsInBothSpellingsAndFlags() {
    Args a({"--model", "dcnv2", "--cluster=h100x64", "--json", "file.json"});
    QCOMPARE(a.option("--model").value(), std::string("dcnv2"));
    QCOMPARE(a.option("--cluster").value(), std::string("h100x64"));
    QVERIFY(!a.option("--calibration"));
    QVERIFY(a.flag("--json"));
    QVERIFY(!a.flag("--json"));  // taken once
    QCOMPARE(a.positional(), std::vector<std::string>{"file.json"});
    QVERIFY(!a.problem(Args::Positionals::Allowed));
    QCOMPARE(a.problem().value(), std::string("unexpected argument file.json"));
  }

  void aMissingValueComesFirst() {
    Args a({"--model", "--typo"});
    QVERIFY(!a.option("--model"));
    QVERIFY2(!a.error().empty(), "a value that starts with -- is not a value");
    QCOMPARE(a.problem().value(), a.error());
  }

  void anUnknownOptionBeforeAStrayArgument() {
    Args a({"stray", "--typo", "-x"});
    QCOMPARE(a.problem().value(), std::string("unknown option --typo"));
    QCOMPARE(a.problem(Args::Positionals::Allowed).value(), std::string("unknown option --typo"));
    Args dash({"-"});  // a lone dash is a positional argument (stdin)
    QVERIFY(!dash.problem(Args::Positionals::Allowed));
  }

  void anOptionOrFlagGivenTwiceIsAnError() {
    Args a({"--model", "dcnv2", "--model=criteo_kaggle"});
    QCOMPARE(a.option("--model").value(), std::string("dcnv2"));
    QCOMPARE(a.problem().value(), std::string("--model given twice"));
    Args b({"--json", "--json"});
    QVERIFY(b.flag("--json"));
    QCOMPARE(b.problem().value(), std::string("--json given twice"));
  }

  void positiveNumbers() {
    QCOMPARE(parsePositive("64", 100).value(), 64ull);
    QVERIFY(!parsePositive("0", 100));
    QVERIFY(!parsePositive("101", 100));
    QVERIFY(!parsePositive("-1", 100));
    QVERIFY(!parsePositive("1e3", 10000));
    QVERIFY(!parsePositive("99999999999999999999", ~0ull));
  }
};

QTEST_APPLESS_MAIN(TestArgs)
#include "test_args.moc"
