// The NCCL profiler plugin's state for one process: a fixed pool of event
// objects handed to NCCL as event handles, the communicators NCCL
// initialised, and the trace file (one per process) the finished calls go to.
// Every entry point may be called from any thread (NCCL calls from the
// trainer's threads, its host-callback thread and its proxy threads); one
// mutex guards the state, and file writes happen outside it in order.
//
// Lifecycle of the events (ext-profiler/README.md of NCCL): a group event
// per kernel plan holds the plan's collective and send/recv tasks; kernel
// channel events (GPU timestamps) and proxy ops (with their steps) belong to
// a task. NCCL stops a task once it is enqueued; its kernel and proxy events
// may start and stop later, from another thread. A group is written when it
// and its tasks are stopped and every child that was started has stopped and,
// with kernel events on, each task has seen the kernel channels NCCL said it
// uses. With proxy events on (their number is not known up front) a group is
// written once `linger` later groups of its communicator have started. At
// finalize (and at exit) whatever a communicator still holds is written,
// marked incomplete when parts were missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "shardscope/profiler/nccl_plugin/nccl_profiler_abi.h"

namespace shardscope::profiler::nccl {

struct RecorderOptions {
  std::string dir = ".";               // where the file goes (created when missing)
  int mask = 0;                        // event_type bits (parseEventMask); 0: defaultEventMask()
  std::size_t max_events = 1 << 15;    // pool size: events alive at once
  std::size_t buffer_bytes = 1 << 20;  // text buffered before it is written
  std::size_t linger = 64;             // see above
  std::string host;                    // "": gethostname()
  std::int64_t pid = 0;                // 0: getpid()
  int rank = -1, nranks = -1;          // the job's rank and size (RANK/WORLD_SIZE); -1: the first communicator's
  std::string rank_source;             // where rank came from ("RANK", ...)
  std::string interface = "v5";        // the plugin interface NCCL loaded, for the header
  std::int64_t (*clock)() = nullptr;   // CPU clock in ns; null: CLOCK_REALTIME
  NcclLogger log = nullptr;            // NCCL's logger (init's), for warnings
};

struct RecorderStats {
  std::uint64_t calls = 0;    // records written (or buffered)
  std::uint64_t dropped = 0;  // events not recorded: the pool was full
  std::uint64_t live = 0;     // pool objects in use
  std::uint64_t comms = 0;    // communicators not yet finalized
  std::uint64_t bytes_written = 0;
  std::uint64_t flushes = 0;  // writes to the file
};

class Recorder {
 public:
  explicit Recorder(RecorderOptions options);
  ~Recorder();  // writes what is left, like shutdown()
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // The plugin interface. Descriptors are v5's (v4's are converted by the
  // caller). Errors only from init (the file cannot be created): NCCL then
  // runs without the plugin for that communicator.
  NcclResult init(void** context, std::uint64_t comm_hash, int* activation_mask, const char* comm_name, int nodes,
                  int nranks, int rank);
  NcclResult startEvent(void* context, void** handle, const EventDescrV5& descr);
  NcclResult stopEvent(void* handle);
  NcclResult recordEventState(void* handle, int state, const EventStateArgs* args);
  NcclResult finalize(void* context);

  // The trainer's step counter: calls started from now on carry it.
  void setStep(std::int64_t step);
  // Writes every call still held (incomplete), the buffer and the end line.
  // Events after it are still counted; a later init reopens nothing.
  void shutdown();

  [[nodiscard]] RecorderStats stats() const;
  [[nodiscard]] std::string path() const;  // the trace file ("" before the first init)
  [[nodiscard]] std::string lastError() const;
  [[nodiscard]] int mask() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};

// The file name for a process: shardscope-nccl-<host>-<pid>.jsonl (host with
// characters other than [A-Za-z0-9._-] replaced by '_').
std::string traceFileName(const std::string& host, std::int64_t pid);

}  // namespace shardscope::profiler::nccl
