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
  bool append = false;  // --open-mode=append (and every run after a requeue, as Slurm)
};

struct Spawned {
  pid_t pid;
  // Reads end of file once the child has exec'd the script (or died trying): only then are its
  // output files opened (truncated) and its signal dispositions the defaults, so signals and
  // notices sent before would be lost. The caller owns it.
  int exec_fd;
};

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
