#pragma once
// sinfo as a function of its arguments and what the controller answers (tests run it against
// canned replies); sinfo_main runs it for real. SINFO_FORMAT comes from env.env.
#include <string>
#include <vector>

#include "cli/iterate.hpp"
#include "cli/report_cmds.hpp"

namespace drover::cli {

// `io` serves -i/--iterate (its clock also dates -l's listing).
CommandResult run_sinfo(const std::vector<std::string>& args, const CommandEnv& env,
                        const IterateIo& io = {});

}  // namespace drover::cli
