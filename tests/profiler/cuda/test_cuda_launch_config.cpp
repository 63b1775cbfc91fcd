// The CUDA embedding kernels' launch math (launch_config.h), without a GPU:
// for every dim 1..1024 (and the largest) and every weight type, the row
// layout holds whole 16-byte vectors, the threads of a bag cover its row, the
// grids cover every work item within the caps, shared memory stays under the
// limit and the sort keeps every bit a row key can have.
#include <QTest>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "shardscope/profiler/cuda/launch_config.h"

using namespace shardscope::profiler::cuda;

namespace {

constexpr DeviceWeightType kTypes[] = {DeviceWeightType::F32, DeviceWeightType::F16, DeviceWeightType::BF16};
constexpr std::uint32_t kSms[] = {0, 1, 7, 132};
constexpr std::uint64_t kItemCounts[] = {1, 2, 31, 32, 33, 255, 256, 257, 65536, 1000003, 0xffffffffu};

constexpr std::uint32_t kLastDim = 1024;  // every dim up to it is checked

// A capped grid-stride launch: when the items fit under the cap, one round
// covers them; else the cap is used and the stride loop covers the rest.
void checkGrid(const GridLaunch& g, std::uint64_t items, std::uint32_t per_block, std::uint32_t sms, const char* what) {
  const QByteArray where =
      QByteArray(what) + " items " + QByteArray::number(qulonglong(items)) + " sms " + QByteArray::number(sms);
  QVERIFY2(g.threads > 0 && g.threads <= launch::kMaxThreadsPerBlock, where.constData());
  QVERIFY2(g.threads % launch::kWarp == 0, where.constData());
  QVERIFY2(g.shared_bytes <= launch::kSharedMemoryLimit, where.constData());
  if (items == 0) {
    QVERIFY2(g.blocks == 0, where.constData());
    return;
  }
  const std::uint64_t resident = std::max<std::uint32_t>(1, launch::kMaxThreadsPerSm / g.threads);
  const std::uint64_t cap = launch::kWaves * resident * std::max<std::uint32_t>(sms, 1);
  QVERIFY2(g.blocks >= 1 && g.blocks <= cap, where.constData());
  const std::uint64_t one_round = std::uint64_t{g.blocks} * per_block;
  QVERIFY2(one_round >= items || g.blocks == cap, where.constData());
  // No block without work in the first round.
  QVERIFY2(std::uint64_t{g.blocks - 1} * per_block < items, where.constData());
}

}  // namespace

class TestCudaLaunchConfig : public QObject {
  Q_OBJECT

 private slots:
  void rowPitchHoldsWholeVectors() {
    for (DeviceWeightType t : kTypes) {
      for (std::uint32_t dim = 1; dim <= kLastDim; ++dim) {
        const std::size_t bytes = std::size_t{dim} * elementBytes(t);
        const std::size_t pitch = rowPitchBytes(dim, t);
        QCOMPARE(pitch % launch::kVectorBytes, std::size_t{0});
        QVERIFY(pitch >= bytes);
        QVERIFY(pitch < bytes + launch::kVectorBytes);
      }
    }
    QCOMPARE(elementBytes(DeviceWeightType::F32), std::size_t{4});
    QCOMPARE(elementBytes(DeviceWeightType::F16), std::size_t{2});
    QCOMPARE(elementBytes(DeviceWeightType::BF16), std::size_t{2});
    QCOMPARE(rowPitchBytes(3, DeviceWeightType::F32), std::size_t{16});
    QCOMPARE(rowPitchBytes(130, DeviceWeightType::F32), std::size_t{528});
    QCOMPARE(rowPitchBytes(3, DeviceWeightType::F16), std::size_t{16});
    QCOMPARE(rowPitchBytes(9, DeviceWeightType::BF16), std::size_t{32});
  }

  // The vector width is always 16 bytes: a dim it does not divide reads the
  // row's zero padding in its last vector (never past the row), and only
  // columns below dim are stored.
  void forwardThreadsCoverEveryRow() {
    for (DeviceWeightType t : kTypes) {
      for (std::uint32_t dim = 1; dim <= kLastDim; ++dim) {
        const ForwardShardLaunch f = forwardShardLaunch(dim, t);
        const QByteArray where = QByteArray("dim ") + QByteArray::number(dim) + " " + weightTypeName(t);
        QVERIFY2(f.elements_per_vector * elementBytes(t) == launch::kVectorBytes, where.constData());
        QVERIFY2(std::size_t{f.vectors} * f.elements_per_vector >= dim, where.constData());
        QVERIFY2(std::size_t{f.vectors} * launch::kVectorBytes == rowPitchBytes(dim, t), where.constData());
        QVERIFY2(std::has_single_bit(f.threads_per_bag) && f.threads_per_bag <= launch::kWarp, where.constData());
        QVERIFY2(f.bags_per_warp * f.threads_per_bag == launch::kWarp, where.constData());
        QVERIFY2(f.passes * f.threads_per_bag >= f.vectors, where.constData());
        QVERIFY2((f.passes - 1) * f.threads_per_bag < f.vectors, where.constData());  // no idle pass
        // The fewest threads: half as many would need another pass (unless a warp already).
        QVERIFY2(f.threads_per_bag == 1 || f.threads_per_bag == launch::kWarp || f.threads_per_bag / 2 < f.vectors,
                 where.constData());
        if (f.vectors <= launch::kWarp) QVERIFY2(f.passes == 1, where.constData());
      }
    }
    const ForwardShardLaunch d128 = forwardShardLaunch(128, DeviceWeightType::F32);
    QCOMPARE(d128.threads_per_bag, 32u);
    QCOMPARE(d128.passes, 1u);
    const ForwardShardLaunch d16 = forwardShardLaunch(16, DeviceWeightType::F16);
    QCOMPARE(d16.threads_per_bag, 2u);
    QCOMPARE(d16.bags_per_warp, 16u);
    const ForwardShardLaunch d130 = forwardShardLaunch(130, DeviceWeightType::F32);
    QCOMPARE(d130.vectors, 33u);
    QCOMPARE(d130.passes, 2u);
  }

  void forwardItemsCoverEveryBag() {
    for (DeviceWeightType t : kTypes) {
      for (std::uint32_t dim : {1u, 3u, 8u, 64u, 128u, 130u, 1024u}) {
        const ForwardShardLaunch f = forwardShardLaunch(dim, t);
        for (std::uint32_t bags : {0u, 1u, 15u, 16u, 17u, 65536u, 1000003u}) {
          const std::uint32_t items = forwardWarpItems(bags, f);
          QVERIFY(std::uint64_t{items} * f.bags_per_warp >= bags);
          if (items > 0) QVERIFY(std::uint64_t{items - 1} * f.bags_per_warp < bags);
          for (std::uint32_t sms : kSms) checkGrid(forwardLaunch(items, sms), items, 8, sms, "forward");
        }
      }
    }
  }

  void gridsCoverEveryItem() {
    for (std::uint32_t sms : kSms) {
      for (std::uint64_t items : kItemCounts) {
        checkGrid(forwardLaunch(items, sms), items, launch::kForwardBlockThreads / launch::kWarp, sms, "forward");
        checkGrid(keysLaunch(items, sms), items, launch::kKeysBlockThreads / launch::kKeysGroup, sms, "keys");
        checkGrid(routeLaunch(items, sms), items, launch::kRouteBlockThreads / launch::kWarp, sms, "route");
        checkGrid(initializeLaunch(items, sms), items, launch::kInitializeBlockThreads / launch::kWarp, sms,
                  "initialize");
      }
      checkGrid(forwardLaunch(0, sms), 0, 8, sms, "forward");
    }
    const GridLaunch stats = statsLaunch();
    QCOMPARE(stats.blocks, 1u);
    QVERIFY(stats.threads > 0 && stats.threads <= launch::kMaxThreadsPerBlock);
  }

  // One fp32 row per warp in shared memory (short rows and hot rows alike):
  // always under the limit, at least one warp, for every dim up to kMaxDim.
  void backwardSharedMemoryFits() {
    for (std::uint32_t dim = 1; dim <= launch::kMaxDim; dim += (dim < 1024 ? 1 : 61)) {
      for (std::uint32_t sms : kSms) {
        for (std::uint64_t lookups : {std::uint64_t{1}, std::uint64_t{257}, std::uint64_t{1} << 20}) {
          for (const GridLaunch& u : {updateLaunch(lookups, dim, sms), longUpdateLaunch(lookups, dim, sms)}) {
            const std::uint32_t warps = u.threads / launch::kWarp;
            QVERIFY(warps >= 1 && warps <= launch::kUpdateMaxWarpsPerBlock);
            QCOMPARE(u.shared_bytes, std::size_t{warps} * dim * sizeof(float));
            QVERIFY(u.shared_bytes <= launch::kSharedMemoryLimit);
            // Not more warps than fit: one more would pass the limit (or the cap is reached).
            QVERIFY(warps == launch::kUpdateMaxWarpsPerBlock ||
                    std::size_t{warps + 1} * dim * sizeof(float) > launch::kSharedMemoryLimit);
          }
          const GridLaunch u = updateLaunch(lookups, dim, sms);
          checkGrid(u, lookups, u.threads / launch::kWarp, sms, "update");
          const GridLaunch l = longUpdateLaunch(lookups, dim, sms);
          checkGrid(l, longRowBound(lookups), l.threads / launch::kWarp, sms, "hot row update");
        }
      }
    }
    // Short dims keep the most warps; a row of kMaxDim floats leaves one.
    QCOMPARE(updateLaunch(100, 128, 1).threads, launch::kUpdateMaxWarpsPerBlock * launch::kWarp);
    QCOMPARE(updateLaunch(100, launch::kMaxDim, 1).threads, launch::kWarp);
  }

  // A row is hot with more than kLongSegment occurrences: the bounds on hot
  // rows and their chunks hold for any split of the lookups into rows.
  void hotRowBounds() {
    QCOMPARE(longRowBound(launch::kLongSegment), std::uint64_t{0});
    QCOMPARE(longRowBound(launch::kLongSegment + 1), std::uint64_t{1});
    QCOMPARE(longChunkBound(launch::kLongSegment), std::uint64_t{0});
    QCOMPARE(chunkCountLaunch(launch::kLongSegment, 132).blocks, 0u);
    QCOMPARE(chunkSumLaunch(launch::kLongSegment, 132).blocks, 0u);
    QCOMPARE(longUpdateLaunch(launch::kLongSegment, 64, 132).blocks, 0u);
    for (std::uint64_t lookups : {std::uint64_t{257}, std::uint64_t{1000}, std::uint64_t{65536}, std::uint64_t{1310720},
                                  std::uint64_t{0xffffffffu}}) {
      const std::uint64_t rows = longRowBound(lookups);
      QVERIFY(rows * (launch::kLongSegment + 1) <= lookups);
      QVERIFY((rows + 1) * (launch::kLongSegment + 1) > lookups);
      // Worst cases for the chunk count: every hot row just over a chunk boundary, or one row of all lookups.
      const std::uint64_t per_row = launch::kLongSegment + 1;
      const std::uint64_t spread = rows * ((per_row + launch::kLongChunk - 1) / launch::kLongChunk);
      const std::uint64_t single = (lookups + launch::kLongChunk - 1) / launch::kLongChunk;
      QVERIFY(longChunkBound(lookups) >= spread);
      QVERIFY(longChunkBound(lookups) >= single);
      for (std::uint32_t sms : kSms) {
        checkGrid(chunkCountLaunch(lookups, sms), rows + 1, launch::kChunkBlockThreads, sms, "chunk count");
        checkGrid(chunkSumLaunch(lookups, sms), longChunkBound(lookups), launch::kChunkBlockThreads / launch::kWarp,
                  sms, "chunk sum");
      }
    }
  }

  void dimLimits() {
    QVERIFY(!dimSupported(0));
    QVERIFY(dimSupported(1));
    QVERIFY(dimSupported(launch::kMaxDim));
    QVERIFY(!dimSupported(launch::kMaxDim + 1));
    QVERIFY(launch::kTileColumns == launch::kWarp * launch::kTileRegisters);
  }

  void sortKeepsEveryRowBit() {
    const std::uint64_t totals[] = {
        1, 2, 3, 4, 5, 1000, 1u << 20, (1u << 20) + 1, 10000000, 0xffffffffu, std::uint64_t{1} << 32};
    for (std::uint64_t rows : totals) {
      const int bits = sortEndBit(rows);
      QVERIFY(bits >= 1 && bits <= 32);
      QVERIFY((std::uint64_t{1} << bits) >= rows);                     // every key below rows fits
      if (bits > 1) QVERIFY((std::uint64_t{1} << (bits - 1)) < rows);  // and no bit more
    }
    QCOMPARE(sortEndBit(0), 1);
  }
};

QTEST_APPLESS_MAIN(TestCudaLaunchConfig)
#include "test_cuda_launch_config.moc"
