// salloc: an allocation held while a command (or the user's shell) runs.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/allocation.hpp"
#include "cli/commands.hpp"
#include "cli/help.hpp"
#include "cli/run_options.hpp"
#include "core/text.hpp"

namespace drover::cli {

int salloc_main(const std::vector<std::string>& args) {
  const std::map<std::string, std::string> env = process_environment();
  int exit_code = 1;
  std::optional<RunOptions> parsed = parse_run_options_or_report("salloc", args, env, exit_code);
  if (!parsed) return exit_code;
  const RunOptions& o = *parsed;
  if (o.help || o.usage) {
    std::cout << (o.help ? kSallocHelp.help : kSallocHelp.usage);
    return 0;
  }
  if (o.version) {
    std::cout << version_text();
    return 0;
  }
  std::vector<std::string> command = o.command;
  if (command.empty()) {
    // No command: the user's login shell from passwd (not $SHELL), as Slurm 22.05 runs it.
    struct passwd* pw = ::getpwuid(::getuid());
    command = {pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh"};
  }
  core::JobSpec spec = allocation_spec(o, "salloc", env);
  std::optional<Allocation> a = allocate(spec, "salloc", o.quiet, o.immediate);
  if (!a) return 1;
  if (o.no_shell) return 0;  // the allocation stays until cancelled

  std::vector<std::string> env_strings;
  std::map<std::string, std::string> child_env = env;
  for (const auto& [k, v] : a->env) child_env[k] = v;
  // salloc's command gets the allocation, not the job's owner and site (Slurm 22.05 sets none
  // of these for it).
  for (const char* k : {"SLURM_JOB_GID", "SLURM_JOB_UID", "SLURM_JOB_USER", "SLURM_PRIO_PROCESS",
                        "SLURM_WORKING_CLUSTER"})
    if (!env.count(k)) child_env.erase(k);
  for (const auto& [k, v] : child_env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : command) argv.push_back(s.data());
  argv.push_back(nullptr);

  // The command must be there and runnable (looked up in PATH) before anything is forked.
  std::string program = command.front();
  if (program.find('/') == std::string::npos) {
    std::string found;
    const std::string path = child_env.count("PATH") ? child_env["PATH"] : "/usr/bin:/bin";
    for (const auto& dir : core::split_list(path, ':')) {
      std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
      struct stat st {};
      if (::access(candidate.c_str(), X_OK) == 0 && ::stat(candidate.c_str(), &st) == 0 &&
          !S_ISDIR(st.st_mode)) {
        found = candidate;
        break;
      }
    }
    program = found;
  }
  struct stat st {};
  if (program.empty() || ::access(program.c_str(), X_OK) != 0 ||
      (::stat(program.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    std::cerr << "salloc: error: _fork_command: Unable to find command \"" << command.front()
              << "\"\n";
    if (!o.quiet) std::cerr << "salloc: Relinquishing job allocation " << a->job_id << '\n';
    release_allocation(a->job_id, 1 << 8);
    return 1;
  }

  // While the command runs salloc ignores the terminal's signals (the command handles them).
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::execve(program.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  int status = 0;
  bool revoked = false;
  auto next_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (pid > 0) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (revoked || std::chrono::steady_clock::now() < next_check) continue;
    next_check += std::chrono::seconds(1);
    // Revoked (cancelled, timed out): said once; the command runs on, as in Slurm.
    const std::string state = allocation_state(a->job_id);
    if (state == "TIMEOUT") {
      revoked = true;
      std::cerr << "salloc: Job " << a->job_id
                << " has exceeded its time limit and its allocation has been revoked.\n";
    } else if (state != "RUNNING") {
      revoked = true;
      std::cerr << "salloc: Job allocation " << a->job_id << " has been revoked.\n";
    }
  }
  if (!revoked) {
    if (!o.quiet) std::cerr << "salloc: Relinquishing job allocation " << a->job_id << '\n';
    release_allocation(a->job_id, status);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  // A command ended by a signal: 0 for the terminal's ones and SIGKILL, else 1 (Slurm's rule).
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGKILL ? 0 : 1;
  }
  return 1;
}

}  // namespace drover::cli
