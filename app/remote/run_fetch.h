// Fetches a finished job's run into a local trace store: chunks into
// "<store>.fetch/<host>_<port>_<job>.part" (resumed when a part with the same
// checksum is there), the whole file's SHA-256 checked against the agent's,
// then the run imported into the store (TraceStore::importRunFrom) off the
// calling thread. Progress and cancel; the part file is removed after the
// import unless kept (tests compare it with the agent's).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <QObject>

#include "agent_client.h"
#include "shardscope/core/store/store_types.h"

namespace shardscope::app::remote {

struct FetchedRun {
  core::store::RunId run{};  // in the local store
  std::string sha256;
  std::uint64_t bytes = 0;
  std::string kept_file;  // the verified file, when kept
};

struct FetchOptions {
  std::string job;
  std::string store;  // the local trace store (created when missing)
  bool keep_file = false;
  std::uint64_t chunk_bytes = proto::kMaxChunkBytes;
};

class RunFetch : public QObject {
  Q_OBJECT

 public:
  RunFetch(AgentClient* client, FetchOptions options, QObject* parent = nullptr);
  // progress(done, total) as chunks arrive; done once, with the run or an error.
  void start(std::function<void(std::uint64_t, std::uint64_t)> progress,
             std::function<void(core::Result<FetchedRun>)> done);
  void cancel();
  // Where the part file of a job goes.
  [[nodiscard]] static std::string partPath(const std::string& store, const std::string& agent, const std::string& job);

 private:
  void next();
  void finishDownload();
  void complete(core::Result<FetchedRun> result);

  AgentClient* client_;
  FetchOptions options_;
  std::string part_;
  std::string sha256_;
  std::uint64_t total_ = 0;
  std::uint64_t offset_ = 0;
  std::int64_t remote_run_ = 0;
  bool cancelled_ = false;
  bool finished_ = false;
  std::function<void(std::uint64_t, std::uint64_t)> progress_;
  std::function<void(core::Result<FetchedRun>)> done_;
};

}  // namespace shardscope::app::remote
