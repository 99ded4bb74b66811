#pragma once
// scontrol show config: the controller's configuration in Slurm 22.05's layout.
#include "cli/client.hpp"
#include "cli/report_cmds.hpp"

namespace drover::cli {

// `reply` is the controller's answer to {"op":"query","what":"config"} (its "now" is the time of
// the "Configuration data as of" line).
CommandResult scontrol_show_config(const json& reply);

}  // namespace drover::cli
