// Facts about the machine a run happens on, recorded in engine runs and used
// to budget memory: host name, CPU model, available memory.
#pragma once

#include <cstdint>
#include <string>

namespace shardscope::profiler {

[[nodiscard]] std::string hostName();                // "localhost" when unknown
[[nodiscard]] std::string cpuName();                 // /proc/cpuinfo "model name", "unknown" when absent
[[nodiscard]] std::uint64_t availableMemoryBytes();  // /proc/meminfo MemAvailable, 0 when unknown

}  // namespace shardscope::profiler
