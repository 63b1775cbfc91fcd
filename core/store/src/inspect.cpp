// inspectStore and verifyStore: the read-only whole-store views behind
// `shardscope store info` and `store check`.
#include <system_error>

#include "schema.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::core::store {

namespace {
std::uint64_t sizeOr0(const std::filesystem::path& p) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : n;
}
}  // namespace

Result<StoreInfo> inspectStore(const std::filesystem::path& path) {
  auto opened = detail::openValidated(path, OpenMode::ReadOnly);
  if (!opened) {
    return opened.error();
  }
  auto& db = *opened->db;
  StoreInfo info;
  info.path = path;
  info.schema_version = opened->schema_version;
  info.file_size_bytes = sizeOr0(path);
  info.wal_size_bytes = sizeOr0(std::filesystem::path(path.string() + "-wal"));

  auto stmt = db.prepare(
      "SELECT r.id, r.kind, r.status, r.label, r.created_at, coalesce(r.finished_at, ''), "
      "coalesce(r.error, ''), "
      "(SELECT count(*) FROM (SELECT rank FROM ranks WHERE run = r.id "
      "                       UNION SELECT rank FROM span_extent WHERE run = r.id)), "
      "(SELECT coalesce(sum(span_count), 0) FROM span_extent WHERE run = r.id) "
      "FROM runs r ORDER BY r.id");
  if (!stmt) {
    return stmt.error();
  }
  int rc = 0;
  while ((rc = stmt->step()) == SQLITE_ROW) {
    RunSummary s;
    s.run.id = RunId{stmt->int64(0)};
    s.run.kind_text = stmt->text(1);
    s.run.kind = runKindFromText(s.run.kind_text);
    s.run.status = runStatusFromText(stmt->text(2)).value_or(RunStatus::Running);
    s.run.label = stmt->text(3);
    s.run.created_at = stmt->text(4);
    s.run.finished_at = stmt->text(5);
    s.run.error = stmt->text(6);
    s.rank_count = stmt->int32(7);
    s.span_count = stmt->int64(8);
    info.runs.push_back(std::move(s));
  }
  if (rc != SQLITE_DONE) {
    return db.error("listing runs", rc);
  }
  return info;
}

Status verifyStore(const std::filesystem::path& path) {
  auto opened = detail::openValidated(path, OpenMode::ReadOnly);
  if (!opened) {
    return opened.error();
  }
  auto& db = *opened->db;
  auto stmt = db.prepare("PRAGMA quick_check(8)");
  if (!stmt) {
    return stmt.error();
  }
  std::string problems;
  int rc = 0;
  while ((rc = stmt->step()) == SQLITE_ROW) {
    const std::string line = stmt->text(0);
    if (line != "ok") {
      problems += (problems.empty() ? "" : "; ") + line;
    }
  }
  if (rc != SQLITE_DONE) {
    return db.error("checking integrity", rc);
  }
  if (!problems.empty()) {
    return Error{detail::storeName(path) + " is corrupt (integrity check: " + problems + ")"};
  }
  return Ok{};
}

}  // namespace shardscope::core::store
