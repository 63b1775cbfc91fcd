// What the timeline's details panel says about a span, a block of merged
// spans and a collective call: placeholders of the store (stream -1 of the
// step row, step -1, sequence -1, correlation 0, no name, no bytes) are left
// out, times read as durations since the run's start, sizes in binary units.
#include <QtTest>

#include <string>
#include <unordered_map>

#include "shardscope/profiler/analysis/timeline_details.h"

using namespace shardscope;
namespace st = core::store;
using profiler::Details;

namespace {

constexpr std::int64_t kRunStart = 1'700'000'000'000'000'000;  // epoch-scale nanoseconds

const st::StringTable& strings() {
  static const st::StringTable table(
      std::unordered_map<std::int64_t, std::string>{{1, "emb_fwd"}, {2, "table_3"}, {3, "step"}, {4, "a2a_pooled"}});
  return table;
}

bool hasLabel(const Details& d, std::string_view label) {
  for (const auto& f : d.fields)
    if (f.label == label) return true;
  return false;
}

}  // namespace

class TestTimelineDetails : public QObject {
  Q_OBJECT
 private slots:
  void aSpanShowsEveryFieldThatHasAValue() {
    profiler::TimelineItem item{kRunStart + 4'560'000,
                                kRunStart + 4'572'345,
                                profiler::SpanClass::EmbeddingForward,
                                st::StringId{1},
                                st::StringId{2},
                                3,
                                1536,
                                77};
    const Details d = profiler::spanDetails(item, 2, 0, kRunStart, strings());
    QCOMPARE(d.title, std::string("table_3"));
    QCOMPARE(d.value("class"), std::string("embedding forward"));
    QCOMPARE(d.value("kind"), std::string("emb_fwd"));
    QCOMPARE(d.value("rank"), std::string("2"));
    QCOMPARE(d.value("stream"), std::string("0"));
    QCOMPARE(d.value("start"), std::string("4.56 ms"));
    QCOMPARE(d.value("duration"), std::string("12.3 µs"));
    QCOMPARE(d.value("step"), std::string("3"));
    QCOMPARE(d.value("size"), std::string("1.5 KiB"));
    QCOMPARE(d.value("CUPTI correlation"), std::string("77"));
  }

  void aSpanLeavesOutTheStoresPlaceholders() {
    // A step-row span outside a step, without bytes or a CUPTI correlation.
    profiler::TimelineItem item{
        kRunStart, kRunStart + 1'200'000'000, profiler::SpanClass::Step, st::StringId{3}, st::StringId{3}, -1, 0, 0};
    const Details d = profiler::spanDetails(item, 0, profiler::kStepRowStream, kRunStart, strings());
    QCOMPARE(d.title, std::string("step"));
    for (const char* label : {"stream", "step", "size", "CUPTI correlation", "kind"})
      QVERIFY2(!hasLabel(d, label), label);
    QCOMPARE(d.value("start"), std::string("0 s"));
    QCOMPARE(d.value("duration"), std::string("1.2 s"));
    for (const auto& f : d.fields) {
      QVERIFY2(f.value.find("-1") == std::string::npos, f.label.c_str());
      QVERIFY2(!f.value.empty(), f.label.c_str());
    }
  }

  void aSpanWithoutANameIsTitledByItsKindOrClass() {
    profiler::TimelineItem named_by_kind{kRunStart, kRunStart + 10, profiler::SpanClass::AllToAll, st::StringId{4},
                                         st::kNoString};
    QCOMPARE(profiler::spanDetails(named_by_kind, 0, 1, kRunStart, strings()).title, std::string("a2a_pooled"));
    QVERIFY(!hasLabel(profiler::spanDetails(named_by_kind, 0, 1, kRunStart, strings()), "kind"));
    profiler::TimelineItem nameless{kRunStart, kRunStart + 10, profiler::SpanClass::Memcpy, st::kNoString,
                                    st::kNoString};
    const Details d = profiler::spanDetails(nameless, 0, 1, kRunStart, strings());
    QCOMPARE(d.title, std::string("memcpy"));
    QVERIFY(!hasLabel(d, "kind"));
  }

  void aBlockSaysHowManySpansAndWhenInTheRun() {
    profiler::DensityBlock block{
        10, 12, kRunStart + 2'000'000, kRunStart + 2'500'000, 42, 350'000, profiler::SpanClass::EmbeddingBackward};
    const Details d = profiler::blockDetails(block, 1, profiler::kStepRowStream, kRunStart);
    QCOMPARE(d.title, std::string("42 spans merged"));
    QVERIFY(!hasLabel(d, "stream"));
    QCOMPARE(d.value("from"), std::string("2 ms"));
    QCOMPARE(d.value("to"), std::string("2.5 ms"));
    QCOMPARE(d.value("busy"), std::string("350 µs"));
    QCOMPARE(d.value("mostly"), std::string("embedding backward"));
  }

  void aCallNamesItsGroupSizeAndLastRank() {
    profiler::CollectiveCall call;
    call.op = "all_to_all";
    call.process_group = "sharding";
    call.step = 3;
    call.seq = 11;
    call.bytes = 1 << 20;
    call.arrivals = {{0, 0, 10, 66'000}, {1, 0, 10, 0}};
    call.last_rank = 1;
    call.last_by_ns = 66'000;
    const Details d = profiler::callDetails(call);
    QCOMPARE(d.title, std::string("all_to_all in sharding"));
    QCOMPARE(d.value("step"), std::string("3"));
    QCOMPARE(d.value("call in its group"), std::string("#11"));
    QCOMPARE(d.value("size"), std::string("1.0 MiB"));
    QCOMPARE(d.value("ranks"), std::string("2"));
    QCOMPARE(d.value("last in"), std::string("rank 1"));
    QCOMPARE(d.value("after the others' median"), std::string("66 µs"));
  }

  void aCallLeavesOutWhatTheTraceDidNotRecord() {
    profiler::CollectiveCall call;
    call.op = "all_reduce";
    call.arrivals = {{0, 0, 10, 0}};
    call.last_rank = 0;
    const Details d = profiler::callDetails(call);
    QCOMPARE(d.title, std::string("all_reduce"));
    for (const char* label : {"step", "call in its group", "size", "last in", "after the others' median"})
      QVERIFY2(!hasLabel(d, label), label);
    QCOMPARE(d.value("ranks"), std::string("1"));
  }
};

QTEST_APPLESS_MAIN(TestTimelineDetails)
#include "test_timeline_details.moc"
