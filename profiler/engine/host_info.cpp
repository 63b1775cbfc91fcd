#include "shardscope/profiler/engine/host_info.h"

#include <unistd.h>

#include <fstream>

namespace shardscope::profiler {

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string cpuName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto begin = line.find_first_not_of(' ', colon + 1);
    return begin == std::string::npos ? std::string("unknown") : line.substr(begin);
  }
  return "unknown";
}

std::uint64_t availableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t value = 0;
  while (in >> key >> value >> unit)
    if (key == "MemAvailable:" && unit == "kB") return value * 1024;
  return 0;
}

}  // namespace shardscope::profiler
