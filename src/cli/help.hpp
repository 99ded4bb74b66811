#pragma once
// What the commands share for --help, --usage, -V and option errors.
#include <string>

namespace drover::cli {

// -V/--version: Slurm's release line ("slurm 22.05.8"), the form scripts parse; --help says
// that the command is drover's.
std::string version_text();

// The line after an option error, as getopt-based Slurm commands print it:
// `Try "PROGRAM --help" for more information`.
std::string try_help(const std::string& program);

// -M/--clusters: other clusters are found through slurmdbd, which drover does not have; Slurm's
// two error lines for a cluster it cannot reach.
std::string cluster_unreachable(const std::string& program, const std::string& cluster);

}  // namespace drover::cli
