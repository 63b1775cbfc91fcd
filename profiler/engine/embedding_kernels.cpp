// CPU embedding kernels. Two code paths with identical results: a portable one
// (plain C++, any x86-64 or other CPU) and an AVX2+F16C one chosen at run time.
// The build has no -march flag, so the fast path is compiled per function with
// target attributes. FMA is deliberately not enabled: every sum and product
// below is a separately rounded operation, which is what makes both paths (and
// the tests' naive loops) bit-identical.
#include "shardscope/profiler/engine/embedding_kernels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "shardscope/core/hash.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHARDSCOPE_KERNELS_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define SHARDSCOPE_KERNELS_X86 0
#endif

namespace shardscope::profiler {

// ---------------------------------------------------------------- fp16

float halfToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits = 0;
  if (exp == 0) {
    // Zero or subnormal: mant x 2^-24, exact in fp32.
    bits = sign | std::bit_cast<std::uint32_t>(static_cast<float>(mant) * 0x1p-24f);
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t floatToHalf(float f) {
  // Round to nearest even, overflow to infinity, NaN stays NaN with the quiet bit
  // set and the payload's top bits kept (what F16C's vcvtps2ph does).
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  std::uint32_t o = 0;
  if (x >= 0x47800000u) {  // |f| >= 65536, inf or nan
    o = x > 0x7f800000u ? (0x7e00u | ((x >> 13) & 0x3ffu)) : 0x7c00u;
  } else if (x < 0x38800000u) {  // |f| < 2^-14: subnormal or zero
    // Adding 0.5 aligns the value's bits to the half's subnormal ulp (2^-24),
    // and the fp32 addition rounds to nearest even for us.
    const float magic = 0.5f;
    const float sum = std::bit_cast<float>(x) + magic;
    o = std::bit_cast<std::uint32_t>(sum) - std::bit_cast<std::uint32_t>(magic);
  } else {
    const std::uint32_t mant_odd = (x >> 13) & 1u;
    x += (static_cast<std::uint32_t>(15 - 127) << 23) + 0xfffu + mant_odd;
    o = x >> 13;  // a carry into exponent 31 gives infinity, as it should
  }
  return static_cast<std::uint16_t>(o | sign);
}

// ---------------------------------------------------------------- shard

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}

void* allocateTableBytes(std::size_t bytes) {
  if (bytes < kHugePage) return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP it is ignored
#endif
  return p;
}

void freeTableBytes(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugePage) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

namespace {

using core::mix64;

// Uniform in [-0.05, 0.05) from 24 random bits: small enough that Sum pooling over
// long bags stays far from fp16 overflow, large enough to be visibly non-zero.
float initialValue(std::uint64_t row_key, std::uint64_t global_col) {
  const std::uint64_t h = mix64(row_key ^ (global_col * 0xc2b2ae3d27d4eb4fULL));
  const float u = static_cast<float>(h >> 40) * 0x1p-24f;
  return (u - 0.5f) * 0.1f;
}

}  // namespace

EmbeddingShard::EmbeddingShard(std::uint64_t rows, std::uint32_t dim, WeightType type)
    : rows_(rows), dim_(dim), type_(type) {
  const std::size_t n = static_cast<std::size_t>(rows) * dim;
  if (type == WeightType::F32) {
    f32_.assign(n, 0.0f);
  } else {
    f16_.assign(n, 0);
  }
  momentum_.assign(static_cast<std::size_t>(rows), 0.0f);
}

void EmbeddingShard::initialize(std::uint64_t seed, std::uint64_t row_offset, std::uint32_t col_offset) {
  for (std::uint64_t r = 0; r < rows_; ++r) {
    const std::uint64_t row_key = mix64(seed ^ mix64((row_offset + r) * 0x9e3779b97f4a7c15ULL + 1));
    if (type_ == WeightType::F32) {
      float* w = f32Row(r);
      for (std::uint32_t c = 0; c < dim_; ++c) w[c] = initialValue(row_key, std::uint64_t{col_offset} + c);
    } else {
      std::uint16_t* w = f16Row(r);
      for (std::uint32_t c = 0; c < dim_; ++c) w[c] = floatToHalf(initialValue(row_key, std::uint64_t{col_offset} + c));
    }
  }
  std::fill(momentum_.begin(), momentum_.end(), 0.0f);
}

std::size_t EmbeddingShard::rowBytes() const {
  return std::size_t{dim_} * (type_ == WeightType::F32 ? sizeof(float) : sizeof(std::uint16_t));
}

float* EmbeddingShard::f32Row(std::uint64_t r) { return f32_.data() + static_cast<std::size_t>(r) * dim_; }
const float* EmbeddingShard::f32Row(std::uint64_t r) const { return f32_.data() + static_cast<std::size_t>(r) * dim_; }
std::uint16_t* EmbeddingShard::f16Row(std::uint64_t r) { return f16_.data() + static_cast<std::size_t>(r) * dim_; }
const std::uint16_t* EmbeddingShard::f16Row(std::uint64_t r) const {
  return f16_.data() + static_cast<std::size_t>(r) * dim_;
}

std::span<std::byte> EmbeddingShard::weightBytes() {
  if (type_ == WeightType::F32) return std::as_writable_bytes(std::span<float>(f32_.data(), f32_.size()));
  return std::as_writable_bytes(std::span<std::uint16_t>(f16_.data(), f16_.size()));
}

std::span<const std::byte> EmbeddingShard::weightBytes() const {
  if (type_ == WeightType::F32) return std::as_bytes(std::span<const float>(f32_.data(), f32_.size()));
  return std::as_bytes(std::span<const std::uint16_t>(f16_.data(), f16_.size()));
}

std::uint64_t EmbeddingShard::memoryBytes() const {
  return static_cast<std::uint64_t>(weightBytes().size()) + momentum_.size() * sizeof(float);
}

std::uint64_t EmbeddingShard::digest() const {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto feed = [&h](std::span<const std::byte> bytes) {
    for (const std::byte b : bytes) {
      h ^= static_cast<std::uint64_t>(b);
      h *= 0x100000001b3ULL;
    }
  };
  feed(weightBytes());
  feed(std::as_bytes(std::span<const float>(momentum_.data(), momentum_.size())));
  return h;
}

// ---------------------------------------------------------------- dispatch

KernelIsa detectedKernelIsa() {
#if SHARDSCOPE_KERNELS_X86
  static const KernelIsa isa = [] {
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (ECX bit 29): older compilers lack its __builtin_cpu_supports name.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
    return __builtin_cpu_supports("avx2") && f16c ? KernelIsa::Avx2F16c : KernelIsa::Portable;
  }();
  return isa;
#else
  return KernelIsa::Portable;
#endif
}

const char* kernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Portable:
      return "portable";
    case KernelIsa::Avx2F16c:
      return "avx2+f16c";
  }
  return "?";
}

namespace {

KernelIsa usable(KernelIsa wanted) {
  return wanted == KernelIsa::Avx2F16c && detectedKernelIsa() == KernelIsa::Avx2F16c ? KernelIsa::Avx2F16c
                                                                                     : KernelIsa::Portable;
}

// Runs body over [0, n) on the pool, or inline without one.
template <typename Body>
void forRange(ThreadPool* pool, std::size_t n, std::size_t grain, const Body& body) {
  if (n == 0) return;
  if (pool == nullptr || pool->size() <= 1 || n <= grain) {
    body(std::size_t{0}, n);
    return;
  }
  // A one-reference wrapper fits std::function's small buffer: no allocation per call.
  const auto by_ref = [&body](std::size_t b, std::size_t e) { body(b, e); };
  pool->parallelFor(n, grain, by_ref);
}

float meanScale(std::uint32_t len) { return len == 0 ? 0.0f : 1.0f / static_cast<float>(len); }

// ---------------------------------------------------------------- forward, portable

// Column blocks of 64 accumulated in a local array the compiler keeps in
// registers or L1 (SSE2 on plain x86-64), rows prefetched a few ids ahead.
template <WeightType T>
void forwardPortableT(const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out,
                      std::size_t out_stride, std::size_t s_begin, std::size_t s_end) {
  constexpr std::uint32_t kBlock = 64;
  constexpr std::uint32_t kAhead = 8;
  const std::uint32_t dim = shard.dim();
  const std::size_t row_bytes = shard.rowBytes();
  const auto* base = reinterpret_cast<const char*>(shard.weightBytes().data());
  const auto n_ids = static_cast<std::uint32_t>(bags.ids.size());
  for (std::size_t s = s_begin; s < s_end; ++s) {
    float* o = out + s * out_stride;
    const std::uint32_t b = bags.offsets[s];
    const std::uint32_t e = bags.offsets[s + 1];
    const float scale = pooling == Pooling::Mean && e > b ? meanScale(e - b) : 1.0f;
    for (std::uint32_t c0 = 0; c0 < dim; c0 += kBlock) {
      const std::uint32_t w = std::min(kBlock, dim - c0);
      float acc[kBlock] = {};
      for (std::uint32_t p = b; p < e; ++p) {
        if (c0 == 0 && p + kAhead < n_ids) {
          const char* ahead = base + std::size_t{bags.ids[p + kAhead]} * row_bytes;
          for (std::size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(ahead + off, 0, 3);
        }
        if constexpr (T == WeightType::F32) {
          const float* row = shard.f32Row(bags.ids[p]) + c0;
          for (std::uint32_t c = 0; c < w; ++c) acc[c] += row[c];
        } else {
          const std::uint16_t* row = shard.f16Row(bags.ids[p]) + c0;
          for (std::uint32_t c = 0; c < w; ++c) acc[c] += halfToFloat(row[c]);
        }
      }
      for (std::uint32_t c = 0; c < w; ++c) o[c0 + c] = acc[c] * scale;
    }
  }
}

void forwardPortable(const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out, std::size_t out_stride,
                     std::size_t s_begin, std::size_t s_end) {
  if (shard.type() == WeightType::F32) {
    forwardPortableT<WeightType::F32>(shard, bags, pooling, out, out_stride, s_begin, s_end);
  } else {
    forwardPortableT<WeightType::F16>(shard, bags, pooling, out, out_stride, s_begin, s_end);
  }
}

// ---------------------------------------------------------------- forward, AVX2

#if SHARDSCOPE_KERNELS_X86
#define SHARDSCOPE_AVX2 __attribute__((target("avx2,f16c")))

// Forward: prefetch about 4 KiB of rows ahead (8 rows of 512 bytes, 32 of 128),
// enough lines in flight to cover DRAM latency with small rows too.
std::uint32_t forwardPrefetchDistance(std::size_t row_bytes) {
  return static_cast<std::uint32_t>(std::clamp<std::size_t>(4096 / std::max<std::size_t>(row_bytes, 1), 8, 32));
}
constexpr std::size_t kUpdatePrefetchDistance = 6;  // backward: unique rows ahead

template <WeightType T>
SHARDSCOPE_AVX2 inline __m256 load8(const void* row, std::uint32_t c) {
  if constexpr (T == WeightType::F32) {
    return _mm256_loadu_ps(static_cast<const float*>(row) + c);
  } else {
    const auto* p = static_cast<const std::uint16_t*>(row) + c;
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
}

SHARDSCOPE_AVX2 inline void prefetchRow(const char* row, std::size_t bytes) {
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(row + off, 0, 3);
}

// One block of NV x 8 columns [c0, c0 + 8 NV) of one bag, accumulated in registers.
template <WeightType T, int NV>
SHARDSCOPE_AVX2 inline void bagBlock(const char* base, std::size_t row_bytes, const std::uint32_t* ids, std::uint32_t b,
                                     std::uint32_t e, std::uint32_t n_ids, std::uint32_t c0, std::uint32_t prefetch,
                                     float scale, float* o) {
  __m256 acc[NV];
  for (int v = 0; v < NV; ++v) acc[v] = _mm256_setzero_ps();
  for (std::uint32_t p = b; p < e; ++p) {
    if (prefetch != 0 && p + prefetch < n_ids) {
      prefetchRow(base + std::size_t{ids[p + prefetch]} * row_bytes, row_bytes);
    }
    const char* row = base + std::size_t{ids[p]} * row_bytes;
    for (int v = 0; v < NV; ++v) acc[v] = _mm256_add_ps(acc[v], load8<T>(row, c0 + 8 * static_cast<std::uint32_t>(v)));
  }
  if (scale != 1.0f) {
    const __m256 sv = _mm256_set1_ps(scale);
    for (int v = 0; v < NV; ++v) acc[v] = _mm256_mul_ps(acc[v], sv);
  }
  for (int v = 0; v < NV; ++v) _mm256_storeu_ps(o + c0 + 8 * v, acc[v]);
}

template <WeightType T>
SHARDSCOPE_AVX2 void forwardAvx2T(const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out,
                                  std::size_t out_stride, std::size_t s_begin, std::size_t s_end) {
  const std::uint32_t dim = shard.dim();
  const std::size_t row_bytes = shard.rowBytes();
  const char* base = reinterpret_cast<const char*>(shard.weightBytes().data());
  const std::uint32_t* ids = bags.ids.data();
  const auto n_ids = static_cast<std::uint32_t>(bags.ids.size());
  const std::uint32_t vec_cols = dim & ~7u;
  for (std::size_t s = s_begin; s < s_end; ++s) {
    float* o = out + s * out_stride;
    const std::uint32_t b = bags.offsets[s];
    const std::uint32_t e = bags.offsets[s + 1];
    // Mean multiplies the sum by 1/len (an empty bag stays zero); Sum leaves it.
    const float scale = pooling == Pooling::Mean && e > b ? meanScale(e - b) : 1.0f;
    std::uint32_t c0 = 0;
    // The first column block prefetches every row's lines, `prefetch` ids ahead.
    std::uint32_t prefetch = forwardPrefetchDistance(row_bytes);
    for (; c0 + 64 <= vec_cols; c0 += 64, prefetch = 0) {
      bagBlock<T, 8>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
    }
    switch ((vec_cols - c0) / 8) {
      case 7:
        bagBlock<T, 7>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      case 6:
        bagBlock<T, 6>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      case 5:
        bagBlock<T, 5>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      case 4:
        bagBlock<T, 4>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      case 3:
        bagBlock<T, 3>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      case 2:
        bagBlock<T, 2>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      case 1:
        bagBlock<T, 1>(base, row_bytes, ids, b, e, n_ids, c0, prefetch, scale, o);
        break;
      default:
        break;
    }
    // Columns past the last multiple of 8, in the same per-column order.
    for (std::uint32_t c = vec_cols; c < dim; ++c) {
      float acc = 0.0f;
      for (std::uint32_t p = b; p < e; ++p) {
        if constexpr (T == WeightType::F32) {
          acc += shard.f32Row(ids[p])[c];
        } else {
          acc += halfToFloat(shard.f16Row(ids[p])[c]);
        }
      }
      o[c] = acc * scale;
    }
  }
}

void forwardAvx2(const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out, std::size_t out_stride,
                 std::size_t s_begin, std::size_t s_end) {
  if (shard.type() == WeightType::F32) {
    forwardAvx2T<WeightType::F32>(shard, bags, pooling, out, out_stride, s_begin, s_end);
  } else {
    forwardAvx2T<WeightType::F16>(shard, bags, pooling, out, out_stride, s_begin, s_end);
  }
}
#endif

}  // namespace

void embeddingForward(KernelIsa isa, const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out,
                      std::size_t out_stride, ThreadPool* pool) {
  const std::size_t n = bags.count();
  const KernelIsa use = usable(isa);
  forRange(pool, n, 16, [&](std::size_t b, std::size_t e) {
#if SHARDSCOPE_KERNELS_X86
    if (use == KernelIsa::Avx2F16c) {
      forwardAvx2(shard, bags, pooling, out, out_stride, b, e);
      return;
    }
#endif
    forwardPortable(shard, bags, pooling, out, out_stride, b, e);
  });
  (void)use;
}

void embeddingForward(const EmbeddingShard& shard, const Bags& bags, Pooling pooling, float* out,
                      std::size_t out_stride, ThreadPool* pool) {
  embeddingForward(detectedKernelIsa(), shard, bags, pooling, out, out_stride, pool);
}

// ---------------------------------------------------------------- backward

namespace {

// Stable LSD radix sort of lookup positions by row id, in parallel: each pass
// splits the positions into `parts` contiguous ranges, counts digits per range,
// and scatters range by range, so equal rows keep the (bag, position) order.
void sortPositionsByRow(const Bags& bags, std::uint64_t rows, BackwardWorkspace& ws, ThreadPool* pool) {
  const std::size_t n = bags.ids.size();
  ws.keys.resize(n);
  ws.order.resize(n);
  ws.keys_tmp.resize(n);
  ws.order_tmp.resize(n);
  // Only the bits a row id of this shard can have (ids are 32-bit).
  const int bits = rows <= 1 ? 1 : std::min(32, static_cast<int>(std::bit_width(rows - 1)));
  const int passes = (bits + 10) / 11;
  const int digit_bits = (bits + passes - 1) / passes;
  const std::size_t buckets = std::size_t{1} << digit_bits;
  const std::size_t threads = pool == nullptr ? 1 : pool->size();
  const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(threads, n / 4096));
  ws.histogram.resize(parts * buckets);

  for (int pass = 0; pass < passes; ++pass) {
    const int shift = pass * digit_bits;
    const std::uint32_t mask = static_cast<std::uint32_t>(buckets - 1);
    const bool first = pass == 0;
    const std::uint32_t* src_keys = first ? bags.ids.data() : ws.keys.data();
    const std::uint32_t* src_pos = ws.order.data();
    std::uint32_t* dst_keys = ws.keys_tmp.data();
    std::uint32_t* dst_pos = ws.order_tmp.data();
    std::uint32_t* hist = ws.histogram.data();
    const auto range = [&](std::size_t part) { return std::pair{n * part / parts, n * (part + 1) / parts}; };
    forRange(pool, parts, 1, [&](std::size_t pb, std::size_t pe) {
      for (std::size_t part = pb; part < pe; ++part) {
        std::uint32_t* h = hist + part * buckets;
        std::fill(h, h + buckets, 0u);
        const auto [b, e] = range(part);
        for (std::size_t i = b; i < e; ++i) ++h[(src_keys[i] >> shift) & mask];
      }
    });
    // Exclusive prefix in (digit, part) order: digit-major keeps the sort stable.
    std::uint32_t total = 0;
    for (std::size_t d = 0; d < buckets; ++d) {
      for (std::size_t part = 0; part < parts; ++part) {
        const std::uint32_t c = hist[part * buckets + d];
        hist[part * buckets + d] = total;
        total += c;
      }
    }
    forRange(pool, parts, 1, [&](std::size_t pb, std::size_t pe) {
      for (std::size_t part = pb; part < pe; ++part) {
        std::uint32_t* h = hist + part * buckets;
        const auto [b, e] = range(part);
        for (std::size_t i = b; i < e; ++i) {
          const std::uint32_t k = src_keys[i];
          const std::uint32_t at = h[(k >> shift) & mask]++;
          dst_keys[at] = k;
          dst_pos[at] = first ? static_cast<std::uint32_t>(i) : src_pos[i];
        }
      }
    });
    ws.keys.swap(ws.keys_tmp);
    ws.order.swap(ws.order_tmp);
  }
}

float rowMeanOfSquaresPortable(const float* g, std::uint32_t dim) {
  // Eight interleaved lanes, lane k over columns c = k (mod 8) in increasing c,
  // then ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)): the AVX2 path's order.
  std::array<float, 8> lane{};
  for (std::uint32_t c = 0; c < dim; ++c) {
    const float sq = g[c] * g[c];
    lane[c & 7u] += sq;
  }
  const float total = ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
  return total / static_cast<float>(dim);
}

struct BackwardJob {
  EmbeddingShard* shard;
  const Bags* bags;
  Pooling pooling;
  const float* grad_out;
  std::size_t grad_stride;
  AdagradConfig config;
  const BackwardWorkspace* ws;
};

void updateRowsPortable(const BackwardJob& job, std::size_t u_begin, std::size_t u_end, float* g) {
  EmbeddingShard& shard = *job.shard;
  const BackwardWorkspace& ws = *job.ws;
  const std::uint32_t dim = shard.dim();
  std::span<float> momentum = shard.momentum();
  for (std::size_t u = u_begin; u < u_end; ++u) {
    const std::uint32_t row = ws.unique_rows[u];
    std::fill(g, g + dim, 0.0f);
    for (std::uint32_t k = ws.row_begin[u]; k < ws.row_begin[u + 1]; ++k) {
      const std::uint32_t s = ws.sample_of[ws.order[k]];
      const float* go = job.grad_out + std::size_t{s} * job.grad_stride;
      if (job.pooling == Pooling::Mean) {
        const float scale = meanScale(job.bags->offsets[s + 1] - job.bags->offsets[s]);
        for (std::uint32_t c = 0; c < dim; ++c) g[c] += go[c] * scale;
      } else {
        for (std::uint32_t c = 0; c < dim; ++c) g[c] += go[c];
      }
    }
    const float m = momentum[row] + rowMeanOfSquaresPortable(g, dim);
    momentum[row] = m;
    const float step = job.config.learning_rate / (std::sqrt(m) + job.config.eps);
    if (shard.type() == WeightType::F32) {
      float* w = shard.f32Row(row);
      for (std::uint32_t c = 0; c < dim; ++c) w[c] = w[c] - step * g[c];
    } else {
      std::uint16_t* w = shard.f16Row(row);
      for (std::uint32_t c = 0; c < dim; ++c) w[c] = floatToHalf(halfToFloat(w[c]) - step * g[c]);
    }
  }
}

#if SHARDSCOPE_KERNELS_X86
template <WeightType T>
SHARDSCOPE_AVX2 void updateRowsAvx2T(const BackwardJob& job, std::size_t u_begin, std::size_t u_end, float* g) {
  EmbeddingShard& shard = *job.shard;
  const BackwardWorkspace& ws = *job.ws;
  const std::uint32_t dim = shard.dim();
  const std::uint32_t vec_cols = dim & ~7u;
  float* momentum = shard.momentum().data();
  const char* weights = reinterpret_cast<const char*>(shard.weightBytes().data());
  const std::size_t row_bytes = shard.rowBytes();
  for (std::size_t u = u_begin; u < u_end; ++u) {
    const std::uint32_t row = ws.unique_rows[u];
    // Prefetch a later row's weights (to be written) and momentum; the gradient
    // rows are few (one per bag) and mostly cached.
    if (u + kUpdatePrefetchDistance < u_end) {
      const std::uint32_t ahead = ws.unique_rows[u + kUpdatePrefetchDistance];
      const char* next = weights + std::size_t{ahead} * row_bytes;
      for (std::size_t off = 0; off < row_bytes; off += 64) __builtin_prefetch(next + off, 1, 3);
      __builtin_prefetch(momentum + ahead, 1, 3);
    }
    std::fill(g, g + dim, 0.0f);
    for (std::uint32_t k = ws.row_begin[u]; k < ws.row_begin[u + 1]; ++k) {
      const std::uint32_t s = ws.sample_of[ws.order[k]];
      const float* go = job.grad_out + std::size_t{s} * job.grad_stride;
      const bool mean = job.pooling == Pooling::Mean;
      const float scale = mean ? meanScale(job.bags->offsets[s + 1] - job.bags->offsets[s]) : 1.0f;
      const __m256 sv = _mm256_set1_ps(scale);
      std::uint32_t c = 0;
      for (; c < vec_cols; c += 8) {
        __m256 x = _mm256_loadu_ps(go + c);
        if (mean) x = _mm256_mul_ps(x, sv);
        _mm256_storeu_ps(g + c, _mm256_add_ps(_mm256_loadu_ps(g + c), x));
      }
      for (; c < dim; ++c) g[c] += mean ? go[c] * scale : go[c];
    }
    __m256 sq = _mm256_setzero_ps();
    std::uint32_t c = 0;
    for (; c < vec_cols; c += 8) {
      const __m256 x = _mm256_loadu_ps(g + c);
      sq = _mm256_add_ps(sq, _mm256_mul_ps(x, x));
    }
    if (c < dim) {
      alignas(32) std::array<float, 8> tail{};
      for (std::uint32_t t = c; t < dim; ++t) tail[t - c] = g[t];
      const __m256 x = _mm256_load_ps(tail.data());
      sq = _mm256_add_ps(sq, _mm256_mul_ps(x, x));
    }
    // ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)), as in rowMeanOfSquaresPortable.
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(sq), _mm256_extractf128_ps(sq, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
    const float total = _mm_cvtss_f32(h);
    const float m = momentum[row] + total / static_cast<float>(dim);
    momentum[row] = m;
    const float step = job.config.learning_rate / (std::sqrt(m) + job.config.eps);
    const __m256 stepv = _mm256_set1_ps(step);
    if constexpr (T == WeightType::F32) {
      float* w = shard.f32Row(row);
      for (c = 0; c < vec_cols; c += 8) {
        const __m256 x = _mm256_sub_ps(_mm256_loadu_ps(w + c), _mm256_mul_ps(stepv, _mm256_loadu_ps(g + c)));
        _mm256_storeu_ps(w + c, x);
      }
      for (; c < dim; ++c) w[c] = w[c] - step * g[c];
    } else {
      std::uint16_t* w = shard.f16Row(row);
      for (c = 0; c < vec_cols; c += 8) {
        auto* p = reinterpret_cast<__m128i*>(w + c);
        const __m256 x =
            _mm256_sub_ps(_mm256_cvtph_ps(_mm_loadu_si128(p)), _mm256_mul_ps(stepv, _mm256_loadu_ps(g + c)));
        _mm_storeu_si128(p, _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
      }
      for (; c < dim; ++c) w[c] = floatToHalf(halfToFloat(w[c]) - step * g[c]);
    }
  }
}
#endif

}  // namespace

BackwardStats embeddingBackwardAdagrad(KernelIsa isa, EmbeddingShard& shard, const Bags& bags, Pooling pooling,
                                       const float* grad_out, std::size_t grad_stride, const AdagradConfig& config,
                                       BackwardWorkspace& ws, ThreadPool* pool) {
  BackwardStats stats;
  const std::size_t n = bags.ids.size();
  const std::size_t n_bags = bags.count();
  stats.lookups = n;
  if (n == 0 || shard.dim() == 0) return stats;

  // The bag of every lookup position.
  ws.sample_of.resize(n);
  forRange(pool, n_bags, 256, [&](std::size_t sb, std::size_t se) {
    for (std::size_t s = sb; s < se; ++s) {
      std::fill(ws.sample_of.begin() + bags.offsets[s], ws.sample_of.begin() + bags.offsets[s + 1],
                static_cast<std::uint32_t>(s));
    }
  });

  sortPositionsByRow(bags, shard.rows(), ws, pool);

  // Segments of equal rows in the sorted keys: count per part, then write.
  const std::size_t threads = pool == nullptr ? 1 : pool->size();
  const std::size_t parts = std::max<std::size_t>(1, std::min<std::size_t>(threads, n / 4096));
  ws.histogram.resize(std::max(ws.histogram.size(), parts + 1));
  std::uint32_t* starts = ws.histogram.data();  // reused: the sort is done with it
  const auto is_start = [&](std::size_t i) { return i == 0 || ws.keys[i] != ws.keys[i - 1]; };
  forRange(pool, parts, 1, [&](std::size_t pb, std::size_t pe) {
    for (std::size_t part = pb; part < pe; ++part) {
      std::uint32_t c = 0;
      for (std::size_t i = n * part / parts; i < n * (part + 1) / parts; ++i) c += is_start(i) ? 1u : 0u;
      starts[part + 1] = c;
    }
  });
  starts[0] = 0;
  for (std::size_t part = 0; part < parts; ++part) starts[part + 1] += starts[part];
  ws.unique_rows.resize(starts[parts]);
  ws.row_begin.resize(std::size_t{starts[parts]} + 1);
  forRange(pool, parts, 1, [&](std::size_t pb, std::size_t pe) {
    for (std::size_t part = pb; part < pe; ++part) {
      std::uint32_t at = starts[part];
      for (std::size_t i = n * part / parts; i < n * (part + 1) / parts; ++i) {
        if (is_start(i)) {
          ws.unique_rows[at] = ws.keys[i];
          ws.row_begin[at] = static_cast<std::uint32_t>(i);
          ++at;
        }
      }
    }
  });
  ws.row_begin.back() = static_cast<std::uint32_t>(n);
  const std::size_t unique = ws.unique_rows.size();
  stats.unique_rows = unique;

  // Work split by lookups, not rows, so that hot rows do not pile onto one task;
  // each task has its own gradient scratch.
  const std::size_t tasks = std::max<std::size_t>(1, std::min<std::size_t>(4 * threads, unique / 64));
  const std::uint32_t dim = shard.dim();
  ws.grad.resize(tasks * dim);
  const BackwardJob job{&shard, &bags, pooling, grad_out, grad_stride, config, &ws};
  const KernelIsa use = usable(isa);
  forRange(pool, tasks, 1, [&](std::size_t tb, std::size_t te) {
    for (std::size_t t = tb; t < te; ++t) {
      const auto first_of = [&](std::size_t task) {
        const std::uint32_t at = static_cast<std::uint32_t>(n * task / tasks);
        return static_cast<std::size_t>(std::lower_bound(ws.row_begin.begin(), ws.row_begin.end() - 1, at) -
                                        ws.row_begin.begin());
      };
      const std::size_t ub = first_of(t);
      const std::size_t ue = t + 1 == tasks ? unique : first_of(t + 1);
      float* g = ws.grad.data() + t * dim;
#if SHARDSCOPE_KERNELS_X86
      if (use == KernelIsa::Avx2F16c) {
        if (shard.type() == WeightType::F32) {
          updateRowsAvx2T<WeightType::F32>(job, ub, ue, g);
        } else {
          updateRowsAvx2T<WeightType::F16>(job, ub, ue, g);
        }
        continue;
      }
#endif
      updateRowsPortable(job, ub, ue, g);
    }
  });
  (void)use;
  return stats;
}

BackwardStats embeddingBackwardAdagrad(EmbeddingShard& shard, const Bags& bags, Pooling pooling, const float* grad_out,
                                       std::size_t grad_stride, const AdagradConfig& config,
                                       BackwardWorkspace& workspace, ThreadPool* pool) {
  return embeddingBackwardAdagrad(detectedKernelIsa(), shard, bags, pooling, grad_out, grad_stride, config, workspace,
                                  pool);
}

}  // namespace shardscope::profiler
