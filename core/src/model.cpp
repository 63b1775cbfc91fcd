#include "shardscope/core/model.h"

#include "shardscope/core/limits.h"

namespace shardscope::core {

int dtypeBytes(DType t) {
  switch (t) {
    case DType::FP32:
      return 4;
    case DType::FP16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::INT8:
      return 1;
  }
  return 4;
}

const char* toString(DType t) {
  switch (t) {
    case DType::FP32:
      return "fp32";
    case DType::FP16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::INT8:
      return "int8";
  }
  return "?";
}

const char* toString(Optimizer o) {
  switch (o) {
    case Optimizer::SGD:
      return "sgd";
    case Optimizer::RowWiseAdagrad:
      return "rowwise_adagrad";
    case Optimizer::Adam:
      return "adam";
  }
  return "?";
}

// Saturates at UINT64_MAX: the readers refuse such tables, a model built in code cannot wrap.
std::uint64_t TableSpec::weightBytes() const {
  const auto b = mulChecked(rows, std::uint64_t{dim} * static_cast<std::uint64_t>(dtypeBytes(dtype)));
  return b ? *b : UINT64_MAX;
}

std::uint64_t ModelSpec::totalWeightBytes() const {
  std::uint64_t total = 0;
  for (const auto& t : tables) total = addChecked(total, t.weightBytes()).value_or(UINT64_MAX);
  return total;
}

double ModelSpec::lookupsPerSample() const {
  double total = 0.0;
  for (const auto& t : tables) total += t.pooling.mean;
  return total;
}

}  // namespace shardscope::core
