#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace drover::core {

// --priority=TOP (Slurm's highest priority short of a held job).
inline constexpr int kPriorityTop = std::numeric_limits<int>::max();
// --nice given without a value.
inline constexpr int kDefaultNice = 100;

struct SbatchOptions {
  // identity/placement
  std::optional<std::string> job_name, output, error, input, partition, workdir, account, qos,
      comment, wrap, reservation, constraint, nodelist, exclude, gres, gpus, dependency, array,
      begin, export_env /*raw --export value*/, signal, mail_type, mail_user, open_mode, deadline,
      licenses, mem_bind, cpu_bind, distribution, chdir_alias_unused;
  std::optional<int64_t> time_limit_min, time_min_min;  // minutes or kInfinite
  std::optional<int> ntasks, nodes_min, nodes_max, cpus_per_task, ntasks_per_node, nice, priority,
      gpus_per_node_count_unused;
  std::optional<int64_t> mem_mb, mem_per_cpu_mb, mem_per_gpu_mb;
  std::optional<std::string> gpus_per_node, gpus_per_task;
  bool parsable = false, hold = false, exclusive = false, test_only = false, quiet = false,
       wait = false, kill_on_invalid_dep_set = false, kill_on_invalid_dep = false,
       requeue_set = false, requeue = false, overcommit = false, contiguous = false, help = false,
       usage = false, version = false;
  int verbose = 0;
  std::vector<std::string> script_argv;  // script path (argv[0]) and its arguments
  std::vector<std::string> set_options;  // long names of options given, first occurrence order
  // Valid options without a field above, by long name; flags map to "". Also holds
  // "exclusive" ("exclusive", "user" or "mcs") next to the `exclusive` flag.
  std::map<std::string, std::string> other;
};

// A command-line usage error as getopt reports it ("unrecognized option '--foo'", "option
// requires an argument -- 't'", ...). what() is that line, then '\n' and the hint line
// `Try "sbatch --help" for more information`. Real sbatch prefixes only the first line with
// "sbatch: "; format_sbatch_error() reproduces that.
struct SbatchUsageError : ParseError {
  using ParseError::ParseError;
};

// Parses sbatch arguments (without the program name) like getopt_long with sbatch's option
// table: clustered short options ("-vN2", "-Jname"), "--opt=value" and "--opt value", unambiguous
// long prefixes ("--partit"), "--" ending options, and the first non-option starting
// script_argv (options after it belong to the script). Applies on top of `base`.
// Value errors throw ParseError with sbatch's text, e.g. "Invalid --time specification",
// "\"x\" is not a valid node count", "Invalid numeric value \"0\" for --ntasks.".
// Where real sbatch silently wraps or ignores junk (--nice=bad is 0, -N99999999999 wraps), this
// parser refuses it with the same message sbatch uses for that option.
SbatchOptions parse_sbatch_args(const std::vector<std::string>& args, SbatchOptions base = {});

// Parses the tokens of #SBATCH directives (scan_sbatch_directives) on top of `base`. As sbatch,
// all directives form one argument list, and a non-option token is an error: "Invalid directive
// found in batch script: <token>".
SbatchOptions parse_sbatch_directives(const std::vector<std::string>& tokens,
                                      SbatchOptions base = {});

// Collects #SBATCH directive tokens as sbatch does: only lines starting at column 0 with
// "#SBATCH"; scanning stops at the first line that is neither blank nor a comment (leading blanks
// allowed before '#'). Each directive's text after "#SBATCH" is split at blanks with single and
// double quotes grouping and removed, a backslash taking the next character literally (except a
// blank, which still splits), and an unquoted '#' ending the directive.
// Throws ParseError for an unmatched quote ("<name>: line N: Unmatched `\"` in [...]") and for a
// "hetjob"/"packjob" separator: heterogeneous jobs are not supported.
std::vector<std::string> scan_sbatch_directives(std::string_view script,
                                                std::string_view script_name = "script");

// Checks what sbatch checks about the script text before reading directives: it must start with
// "#!" and have no DOS line breaks. Throws ParseError with sbatch's (multi-line) wording.
void check_batch_script(std::string_view script);

// Applies SBATCH_* input environment variables (and SLURM_CLUSTERS / SLURM_HINT) on top of
// `base`, with the same validation and messages as the options. Flag variables are set when
// empty, "yes" or a non-zero number, and otherwise ignored, as sbatch does.
SbatchOptions apply_sbatch_env(const std::map<std::string, std::string>& env, SbatchOptions base);

// The text real sbatch writes to stderr for this error: "sbatch: <line>\n<hint>\n" for usage
// errors, and "sbatch: error: <line>\n" for each line of any other ParseError.
std::string format_sbatch_error(const ParseError& e);

// --signal=[{R|B}:]num[@time]: which signal, how many seconds before the time limit (default
// 60), and whether only the batch shell gets it. Throws ParseError as the option does.
struct SignalSpec {
  int signal = 0;
  int64_t seconds = 60;
  bool batch_only = false, reservation = false;
};
SignalSpec parse_signal_spec(std::string_view value);

// Long option names sbatch accepts, in the order of its option table.
const std::vector<std::string>& sbatch_long_options();

}  // namespace drover::core
