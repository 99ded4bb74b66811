// salloc: an allocation held while a command (or the user's shell) runs.
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <thread>

#include "cli/allocation.hpp"
#include "cli/commands.hpp"
#include "cli/run_options.hpp"

extern char** environ;

namespace drover::cli {

int salloc_main(const std::vector<std::string>& args) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string item = *e;
    if (auto eq = item.find('='); eq != std::string::npos)
      env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  RunOptions o;
  try {
    o = parse_run_options("salloc", args, env);
  } catch (const RunUsageError& e) {
    if (e.getopt)
      std::cerr << e.what() << "\nTry \"salloc --help\" for more information\n";
    else
      std::cerr << "salloc: error: " << e.what() << '\n';
    return 1;
  } catch (const core::ParseError& e) {
    std::cerr << "salloc: error: " << e.what() << '\n';
    return 1;
  }
  if (o.help || o.usage) {
    std::cout << "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]\n";
    return 0;
  }
  if (o.version) {
    std::cout << "slurm 22.05.8\n";
    return 0;
  }
  std::vector<std::string> command = o.command;
  if (command.empty()) {
    // No command: the user's shell, as Slurm runs it without SallocDefaultCommand.
    const char* shell = std::getenv("SHELL");
    if (!shell || !*shell) {
      struct passwd* pw = ::getpwuid(::getuid());
      shell = pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh";
    }
    command = {shell};
  }
  core::JobSpec spec = allocation_spec(o, "salloc", env);
  std::optional<Allocation> a = allocate(spec, "salloc", o.quiet);
  if (!a) return 1;

  std::vector<std::string> env_strings;
  std::map<std::string, std::string> child_env = env;
  for (const auto& [k, v] : a->env) child_env[k] = v;
  for (const auto& [k, v] : child_env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : command) argv.push_back(s.data());
  argv.push_back(nullptr);

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
    ::execvpe(argv[0], argv.data(), envp.data());
    std::cerr << "salloc: error: " << command.front() << ": " << std::strerror(errno) << '\n';
    ::_exit(127);
  }
  int status = 0;
  bool revoked = false;
  auto next_check = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (pid > 0) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::chrono::steady_clock::now() >= next_check) {
      next_check += std::chrono::seconds(2);
      if (!revoked && !allocation_alive(a->job_id)) {
        revoked = true;
        std::cerr << "salloc: Job allocation " << a->job_id << " has been revoked.\n";
        ::kill(pid, SIGHUP);
      }
    }
  }
  if (!o.quiet) std::cerr << "salloc: Relinquishing job allocation " << a->job_id << '\n';
  if (!revoked) release_allocation(a->job_id, status);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace drover::cli
