// placeholder: being written
#include "cli.h"
namespace shardscope::app::cli {
int runProfile(Args) { return usageError("not available yet"); }
}  // namespace shardscope::app::cli
