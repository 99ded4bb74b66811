#include "agent/launch.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace drover::agent {
namespace {

// After fork only async-signal-safe calls: report through stderr and _exit.
[[noreturn]] void child_fail(const char* what) {
  const char* err = std::strerror(errno);
  (void)!::write(2, "droverd: ", 9);
  (void)!::write(2, what, std::strlen(what));
  (void)!::write(2, ": ", 2);
  (void)!::write(2, err, std::strlen(err));
  (void)!::write(2, "\n", 1);
  ::_exit(1);
}

void redirect(int target, const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) child_fail(path.c_str());
  if (::dup2(fd, target) < 0) child_fail("dup2");
  ::close(fd);
}

}  // namespace

void write_script(const std::string& path, const std::string& text, uid_t uid, gid_t gid) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (ok && ::geteuid() == 0) ok = ::fchown(fd, uid, gid) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
}

std::map<std::string, std::string> login_environment(const std::string& user, int timeout_s) {
  std::map<std::string, std::string> env;
  if (::geteuid() != 0 || user.empty()) return env;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return env;
  const std::string su = "/bin/su", login = "-", cmd = "-c", print = "env -0";
  std::vector<char*> argv = {const_cast<char*>(su.c_str()),    const_cast<char*>(login.c_str()),
                             const_cast<char*>(user.c_str()),  const_cast<char*>(cmd.c_str()),
                             const_cast<char*>(print.c_str()), nullptr};
  char empty_env_entry[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
  char* envp[] = {empty_env_entry, nullptr};
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return env;
  }
  if (pid == 0) {
    ::setsid();
    ::dup2(fds[1], 1);
    int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 2);
    }
    ::execve(su.c_str(), argv.data(), envp);
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd p {
      fds[0], POLLIN, 0
    };
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\0', start);
    if (end == std::string::npos) end = out.size();
    std::string item = out.substr(start, end - start);
    if (auto eq = item.find('='); eq != std::string::npos && eq > 0)
      env[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return env;
}

Spawned spawn_batch(const LaunchSpec& spec) {
  // Everything the child needs is prepared before fork.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  std::string pid_var(64, '\0');  // SLURM_TASK_PID, filled in by the child
  envp.push_back(pid_var.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  if (args.empty()) args.push_back(spec.script_path);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const bool as_root = ::geteuid() == 0;
  const bool switch_user = as_root && spec.uid != 0;

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  // Signals are blocked across fork so none reaches the child while it still has the agent's
  // handlers; the child resets them and unblocks.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid != 0) {
    const int fork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    ::close(exec_pipe[1]);
    if (pid < 0) {
      ::close(exec_pipe[0]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
    }
    return {pid, exec_pipe[0]};
  }

  // Child.
  ::close(exec_pipe[0]);
  ::setsid();
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);  // fails harmlessly for some
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  std::snprintf(pid_var.data(), pid_var.size(), "SLURM_TASK_PID=%d", static_cast<int>(::getpid()));
  if (as_root) {
    if (::initgroups(spec.user.c_str(), spec.gid) != 0 && ::setgroups(0, nullptr) != 0)
      child_fail("setgroups");
    if (::setgid(spec.gid) != 0) child_fail("setgid");
    if (switch_user && ::setuid(spec.uid) != 0) child_fail("setuid");
  }
  // Files are opened as the job's user, so permissions are theirs.
  redirect(0, spec.std_in, O_RDONLY);
  const int out_flags = O_WRONLY | O_CREAT | (spec.append ? O_APPEND : O_TRUNC);
  redirect(1, spec.std_out, out_flags);
  if (spec.std_err == spec.std_out) {
    if (::dup2(1, 2) < 0) child_fail("dup2");
  } else {
    redirect(2, spec.std_err, out_flags);
  }
  if (::chdir(spec.workdir.c_str()) != 0) {
    // Slurm runs the job in /tmp when the working directory is unusable, and says so.
    const char msg[] =
        "slurmstepd: error: couldn't chdir to working directory: going to /tmp instead\n";
    (void)!::write(2, msg, sizeof msg - 1);
    if (::chdir("/tmp") != 0) child_fail("chdir");
  }
  ::umask(022);
  // Nothing of the agent's (its controller link, asio's descriptors) leaks into the job; the
  // exec pipe (close-on-exec) stays open until execve.
  const unsigned keep = static_cast<unsigned>(exec_pipe[1]);
  if (keep > 3) ::close_range(3, keep - 1, 0);
  ::close_range(keep + 1, ~0U, 0);
  ::execve(spec.script_path.c_str(), argv.data(), envp.data());
  child_fail("execve");
}

}  // namespace drover::agent
