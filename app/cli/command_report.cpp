// placeholder: being written
#include "cli.h"
namespace shardscope::app::cli {
int runReport(Args) { return usageError("not available yet"); }
}  // namespace shardscope::app::cli
