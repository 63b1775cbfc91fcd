// shardscope-cli store info <file> [--check] [--json]: what a trace store holds.
#include <iostream>

#include <nlohmann/json.hpp>

#include "profiling_commands.h"
#include "shardscope/core/store/trace_store.h"
#include "shardscope/core/summary.h"

namespace shardscope::app::cli {

namespace {
constexpr const char* kStoreHelp = R"(usage: shardscope-cli store info <file.sqlite> [--check] [--json]

Describes a trace store: schema version, file size, and every run with its
kind, status (running runs whose writer is gone were interrupted: not
complete), ranks and spans. --check also reads every page (PRAGMA quick_check).
A store in a read-only folder or on read-only media is read without creating
anything beside it (docs/formats/store.md).
Exit 0 ok, 1 not a ShardScope store or corrupt, 2 usage, 3 the file system
refuses to read it (an I/O error, a folder that may not be entered).
)";
}  // namespace

int runStore(Args args) {
  if (args.flag("--help")) {
    std::cout << kStoreHelp;
    return kExitOk;
  }
  const bool check = args.flag("--check");
  const bool json = args.flag("--json");
  if (auto bad = args.problem(Args::Positionals::Allowed)) return usageError("store: " + *bad);
  const auto pos = args.positional();
  if (pos.empty()) return usageError("store needs a subcommand: info");
  if (pos[0] != "info") return usageError("store: unknown subcommand '" + pos[0] + "' (expected info)");
  if (pos.size() != 2) return usageError("store info needs exactly one file");
  const std::string& path = pos[1];

  auto info = core::store::inspectStore(path);
  if (!info) return fail(info.error());
  if (check)
    if (auto s = core::store::verifyStore(path); !s) return fail(s.error());
  if (json) {
    nlohmann::ordered_json j;
    j["path"] = path;
    j["schema_version"] = info->schema_version;
    j["file_bytes"] = info->file_size_bytes;
    j["wal_bytes"] = info->wal_size_bytes;
    auto& runs = j["runs"] = nlohmann::ordered_json::array();
    for (const auto& r : info->runs)
      runs.push_back({{"id", static_cast<std::int64_t>(r.run.id)},
                      {"kind", r.run.kind_text},
                      {"status", std::string(core::store::toText(r.run.status))},
                      {"label", r.run.label},
                      {"created", r.run.created_at},
                      {"finished", r.run.finished_at},
                      {"error", r.run.error},
                      {"ranks", r.rank_count},
                      {"spans", r.span_count}});
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << path << ": ShardScope trace store, schema " << info->schema_version << ", "
            << core::formatBytes(info->file_size_bytes);
  if (info->wal_size_bytes) std::cout << " (+ " << core::formatBytes(info->wal_size_bytes) << " write-ahead log)";
  std::cout << ", " << info->runs.size() << " run(s)" << (check ? ", integrity check ok" : "") << "\n";
  for (const auto& r : info->runs) {
    std::cout << "  run " << static_cast<std::int64_t>(r.run.id) << "  " << r.run.kind_text << "  "
              << core::store::toText(r.run.status);
    if (r.run.status == core::store::RunStatus::Running) std::cout << " (not complete)";
    std::cout << "  " << r.rank_count << " ranks  " << r.span_count << " spans  created " << r.run.created_at;
    if (!r.run.label.empty()) std::cout << "  \"" << r.run.label << "\"";
    if (!r.run.error.empty()) std::cout << "  error: " << r.run.error;
    std::cout << "\n";
  }
  return kExitOk;
}

}  // namespace shardscope::app::cli
