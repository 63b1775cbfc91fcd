// The engine's workload generator: seeded, slice-composable ids that follow
// each table's access and pooling distributions, and the id replay file.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "shardscope/planner/access_profile.h"
#include "shardscope/profiler/engine/workload.h"

using namespace shardscope;
using profiler::Batch;
using profiler::IdTrace;
using profiler::WorkloadGenerator;

namespace {

core::TableSpec table(std::string name, std::uint64_t rows, core::AccessSpec access = {},
                      core::PoolingSpec pooling = {}) {
  core::TableSpec t;
  t.name = std::move(name);
  t.rows = rows;
  t.dim = 16;
  t.access = std::move(access);
  t.pooling = pooling;
  return t;
}

core::AccessSpec zipf(double alpha) {
  core::AccessSpec a;
  a.kind = core::AccessKind::Zipf;
  a.alpha = alpha;
  return a;
}

core::AccessSpec hotSet(double fraction, double probability) {
  core::AccessSpec a;
  a.kind = core::AccessKind::HotSet;
  a.hot_fraction = fraction;
  a.hot_probability = probability;
  return a;
}

core::AccessSpec histogram(std::vector<double> shares) {
  core::AccessSpec a;
  a.kind = core::AccessKind::Histogram;
  a.histogram = std::move(shares);
  return a;
}

core::PoolingSpec fixedPooling(double mean) { return {core::PoolingKind::Fixed, mean, 0.0}; }
core::PoolingSpec uniformPooling(double mean, double spread) { return {core::PoolingKind::Uniform, mean, spread}; }

core::ModelSpec model(std::vector<core::TableSpec> tables) {
  core::ModelSpec m;
  m.name = "test";
  m.tables = std::move(tables);
  m.batch_size_per_gpu = 128;
  return m;
}

// One table of every access kind, with fractional and uniform pooling.
core::ModelSpec mixedModel() {
  return model({table("uniform", 1000, {}, fixedPooling(2.5)),
                table("zipf", 4'000'000'000ULL, zipf(1.05), uniformPooling(10, 4)),
                table("hot", 1001, hotSet(0.1, 0.9), fixedPooling(3)),
                table("hist", 1003, histogram({0.5, 0.2, 0.0, 0.2, 0.1}), uniformPooling(2.5, 1.5))});
}

// Ids of `samples` samples of one table (pooling 1, so one id per sample).
std::vector<std::uint64_t> draws(const core::TableSpec& t, std::uint32_t samples, std::uint64_t seed = 7) {
  WorkloadGenerator g(model({t}), seed);
  return g.batch(0, 0, samples).ids;
}

std::string readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QByteArray b = f.readAll();
  return b.toStdString();
}

void writeAll(const QString& path, const std::string& data) {
  std::ofstream f(path.toStdString(), std::ios::binary | std::ios::trunc);
  f.write(data.data(), static_cast<std::streamsize>(data.size()));
}

void putU64(std::string& data, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) data[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

}  // namespace

class TestWorkload : public QObject {
  Q_OBJECT
 private slots:
  void sameSeedGivesIdenticalBatches() {
    const auto m = mixedModel();
    const WorkloadGenerator a(m, 42), b(m, 42), c(m, 43);
    for (std::size_t t = 0; t < m.tables.size(); ++t) {
      QVERIFY(a.batch(t, 1000, 64) == b.batch(t, 1000, 64));
      QVERIFY(a.batch(t, 1000, 64).ids != c.batch(t, 1000, 64).ids);
    }
  }

  void tablesDrawIndependentStreams() {
    const auto m = model({table("a", 1'000'000), table("b", 1'000'000)});
    const WorkloadGenerator g(m, 1);
    QVERIFY(g.batch(0, 0, 32).ids != g.batch(1, 0, 32).ids);
  }

  void slicesCompose() {
    const auto m = mixedModel();
    const WorkloadGenerator g(m, 9);
    for (std::size_t t = 0; t < m.tables.size(); ++t) {
      const Batch whole = g.batch(t, 0, 100);
      Batch joined = g.batch(t, 0, 40);
      const Batch rest = g.batch(t, 40, 60);
      joined.lengths.insert(joined.lengths.end(), rest.lengths.begin(), rest.lengths.end());
      joined.ids.insert(joined.ids.end(), rest.ids.begin(), rest.ids.end());
      QVERIFY2(whole == joined, m.tables[t].name.c_str());
      // A rank's slice far into the run needs none of the samples before it.
      const Batch late = g.batch(t, 1'000'000'000'000ULL, 8);
      QCOMPARE(late.lengths.size(), std::size_t{8});
    }
  }

  void batchIsCsr() {
    const auto m = mixedModel();
    const WorkloadGenerator g(m, 3);
    for (std::size_t t = 0; t < m.tables.size(); ++t) {
      const Batch b = g.batch(t, 5, 200);
      QCOMPARE(b.lengths.size(), std::size_t{200});
      std::uint64_t sum = 0;
      for (auto l : b.lengths) sum += l;
      QCOMPARE(b.ids.size(), sum);
    }
  }

  // Pinned outputs: a change here breaks reproducibility of recorded runs
  // across versions, processes and machines.
  void goldenDraws() {
    const auto m = mixedModel();
    const WorkloadGenerator g(m, 2024);
    const std::vector<Batch> expected = {
        {{3, 2, 3}, {542, 308, 961, 805, 775, 876, 124, 608}},
        {{9, 12, 6}, {13925271, 14,     220,      484,    287461, 26582193, 8,         1252,     3310,
                      11,       559072, 4,        304352, 11397,  4982883,  253611688, 12454727, 2569,
                      54182844, 50,     21755207, 7974,   65,     5,        30,        44539711, 1527789}},
        {{3, 3, 3}, {78, 44, 6, 61, 51, 56, 58, 84, 46}},
        {{2, 2, 4}, {116, 89, 855, 609, 238, 698, 28, 108}},
    };
    for (std::size_t t = 0; t < m.tables.size(); ++t)
      QVERIFY2(g.batch(t, 17, 3) == expected[t], m.tables[t].name.c_str());
  }

  void idsStayInRange() {
    auto m = mixedModel();
    m.tables.push_back(table("one_row", 1, zipf(1.2), fixedPooling(4)));
    m.tables.push_back(table("hot_all", 50, hotSet(1.0, 1.0), fixedPooling(4)));
    m.tables.push_back(table("zipf_small", 7, zipf(0.5), fixedPooling(4)));
    const WorkloadGenerator g(m, 11);
    for (std::size_t t = 0; t < m.tables.size(); ++t) {
      const Batch b = g.batch(t, 0, 5000);
      QVERIFY(!b.ids.empty());
      for (auto id : b.ids) QVERIFY2(id < m.tables[t].rows, m.tables[t].name.c_str());
    }
  }

  void uniformMatchesMeanAndVariance() {
    const double n = 1'000'000;
    const auto ids = draws(table("u", 1'000'000), 200'000);
    double mean = 0, sq = 0;
    for (auto id : ids) mean += static_cast<double>(id);
    mean /= static_cast<double>(ids.size());
    for (auto id : ids) sq += (static_cast<double>(id) - mean) * (static_cast<double>(id) - mean);
    const double var = sq / static_cast<double>(ids.size());
    // Standard error of the mean is ~0.065% of n; of the variance ~0.25%.
    QVERIFY2(std::abs(mean - (n - 1) / 2) < 0.005 * n, qPrintable(QString::number(mean)));
    QVERIFY2(std::abs(var / (n * n / 12) - 1) < 0.02, qPrintable(QString::number(var)));
  }

  void zipfRankFrequencySlopeIsMinusAlpha() {
    const double alpha = 1.05;
    const auto ids = draws(table("z", 4'000'000'000ULL, zipf(alpha)), 400'000);
    std::vector<double> count(64, 0.0);
    for (auto id : ids)
      if (id < count.size()) count[id] += 1;
    // Least squares of log(frequency) on log(rank) over ranks 1..64.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double k = static_cast<double>(count.size());
    for (std::size_t r = 0; r < count.size(); ++r) {
      QVERIFY(count[r] > 0);
      const double x = std::log(static_cast<double>(r + 1)), y = std::log(count[r]);
      sx += x;
      sy += y;
      sxx += x * x;
      sxy += x * y;
    }
    const double slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);
    QVERIFY2(std::abs(slope + alpha) < 0.08, qPrintable(QString::number(slope)));
  }

  void zipfHeadMassMatchesPlannerProfile() {
    for (const double alpha : {0.8, 1.05, 1.3}) {
      const std::uint64_t rows = alpha < 1 ? 4'000'000'000ULL : 40'000'000ULL;
      const auto spec = zipf(alpha);
      const auto ids = draws(table("z", rows, spec), 400'000, 5);
      const planner::AccessProfile profile(spec, rows);
      for (const std::uint64_t k : {1ULL, 10ULL, 1000ULL, 100'000ULL, 10'000'000ULL}) {
        const auto hits =
            static_cast<double>(std::count_if(ids.begin(), ids.end(), [&](std::uint64_t id) { return id < k; }));
        const double measured = hits / static_cast<double>(ids.size()), predicted = profile.mass(0, k);
        // Binomial standard error <= 0.0008; the planner's segments are accurate to ~1e-3.
        QVERIFY2(std::abs(measured - predicted) < 0.006,
                 qPrintable(QStringLiteral("alpha %1 k %2: measured %3 predicted %4")
                                .arg(alpha)
                                .arg(k)
                                .arg(measured)
                                .arg(predicted)));
      }
    }
  }

  void hotSetGetsItsShare() {
    // 1001 rows x 0.1 -> 101 hot rows (the planner's ceil), not 100.
    const auto spec = hotSet(0.1, 0.9);
    const auto ids = draws(table("h", 1001, spec), 100'000);
    const planner::AccessProfile profile(spec, 1001);
    const auto hot =
        static_cast<double>(std::count_if(ids.begin(), ids.end(), [](std::uint64_t id) { return id < 101; }));
    QVERIFY(std::abs(profile.mass(0, 101) - 0.9) < 1e-12);
    QVERIFY2(std::abs(hot / static_cast<double>(ids.size()) - 0.9) < 0.006, qPrintable(QString::number(hot)));
    // Inside the hot set, rows are equally likely: row 0 and row 100 both get ~0.9/101.
    const auto first = static_cast<double>(std::count(ids.begin(), ids.end(), 0ULL));
    const auto last = static_cast<double>(std::count(ids.begin(), ids.end(), 100ULL));
    QVERIFY(first > 600 && first < 1200 && last > 600 && last < 1200);
  }

  void histogramBucketsGetTheirShares() {
    const std::uint64_t rows = 1003;
    // Unnormalised on purpose: shares are relative.
    const auto spec = histogram({1.0, 0.4, 0.0, 0.4, 0.2});
    const auto ids = draws(table("h", rows, spec), 100'000);
    const planner::AccessProfile profile(spec, rows);
    QCOMPARE(profile.segmentCount(), std::size_t{5});
    std::vector<double> observed(profile.segmentCount(), 0.0);
    for (auto id : ids) observed[profile.segmentOf(id)] += 1;
    double chi2 = 0;
    for (std::size_t s = 0; s < observed.size(); ++s) {
      const std::uint64_t end = s + 1 < profile.segmentCount() ? profile.segmentBegin(s + 1) : rows;
      const double expected = profile.mass(profile.segmentBegin(s), end) * static_cast<double>(ids.size());
      if (expected == 0.0) {
        QCOMPARE(observed[s], 0.0);  // an empty bucket is never hit
        continue;
      }
      chi2 += (observed[s] - expected) * (observed[s] - expected) / expected;
    }
    // 3 degrees of freedom: P(chi2 > 25) ~ 1.6e-5.
    QVERIFY2(chi2 < 25, qPrintable(QString::number(chi2)));
    // Rows inside a bucket are equally likely: both halves of bucket 0 (rows [0, 201)) get ~half.
    const auto low =
        static_cast<double>(std::count_if(ids.begin(), ids.end(), [](std::uint64_t id) { return id < 100; }));
    QVERIFY2(std::abs(low / observed[0] - 100.0 / 201.0) < 0.02, qPrintable(QString::number(low)));
  }

  void fixedFractionalPoolingMixesFloorAndCeil() {
    for (const double mean : {2.5, 0.3, 3.0, 26.75}) {
      const WorkloadGenerator g(model({table("t", 100, {}, fixedPooling(mean))}), 1);
      const auto lo = static_cast<std::uint32_t>(std::floor(mean)), hi = static_cast<std::uint32_t>(std::ceil(mean));
      for (const std::uint64_t first : {0ULL, 123ULL, 987'654'321ULL}) {
        const Batch b = g.batch(0, first, 777);
        double sum = 0;
        for (auto l : b.lengths) {
          QVERIFY(l == lo || l == hi);
          sum += l;
        }
        // Deterministic mix: any window's total is within 1 of samples x mean.
        QVERIFY2(std::abs(sum - 777 * mean) < 1.0, qPrintable(QString::number(sum)));
      }
    }
  }

  void uniformPoolingCoversItsRange() {
    const WorkloadGenerator g(
        model({table("t", 100, {}, uniformPooling(10, 4)), table("f", 100, {}, uniformPooling(2.5, 1.5))}), 1);
    const Batch b = g.batch(0, 0, 20'000);
    std::vector<int> seen(20, 0);
    double sum = 0;
    for (auto l : b.lengths) {
      QVERIFY(l >= 6 && l <= 14);
      ++seen[l];
      sum += l;
    }
    for (int v = 6; v <= 14; ++v) QVERIFY(seen[static_cast<std::size_t>(v)] > 1500);  // ~2222 each
    QVERIFY2(std::abs(sum / 20'000 - 10) < 0.1, qPrintable(QString::number(sum)));
    // mean 2.5, spread 1.5: the integers of [1, 4], mean 2.5.
    const Batch f = g.batch(1, 0, 20'000);
    double fsum = 0;
    for (auto l : f.lengths) {
      QVERIFY(l >= 1 && l <= 4);
      fsum += l;
    }
    QVERIFY2(std::abs(fsum / 20'000 - 2.5) < 0.05, qPrintable(QString::number(fsum)));
  }

  void replayRoundTrips() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto m = mixedModel();
    const WorkloadGenerator g(m, 77);
    const IdTrace trace = g.record(100, 50);
    const QString path = dir.filePath("ids.bin");
    const auto w = profiler::writeIdTrace(path.toStdString(), trace);
    QVERIFY2(w.ok(), w.ok() ? "" : w.error().message.c_str());
    auto r = profiler::readIdTrace(path.toStdString(), m);
    QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
    QVERIFY(*r == trace);
    const WorkloadGenerator replay(m, std::move(*r));
    QVERIFY(replay.replaying());
    for (std::size_t t = 0; t < m.tables.size(); ++t) {
      QVERIFY(replay.batch(t, 0, 50) == g.batch(t, 100, 50));
      // Past the end it wraps around: sample 50 is trace sample 0.
      QVERIFY(replay.batch(t, 50, 10) == g.batch(t, 100, 10));
      QVERIFY(replay.batch(t, 45, 10).lengths.size() == 10);
    }
  }

  void replayRejectsMalformedFiles() {
    QTemporaryDir dir;
    const auto m = model({table("a", 1000, {}, fixedPooling(2)), table("b", 50, zipf(1.1), fixedPooling(1.5))});
    const QString path = dir.filePath("ids.bin");
    const std::string p = path.toStdString();
    QVERIFY(profiler::writeIdTrace(p, WorkloadGenerator(m, 1).record(0, 4)).ok());
    const std::string good = readAll(path);
    // Layout: header 24 bytes; table a: rows, count, 4 lengths, 8 ids; table b: rows, count, 4 lengths, 6 ids.
    QCOMPARE(good.size(), std::size_t{24 + 16 + 16 + 64 + 16 + 16 + 48});
    QVERIFY(profiler::readIdTrace(p, m).ok());

    const auto expectError = [&](const std::string& data, const char* needle) {
      writeAll(path, data);
      const auto r = profiler::readIdTrace(p, m);
      if (r.ok()) return QStringLiteral("accepted");
      const std::string& msg = r.error().message;
      if (msg.rfind(p + ": offset ", 0) != 0 || msg.find(needle) == std::string::npos)
        return QString::fromStdString(msg);
      return QString();
    };
    // Every truncation is an error, never a shorter trace.
    for (std::size_t n = 0; n < good.size(); ++n) {
      const QString e = expectError(good.substr(0, n), "truncated");
      QVERIFY2(e.isEmpty(), qPrintable(QString::number(n) + ": " + e));
    }
    std::string bad = good;
    bad[0] = 'X';
    QVERIFY2(expectError(bad, "expected magic").isEmpty(), "magic");
    bad = good;
    bad[8] = 2;
    QVERIFY2(expectError(bad, "expected version 1, got 2").isEmpty(), "version");
    bad = good;
    bad[12] = 3;
    QVERIFY2(expectError(bad, "expected 2 tables (the model's), got 3").isEmpty(), "table count");
    bad = good;
    putU64(bad, 24, 999);
    QVERIFY2(expectError(bad, "table 0 (a): expected 1000 rows (the model's), got 999").isEmpty(), "rows");
    bad = good;
    putU64(bad, 24 + 16 + 16 + 8, 1000);  // the second id of table a
    const QString e = expectError(bad, "table 0 (a): expected an id < 1000, got 1000");
    QVERIFY2(e.isEmpty(), qPrintable(e));
    QVERIFY(expectError(bad, "offset 64:").isEmpty());
    bad = good;
    putU64(bad, 32, 7);
    QVERIFY2(expectError(bad, "expected lengths summing to the id count 7, got 8").isEmpty(), "sum");
    QVERIFY2(expectError(good + std::string(3, '\0'), "expected end of file, got 3 more bytes").isEmpty(), "trailing");

    const auto other = profiler::readIdTrace(p, model({table("a", 1000)}));
    QVERIFY(!other.ok());
    const auto missing = profiler::readIdTrace(dir.filePath("none.bin").toStdString(), m);
    QVERIFY(!missing.ok() && missing.error().message.find("none.bin") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestWorkload)
#include "test_workload.moc"
