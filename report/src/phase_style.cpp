// The phase palette: Okabe & Ito's eight colours (2008), assigned so that
// the phases a step-time bar stacks (embedding, all-to-all, replica sync,
// dense) are far apart in hue and lightness.
#include "shardscope/report/phase_style.h"

#include <array>

namespace shardscope::report {

namespace {

// Index = Phase.
constexpr std::array<PhaseStyle, kPhaseCount> kStyles = {{
    {"embedding", 0x0072b2, Hatch::None},
    {"embedding fwd", 0x0072b2, Hatch::None},
    {"embedding bwd", 0x56b4e9, Hatch::None},
    {"all-to-all", 0xe69f00, Hatch::None},
    {"replica sync", 0xcc79a7, Hatch::Diagonal},
    {"dense", 0x009e73, Hatch::None},
    {"dense all-reduce", 0x009e73, Hatch::CrossDiagonal},
    {"memcpy", 0xf0e442, Hatch::None},
    {"input", 0x8c8c8c, Hatch::None},
    {"step", 0xc8c8c8, Hatch::None},
    {"other", 0xa0a0a0, Hatch::None},
}};

constexpr std::array<std::string_view, kPhaseCount> kCss = {
    "#0072b2", "#0072b2", "#56b4e9", "#e69f00", "#cc79a7", "#009e73",
    "#009e73", "#f0e442", "#8c8c8c", "#c8c8c8", "#a0a0a0",
};

}  // namespace

const PhaseStyle& phaseStyle(Phase phase) {
  const auto i = static_cast<std::size_t>(phase);
  return kStyles[i < kStyles.size() ? i : kStyles.size() - 1];
}

std::string_view phaseCss(Phase phase) {
  const auto i = static_cast<std::size_t>(phase);
  return kCss[i < kCss.size() ? i : kCss.size() - 1];
}

}  // namespace shardscope::report
