// The one-page HTML report of a grid decision: which grid (M x R, layout),
// why (against the runner-up, the other group sizes and what dominates the
// step), the alternatives, the project, constraints and problems, the charts
// as embedded PNGs and where the numbers came from. Qt-free: the caller
// renders the charts and hands in their PNG bytes (base64).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shardscope/core/project.h"
#include "shardscope/planner/sweep.h"

namespace shardscope::report {

// One chart of the report.
struct ReportChart {
  std::string id;          // "step", "memory", ...
  std::string title;       // caption (escaped when written)
  std::string png_base64;  // the PNG file's bytes, base64
};

struct DecisionReportInput {
  core::Project project;                // the project the sweep was planned from
  planner::SweepResult sweep;           // every grid, ranked
  std::optional<std::size_t> decision;  // index into sweep.grids: the chosen grid, else the best fitting one
  bool chosen = false;                  // the user chose it (else it is the best fitting grid)
  std::string project_file;             // where the project lives; empty when unsaved
  std::string generated;                // ISO 8601 UTC time of the report
  std::string version;                  // ShardScope version
  std::vector<ReportChart> charts;
};

// &, <, >, " and ' as entities.
[[nodiscard]] std::string htmlEscape(std::string_view text);

// The best ranked grid of each group size M (fitting first), ascending M.
[[nodiscard]] std::vector<std::size_t> bestGridPerGroupSize(const planner::SweepResult& sweep);
// The rows of the alternatives table: the `top` best ranked grids plus the
// best of each M (and the decision), in ranked order, each grid once.
[[nodiscard]] std::vector<std::size_t> alternativeGrids(const planner::SweepResult& sweep,
                                                        std::optional<std::size_t> decision, std::size_t top = 5);
// Why this grid, as plain sentences (not yet escaped): the choice against
// the fastest fitting grid, the runner-up, the best of the other group sizes,
// the neighbouring group sizes, what dominates the step, memory headroom and
// load imbalance.
[[nodiscard]] std::vector<std::string> decisionReasons(const DecisionReportInput& input);

// The answer in one sentence, as the Grid Explorer states it above its
// charts: the decision with its step time and throughput, how much slower it
// is than the best fitting grid when it is not that grid, the runner-up, and
// what dominates its step; without a decision, why none fits.
[[nodiscard]] std::string decisionSentence(const DecisionReportInput& input);
// The same without copying a project and a sweep into an input (a page redraws it on every choice).
[[nodiscard]] std::string decisionSentence(const planner::SweepResult& sweep, std::optional<std::size_t> decision,
                                           bool chosen, std::uint64_t hbm_bytes);

// The whole report: one self-contained HTML5 file (inline CSS, charts as
// data: URLs), every user string escaped.
[[nodiscard]] std::string decisionReportHtml(const DecisionReportInput& input);

}  // namespace shardscope::report
