#pragma once
// -i/--iterate of squeue and sinfo: the same report again every few seconds, as Slurm prints
// it, until SIGINT.
#include <cstdint>
#include <functional>
#include <string>

#include "cli/report_cmds.hpp"

namespace drover::cli {

// What the loop needs from the world; tests pass fakes.
struct IterateIo {
  std::function<int64_t()> now;  // the clock of the date line
  // Writes what a report printed (stdout, stderr), at once.
  std::function<void(const std::string& out, const std::string& err)> write;
  // Waits between reports; false when the wait was interrupted (SIGINT).
  std::function<bool(int seconds)> pause;
};

// The real clock, stdout and stderr, and a pause that SIGINT ends: the report in progress is
// finished and written first, then the process ends as SIGINT ends Slurm's commands (a second
// SIGINT ends it at once).
IterateIo system_iterate_io();

// One report, or (seconds > 0) one report after another with a blank line after each and a
// pause between, until the pause is interrupted. `dated` puts the date line before each report
// (Slurm does so for -i, -l and -v unless -h). Returns the exit status of the last report.
int run_reports(int seconds, bool dated, const std::function<CommandResult()>& report,
                const IterateIo& io);

// The value of -i/--iterate as Slurm reads it (leading digits, as atoi); 0 when invalid.
int iterate_seconds(const std::string& value);

}  // namespace drover::cli
