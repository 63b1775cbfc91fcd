// Writing runs: status life cycle, batching, interning, validation, and that
// every kind of row reads back as written.
#include <QtTest>

#include "store_test_support.h"

using namespace storetest;

class TestRunWriter : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  int counter_ = 0;
  std::filesystem::path freshPath() { return numberedPath(dir_, "w", ++counter_); }

  static st::TraceStore open(const std::filesystem::path& path) {
    auto store = st::openStore(path, st::OpenMode::ReadOnly);
    if (!store) {
      qFatal("%s", store.error().message.c_str());
    }
    return std::move(*store);
  }

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void beginCreatesTheStoreAndARunningRun() {
    const auto path = freshPath();
    st::RunHeader header{st::RunKind::ImportKineto, "first", "{\"m\":1}", "{\"c\":2}", "{\"p\":3}", ""};
    auto writer = st::RunWriter::begin(path, header);
    QVERIFY(writer.ok());
    auto run = open(path).run(writer->run());
    QVERIFY(run.ok());
    QCOMPARE(run->status, st::RunStatus::Running);
    QVERIFY(!run->isComplete());
    QCOMPARE(run->kind, st::RunKind::ImportKineto);
    QCOMPARE(run->kind_text, std::string("import-kineto"));
    QCOMPARE(run->label, std::string("first"));
    QCOMPARE(run->model_json, std::string("{\"m\":1}"));
    QCOMPARE(run->cluster_json, std::string("{\"c\":2}"));
    QCOMPARE(run->plan_json, std::string("{\"p\":3}"));
    QVERIFY(!run->created_at.empty());
    QVERIFY(run->finished_at.empty());
    QVERIFY(writer->finish().ok());
  }

  void finishMarksTheRunComplete() {
    const auto path = freshPath();
    const auto sample = writeSampleRun(path, 2, 10);
    auto run = open(path).run(sample.run);
    QCOMPARE(run->status, st::RunStatus::Complete);
    QVERIFY(run->isComplete());
    QVERIFY(!run->finished_at.empty());
  }

  void failMarksTheRunFailedWithTheReasonAndKeepsItsRows() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto name = *writer->intern("x");
    QVERIFY(writer->addSpan(span(0, 0, name, 10, 20)).ok());
    QVERIFY(writer->fail("engine crashed on rank 3").ok());
    auto store = open(path);
    auto run = store.run(writer->run());
    QCOMPARE(run->status, st::RunStatus::Failed);
    QCOMPARE(run->error, std::string("engine crashed on rank 3"));
    QCOMPARE(*store.spanCount(writer->run()), std::int64_t{1});
  }

  void configJsonReadsBack() {
    const auto path = freshPath();
    st::RunHeader header;
    header.config_json = R"({"schema":"shardscope.engine-run/1","steps":3})";
    auto writer = st::RunWriter::begin(path, header);
    QVERIFY(writer.ok());
    QVERIFY(writer->finish().ok());
    QCOMPARE(open(path).run(writer->run())->config_json, header.config_json);
  }

  void staleRuningRunCanBeMarkedFailedAndItsWriterThenCannotFinishIt() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto name = *writer->intern("x");
    QVERIFY(writer->addSpan(span(0, 0, name, 10, 20)).ok());
    QVERIFY(writer->commit().ok());
    {
      auto store = st::openStore(path, st::OpenMode::ReadWrite);
      QVERIFY(store.ok());
      auto status = store->failStaleRun(writer->run(), "launcher killed (SIGINT)");
      QVERIFY2(status.ok(), status.ok() ? "" : status.error().message.c_str());
      QVERIFY(*status == st::RunStatus::Failed);
      auto run = store->run(writer->run());
      QCOMPARE(run->error, std::string("launcher killed (SIGINT)"));
      QCOMPARE(*store->spanCount(writer->run()), std::int64_t{1});
    }
    auto finished = writer->finish();
    QVERIFY(!finished.ok());
    QVERIFY2(finished.error().message.find("already marked") != std::string::npos, finished.error().message.c_str());
    QCOMPARE(open(path).run(writer->run())->status, st::RunStatus::Failed);
  }

  void failStaleRunLeavesACompleteRunAloneAndRejectsUnknownRuns() {
    const auto path = freshPath();
    const auto sample = writeSampleRun(path, 1, 3);
    auto store = st::openStore(path, st::OpenMode::ReadWrite);
    QVERIFY(store.ok());
    auto status = store->failStaleRun(sample.run, "late");
    QVERIFY(status.ok());
    QVERIFY(*status == st::RunStatus::Complete);
    QVERIFY(store->run(sample.run)->error.empty());
    QVERIFY(!store->failStaleRun(st::RunId{999}, "x").ok());
  }

  void droppedWriterMarksTheRunFailedAsAbandoned() {
    const auto path = freshPath();
    st::RunId id{};
    {
      auto writer = st::RunWriter::begin(path, {});
      id = writer->run();
      const auto name = *writer->intern("x");
      QVERIFY(writer->addSpan(span(0, 0, name, 10, 20)).ok());
    }
    auto store = open(path);
    auto run = store.run(id);
    QCOMPARE(run->status, st::RunStatus::Failed);
    QVERIFY(contains(run->error, "abandoned"));
    QCOMPARE(*store.spanCount(id), std::int64_t{1});
  }

  void finishedWriterRefusesMoreRows() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    QVERIFY(writer->finish().ok());
    QVERIFY(!writer->addSpan({}).ok());
    QVERIFY(!writer->finish().ok());
    QVERIFY(!writer->fail("late").ok());
    QCOMPARE(open(path).run(writer->run())->status, st::RunStatus::Complete);
  }

  void spansReadBackWithEveryField() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto kind = *writer->intern("nccl");
    const auto name = *writer->intern("all_to_all_fwd");
    const auto table = *writer->intern("t_user_id");
    const st::Span a{3, 7, kind, name, 1'000, 5'000, 12, 99, 1 << 20, table};
    const st::Span b{3, 8, kind, name, 2'000, 2'500, -1, 0, 0, st::kNoString};
    QVERIFY(writer->addSpan(a).ok());
    QVERIFY(writer->addSpan(b).ok());
    QVERIFY(writer->finish().ok());
    auto spans = open(path).spansInWindow(writer->run(), std::vector<int>{3}, 0, 10'000);
    QVERIFY(spans.ok());
    QCOMPARE(spans->size(), std::size_t{2});
    QCOMPARE(spans->at(0), a);
    QCOMPARE(spans->at(1), b);
  }

  void spansWithTheSameStartOnTheSameStreamAreAllKept() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto n = *writer->intern("n");
    for (int i = 0; i < 3; ++i) {
      QVERIFY(writer->addSpan(span(0, 0, n, 500, 500 + i)).ok());
    }
    QVERIFY(writer->finish().ok());
    QCOMPARE(open(path).spansInWindow(writer->run(), {}, 0, 1000)->size(), std::size_t{3});
  }

  void internReturnsOneIdPerTextAcrossWriters() {
    const auto path = freshPath();
    auto first = st::RunWriter::begin(path, {});
    const auto a = *first->intern("embedding_lookup");
    QCOMPARE(*first->intern("embedding_lookup"), a);
    QVERIFY(*first->intern("other") != a);
    QVERIFY(first->finish().ok());
    auto second = st::RunWriter::begin(path, {});
    QCOMPARE(*second->intern("embedding_lookup"), a);
    QVERIFY(second->finish().ok());
    auto strings = open(path).strings();
    QCOMPARE(strings->at(a), std::string_view("embedding_lookup"));
    QCOMPARE(strings->at(st::kNoString), std::string_view());
  }

  void spanEndingBeforeItStartsIsRefusedAndTheWriterStaysUsable() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto n = *writer->intern("n");
    const auto bad = writer->addSpan(span(0, 0, n, 100, 50));
    QVERIFY(!bad.ok());
    QVERIFY(contains(bad.error().message, "before it starts"));
    QVERIFY(writer->addSpan(span(0, 0, n, 100, 150)).ok());
    QVERIFY(writer->finish().ok());
    QCOMPARE(*open(path).spanCount(writer->run()), std::int64_t{1});
  }

  void stringIdNotInternedByTheWriterIsRefused() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto n = *writer->intern("n");
    st::Span bogusSpan = span(0, 0, n, 1, 2);
    bogusSpan.name = st::StringId{static_cast<std::int64_t>(n) + 100};
    const auto refused = writer->addSpan(bogusSpan);
    QVERIFY(!refused.ok());
    QVERIFY2(contains(refused.error().message, "span name"), refused.error().message.c_str());
    st::Collective bogusCall{0, 0, n, n, st::kNoString, 0, 1, 1, 2};
    bogusCall.process_group = bogusSpan.name;
    const auto refusedCall = writer->addCollective(bogusCall);
    QVERIFY(!refusedCall.ok());
    QVERIFY2(contains(refusedCall.error().message, "collective process group"), refusedCall.error().message.c_str());
    QVERIFY(writer->finish().ok());
    QVERIFY(open(path).collectives(writer->run())->empty());
  }

  void rowsAreCommittedEveryBatchAndVisibleBeforeFinish() {
    const auto path = freshPath();
    st::WriterOptions options;
    options.rows_per_commit = 100;
    auto writer = st::RunWriter::begin(path, {}, options);
    const auto n = *writer->intern("n");
    for (int i = 0; i < 250; ++i) {
      QVERIFY(writer->addSpan(span(i % 4, 0, n, i * 10, i * 10 + 5)).ok());
    }
    QCOMPARE(writer->committedSpans(), std::int64_t{200});
    auto store = open(path);
    QCOMPARE(*store.spanCount(writer->run()), std::int64_t{200});
    QCOMPARE(store.run(writer->run())->status, st::RunStatus::Running);
    QVERIFY(writer->commit().ok());
    QCOMPARE(*store.spanCount(writer->run()), std::int64_t{250});
    QCOMPARE(store.spansInWindow(writer->run(), {}, 0, 10'000)->size(), std::size_t{250});
    QVERIFY(writer->finish().ok());
  }

  void ranksReadBackAndTheLaterRowWins() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    QVERIFY(writer->addRank({1, "node-a", 1, 0, 1}).ok());
    QVERIFY(writer->addRank({0, "node-a", 0, 0, 0}).ok());
    QVERIFY(writer->addRank({1, "node-b", 3, 1, 1}).ok());
    QVERIFY(writer->finish().ok());
    const std::vector<st::RankInfo> expected{{0, "node-a", 0, 0, 0}, {1, "node-b", 3, 1, 1}};
    QCOMPARE(*open(path).ranks(writer->run()), expected);
  }

  void stepSummariesTableStatsAndCollectivesReadBack() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto table = *writer->intern("t_item");
    const auto op = *writer->intern("all_to_all");
    const auto group = *writer->intern("0,1,2,3");
    const auto algo = *writer->intern("ring");
    const st::StepSummary s0{0, 1, 10, 20, 30, 40, 5, 105};
    const st::StepSummary s1{1, 0, 11, 21, 31, 41, 6, 110};
    QVERIFY(writer->addStepSummary(s1).ok());
    QVERIFY(writer->addStepSummary(s0).ok());
    const st::TableStat t{2, table, 1000, 700, 12345};
    QVERIFY(writer->addTableStat(t).ok());
    const auto pg = *writer->intern("pg-embeddings");
    const st::Collective c{2, 0, op, group, algo, 4096, 4, 100, 900, pg, 17};
    const st::Collective d{2, 1, op, group, st::kNoString, 8192, 4, 1100, 1900};  // no process group, seq -1
    st::Collective bad = c;
    bad.seq = -2;
    const auto refused = writer->addCollective(bad);
    QVERIFY(!refused.ok());
    QVERIFY2(contains(refused.error().message, "sequence number -2"), refused.error().message.c_str());
    QVERIFY(writer->addCollective(d).ok());
    QVERIFY(writer->addCollective(c).ok());
    QVERIFY(writer->finish().ok());
    auto store = open(path);
    QCOMPARE(*store.stepSummaries(writer->run()), (std::vector<st::StepSummary>{s0, s1}));
    QCOMPARE(*store.tableStats(writer->run()), std::vector<st::TableStat>{t});
    QCOMPARE(*store.collectives(writer->run()), (std::vector<st::Collective>{c, d}));
  }

  void runsInOneStoreStaySeparate() {
    const auto path = freshPath();
    const auto first = writeSampleRun(path, 2, 50, true, "a");
    const auto second = writeSampleRun(path, 3, 20, true, "b");
    auto store = open(path);
    QCOMPARE(store.listRuns()->size(), std::size_t{2});
    QCOMPARE(*store.spanCount(first.run), std::int64_t{100});
    QCOMPARE(*store.spanCount(second.run), std::int64_t{60});
    QCOMPARE(store.spansInWindow(second.run, {}, 0, 1'000'000)->size(), std::size_t{60});
  }

  void extentsTrackCountTimeRangeAndLongestSpan() {
    const auto path = freshPath();
    auto writer = st::RunWriter::begin(path, {});
    const auto n = *writer->intern("n");
    QVERIFY(writer->addSpan(span(5, 0, n, 100, 200)).ok());
    QVERIFY(writer->addSpan(span(5, 1, n, 50, 1050)).ok());
    QVERIFY(writer->finish().ok());
    auto extents = open(path).spanExtents(writer->run());
    QCOMPARE(extents->size(), std::size_t{1});
    const auto& e = extents->front();
    QCOMPARE(e.rank, 5);
    QCOMPARE(e.span_count, std::int64_t{2});
    QCOMPARE(e.min_start_ns, std::int64_t{50});
    QCOMPARE(e.max_end_ns, std::int64_t{1050});
    QCOMPARE(e.max_duration_ns, std::int64_t{1000});
  }
};

QTEST_GUILESS_MAIN(TestRunWriter)
#include "test_run_writer.moc"
