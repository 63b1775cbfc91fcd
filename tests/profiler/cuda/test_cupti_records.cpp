// CUPTI activity records -> values -> engine spans, without a GPU: buffers of
// real CUPTI 13 record structs filled by hand (every kind the tracer
// enables, external correlation before and after its records, buffers out
// of order, dropped records, an unknown kind, NVTX range halves, mangled
// kernel names), then the sort, the phase and collective classification,
// the clock mapping and the spans of one rank.
#include <QTest>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "shardscope/profiler/cuda/cupti_records.h"

using namespace shardscope;
using namespace shardscope::profiler;
using namespace shardscope::profiler::cuda;
using Kind = GpuActivity::Kind;

namespace {

// An activity buffer as CUPTI fills it: records back to back, each 8-byte aligned.
class Buffer {
 public:
  template <typename Record>
  Buffer& put(const Record& r) {
    static_assert(alignof(Record) == 8);
    offsets_.push_back(words_.size());
    words_.resize(words_.size() + (sizeof(Record) + 7) / 8);
    std::memcpy(words_.data() + offsets_.back(), &r, sizeof(Record));
    return *this;
  }
  void deliver(ActivityCollector& c) const {
    for (const std::size_t o : offsets_) c.add(reinterpret_cast<const CUpti_Activity*>(words_.data() + o));
    c.bufferDone(bytes());
  }
  [[nodiscard]] std::size_t bytes() const { return words_.size() * 8; }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::size_t> offsets_;
};

template <typename Record>
Record zeroed() {
  Record r;
  std::memset(&r, 0, sizeof(r));
  return r;
}

CUpti_ActivityKernel10 kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t device,
                              std::uint32_t stream, std::uint32_t correlation) {
  auto k = zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = start;
  k.end = end;
  k.deviceId = device;
  k.contextId = 1;
  k.streamId = stream;
  k.correlationId = correlation;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.registersPerThread = 40;
  return k;
}

CUpti_ActivityMemcpy6 memcpyRecord(CUpti_ActivityMemcpyKind kind, std::uint64_t bytes, std::uint64_t start,
                                   std::uint64_t end, std::uint32_t device, std::uint32_t stream,
                                   std::uint32_t correlation, std::uint32_t runtime_correlation) {
  auto m = zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = static_cast<std::uint8_t>(kind);
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = stream;
  m.correlationId = correlation;
  m.runtimeCorrelationId = runtime_correlation;
  m.copyCount = 1;
  return m;
}

CUpti_ActivityMemset4 memsetRecord(std::uint64_t bytes, std::uint64_t start, std::uint64_t end, std::uint32_t device,
                                   std::uint32_t stream, std::uint32_t correlation) {
  auto m = zeroed<CUpti_ActivityMemset4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.value = 7;
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.deviceId = device;
  m.contextId = 1;
  m.streamId = stream;
  m.correlationId = correlation;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return m;
}

CUpti_ActivityAPI api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint64_t start, std::uint64_t end,
                      std::uint32_t correlation) {
  auto a = zeroed<CUpti_ActivityAPI>();
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = 4242;
  a.threadId = 77;
  a.correlationId = correlation;
  a.returnValue = 0;
  return a;
}

CUpti_ActivitySynchronization2 syncRecord(CUpti_ActivitySynchronizationType type, std::uint64_t start,
                                          std::uint64_t end, std::uint32_t correlation) {
  auto s = zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = type;
  s.start = start;
  s.end = end;
  s.correlationId = correlation;
  s.contextId = 1;
  s.streamId = GpuActivity::kNone;  // CUPTI_INVALID_STREAM_ID (its macro is an old-style cast)
  s.cudaEventId = 3;
  s.returnValue = 0;
  return s;
}

CUpti_ActivityMarker2 marker(CUpti_ActivityFlag flags, std::uint32_t id, std::uint64_t ts, const char* name,
                             const char* domain = nullptr) {
  auto m = zeroed<CUpti_ActivityMarker2>();
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flags;
  m.id = id;
  m.timestamp = ts;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 4242;
  m.objectId.pt.threadId = 78;
  m.name = name;
  m.domain = domain;
  return m;
}

CUpti_ActivityOverhead3 overhead(CUpti_ActivityOverheadKind kind, std::uint64_t start, std::uint64_t end) {
  auto o = zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = kind;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 4242;
  o.objectId.pt.threadId = 79;
  o.start = start;
  o.end = end;
  return o;
}

CUpti_ActivityExternalCorrelation external(
    std::uint64_t id, std::uint32_t correlation,
    CUpti_ExternalCorrelationKind kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  auto e = zeroed<CUpti_ActivityExternalCorrelation>();
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = kind;
  e.externalId = id;
  e.correlationId = correlation;
  return e;
}

// The engine's external ids (cuda_rank.h): (rank + 1) << 40 | (step + 1) << 8 | phase.
constexpr std::uint64_t phaseId(std::uint32_t rank, std::int64_t step, std::uint32_t phase) {
  return (std::uint64_t{rank} + 1) << 40 | static_cast<std::uint64_t>(step + 1) << 8 | phase;
}
constexpr std::uint32_t kEmbFwdPhase = 3, kA2aPooledPhase = 4;

const char* const kMangledFwd = "_Z13embedding_fwdPKfPKjPfi";
const char* const kFwdName = "embedding_fwd(float const*, unsigned int const*, float*, int)";
const char* const kMangledAllReduce = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";

// The trace's activity of `kind` with CUPTI correlation id `correlation` (the test stops without one).
const GpuActivity& byCorrelation(const ActivityTrace& t, Kind kind, std::uint32_t correlation) {
  for (const GpuActivity& a : t.activities)
    if (a.kind == kind && a.correlation_id == correlation) return a;
  qFatal("no %s activity with correlation id %u", toString(kind).data(), correlation);
}

}  // namespace

class TestCuptiRecords : public QObject {
  Q_OBJECT
 private slots:
  void demangleKeepsWhatIsNotACppSymbol() {
    QCOMPARE(demangle(kMangledFwd), std::string(kFwdName));
    QCOMPARE(demangle("plain_c_kernel"), std::string("plain_c_kernel"));
    QCOMPARE(demangle("i"), std::string("i"));  // a type code, not a symbol
    QCOMPARE(demangle("_Z!!broken"), std::string("_Z!!broken"));
    QCOMPARE(demangle(nullptr), std::string());
    QCOMPARE(tidyApiName("cudaLaunchKernel_v7000"), std::string_view("cudaLaunchKernel"));
    QCOMPARE(tidyApiName("cuMemcpyHtoDAsync_v2"), std::string_view("cuMemcpyHtoDAsync"));
    QCOMPARE(tidyApiName("cudaMalloc"), std::string_view("cudaMalloc"));
    QCOMPARE(tidyApiName("cuda_v"), std::string_view("cuda_v"));
    QCOMPARE(tidyApiName("cuda_vx1"), std::string_view("cuda_vx1"));
  }

  void ncclKernelNames_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("nccl");
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<QString>("protocol");
    QTest::addColumn<QString>("reduction");
    QTest::addColumn<QString>("dtype");
    QTest::newRow("2.19+ all-reduce") << "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
                                      << true << "all_reduce"
                                      << "RING"
                                      << "LL"
                                      << "Sum"
                                      << "f32";
    QTest::newRow("send/recv") << "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)" << true << "send_recv"
                               << ""
                               << ""
                               << ""
                               << "";
    QTest::newRow("all-gather") << "ncclDevKernel_AllGather_RING_LL128" << true << "all_gather"
                                << "RING"
                                << "LL128"
                                << ""
                                << "";
    QTest::newRow("reduce-scatter PAT") << "ncclDevKernel_ReduceScatter_Sum_bf16_PAT_SIMPLE" << true << "reduce_scatter"
                                        << "PAT"
                                        << "SIMPLE"
                                        << "Sum"
                                        << "bf16";
    QTest::newRow("collnet") << "ncclDevKernel_AllReduce_Sum_f16_COLLNET_DIRECT_SIMPLE" << true << "all_reduce"
                             << "COLLNET_DIRECT"
                             << "SIMPLE"
                             << "Sum"
                             << "f16";
    QTest::newRow("nvls tree") << "ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_SIMPLE" << true << "all_reduce"
                               << "NVLS_TREE"
                               << "SIMPLE"
                               << "Sum"
                               << "f32";
    QTest::newRow("broadcast") << "ncclDevKernel_Broadcast_RING_LL" << true << "broadcast"
                               << "RING"
                               << "LL"
                               << ""
                               << "";
    QTest::newRow("reduce") << "ncclDevKernel_Reduce_Max_i32_RING_LL" << true << "reduce"
                            << "RING"
                            << "LL"
                            << "Max"
                            << "i32";
    QTest::newRow("all-to-all") << "ncclDevKernel_AllToAll" << true << "all_to_all"
                                << ""
                                << ""
                                << ""
                                << "";
    QTest::newRow("pre-2.19") << "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
                              << true << "all_reduce"
                              << "RING"
                              << "LL"
                              << "Sum"
                              << "float";
    QTest::newRow("pre-2.19 int8_t") << "void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)" << true
                                     << "send_recv"
                                     << "RING"
                                     << "SIMPLE"
                                     << "Sum"
                                     << "int8_t";
    QTest::newRow("generic") << "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)" << true << ""
                             << ""
                             << ""
                             << ""
                             << "";
    QTest::newRow("not nccl") << "embedding_fwd(float const*)" << false << ""
                              << ""
                              << ""
                              << ""
                              << "";
    QTest::newRow("nccl in the middle") << "my_ncclDevKernel_AllReduce" << false << ""
                                        << ""
                                        << ""
                                        << ""
                                        << "";
  }
  void ncclKernelNames() {
    QFETCH(QString, name);
    QFETCH(bool, nccl);
    const std::string text = name.toStdString();
    const std::optional<NcclKernel> k = parseNcclKernel(text);
    QCOMPARE(k.has_value(), nccl);
    if (!k) return;
    QTEST(QString::fromUtf8(k->op.data(), static_cast<qsizetype>(k->op.size())), "op");
    QTEST(QString::fromStdString(k->algorithm), "algorithm");
    QTEST(QString::fromStdString(k->protocol), "protocol");
    QTEST(QString::fromStdString(k->reduction), "reduction");
    QTEST(QString::fromStdString(k->dtype), "dtype");
  }

  void everyKindIsConverted() {
    ActivityCollector c([](Kind api, std::uint32_t cbid) {
      return std::string(api == Kind::Runtime ? "cudaLaunchKernel" : "cuLaunchKernel") + "_v" + std::to_string(cbid);
    });
    Buffer b;
    b.put(kernel(kMangledFwd, 1000, 1500, 0, 7, 11))
        .put(memcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 65536, 1600, 1700, 0, 7, 12, 13))
        .put(memsetRecord(4096, 1800, 1810, 0, 7, 14))
        .put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 900, 950, 11))
        .put(api(CUPTI_ACTIVITY_KIND_DRIVER, 307, 910, 940, 11))
        .put(syncRecord(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 1900, 2000, 15))
        .put(marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 5, 1950, "checkpoint", "shardscope"))
        .put(overhead(CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH, 2100, 2300))
        .put(external(99, 11));
    b.deliver(c);
    QCOMPARE(c.pending(), std::size_t{8});
    const ActivityTrace t = c.finish();
    QCOMPARE(t.activities.size(), std::size_t{8});
    QCOMPARE(t.stats.records, std::uint64_t{9});
    QCOMPARE(t.stats.buffers, std::uint64_t{1});
    QCOMPARE(t.stats.buffer_bytes, static_cast<std::uint64_t>(b.bytes()));
    for (std::size_t k = 0; k < GpuActivity::kKindCount; ++k) QCOMPARE(t.stats.by_kind[k], std::uint64_t{1});
    QCOMPARE(t.stats.external_correlations, std::uint64_t{1});
    QCOMPARE(t.stats.unknown, std::uint64_t{0});

    const GpuActivity& k = byCorrelation(t, Kind::Kernel, 11);
    QCOMPARE(t.nameOf(k), std::string_view(kFwdName));
    QCOMPARE(k.start_ns, std::int64_t{1000});
    QCOMPARE(k.end_ns, std::int64_t{1500});
    QCOMPARE(k.device, 0u);
    QCOMPARE(k.context, 1u);
    QCOMPARE(k.stream, 7u);
    QCOMPARE(k.external_id, std::uint64_t{99});
    QVERIFY((k.grid == std::array<std::int32_t, 3>{128, 2, 1}));
    QVERIFY((k.block == std::array<std::int32_t, 3>{256, 1, 1}));
    QCOMPARE(k.static_shared_bytes, 1024);
    QCOMPARE(k.dynamic_shared_bytes, 4096);
    QCOMPARE(k.registers_per_thread, std::uint16_t{40});

    const GpuActivity& m = byCorrelation(t, Kind::Memcpy, 12);
    QCOMPARE(t.nameOf(m), std::string_view("HtoD"));
    QCOMPARE(m.bytes, std::uint64_t{65536});
    QCOMPARE(m.runtime_correlation_id, 13u);
    QCOMPARE(m.detail, static_cast<std::uint32_t>(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD));
    QCOMPARE(m.src_memory, static_cast<std::uint8_t>(CUPTI_ACTIVITY_MEMORY_KIND_PINNED));
    QCOMPARE(m.dst_memory, static_cast<std::uint8_t>(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE));
    QCOMPARE(m.external_id, std::uint64_t{0});

    const GpuActivity& s = byCorrelation(t, Kind::Memset, 14);
    QCOMPARE(t.nameOf(s), std::string_view("memset"));
    QCOMPARE(s.bytes, std::uint64_t{4096});
    QCOMPARE(s.detail, 7u);

    const GpuActivity& rt = byCorrelation(t, Kind::Runtime, 11);
    const GpuActivity& drv = byCorrelation(t, Kind::Driver, 11);
    QCOMPARE(t.nameOf(rt), std::string_view("cudaLaunchKernel"));
    QCOMPARE(t.nameOf(drv), std::string_view("cuLaunchKernel"));
    QCOMPARE(rt.detail, 211u);
    QCOMPARE(rt.process, 4242u);
    QCOMPARE(rt.thread, 77u);
    QCOMPARE(rt.device, GpuActivity::kNone);
    QCOMPARE(rt.external_id, std::uint64_t{99});

    const GpuActivity& sy = byCorrelation(t, Kind::Synchronization, 15);
    QCOMPARE(t.nameOf(sy), std::string_view("stream_synchronize"));
    QCOMPARE(sy.stream, GpuActivity::kNone);
    QCOMPARE(sy.end_ns - sy.start_ns, std::int64_t{100});

    const auto mk = std::find_if(t.activities.begin(), t.activities.end(),
                                 [](const GpuActivity& a) { return a.kind == Kind::Marker; });
    QVERIFY(mk != t.activities.end());
    QCOMPARE(t.nameOf(*mk), std::string_view("checkpoint"));
    QCOMPARE(t.nameOf(mk->domain), std::string_view("shardscope"));
    QCOMPARE(mk->start_ns, mk->end_ns);
    QCOMPARE(mk->thread, 78u);

    const auto ov = std::find_if(t.activities.begin(), t.activities.end(),
                                 [](const GpuActivity& a) { return a.kind == Kind::Overhead; });
    QVERIFY(ov != t.activities.end());
    QCOMPARE(t.nameOf(*ov), std::string_view("cupti_buffer_flush"));
    QCOMPARE(ov->thread, 79u);
    QCOMPARE(toString(ov->kind), std::string_view("overhead"));
  }

  void apiNamesWithoutANamerAndInternedOnce() {
    ActivityCollector c;
    Buffer b;
    b.put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 10, 20, 1))
        .put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 30, 40, 2))
        .put(api(CUPTI_ACTIVITY_KIND_DRIVER, 211, 31, 39, 2))
        .put(kernel(kMangledFwd, 50, 60, 0, 1, 1))
        .put(kernel(kMangledFwd, 70, 80, 0, 1, 2));
    b.deliver(c);
    const ActivityTrace t = c.finish();
    QCOMPARE(t.nameOf(byCorrelation(t, Kind::Runtime, 1)), std::string_view("cuda_runtime#211"));
    QCOMPARE(t.nameOf(byCorrelation(t, Kind::Driver, 2)), std::string_view("cuda_driver#211"));
    QCOMPARE(byCorrelation(t, Kind::Runtime, 1).name, byCorrelation(t, Kind::Runtime, 2).name);
    QCOMPARE(byCorrelation(t, Kind::Kernel, 1).name, byCorrelation(t, Kind::Kernel, 2).name);
    QCOMPARE(t.names.size(), std::size_t{4});  // "", two API names, one kernel name
  }

  void externalCorrelationBeforeOrAfterItsRecords() {
    ActivityCollector c;
    // Buffer 2 (delivered first) has launches whose correlation comes in buffer 3, later.
    Buffer b1, b2, b3;
    b1.put(external(phaseId(0, 0, kEmbFwdPhase), 21))
        .put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 100, 110, 21))
        .put(external(phaseId(0, 0, kEmbFwdPhase), 21))                   // repeated, same id
        .put(external(555, 21, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1))  // another kind: ignored
        .put(kernel(kMangledFwd, 200, 300, 0, 7, 21));
    b2.put(kernel(kMangledAllReduce, 400, 900, 0, 9, 22))
        .put(memcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 100, 950, 960, 0, 9, 40, 23))
        .put(kernel(kMangledFwd, 1000, 1100, 0, 7, 24));
    b3.put(external(phaseId(0, 0, kA2aPooledPhase), 22))
        .put(external(phaseId(0, 1, kA2aPooledPhase), 23))  // the copy's runtime correlation
        .put(external(phaseId(0, 0, kEmbFwdPhase), 22));    // conflicting: the first id stays
    b2.deliver(c);
    b1.deliver(c);
    b3.deliver(c);
    const ActivityTrace t = c.finish();
    QCOMPARE(byCorrelation(t, Kind::Kernel, 21).external_id, phaseId(0, 0, kEmbFwdPhase));
    QCOMPARE(byCorrelation(t, Kind::Runtime, 21).external_id, phaseId(0, 0, kEmbFwdPhase));
    QCOMPARE(byCorrelation(t, Kind::Kernel, 22).external_id, phaseId(0, 0, kA2aPooledPhase));
    QCOMPARE(byCorrelation(t, Kind::Memcpy, 40).external_id, phaseId(0, 1, kA2aPooledPhase));
    QCOMPARE(byCorrelation(t, Kind::Kernel, 24).external_id, std::uint64_t{0});
    QCOMPARE(t.stats.external_correlations, std::uint64_t{5});
    QCOMPARE(t.stats.external_other, std::uint64_t{1});
    QCOMPARE(t.stats.external_conflicts, std::uint64_t{1});
    QCOMPARE(t.stats.external_resolved, std::uint64_t{4});
    QCOMPARE(t.stats.buffers, std::uint64_t{3});
    QCOMPARE(t.stats.buffer_bytes, static_cast<std::uint64_t>(b1.bytes() + b2.bytes() + b3.bytes()));
  }

  void buffersInAnyOrderComeOutSorted() {
    ActivityCollector c;
    Buffer late, early;
    late.put(kernel("k_d1_s3", 500, 600, 1, 3, 1))
        .put(kernel("k_d0_s9", 50, 60, 0, 9, 2))
        .put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 5, 6, 3));
    early.put(kernel("k_d0_s3_b", 300, 400, 0, 3, 4))
        .put(kernel("k_d0_s3_a", 100, 200, 0, 3, 5))
        .put(memcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8, 10, 20, 1, 3, 6, 0))
        .put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 1, 1, 2, 7));
    late.deliver(c);
    early.deliver(c);
    const ActivityTrace t = c.finish();
    std::vector<std::uint32_t> order;
    for (const GpuActivity& a : t.activities) order.push_back(a.correlation_id);
    // (device, stream, start): d0 s3 (100, 300), d0 s9, d1 s3 (copy at 10, kernel at 500), host calls last by start.
    QCOMPARE(order, (std::vector<std::uint32_t>{5, 4, 2, 6, 1, 7, 3}));
  }

  void droppedRecordsAndUnknownKindsAreCountedNotFatal() {
    ActivityCollector c;
    auto context = zeroed<CUpti_ActivityContext3>();
    context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    auto strange = zeroed<CUpti_ActivityExternalCorrelation>();
    strange.kind = static_cast<CUpti_ActivityKind>(0x7000);
    Buffer b;
    b.put(context).put(kernel("k", 1, 2, 0, 1, 1)).put(strange).put(context).put(kernel("k", 3, 4, 0, 1, 2));
    b.deliver(c);
    c.addDropped(5);
    c.addDropped(7);
    const ActivityTrace t = c.finish();
    QCOMPARE(t.activities.size(), std::size_t{2});
    QCOMPARE(t.stats.records, std::uint64_t{5});
    QCOMPARE(t.stats.unknown, std::uint64_t{3});
    QCOMPARE(t.stats.unknown_kinds.size(), std::size_t{2});
    QCOMPARE(t.stats.unknown_kinds.at(CUPTI_ACTIVITY_KIND_CONTEXT), std::uint64_t{2});
    QCOMPARE(t.stats.unknown_kinds.at(0x7000u), std::uint64_t{1});
    QCOMPARE(t.stats.dropped, std::uint64_t{12});
  }

  void nvtxRangesArePairedById() {
    ActivityCollector c;
    Buffer first, second;
    // Range 1 opens in the first buffer and closes in the second; range 2's
    // end arrives before its start; range 3 never closes; range 9 never opened.
    first.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 1000, "step 0", "shardscope"))
        .put(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 1900, nullptr))
        .put(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, 2500, "open"));
    second.put(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 2000, nullptr))
        .put(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 1200, "emb_fwd"))
        .put(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 9, 3000, nullptr));
    first.deliver(c);
    second.deliver(c);
    const ActivityTrace t = c.finish();
    QCOMPARE(t.activities.size(), std::size_t{2});
    QCOMPARE(t.nameOf(t.activities[0]), std::string_view("step 0"));
    QCOMPARE(t.activities[0].start_ns, std::int64_t{1000});
    QCOMPARE(t.activities[0].end_ns, std::int64_t{2000});
    QCOMPARE(t.nameOf(t.activities[0].domain), std::string_view("shardscope"));
    QCOMPARE(t.activities[0].detail, 1u);
    QCOMPARE(t.nameOf(t.activities[1]), std::string_view("emb_fwd"));
    QCOMPARE(t.activities[1].start_ns, std::int64_t{1200});
    QCOMPARE(t.activities[1].end_ns, std::int64_t{1900});
    QCOMPARE(t.activities[1].domain, 0u);
    QCOMPARE(t.activities[1].thread, 78u);
    QCOMPARE(t.stats.unpaired_markers, std::uint64_t{2});
    QCOMPARE(t.stats.by_kind[static_cast<std::size_t>(Kind::Marker)], std::uint64_t{6});
  }

  void finishStartsAfreshWithCumulativeStats() {
    ActivityCollector c;
    Buffer b;
    b.put(external(5, 1)).put(kernel(kMangledFwd, 1, 2, 0, 1, 1));
    b.deliver(c);
    const ActivityTrace t1 = c.finish();
    QCOMPARE(t1.activities.size(), std::size_t{1});
    QCOMPARE(c.pending(), std::size_t{0});
    Buffer b2;
    b2.put(kernel("other", 3, 4, 0, 1, 1));  // correlation 1 again: the earlier trace's id is gone
    b2.deliver(c);
    const ActivityTrace t2 = c.finish();
    QCOMPARE(t2.activities.size(), std::size_t{1});
    QCOMPARE(t2.nameOf(t2.activities[0]), std::string_view("other"));
    QCOMPARE(t2.activities[0].external_id, std::uint64_t{0});
    QCOMPARE(t2.names.size(), std::size_t{2});
    QCOMPARE(t2.stats.records, std::uint64_t{3});
    QCOMPARE(t2.stats.buffers, std::uint64_t{2});
  }

  void clockMappingShiftsAndInterpolates() {
    const ClockMapping fixed = ClockMapping::constant(-1'000);
    QCOMPARE(fixed.toSteady(5'000), std::int64_t{4'000});
    ClockMapping m;
    m.start = {1'000'000, 500};
    m.stop = {2'000'000, 1'500};
    m.has_stop = true;
    QCOMPARE(m.offsetAt(1'000'000), std::int64_t{500});
    QCOMPARE(m.offsetAt(1'500'000), std::int64_t{1'000});
    QCOMPARE(m.offsetAt(1'250'000), std::int64_t{750});
    QCOMPARE(m.offsetAt(2'000'000), std::int64_t{1'500});
    QCOMPARE(m.offsetAt(10), std::int64_t{500});           // before the start: the start's offset
    QCOMPARE(m.offsetAt(9'000'000), std::int64_t{1'500});  // after the stop: the stop's
    QCOMPARE(m.toSteady(1'500'000), std::int64_t{1'501'000});
    m.has_stop = false;
    QCOMPARE(m.offsetAt(1'500'000), std::int64_t{500});
  }

  void spansOfOneRank() {
    ActivityCollector c;
    Buffer b;
    b.put(external(phaseId(0, 0, kEmbFwdPhase), 1))
        .put(external(phaseId(0, 0, kA2aPooledPhase), 2))
        .put(external(phaseId(0, 3, 0xFF), 6))                   // a phase the lookup does not know
        .put(kernel(kMangledFwd, 1'000, 1'400, 0, 13, 1))        // emb_fwd, stream 13
        .put(kernel(kMangledAllReduce, 2'000, 2'600, 0, 20, 2))  // NCCL in a2a_pooled, stream 20
        .put(kernel(kMangledAllReduce, 3'000, 3'500, 0, 20, 3))  // NCCL, no phase: by op
        .put(kernel("ncclDevKernel_Generic_1", 3'600, 3'700, 0, 20, 4))
        .put(memcpyRecord(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 500, 800, 0, 13, 5, 0))
        .put(memsetRecord(256, 900, 950, 0, 13, 6))
        .put(kernel("untimed", 0, 0, 0, 13, 7))
        .put(kernel("other_device", 100, 200, 1, 13, 8))
        .put(api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 10, 20, 1));
    b.deliver(c);
    const ActivityTrace t = c.finish();

    TraceRecorder rec;
    SpanOptions o;
    o.rank = 3;
    o.clock = ClockMapping::constant(1'000'000);
    o.phase = [](std::uint64_t id) -> std::optional<PhaseInfo> {
      const auto phase = static_cast<std::uint32_t>(id & 0xFF);
      const auto step = static_cast<std::int64_t>((id >> 8) & 0xFFFFFFFF) - 1;
      if (phase == kEmbFwdPhase) return PhaseInfo{span_kind::kEmbFwd, step};
      if (phase == kA2aPooledPhase) return PhaseInfo{span_kind::kA2aPooled, step};
      return std::nullopt;
    };
    o.select = [](const GpuActivity& a) { return a.device == 0; };
    const GpuSpans g = gpuSpans(t, o, rec);

    QCOMPARE(g.streams.size(), std::size_t{2});
    QCOMPARE(g.streams[0].cupti_stream, 13u);
    QCOMPARE(g.streams[0].stream, 2);
    QCOMPARE(g.streams[1].cupti_stream, 20u);
    QCOMPARE(g.streams[1].stream, 3);
    QCOMPARE(g.spans.size(), std::size_t{6});
    QCOMPARE(g.kernels, std::uint64_t{1});
    QCOMPARE(g.collectives, std::uint64_t{3});
    QCOMPARE(g.copies, std::uint64_t{2});
    QCOMPARE(g.with_phase, std::uint64_t{2});
    QCOMPARE(g.untimed, std::uint64_t{1});

    struct Want {
      std::string_view kind, name;
      int stream;
      std::int64_t start, end, step, bytes, correlation;
    };
    const Want want[] = {
        {"memcpy", "HtoD", 2, 1'000'500, 1'000'800, -1, 4096, 5},
        {"memset", "memset", 2, 1'000'900, 1'000'950, -1, 256, 6},
        {"emb_fwd", kFwdName, 2, 1'001'000, 1'001'400, 0, 0, 1},
        {"a2a_pooled", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 3, 1'002'000,
         1'002'600, 0, 0, 2},
        {"all_reduce", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 3, 1'003'000,
         1'003'500, -1, 0, 3},
        {"nccl", "ncclDevKernel_Generic_1", 3, 1'003'600, 1'003'700, -1, 0, 4},
    };
    for (std::size_t i = 0; i < g.spans.size(); ++i) {
      const TraceRecorder::SpanRec& s = g.spans[i];
      const Want& w = want[i];
      QCOMPARE(s.rank, 3);
      QCOMPARE(s.kind, rec.name(w.kind));
      QCOMPARE(s.name, rec.name(w.name));
      QCOMPARE(s.table, 0u);
      QCOMPARE(s.stream, w.stream);
      QCOMPARE(s.start_ns, w.start);
      QCOMPARE(s.end_ns, w.end);
      QCOMPARE(s.step, w.step);
      QCOMPARE(s.bytes, w.bytes);
      QCOMPARE(s.correlation, w.correlation);
    }

    // Without a lookup or a selection: every device, no phases, streams per (device, stream).
    TraceRecorder all_rec;
    const GpuSpans all = gpuSpans(t, SpanOptions{}, all_rec);
    QCOMPARE(all.spans.size(), std::size_t{7});
    QCOMPARE(all.streams.size(), std::size_t{3});
    QCOMPARE(all.streams[2].device, 1u);
    QCOMPARE(all.streams[2].stream, 4);
    QCOMPARE(all.with_phase, std::uint64_t{0});
    QCOMPARE(all.spans[2].kind, all_rec.name(gpu_span_kind::kKernel));
    QCOMPARE(all.spans[3].kind, all_rec.name(gpu_span_kind::kAllReduce));
  }

  void cuptiErrorsNameTheCallAndTheCause() {
    const core::Error busy = cuptiError("cuptiSubscribe_v2", CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
                                        "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    QVERIFY(busy.kind == core::ErrorKind::Io);
    QVERIFY(busy.message.starts_with("cuptiSubscribe_v2 failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"));
    QVERIFY(busy.message.find("(CUPTI error 39)") != std::string::npos);
    QVERIFY(busy.message.find("another profiler (Nsight Systems, the PyTorch profiler, DCGM) already traces this "
                              "process") != std::string::npos);
    const core::Error init = cuptiError("cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)",
                                        CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED");
    QVERIFY(init.message.find("no usable GPU or driver") != std::string::npos);
    QVERIFY(init.message.find("another profiler") != std::string::npos);
    const core::Error perm = cuptiError("cuptiActivityEnable", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "");
    QVERIFY(perm.message.find("unknown CUPTI error (CUPTI error 35)") != std::string::npos);
    QVERIFY(perm.message.find("may not trace") != std::string::npos);
    const core::Error plain = cuptiError("cuptiActivityFlushAll", CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN");
    QCOMPARE(plain.message, std::string("cuptiActivityFlushAll failed: CUPTI_ERROR_UNKNOWN (CUPTI error 999)"));
  }

  // The engine's collectives take their times from the NCCL kernels inside their
  // phase window (same rank and step) and NCCL's algorithm/protocol from their names.
  void collectivesTakeTheirNcclKernelsTimesAndAlgorithm() {
    TraceRecorder rec;
    const std::uint32_t op = rec.name("all_to_all"), group = rec.name("0,1");
    TraceRecorder::CollectiveRec a2a{0, 3, op, group, 4096, 1, 1000, 2000};
    TraceRecorder::CollectiveRec other_step{0, 4, op, group, 4096, 1, 1000, 2000};
    TraceRecorder::CollectiveRec other_rank{1, 3, op, group, 4096, 1, 1000, 2000};
    TraceRecorder::CollectiveRec no_kernel{0, 3, op, group, 4096, 1, 5000, 6000};
    for (const auto& c : {a2a, other_step, other_rank, no_kernel}) rec.collective(c);
    const std::uint32_t kind = rec.name("send_recv");
    const std::vector<TraceRecorder::SpanRec> spans = {
        {0, 2, kind, rec.name("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), 0, 1100, 1300, 3, 0},
        {0, 2, kind, rec.name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"), 0, 1500,
         1900, 3, 0},
        {0, 2, rec.name("kernel"), rec.name("tbeForward"), 0, 1000, 2000, 3, 0},  // not NCCL's: ignored
        {0, 2, kind, rec.name("ncclDevKernel_SendRecv"), 0, 2500, 2600, 3, 0},    // outside the window
    };
    refineCollectives(rec, 0, spans);
    const auto& c = rec.collectives();
    QCOMPARE(c[0].start_ns, std::int64_t{1100});
    QCOMPARE(c[0].end_ns, std::int64_t{1900});
    QCOMPARE(rec.text(c[0].algorithm), std::string("RING/LL"));
    QCOMPARE(c[1].start_ns, std::int64_t{1000});  // another step
    QCOMPARE(c[1].algorithm, 0u);
    QCOMPARE(c[2].end_ns, std::int64_t{2000});    // another rank
    QCOMPARE(c[3].start_ns, std::int64_t{5000});  // no kernel in its window: CUDA-event times stay
  }
};

QTEST_GUILESS_MAIN(TestCuptiRecords)
#include "test_cupti_records.moc"
