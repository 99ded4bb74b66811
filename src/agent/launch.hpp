#pragma once
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace drover::agent {

// Everything needed to start a batch shell, decoded from the controller's launch message.
struct LaunchSpec {
  uint64_t job_id = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::string script_path;  // already written by the caller
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string workdir, std_out, std_err, std_in;
  bool append = false;            // --open-mode=append (and every run after a requeue, as Slurm)
  std::vector<int> cgroup_procs;  // the child writes itself into these before exec (ProcTrack)
};

struct Spawned {
  pid_t pid;
  // Reads end of file once the child has exec'd the script (or died trying): only then are its
  // output files opened (truncated) and its signal dispositions the defaults, so signals and
  // notices sent before would be lost. The caller owns it.
  int exec_fd;
};

// One task of an srun step: its program (argv[0] looked up in the task's PATH, as slurmstepd
// does), environment and stdio (pipe ends, or files opened as the user).
struct TaskSpec {
  uid_t uid = 0;
  gid_t gid = 0;
  std::string user;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string workdir;
  int stdio_fds[3] = {-1, -1, -1};  // the child's ends; -1: open stdio_paths[i] instead
  std::string stdio_paths[3] = {"/dev/null", "/dev/null", "/dev/null"};
  bool append = false;
  std::string stepd_name = "slurmstepd";  // how the task's own error lines start
  std::vector<int> cgroup_procs;          // the child writes itself into these before exec
  // What the task prologs said, written on the task's stdout and stderr before it runs; a
  // prolog that failed ends the task with prelude_exit instead (-1: it runs).
  std::string prelude_out, prelude_err;
  int prelude_exit = -1;
};

// Runs a task prolog or epilog (executable `path`, no arguments) as the task's user, with the
// task's environment and in its working directory, stdin and stderr /dev/null, and waits for
// it. Returns its wait status and, when `capture`, its standard output (else discarded).
// Throws std::runtime_error if it cannot be started.
struct ScriptRun {
  int status = 0;
  std::string out;
};
ScriptRun run_task_script(const std::string& path, const TaskSpec& task, bool capture);

// Forks a task in its own session with the user's credentials. A program that cannot be run
// ends the task with exit code errno after `slurmstepd: error: execve(): NAME: REASON` on its
// stderr, as Slurm's tasks do. Throws std::runtime_error if fork fails.
pid_t spawn_task(const TaskSpec& spec);

// Opens `path` with `flags` (mode 0666 less `mask` when created) as the user would, for the
// agent to write into on the user's behalf (labelled step output): a short-lived child takes on
// the user's credentials, opens the file and hands the descriptor back. Returns the descriptor,
// or -errno. Without root the agent opens it itself.
int open_as_user(const std::string& path, int flags, const std::string& user, uid_t uid, gid_t gid,
                 mode_t mask = 022);

// How commands on this node reach the controller: the agent's own way there. Like slurmd's
// SLURM_CONF, it replaces what the submitter's environment said, which names the submitting
// host's files (docs/users.md "Commands inside a job").
struct NodeConnection {
  std::string controller;   // host:port, as the agent reaches the controller
  std::string auth_socket;  // the agent's vouching socket (--auth-socket); empty: none
};

// Points drover's connection variables in a job's or a task's environment at this node's.
// With a vouching socket, DROVER_CONTROLLER and DROVER_AUTH_SOCKET are the node's and
// DROVER_SOCKET goes (it would win over both). Without one, commands there use a Unix socket
// the node shares with the controller's host: only a DROVER_SOCKET that names nothing on this
// node goes (the submitting host's), so that the node's own configuration applies.
void set_node_connection(std::map<std::string, std::string>& env, const NodeConnection& node);

// The umask a job's processes run with: SLURM_UMASK of `env` (octal, as sbatch and srun send
// the submitter's umask), else 022.
mode_t job_umask(const std::map<std::string, std::string>& env);

// Forks the batch shell in its own session (so signals reach the whole process group),
// as the job's user when the agent is root, with stdio on the requested files.
// Throws std::runtime_error if fork fails.
Spawned spawn_batch(const LaunchSpec& spec);

// The user's login environment, as `su - USER` sets it up (what Slurm adds for
// SLURM_GET_USER_ENV=1 / --export=NONE): runs the login shell to print it, giving up after
// `timeout_s` (Slurm's --get-user-env default is 8 s). Empty when not root or on failure.
std::map<std::string, std::string> login_environment(const std::string& user, int timeout_s);

// Writes the script where only the job's user can read it.
void write_script(const std::string& path, const std::string& text, uid_t uid, gid_t gid);

}  // namespace drover::agent
