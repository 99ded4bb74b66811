#pragma once
// sacct as a function of its arguments, the time and what the controller answers (tests run it
// against canned replies); sacct_main runs it for real.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"

namespace drover::cli {

CommandResult run_sacct(const std::vector<std::string>& args, const CommandEnv& env, int64_t now);

// The default time window's start: midnight today (local time) before `now`.
int64_t local_midnight(int64_t now);

// -S/-E: Slurm's time forms taken as times in the past (a time of day later than now is
// yesterday's, a date without a year later than now last year's). Throws core::ParseError.
int64_t parse_past_time(const std::string& text, int64_t now);

}  // namespace drover::cli
