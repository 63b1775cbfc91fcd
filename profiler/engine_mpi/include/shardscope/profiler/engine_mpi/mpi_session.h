// MPI for the life of one process: MPI_Init_thread when made, MPI_Finalize
// when it goes (also when a run returns early or throws), never twice. The
// one place a ShardScope program starts MPI; a program holds one session in
// main and passes its world communicator down.
#pragma once

#include <mpi.h>

#include "shardscope/core/result.h"

namespace shardscope::profiler {

class MpiSession {
 public:
  // The thread support a rank needs: Funneled, the engine's (only the main
  // thread calls MPI; the worker pool never does).
  enum class Threads { Single, Funneled, Serialized, Multiple };

  // Starts MPI (argc/argv as mpirun passed them; MPI may remove its own).
  // Where MPI was already started in this process, joins it and leaves the
  // finalize to whoever started it.
  MpiSession(int& argc, char**& argv, Threads required = Threads::Funneled);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  MpiSession(MpiSession&&) = delete;
  MpiSession& operator=(MpiSession&&) = delete;

  [[nodiscard]] MPI_Comm world() const { return MPI_COMM_WORLD; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  // Ok, or an Internal error naming the thread support MPI gave and the one
  // asked for (a run must not start on a library that cannot give it).
  [[nodiscard]] core::Status threadSupport() const;

 private:
  bool owns_ = false;  // this session called MPI_Init_thread
  int required_ = MPI_THREAD_SINGLE;
  int provided_ = MPI_THREAD_SINGLE;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace shardscope::profiler
