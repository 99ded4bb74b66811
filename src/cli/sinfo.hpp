#pragma once
// sinfo as a function of its arguments and what the controller answers (tests run it against
// canned replies); sinfo_main runs it for real.
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"

namespace drover::cli {

CommandResult run_sinfo(const std::vector<std::string>& args, const CommandEnv& env);

}  // namespace drover::cli
