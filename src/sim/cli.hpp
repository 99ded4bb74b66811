#pragma once
// `drover sim`: the command line around replay().
#include <ostream>
#include <string>
#include <vector>

namespace drover::sim {

// Usage text for `drover sim`.
const char* sim_usage();

// Runs `drover sim ARGS...` (args exclude "sim"). The deterministic report goes to `out`, the
// measured wall times and errors to `err`. Returns the exit status: 0 done, 1 the trace or the
// replay failed, 2 bad usage.
int sim_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace drover::sim
