#pragma once
// srun's and salloc's options: the command line over the SLURM_* / SRUN_* / SALLOC_* input
// variables, and the allocation request (a JobSpec) they describe.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/job.hpp"

namespace drover::cli {

struct RunOptions {
  std::optional<int> ntasks, nodes_min, nodes_max, cpus_per_task, ntasks_per_node;
  bool ntasks_cli = false, nodes_cli = false;  // given on the command line (not the environment)
  std::optional<int64_t> mem_mb, mem_per_cpu_mb, time_limit_min, tmp_mb;
  std::optional<int> min_cpus;  // --mincpus: CPUs a node must have at least
  std::optional<std::string> partition, account, qos, job_name, nodelist, exclude, constraint,
      reservation, dependency, gres, gpus, gpus_per_node, gpus_per_task, workdir, export_env, input,
      output, error, distribution, jobid, comment, begin, signal, open_mode;
  std::optional<std::string> propagate;  // --propagate[=list] ("": every limit)
  std::optional<std::string> task_prolog, task_epilog;
  bool exclusive = false, overlap = false, exact = false, label = false, unbuffered = false,
       kill_on_bad_exit = false, multi_prog = false, quiet = false, immediate = false,
       no_kill = false, disable_status = false, hold = false, test_only = false, pty = false,
       no_shell = false, overcommit = false, quit_on_interrupt = false,
       preserve_env = false;  // -E: tasks keep SLURM_NTASKS/SLURM_NNODES of srun's environment
  int verbose = 0;
  int wait_s = 0;  // -W: how long after the first task ends the others may run (0: no limit)
  std::vector<std::string> command;  // the program and its arguments
  bool help = false, usage = false, version = false;
};

// A usage error: what() is the message line for "srun: error: ..." (or getopt's own text when
// `getopt` is set, printed as is, followed by the "Try ... --help" hint).
struct RunUsageError : core::ParseError {
  RunUsageError(const std::string& what, bool getopt_text, int exit = 1)
      : core::ParseError(what), getopt(getopt_text), exit_code(exit) {}
  bool getopt;
  int exit_code;  // 255 for what Slurm's option parser rejects (unknown options, --time)
};

// `program` is "srun" or "salloc" (their option tables differ a little). `env` supplies the
// input variables. Throws RunUsageError.
RunOptions parse_run_options(const std::string& program, const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env);

// This process's environment as a map.
std::map<std::string, std::string> process_environment();

// Parses like parse_run_options; on an error prints it as `program` does and returns nothing
// with `exit_code` set.
std::optional<RunOptions> parse_run_options_or_report(const std::string& program,
                                                      const std::vector<std::string>& args,
                                                      const std::map<std::string, std::string>& env,
                                                      int& exit_code);

// The allocation srun (outside an allocation) or salloc asks for: a JobSpec with
// `interactive` set, named after the command unless -J.
core::JobSpec allocation_spec(const RunOptions& o, const std::string& program,
                              const std::map<std::string, std::string>& env);

}  // namespace drover::cli
