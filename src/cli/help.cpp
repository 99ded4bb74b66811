#include "cli/help.hpp"

#include "core/version.hpp"

namespace drover::cli {

std::string version_text() { return "slurm " + std::string(core::kSlurmVersion) + "\n"; }

std::string try_help(const std::string& program) {
  return "Try \"" + program + " --help\" for more information\n";
}

}  // namespace drover::cli
