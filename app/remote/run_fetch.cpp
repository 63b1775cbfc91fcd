#include "run_fetch.h"

#include <filesystem>

#include <QCryptographicHash>
#include <QFile>
#include <QFutureWatcher>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>

#include <nlohmann/json.hpp>

#include "shardscope/core/json_io.h"
#include "shardscope/core/store/trace_store.h"

namespace shardscope::app::remote {

namespace {
namespace fs = std::filesystem;
namespace st = core::store;

core::Error ioError(std::string message) { return core::Error{std::move(message), core::ErrorKind::Io}; }

// The sidecar of a part file: what it is a part of.
std::string sidecarPath(const std::string& part) { return part + ".json"; }

// Verifies the whole file and imports its run (off the GUI thread).
core::Result<FetchedRun> verifyAndImport(const std::string& part, const std::string& sha256, std::int64_t remote_run,
                                         const std::string& store, bool keep) {
  QFile f(QString::fromStdString(part));
  if (!f.open(QIODevice::ReadOnly)) return ioError("cannot read " + part);
  QCryptographicHash hash(QCryptographicHash::Sha256);
  hash.addData(&f);
  const std::string got = hash.result().toHex().toStdString();
  const auto size = static_cast<std::uint64_t>(f.size());
  f.close();
  std::error_code ec;
  if (got != sha256) {
    fs::remove(part, ec);
    fs::remove(sidecarPath(part), ec);
    return ioError("the fetched run file's SHA-256 is " + got + ", the agent's is " + sha256 +
                   ": the download was damaged and is removed; fetch again");
  }
  auto target = st::openStore(store, st::OpenMode::Create);
  if (!target) return target.error();
  auto run = target->importRunFrom(part, st::RunId{remote_run});
  if (!run) return run.error();
  FetchedRun out{*run, got, size, {}};
  fs::remove(sidecarPath(part), ec);
  if (keep) {
    out.kept_file = fs::path(part).replace_extension(".sqlite").string();
    fs::rename(part, out.kept_file, ec);
  } else {
    fs::remove(part, ec);
  }
  return out;
}
}  // namespace

RunFetch::RunFetch(AgentClient* client, FetchOptions options, QObject* parent)
    : QObject(parent), client_(client), options_(std::move(options)) {}

std::string RunFetch::partPath(const std::string& store, const std::string& agent, const std::string& job) {
  std::string name = agent + "_" + job;
  for (char& c : name)
    if (c == ':' || c == '/' || c == '[' || c == ']') c = '_';
  return (fs::path(store + ".fetch") / (name + ".part")).string();
}

void RunFetch::start(std::function<void(std::uint64_t, std::uint64_t)> progress,
                     std::function<void(core::Result<FetchedRun>)> done) {
  progress_ = std::move(progress);
  done_ = std::move(done);
  part_ = partPath(options_.store, client_->address(), options_.job);
  std::error_code ec;
  fs::create_directories(fs::path(part_).parent_path(), ec);
  if (ec) return complete(ioError("cannot create " + fs::path(part_).parent_path().string() + ": " + ec.message()));
  // Resume a part of the same file (same checksum and size), else start over.
  auto side = core::readJsonFile(sidecarPath(part_));
  if (side && side->is_object() && fs::exists(part_, ec)) {
    sha256_ = side->value("sha256", std::string());
    total_ = side->value("total", std::uint64_t{0});
    remote_run_ = side->value("run", std::int64_t{0});
    offset_ = std::min<std::uint64_t>(fs::file_size(part_, ec), total_);
  } else {
    fs::remove(part_, ec);
  }
  next();
}

void RunFetch::cancel() { cancelled_ = true; }

void RunFetch::next() {
  if (cancelled_)
    return complete(core::Error{"fetch cancelled; the part fetched so far is kept and resumed next time",
                                core::ErrorKind::Cancelled});
  if (total_ > 0 && offset_ >= total_ && !sha256_.empty()) return finishDownload();
  client_->fetchChunk(
      options_.job, offset_, options_.chunk_bytes,
      [this, self = QPointer<RunFetch>(this)](core::Result<proto::Chunk> c) {
        if (!self) return;  // the fetch was given up and destroyed
        if (!c) return complete(c.error());
        if (!sha256_.empty() && (c->sha256 != sha256_ || c->total != total_)) {
          // The agent's file is not the one the part came from: start over.
          std::error_code ec;
          fs::remove(part_, ec);
          offset_ = 0;
          sha256_.clear();
          return next();
        }
        if (sha256_.empty()) {
          sha256_ = c->sha256;
          total_ = c->total;
          const nlohmann::json side{{"sha256", sha256_}, {"total", total_}, {"run", c->run}, {"job", options_.job}};
          if (auto s = core::writeFileAtomic(sidecarPath(part_), side.dump()); !s) return complete(s.error());
        }
        remote_run_ = c->run;
        if (c->offset != offset_)
          return complete(
              ioError("the agent answered offset " + std::to_string(c->offset) + " for " + std::to_string(offset_)));
        QFile f(QString::fromStdString(part_));
        if (!f.open(QIODevice::ReadWrite) || !f.seek(static_cast<qint64>(offset_)) ||
            f.write(c->data.data(), static_cast<qint64>(c->data.size())) != static_cast<qint64>(c->data.size()))
          return complete(ioError("cannot write " + part_));
        f.close();
        offset_ += c->data.size();
        if (progress_) progress_(offset_, total_);
        if (c->data.empty() && offset_ < total_)
          return complete(ioError("the agent sent an empty chunk before the end"));
        next();
      });
}

void RunFetch::finishDownload() {
  auto* watcher = new QFutureWatcher<core::Result<FetchedRun>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
    complete(watcher->result());
    watcher->deleteLater();
  });
  watcher->setFuture(
      QtConcurrent::run(verifyAndImport, part_, sha256_, remote_run_, options_.store, options_.keep_file));
}

void RunFetch::complete(core::Result<FetchedRun> result) {
  if (finished_) return;
  finished_ = true;
  if (done_) done_(std::move(result));
}

}  // namespace shardscope::app::remote
