// JSON load/save for every ShardScope format. Loading validates everything
// and reports each problem as `<file>: <JSON path>: <expectation>`; saving
// writes the schema tag first so other tools can tell the format.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "shardscope/core/calibration.h"
#include "shardscope/core/cluster.h"
#include "shardscope/core/constraints.h"
#include "shardscope/core/model.h"
#include "shardscope/core/plan.h"
#include "shardscope/core/project.h"
#include "shardscope/core/result.h"

namespace shardscope::core {

inline constexpr std::string_view kModelSchema = "shardscope.model/1";
inline constexpr std::string_view kClusterSchema = "shardscope.cluster/1";
inline constexpr std::string_view kPlanSchema = "shardscope.plan/1";
inline constexpr std::string_view kCalibrationSchema = "shardscope.calibration/1";
inline constexpr std::string_view kProjectSchema = "shardscope.project/1";
inline constexpr std::string_view kConstraintsSchema = "shardscope.constraints/1";

enum class FormatKind { Model, Cluster, Plan, Calibration, Project, Constraints, Access };

[[nodiscard]] nlohmann::ordered_json toJson(const ModelSpec& m);
[[nodiscard]] nlohmann::ordered_json toJson(const ClusterSpec& c);
[[nodiscard]] nlohmann::ordered_json toJson(const ShardPlan& p);
[[nodiscard]] nlohmann::ordered_json toJson(const Calibration& c);
[[nodiscard]] nlohmann::ordered_json toJson(const Project& p);
[[nodiscard]] nlohmann::ordered_json toJson(const Constraints& c);

// `source` names the input in messages (a file path, "<preset dcnv2>", ...).
[[nodiscard]] Result<ModelSpec> modelFromJson(const nlohmann::json& j, const std::string& source);
[[nodiscard]] Result<ClusterSpec> clusterFromJson(const nlohmann::json& j, const std::string& source);
[[nodiscard]] Result<ShardPlan> planFromJson(const nlohmann::json& j, const std::string& source);
[[nodiscard]] Result<Calibration> calibrationFromJson(const nlohmann::json& j, const std::string& source);
[[nodiscard]] Result<Project> projectFromJson(const nlohmann::json& j, const std::string& source);
[[nodiscard]] Result<Constraints> constraintsFromJson(const nlohmann::json& j, const std::string& source);

// How deep objects and arrays may nest in any JSON input.
inline constexpr std::size_t kMaxJsonDepth = 128;

// Parse text; syntax errors name the line and column and, where known, the
// JSON path. A key twice in one object, a number beyond a double (1e400) and
// nesting deeper than kMaxJsonDepth are errors that name the path.
[[nodiscard]] Result<nlohmann::json> parseJsonText(std::string_view text, const std::string& source);
// The same checks, keeping the members' order: for a text that is changed
// and written again (a run's configuration gaining a member).
[[nodiscard]] Result<nlohmann::ordered_json> parseOrderedJsonText(std::string_view text, const std::string& source);
[[nodiscard]] Result<nlohmann::json> readJsonFile(const std::string& path);

[[nodiscard]] Result<ModelSpec> loadModel(const std::string& path);
[[nodiscard]] Result<ClusterSpec> loadCluster(const std::string& path);
[[nodiscard]] Result<ShardPlan> loadPlan(const std::string& path);
[[nodiscard]] Result<Calibration> loadCalibration(const std::string& path);
[[nodiscard]] Result<Project> loadProject(const std::string& path);
[[nodiscard]] Result<Constraints> loadConstraints(const std::string& path);

// Which format a document claims to be, from its `schema` field.
[[nodiscard]] Result<FormatKind> detectFormat(const nlohmann::json& j, const std::string& source);

// Writes atomically (temp file + rename) so a failed save never loses the old file.
// Writes `bytes` to `<path>.tmp-shardscope`, fsyncs and renames it over
// `path`: the file is either the old one or the new one, never half-written.
[[nodiscard]] Status writeFileAtomic(const std::string& path, std::string_view bytes);
[[nodiscard]] Status writeJsonFile(const std::string& path, const nlohmann::ordered_json& j);

}  // namespace shardscope::core
