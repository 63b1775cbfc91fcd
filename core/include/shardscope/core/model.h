// The model being planned: its embedding tables (size, width, how often and
// how skewed they are read) and the dense part. Plain values, no Qt, no CUDA;
// JSON form `shardscope.model/1` in docs/formats/model.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::core {

enum class DType { FP32, FP16, BF16, INT8 };

[[nodiscard]] int dtypeBytes(DType t);
[[nodiscard]] const char* toString(DType t);

// How many ids a sample carries for one table (its multi-hot size).
enum class PoolingKind {
  Fixed,    // `mean` ids per sample on average (MLPerf DCNv2's fixed multi-hot sizes; may be fractional)
  Uniform,  // uniform integer in [mean - spread, mean + spread]
};

struct PoolingSpec {
  PoolingKind kind = PoolingKind::Fixed;
  double mean = 1.0;
  double spread = 0.0;  // Uniform only
  bool operator==(const PoolingSpec&) const = default;
};

// Which rows the ids hit. Skew matters: a row-wise shard of a zipf table gets
// the load its row range really receives, not rows/W.
enum class AccessKind {
  Uniform,
  Zipf,       // P(row of rank k) ~ 1/(k+1)^alpha, rank order = row order
  HotSet,     // hot_probability of the ids fall on the first hot_fraction of rows
  Histogram,  // measured: bucket i holds the share of ids that hit the i-th 1/B of rows
};

struct AccessSpec {
  AccessKind kind = AccessKind::Uniform;
  double alpha = 0.0;             // Zipf
  double hot_fraction = 0.0;      // HotSet, in (0, 1]
  double hot_probability = 0.0;   // HotSet, in (0, 1]
  std::vector<double> histogram;  // Histogram, sums to 1 (normalised on load)
  bool operator==(const AccessSpec&) const = default;
};

struct TableSpec {
  std::string name;
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;  // a multiple of 4 (TorchRec's column-wise geometry needs it)
  DType dtype = DType::FP32;
  PoolingSpec pooling;
  AccessSpec access;

  [[nodiscard]] std::uint64_t weightBytes() const;
  bool operator==(const TableSpec&) const = default;
};

enum class Optimizer { SGD, RowWiseAdagrad, Adam };

[[nodiscard]] const char* toString(Optimizer o);

struct DenseSpec {
  std::uint64_t parameters = 0;   // dense (MLP, DCN) parameter count
  double flops_per_sample = 0.0;  // training FLOPs per sample, forward + backward
  bool operator==(const DenseSpec&) const = default;
};

struct ModelSpec {
  std::string name;
  std::vector<TableSpec> tables;
  std::uint32_t batch_size_per_gpu = 0;
  Optimizer optimizer = Optimizer::RowWiseAdagrad;
  DenseSpec dense;

  [[nodiscard]] std::uint64_t totalWeightBytes() const;
  [[nodiscard]] double lookupsPerSample() const;
  bool operator==(const ModelSpec&) const = default;
};

}  // namespace shardscope::core
