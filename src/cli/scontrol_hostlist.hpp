#pragma once
// scontrol show hostnames|hostlist|hostlistsorted: hostlist expressions expanded or ranged on
// the client, as Slurm 22.05's scontrol does (no controller involved).
#include <map>
#include <string>

#include "cli/report_cmds.hpp"

namespace drover::cli {

// `what` is "hostnames", "hostlist" or "hostlistsorted"; `arg` the expression (empty: none
// given); `env` the caller's environment (hostnames falls back to SLURM_NODELIST).
CommandResult scontrol_show_hostlist(const std::string& what, const std::string& arg,
                                     const std::map<std::string, std::string>& env);

}  // namespace drover::cli
