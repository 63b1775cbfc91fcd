// Small MPI helpers of the distributed engine (mpi_util.h).
#include "mpi_util.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace shardscope::profiler::mpi_util {

int rankOf(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}

int sizeOf(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

void bcastString(MPI_Comm c, std::string& s, int root) {
  unsigned long long n = s.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, c);
  s.resize(static_cast<std::size_t>(n));
  for (std::size_t off = 0; off < s.size(); off += kMessageChunk) {
    const int len = static_cast<int>(std::min(kMessageChunk, s.size() - off));
    MPI_Bcast(s.data() + off, len, MPI_CHAR, root, c);
  }
}

void sendBytes(MPI_Comm c, const void* data, std::size_t size, int dest) {
  unsigned long long n = size;
  MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, dest, kTagTrace, c);
  const auto* p = static_cast<const char*>(data);
  for (std::size_t off = 0; off < size; off += kMessageChunk)
    MPI_Send(p + off, static_cast<int>(std::min(kMessageChunk, size - off)), MPI_BYTE, dest, kTagTrace, c);
}

std::vector<std::byte> recvBytes(MPI_Comm c, int src) {
  unsigned long long n = 0;
  MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, src, kTagTrace, c, MPI_STATUS_IGNORE);
  std::vector<std::byte> out(static_cast<std::size_t>(n));
  for (std::size_t off = 0; off < out.size(); off += kMessageChunk)
    MPI_Recv(out.data() + off, static_cast<int>(std::min(kMessageChunk, out.size() - off)), MPI_BYTE, src, kTagTrace, c,
             MPI_STATUS_IGNORE);
  return out;
}

// The lowest rank's error, known to every rank; "" when no rank failed.
std::string agreeOnError(MPI_Comm c, std::string local) {
  const int n = sizeOf(c);
  const int mine = local.empty() ? n : rankOf(c);
  int first = n;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, c);
  if (first == n) return {};
  bcastString(c, local, first);
  return local;
}

// MPI counts are ints: refuse a message that does not fit rather than wrap.
int countOf(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw std::runtime_error(std::string(what) + ": a message of " + std::to_string(n) +
                             " elements exceeds MPI's int count");
  return static_cast<int>(n);
}

void displacements(const std::vector<int>& counts, std::vector<int>& displs) {
  displs.resize(counts.size());
  std::size_t at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = countOf(at, "displacement");
    at += static_cast<std::size_t>(counts[i]);
  }
  (void)countOf(at, "all-to-all total");
}

// In-place sum over `c` of n floats, in chunks so that MPI's temporaries stay small.
void allreduceFloats(float* data, std::size_t n, MPI_Comm c) {
  for (std::size_t off = 0; off < n; off += kAllreduceChunk) {
    const int len = static_cast<int>(std::min(kAllreduceChunk, n - off));
    MPI_Allreduce(MPI_IN_PLACE, data + off, len, MPI_FLOAT, MPI_SUM, c);
  }
}

}  // namespace shardscope::profiler::mpi_util
