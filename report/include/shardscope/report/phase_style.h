// One visual language for the parts of a training step: every chart, the
// timeline and the HTML report draw a phase in the same colour (Okabe-Ito,
// readable by colour-blind users) under the same name. The two all-reduces
// (replica sync, dense) are also told apart by pattern, not only by hue.
#pragma once

#include <cstdint>
#include <string_view>

namespace shardscope::report {

enum class Phase : std::uint8_t {
  Embedding,  // forward + backward, where one bar stands for both
  EmbeddingForward,
  EmbeddingBackward,
  AllToAll,
  ReplicaSync,     // weight + optimizer all-reduce across replicas
  Dense,           // dense compute (+ the exposed dense all-reduce where one bar stands for both)
  DenseAllReduce,  // the dense gradient all-reduce on its own
  Memcpy,
  Input,
  Step,
  Other,
};
inline constexpr int kPhaseCount = 11;

enum class Hatch : std::uint8_t {
  None,
  Diagonal,      // "///": the replica sync
  CrossDiagonal  // "xxx": the dense all-reduce
};

struct PhaseStyle {
  std::string_view name;  // "all-to-all", "replica sync", ...
  std::uint32_t rgb = 0;  // 0xRRGGBB
  Hatch hatch = Hatch::None;
};

[[nodiscard]] const PhaseStyle& phaseStyle(Phase phase);

// "#0072b2".
[[nodiscard]] std::string_view phaseCss(Phase phase);

// Colours with a meaning of their own, kept apart from the phases.
inline constexpr std::uint32_t kProblemRgb = 0xd55e00;  // does not fit, straggler, error (Okabe-Ito vermillion)
inline constexpr std::uint32_t kChosenRgb = 0x1d232b;   // the grid the user chose: an outline, never a phase's hue
inline constexpr std::uint32_t kBestRgb = 0x009e73;     // the best grid's label

}  // namespace shardscope::report
