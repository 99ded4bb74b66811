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

// Sections sbatch, srun and salloc list word for word, as Slurm's three commands do. Macros
// of adjacent string literals, so that each help text stays one constant.
#define DROVER_HELP_AFFINITY_AND_GPUS                                          \
  "Affinity/Multi-core options: (when the task/affinity plugin is enabled)\n"  \
  "                              The next options give the least hardware a\n" \
  "                              node must have to be given to the job.\n"     \
  "      --sockets-per-node=S    sockets per node\n"                           \
  "      --cores-per-socket=C    cores per socket\n"                           \
  "      --threads-per-core=T    threads per core\n"                           \
  "  -B, --extra-node-info=S[:C[:T]] the three above at once; each may be\n"   \
  "                              '*', a minimum, or a min-max range\n"         \
  "\n"                                                                         \
  "      --ntasks-per-core=n     tasks to start on each core\n"                \
  "      --ntasks-per-socket=n   tasks to start on each socket\n"              \
  "\n"                                                                         \
  "GPU scheduling options:\n"                                                  \
  "      --cpus-per-gpu=n        CPUs per allocated GPU\n"                     \
  "  -G, --gpus=n                GPUs for the whole job\n"                     \
  "      --gpu-bind=...          how tasks are bound to GPUs\n"                \
  "      --gpu-freq=...          GPU frequency and voltage\n"                  \
  "      --gpus-per-node=n       GPUs on each allocated node\n"                \
  "      --gpus-per-socket=n     GPUs on each allocated socket\n"              \
  "      --gpus-per-task=n       GPUs for each task\n"                         \
  "      --mem-per-gpu=n         memory per allocated GPU\n"                   \
  "\n"

#define DROVER_HELP_HELP_AND_VERSION                       \
  "Help options:\n"                                        \
  "  -h, --help                  print this help\n"        \
  "      --usage                 print a short synopsis\n" \
  "\n"                                                     \
  "Other options:\n"                                       \
  "  -V, --version               print the version and exit\n"

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
