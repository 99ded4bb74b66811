#pragma once
// What the commands share for --help, --usage, -V and option errors.
#include <string>
#include <string_view>
#include <vector>

namespace drover::cli {

// One command's help, the single source of its --usage and --help output and of its man page.
// `help` keeps Slurm 22.05's layout (option lines indented under section headings, the
// descriptions in one column); the man page is built from it, so the two cannot disagree.
struct CommandHelp {
  std::string_view name;
  std::string_view summary;  // what the command does, one line (the man page's NAME)
  std::string_view usage;    // --usage
  std::string_view help;     // --help (or "help")
  std::string_view notes;    // where drover differs from Slurm; paragraphs split by blank lines
};

// Each command's help, defined beside its option table (srun's and salloc's in help_run.cpp).
extern const CommandHelp kSbatchHelp, kSrunHelp, kSallocHelp, kSqueueHelp, kSinfoHelp, kScancelHelp,
    kScontrolHelp, kSprioHelp, kSshareHelp, kSacctHelp, kSacctmgrHelp, kSreportHelp;

// Every command drover ships, by name.
const std::vector<const CommandHelp*>& all_command_help();

// The long options a help text lists in its option column (not those its descriptions
// mention), without the dashes, sorted and unique.
std::vector<std::string> listed_long_options(std::string_view help);

// The command's man page (roff, man(7) macros): NAME, SYNOPSIS, DESCRIPTION, OPTIONS from the
// help text, DROVER NOTES, SEE ALSO.
std::string man_page(const CommandHelp& help);

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
