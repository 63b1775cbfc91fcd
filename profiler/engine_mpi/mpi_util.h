// Small MPI helpers of the distributed engine (private to profiler/engine,
// compiled into shardscope_engine_mpi): rank and size, chunked broadcasts and
// point-to-point byte messages (MPI counts are ints), an error every rank
// agrees on, all-to-all displacements, chunked float all-reduce.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::profiler::mpi_util {

inline constexpr std::size_t kAllreduceChunk = std::size_t{1} << 22;  // floats per all-reduce call (16 MiB)
inline constexpr std::size_t kMessageChunk = std::size_t{1} << 30;    // bytes per point-to-point message
inline constexpr int kTagTrace = 0x5302;                              // sendBytes / recvBytes

int rankOf(MPI_Comm c);
int sizeOf(MPI_Comm c);
// Broadcast of a string of any length from `root`.
void bcastString(MPI_Comm c, std::string& s, int root);
// A length-prefixed byte message (tag kTagTrace), in chunks of kMessageChunk.
void sendBytes(MPI_Comm c, const void* data, std::size_t size, int dest);
std::vector<std::byte> recvBytes(MPI_Comm c, int src);
// The lowest rank's error, known to every rank; "" when no rank failed.
std::string agreeOnError(MPI_Comm c, std::string local);
// n as an MPI count; throws std::runtime_error naming `what` past INT_MAX.
int countOf(std::size_t n, const char* what);
// Exclusive prefix sums of `counts` (checked against INT_MAX).
void displacements(const std::vector<int>& counts, std::vector<int>& displs);
// In-place sum over `c` of n floats, in chunks so that MPI's temporaries stay small.
void allreduceFloats(float* data, std::size_t n, MPI_Comm c);

}  // namespace shardscope::profiler::mpi_util
