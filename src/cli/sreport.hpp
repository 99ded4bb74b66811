#pragma once
// sreport as a function of its arguments, the time and what the controller answers (tests run it
// against canned replies); sreport_main runs it for real. The controller works out the sums
// from its job records (core/usage_report.hpp); this prints them as Slurm 22.05's sreport does
// (tests/compat/golden/accounting): cluster Utilization, cluster AccountUtilizationByUser and
// user TopUsage, with -t, -T, -n, -p, -P, start=, end=, format= and the reports' options.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"

namespace drover::cli {

CommandResult run_sreport(const std::vector<std::string>& args, const CommandEnv& env, int64_t now);

}  // namespace drover::cli
