#include "shardscope/profiler/engine_mpi/mpi_session.h"

#include <string>

namespace shardscope::profiler {

namespace {
int mpiLevel(MpiSession::Threads t) {
  switch (t) {
    case MpiSession::Threads::Single:
      return MPI_THREAD_SINGLE;
    case MpiSession::Threads::Funneled:
      return MPI_THREAD_FUNNELED;
    case MpiSession::Threads::Serialized:
      return MPI_THREAD_SERIALIZED;
    case MpiSession::Threads::Multiple:
      return MPI_THREAD_MULTIPLE;
  }
  return MPI_THREAD_SINGLE;
}

const char* levelName(int level) {
  if (level == MPI_THREAD_SINGLE) return "single";
  if (level == MPI_THREAD_FUNNELED) return "funneled";
  if (level == MPI_THREAD_SERIALIZED) return "serialized";
  if (level == MPI_THREAD_MULTIPLE) return "multiple";
  return "unknown";
}
}  // namespace

MpiSession::MpiSession(int& argc, char**& argv, Threads required) : required_(mpiLevel(required)) {
  int started = 0;
  MPI_Initialized(&started);
  if (started) {
    MPI_Query_thread(&provided_);
  } else {
    MPI_Init_thread(&argc, &argv, required_, &provided_);
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (!owns_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

core::Status MpiSession::threadSupport() const {
  // MPI's levels are ordered: single < funneled < serialized < multiple.
  if (provided_ >= required_) return core::Ok{};
  return core::Error{std::string("MPI gives thread support '") + levelName(provided_) + "', the engine needs '" +
                         levelName(required_) + "'",
                     core::ErrorKind::Internal};
}

}  // namespace shardscope::profiler
