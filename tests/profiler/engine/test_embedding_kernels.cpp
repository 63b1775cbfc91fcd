// The CPU embedding kernels against naive loops that spell out their documented
// semantics (docs/engine.md#kernels): summation order, mean scaling, the row-wise
// AdaGrad update and its reduction order, fp16 rounding; on both code paths and
// with 1 and several threads.
#include <QtTest>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <stdexcept>
#include <vector>

#include "shardscope/profiler/engine/embedding_kernels.h"
#include "shardscope/profiler/engine/thread_pool.h"

using namespace shardscope::profiler;

// Every allocation in this process is counted, so a test can check that a
// kernel call with a warm workspace allocates nothing.
namespace {
std::atomic<std::uint64_t> g_allocations{0};
}

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

struct Input {
  std::vector<std::uint32_t> offsets;
  std::vector<std::uint32_t> ids;
  [[nodiscard]] Bags bags() const { return Bags{offsets, ids}; }
};

// Bags of 0..max_len ids (some empty), ids uniform over rows, so small tables repeat ids.
Input makeInput(std::uint64_t rows, std::size_t bags, std::uint32_t max_len, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Input in;
  in.offsets.push_back(0);
  for (std::size_t s = 0; s < bags; ++s) {
    const std::uint32_t len = rng() % (max_len + 1);
    for (std::uint32_t i = 0; i < len; ++i) in.ids.push_back(static_cast<std::uint32_t>(rng() % rows));
    in.offsets.push_back(static_cast<std::uint32_t>(in.ids.size()));
  }
  return in;
}

float weight(const EmbeddingShard& shard, std::uint64_t r, std::uint32_t c) {
  return shard.type() == WeightType::F32 ? shard.f32Row(r)[c] : halfToFloat(shard.f16Row(r)[c]);
}

// The documented forward: per column, from +0.0f, in bag order; Mean multiplies by 1/len.
std::vector<float> naiveForward(const EmbeddingShard& shard, const Input& in, Pooling pooling) {
  const std::uint32_t dim = shard.dim();
  const std::size_t bags = in.offsets.size() - 1;
  std::vector<float> out(bags * dim);
  for (std::size_t s = 0; s < bags; ++s) {
    const std::uint32_t len = in.offsets[s + 1] - in.offsets[s];
    for (std::uint32_t c = 0; c < dim; ++c) {
      float acc = 0.0f;
      for (std::uint32_t p = in.offsets[s]; p < in.offsets[s + 1]; ++p) acc += weight(shard, in.ids[p], c);
      if (pooling == Pooling::Mean && len > 0) acc *= 1.0f / static_cast<float>(len);
      out[s * dim + c] = acc;
    }
  }
  return out;
}

// The documented backward + row-wise AdaGrad.
void naiveBackward(EmbeddingShard& shard, const Input& in, Pooling pooling, const std::vector<float>& grad,
                   const AdagradConfig& config) {
  const std::uint32_t dim = shard.dim();
  std::map<std::uint32_t, std::vector<float>> g;  // ordered by row; accumulated in (bag, position) order
  for (std::size_t s = 0; s + 1 < in.offsets.size(); ++s) {
    const std::uint32_t len = in.offsets[s + 1] - in.offsets[s];
    const float scale = pooling == Pooling::Mean && len > 0 ? 1.0f / static_cast<float>(len) : 1.0f;
    for (std::uint32_t p = in.offsets[s]; p < in.offsets[s + 1]; ++p) {
      auto& row = g[in.ids[p]];
      row.resize(dim, 0.0f);
      for (std::uint32_t c = 0; c < dim; ++c) row[c] += grad[s * dim + c] * scale;
    }
  }
  for (const auto& [r, gr] : g) {
    float lane[8] = {};
    for (std::uint32_t c = 0; c < dim; ++c) lane[c % 8] += gr[c] * gr[c];
    const float total = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
    const float m = shard.momentum()[r] + total / static_cast<float>(dim);
    shard.momentum()[r] = m;
    const float step = config.learning_rate / (std::sqrt(m) + config.eps);
    for (std::uint32_t c = 0; c < dim; ++c) {
      if (shard.type() == WeightType::F32) {
        shard.f32Row(r)[c] = shard.f32Row(r)[c] - step * gr[c];
      } else {
        shard.f16Row(r)[c] = floatToHalf(halfToFloat(shard.f16Row(r)[c]) - step * gr[c]);
      }
    }
  }
}

std::vector<float> randomGrad(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> g(n);
  for (auto& x : g) x = dist(rng);
  return g;
}

bool sameBytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

bool sameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case {
  std::uint64_t rows;
  std::uint32_t dim;
  std::size_t bags;
  std::uint32_t max_len;
};

// Small tables (many repeats), dims with and without a tail of < 8 columns,
// and one case large enough for multi-pass parallel sorting and several chunks.
const Case kCases[] = {{1, 8, 40, 6},      {50, 128, 300, 20},   {7, 13, 100, 9},
                       {300, 72, 200, 12}, {5000, 200, 900, 40}, {70000, 32, 3000, 30}};

const KernelIsa kIsas[] = {KernelIsa::Portable, KernelIsa::Avx2F16c};

}  // namespace

class TestEmbeddingKernels : public QObject {
  Q_OBJECT

 private:
  void checkForward(WeightType type, Pooling pooling) {
    ThreadPool three(3);
    for (const Case& k : kCases) {
      EmbeddingShard shard(k.rows, k.dim, type);
      shard.initialize(7, 0, 0);
      const Input in = makeInput(k.rows, k.bags, k.max_len, k.dim);
      const std::vector<float> want = naiveForward(shard, in, pooling);
      for (KernelIsa isa : kIsas) {
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
          std::vector<float> got(want.size(), std::numeric_limits<float>::quiet_NaN());
          embeddingForward(isa, shard, in.bags(), pooling, got.data(), k.dim, pool);
          if (!sameFloats(got, want)) {
            QFAIL(qPrintable(QStringLiteral("forward differs: rows %1 dim %2 isa %3 threads %4")
                                 .arg(k.rows)
                                 .arg(k.dim)
                                 .arg(QString::fromLatin1(kernelIsaName(isa)))
                                 .arg(pool == nullptr ? 1 : 3)));
          }
        }
      }
    }
  }

  void checkBackward(WeightType type, Pooling pooling) {
    ThreadPool three(3);
    const AdagradConfig config{0.05f, 1e-8f};
    for (const Case& k : kCases) {
      const Input in = makeInput(k.rows, k.bags, k.max_len, k.dim + 1);
      const std::vector<float> grad = randomGrad(k.bags * k.dim, k.dim);
      EmbeddingShard want(k.rows, k.dim, type);
      want.initialize(3, 0, 0);
      naiveBackward(want, in, pooling, grad, config);
      naiveBackward(want, in, pooling, grad, config);  // a second step sees non-zero momentum
      for (KernelIsa isa : kIsas) {
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &three}) {
          EmbeddingShard got(k.rows, k.dim, type);
          got.initialize(3, 0, 0);
          BackwardWorkspace ws;
          for (int step = 0; step < 2; ++step) {
            (void)embeddingBackwardAdagrad(isa, got, in.bags(), pooling, grad.data(), k.dim, config, ws, pool);
          }
          const QString where = QStringLiteral("rows %1 dim %2 isa %3 threads %4")
                                    .arg(k.rows)
                                    .arg(k.dim)
                                    .arg(QString::fromLatin1(kernelIsaName(isa)))
                                    .arg(pool == nullptr ? 1 : 3);
          if (!sameBytes(std::as_bytes(got.momentum()), std::as_bytes(want.momentum()))) {
            QFAIL(qPrintable(QStringLiteral("momentum differs: ") + where));
          }
          if (!sameBytes(got.weightBytes(), want.weightBytes()))
            QFAIL(qPrintable(QStringLiteral("weights differ: ") + where));
        }
      }
    }
  }

 private slots:
  void forwardSumF32IsBitExactWithNaiveLoop() { checkForward(WeightType::F32, Pooling::Sum); }
  void forwardMeanF32MatchesNaiveLoop() { checkForward(WeightType::F32, Pooling::Mean); }
  void forwardSumF16MatchesNaiveLoop() { checkForward(WeightType::F16, Pooling::Sum); }
  void forwardMeanF16MatchesNaiveLoop() { checkForward(WeightType::F16, Pooling::Mean); }

  void forwardEmptyBagGivesZeros() {
    EmbeddingShard shard(10, 20, WeightType::F32);
    shard.initialize(1, 0, 0);
    const std::vector<std::uint32_t> offsets{0, 0, 2, 2};
    const std::vector<std::uint32_t> ids{3, 4};
    for (Pooling pooling : {Pooling::Sum, Pooling::Mean}) {
      for (KernelIsa isa : kIsas) {
        std::vector<float> out(3 * 20, 42.0f);
        embeddingForward(isa, shard, Bags{offsets, ids}, pooling, out.data(), 20);
        for (std::uint32_t c = 0; c < 20; ++c) {
          QVERIFY(std::bit_cast<std::uint32_t>(out[c]) == 0u);  // +0.0f
          QVERIFY(std::bit_cast<std::uint32_t>(out[40 + c]) == 0u);
          QVERIFY(out[20 + c] != 42.0f);
        }
      }
    }
  }

  void forwardRepeatedIdsCountEveryOccurrence() {
    EmbeddingShard shard(4, 16, WeightType::F32);
    for (std::uint32_t c = 0; c < 16; ++c) shard.f32Row(2)[c] = 0.25f * static_cast<float>(c);
    const std::vector<std::uint32_t> offsets{0, 3};
    const std::vector<std::uint32_t> ids{2, 2, 2};
    for (KernelIsa isa : kIsas) {
      std::vector<float> sum(16);
      std::vector<float> mean(16);
      embeddingForward(isa, shard, Bags{offsets, ids}, Pooling::Sum, sum.data(), 16);
      embeddingForward(isa, shard, Bags{offsets, ids}, Pooling::Mean, mean.data(), 16);
      for (std::uint32_t c = 0; c < 16; ++c) {
        QCOMPARE(sum[c], 0.75f * static_cast<float>(c));
        QCOMPARE(mean[c], (0.75f * static_cast<float>(c)) * (1.0f / 3.0f));
      }
    }
  }

  void forwardWritesOnlyDimColumnsOfEachStride() {
    EmbeddingShard shard(30, 12, WeightType::F16);
    shard.initialize(5, 0, 0);
    const Input in = makeInput(30, 50, 8, 4);
    const std::vector<float> want = naiveForward(shard, in, Pooling::Sum);
    for (KernelIsa isa : kIsas) {
      std::vector<float> out(50 * 20, -1.0f);
      embeddingForward(isa, shard, in.bags(), Pooling::Sum, out.data(), 20);
      for (std::size_t s = 0; s < 50; ++s) {
        QVERIFY(std::memcmp(&out[s * 20], &want[s * 12], 12 * sizeof(float)) == 0);
        for (std::size_t c = 12; c < 20; ++c) QCOMPARE(out[s * 20 + c], -1.0f);
      }
    }
  }

  void backwardAdagradF32SumMatchesReference() { checkBackward(WeightType::F32, Pooling::Sum); }
  void backwardAdagradF32MeanMatchesReference() { checkBackward(WeightType::F32, Pooling::Mean); }
  void backwardAdagradF16SumMatchesReference() { checkBackward(WeightType::F16, Pooling::Sum); }
  void backwardAdagradF16MeanMatchesReference() { checkBackward(WeightType::F16, Pooling::Mean); }

  void backwardCountsDistinctRowsAndLeavesOthersAlone() {
    ThreadPool pool(2);
    EmbeddingShard shard(20000, 16, WeightType::F32);
    shard.initialize(9, 0, 0);
    const EmbeddingShard before = shard;
    const Input in = makeInput(20000, 2000, 16, 11);
    std::vector<bool> seen(20000, false);
    std::uint64_t distinct = 0;
    for (std::uint32_t id : in.ids) {
      if (!seen[id]) ++distinct;
      seen[id] = true;
    }
    const std::vector<float> grad = randomGrad(2000 * 16, 2);
    BackwardWorkspace ws;
    const BackwardStats stats =
        embeddingBackwardAdagrad(shard, in.bags(), Pooling::Sum, grad.data(), 16, AdagradConfig{}, ws, &pool);
    QCOMPARE(stats.lookups, static_cast<std::uint64_t>(in.ids.size()));
    QCOMPARE(stats.unique_rows, distinct);
    QCOMPARE(static_cast<std::uint64_t>(ws.unique_rows.size()), distinct);
    for (std::uint64_t r = 0; r < 20000; ++r) {
      const bool same = std::memcmp(shard.f32Row(r), before.f32Row(r), 16 * sizeof(float)) == 0;
      if (!seen[r]) {
        QVERIFY(same);
        QCOMPARE(shard.momentum()[r], 0.0f);
      } else {
        QVERIFY(!same);
        QVERIFY(shard.momentum()[r] > 0.0f);
      }
    }
  }

  void kernelsDoNotAllocateInSteadyState() {
    ThreadPool pool(3);
    EmbeddingShard shard(5000, 64, WeightType::F16);
    shard.initialize(2, 0, 0);
    const Input in = makeInput(5000, 2000, 30, 21);
    const std::vector<float> grad = randomGrad(2000 * 64, 5);
    std::vector<float> out(2000 * 64);
    BackwardWorkspace ws;
    for (int warm = 0; warm < 2; ++warm) {
      embeddingForward(shard, in.bags(), Pooling::Mean, out.data(), 64, &pool);
      (void)embeddingBackwardAdagrad(shard, in.bags(), Pooling::Mean, grad.data(), 64, AdagradConfig{}, ws, &pool);
    }
    const std::uint64_t before = g_allocations.load();
    embeddingForward(shard, in.bags(), Pooling::Mean, out.data(), 64, &pool);
    (void)embeddingBackwardAdagrad(shard, in.bags(), Pooling::Mean, grad.data(), 64, AdagradConfig{}, ws, &pool);
    QCOMPARE(g_allocations.load() - before, std::uint64_t{0});
  }

  void backwardWithNoLookupsChangesNothing() {
    EmbeddingShard shard(10, 8, WeightType::F32);
    shard.initialize(1, 0, 0);
    const std::uint64_t digest = shard.digest();
    const std::vector<std::uint32_t> offsets{0, 0, 0};
    const std::vector<std::uint32_t> ids;
    const std::vector<float> grad(16, 1.0f);
    BackwardWorkspace ws;
    const BackwardStats stats =
        embeddingBackwardAdagrad(shard, Bags{offsets, ids}, Pooling::Mean, grad.data(), 8, AdagradConfig{}, ws);
    QCOMPARE(stats.lookups, std::uint64_t{0});
    QCOMPARE(stats.unique_rows, std::uint64_t{0});
    QCOMPARE(shard.digest(), digest);
  }

  void halfToFloatRoundTripsEveryHalf() {
    for (std::uint32_t h = 0; h < 65536; ++h) {
      const auto half = static_cast<std::uint16_t>(h);
      const float f = halfToFloat(half);
      const bool nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
      if (nan) {
        QVERIFY(std::isnan(f));
        QVERIFY(std::signbit(f) == ((h & 0x8000u) != 0));
        QVERIFY((floatToHalf(f) & 0x7e00u) == 0x7e00u);  // still NaN, quiet
      } else {
        QCOMPARE(floatToHalf(f), half);
      }
    }
    QCOMPARE(halfToFloat(0x3c00), 1.0f);
    QCOMPARE(halfToFloat(0x7bff), 65504.0f);
    QCOMPARE(halfToFloat(0x0001), 0x1p-24f);    // smallest subnormal
    QCOMPARE(halfToFloat(0x03ff), 0x3ffp-24f);  // largest subnormal
    QVERIFY(std::isinf(halfToFloat(0x7c00)) && halfToFloat(0x7c00) > 0.0f);
    QVERIFY(std::isinf(halfToFloat(0xfc00)) && halfToFloat(0xfc00) < 0.0f);
  }

  void floatToHalfRoundsToNearestEven() {
    // For every pair of adjacent finite halves, the midpoint goes to the even one
    // and the floats just either side of it to the nearer one.
    for (std::uint32_t h = 0; h < 0x7bff; ++h) {
      const float lo = halfToFloat(static_cast<std::uint16_t>(h));
      const float hi = halfToFloat(static_cast<std::uint16_t>(h + 1));
      const float mid = lo + (hi - lo) * 0.5f;  // exact: halves have 11 significant bits
      const std::uint16_t even = (h & 1u) == 0 ? static_cast<std::uint16_t>(h) : static_cast<std::uint16_t>(h + 1);
      QCOMPARE(floatToHalf(mid), even);
      QCOMPARE(floatToHalf(std::nextafter(mid, 0.0f)), static_cast<std::uint16_t>(h));
      QCOMPARE(floatToHalf(std::nextafter(mid, 1e9f)), static_cast<std::uint16_t>(h + 1));
      QCOMPARE(floatToHalf(-mid), static_cast<std::uint16_t>(even | 0x8000u));
    }
    QCOMPARE(floatToHalf(0x1p-25f), std::uint16_t{0});    // half the smallest subnormal: ties to 0
    QCOMPARE(floatToHalf(0x1.8p-24f), std::uint16_t{2});  // 1.5 ulp: ties to even 2
    QCOMPARE(floatToHalf(1e-30f), std::uint16_t{0});
    QCOMPARE(floatToHalf(-0.0f), std::uint16_t{0x8000});
    QCOMPARE(floatToHalf(65519.0f), std::uint16_t{0x7bff});  // below the midpoint to 2^16
    QCOMPARE(floatToHalf(65520.0f), std::uint16_t{0x7c00});  // midpoint: ties to even = infinity
    QCOMPARE(floatToHalf(1e10f), std::uint16_t{0x7c00});
    QCOMPARE(floatToHalf(-std::numeric_limits<float>::infinity()), std::uint16_t{0xfc00});
    const std::uint16_t nan = floatToHalf(std::numeric_limits<float>::quiet_NaN());
    QVERIFY((nan & 0x7c00u) == 0x7c00u && (nan & 0x3ffu) != 0);
    QCOMPARE(floatToHalf(1.0f + 0x1p-11f), std::uint16_t{0x3c00});    // tie to even (down)
    QCOMPARE(floatToHalf(1.0f + 0x1.8p-10f), std::uint16_t{0x3c02});  // tie to even (up)
  }

  void initializeIsIndependentOfShardSplit() {
    EmbeddingShard whole(100, 16, WeightType::F32);
    whole.initialize(123, 0, 0);
    EmbeddingShard top(40, 16, WeightType::F32);
    EmbeddingShard bottom(60, 16, WeightType::F32);
    top.initialize(123, 0, 0);
    bottom.initialize(123, 40, 0);
    EmbeddingShard left(100, 6, WeightType::F32);
    EmbeddingShard right(100, 10, WeightType::F32);
    left.initialize(123, 0, 0);
    right.initialize(123, 0, 6);
    EmbeddingShard half(100, 16, WeightType::F16);
    half.initialize(123, 0, 0);
    for (std::uint64_t r = 0; r < 100; ++r) {
      for (std::uint32_t c = 0; c < 16; ++c) {
        const float w = whole.f32Row(r)[c];
        QCOMPARE(r < 40 ? top.f32Row(r)[c] : bottom.f32Row(r - 40)[c], w);
        QCOMPARE(c < 6 ? left.f32Row(r)[c] : right.f32Row(r)[c - 6], w);
        QCOMPARE(half.f16Row(r)[c], floatToHalf(w));
        QVERIFY(std::abs(w) <= 0.05f);
      }
    }
    QVERIFY(whole.f32Row(0)[0] != whole.f32Row(0)[1]);
    QVERIFY(whole.f32Row(0)[0] != whole.f32Row(1)[0]);
    EmbeddingShard other(100, 16, WeightType::F32);
    other.initialize(124, 0, 0);
    QVERIFY(other.digest() != whole.digest());
    for (float m : whole.momentum()) QCOMPARE(m, 0.0f);
  }

  void digestChangesWithAnyWeightOrMomentum() {
    EmbeddingShard a(50, 8, WeightType::F16);
    a.initialize(1, 0, 0);
    EmbeddingShard b = a;
    QCOMPARE(a.digest(), b.digest());
    b.f16Row(49)[7] ^= 1u;
    QVERIFY(a.digest() != b.digest());
    b.f16Row(49)[7] ^= 1u;
    QCOMPARE(a.digest(), b.digest());
    b.momentum()[3] = 1.0f;
    QVERIFY(a.digest() != b.digest());
  }

  void sizesCountWeightsAndMomentum() {
    const EmbeddingShard f32(10, 12, WeightType::F32);
    const EmbeddingShard f16(10, 12, WeightType::F16);
    QCOMPARE(f32.rowBytes(), std::size_t{48});
    QCOMPARE(f16.rowBytes(), std::size_t{24});
    QCOMPARE(f32.weightBytes().size(), std::size_t{480});
    QCOMPARE(f16.weightBytes().size(), std::size_t{240});
    QCOMPARE(f32.memoryBytes(), std::uint64_t{480 + 40});
    QCOMPARE(f16.memoryBytes(), std::uint64_t{240 + 40});
    QCOMPARE(f16.momentum().size(), std::size_t{10});
  }

  void threadPoolCoversRangeExactlyOnce() {
    for (unsigned threads : {1u, 2u, 5u}) {
      ThreadPool pool(threads);
      QCOMPARE(pool.size(), threads);
      for (std::size_t n : {0u, 1u, 2u, 7u, 100u, 1000u, 12345u}) {
        for (std::size_t grain : {0u, 1u, 3u, 64u, 5000u}) {
          std::vector<std::atomic<int>> hits(n);
          std::atomic<bool> short_chunk{false};
          pool.parallelFor(n, grain, [&](std::size_t b, std::size_t e) {
            if (b >= e || e > n) short_chunk = true;
            if (e != n && e - b < grain) short_chunk = true;  // only the last chunk may be short
            for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
          });
          QVERIFY(!short_chunk);
          for (std::size_t i = 0; i < n; ++i) QCOMPARE(hits[i].load(), 1);
        }
      }
    }
  }

  void threadPoolRethrowsABodysException() {
    ThreadPool pool(3);
    bool thrown = false;
    try {
      pool.parallelFor(1000, 1, [](std::size_t b, std::size_t) {
        if (b == 0) throw std::runtime_error("chunk 0");
      });
    } catch (const std::runtime_error&) {
      thrown = true;
    }
    QVERIFY(thrown);
    std::atomic<std::size_t> sum{0};
    pool.parallelFor(1000, 1, [&](std::size_t b, std::size_t e) { sum += e - b; });  // still usable
    QCOMPARE(sum.load(), std::size_t{1000});
  }
};

QTEST_GUILESS_MAIN(TestEmbeddingKernels)
#include "test_embedding_kernels.moc"
