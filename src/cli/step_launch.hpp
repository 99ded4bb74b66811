#pragma once
// srun's launch of one step: reaches every node's agent with the controller-signed credential,
// starts the tasks, relays their output (labelled, line-buffered or not), stdin and signals,
// and collects how each task ended.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace drover::cli {

struct LaunchRequest {
  nlohmann::json step;  // the controller's step_create reply
  std::vector<std::string> argv;
  std::map<uint32_t, std::vector<std::string>> task_argv;  // --multi-prog: per task
  std::map<std::string, std::string> env;
  std::string cwd;
  std::string stdin_mode = "all";  // "all", "none" or a task id
  std::map<uint32_t, std::string> stdout_files, stderr_files, stdin_files;  // per task
  std::string open_mode;
  // Run by each node's step supervisor around every task: srun's --task-prolog/--task-epilog
  // and slurm.conf's TaskProlog/TaskEpilog.
  std::string task_prolog, task_epilog, conf_task_prolog, conf_task_epilog;
  bool label = false, unbuffered = false, kill_on_bad_exit = false, quiet = false;
  // What one SIGINT does: by default a status line (a second within a second aborts the step);
  // --quit-on-interrupt aborts at once; -X/--disable-status passes it on to the tasks.
  bool quit_on_interrupt = false, disable_status = false;
  int wait_s = 0;  // -W: end the step this long after the first task ends
};

struct StepOutcome {
  std::map<uint32_t, int> status;  // each task's wait status (a lost task counts as SIGKILL)
  bool launch_failed = false;
  int exit_code = 0;    // srun's exit code
  int max_exit = 0;     // the largest exit code of a task
  int term_signal = 0;  // a signal that ended a task (0: none)
  bool cancelled = false;
};

// Runs the step to its end. Messages go to stderr prefixed "srun: " as Slurm words them.
StepOutcome run_step(const LaunchRequest& req);

}  // namespace drover::cli
