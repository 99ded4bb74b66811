#include "cli/help.hpp"

#include "core/version.hpp"

namespace drover::cli {

std::string version_text() { return "slurm " + std::string(core::kSlurmVersion) + "\n"; }

std::string try_help(const std::string& program) {
  return "Try \"" + program + " --help\" for more information\n";
}

std::string cluster_unreachable(const std::string& program, const std::string& cluster) {
  return program + ": error: Problem talking to database\n" + program + ": error: '" + cluster +
         "' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list "
         "clusters' to see available clusters.\n";
}

}  // namespace drover::cli
