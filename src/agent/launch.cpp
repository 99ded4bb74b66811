#include "agent/launch.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "agent/proctrack.hpp"
#include "core/rlimits.hpp"
#include "net/fd_io.hpp"

namespace drover::agent {
namespace {

// argv and envp for execve, built before fork (the child only fills in SLURM_TASK_PID).
struct ExecVectors {
  std::vector<std::string> env_strings, args;
  std::string pid_var = std::string(64, '\0');
  std::vector<char*> envp, argv;
  ExecVectors(const std::map<std::string, std::string>& env, std::vector<std::string> arguments)
      : args(std::move(arguments)) {
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(pid_var.data());
    envp.push_back(nullptr);
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
  }
  void set_task_pid() {
    std::snprintf(pid_var.data(), pid_var.size(), "SLURM_TASK_PID=%d",
                  static_cast<int>(::getpid()));
  }
};

// Set in a batch shell's child before anything can fail: its failures are launch failures.
bool batch_child = false;
// A batch shell that cannot start (its output file or working directory unusable, exec
// failing) ends by this signal: the controller then records FAILED, Reason=JobLaunchFailure,
// ExitCode=0:53, what Slurm 22.05 records for such a job.
constexpr int kLaunchFailureSignal = 53;

// After fork only async-signal-safe calls: report through stderr and _exit.
[[noreturn]] void child_fail(const char* what) {
  const char* err = std::strerror(errno);
  (void)!::write(2, "droverd: ", 9);
  (void)!::write(2, what, std::strlen(what));
  (void)!::write(2, ": ", 2);
  (void)!::write(2, err, std::strlen(err));
  (void)!::write(2, "\n", 1);
  if (batch_child) {
    ::signal(kLaunchFailureSignal, SIG_DFL);
    ::kill(::getpid(), kLaunchFailureSignal);
  }
  ::_exit(1);
}

// Created files get the job's umask (set before), as Slurm's output files do.
void redirect(int target, const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0666);
  if (fd < 0) child_fail(path.c_str());
  if (::dup2(fd, target) < 0) child_fail("dup2");
  ::close(fd);
}

// The child's first steps: its own session, default signal handling, nothing blocked.
void child_reset_signals() {
  ::setsid();
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);  // fails harmlessly for some
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Takes on the job's user (its groups, gid, uid) when the agent runs as root.
void child_become_user(const std::string& user, uid_t uid, gid_t gid) {
  if (::geteuid() != 0) return;
  if (::initgroups(user.c_str(), gid) != 0 && ::setgroups(0, nullptr) != 0) child_fail("setgroups");
  if (::setgid(gid) != 0) child_fail("setgid");
  if (uid != 0 && ::setuid(uid) != 0) child_fail("setuid");
}

// Forks with every signal blocked, so none reaches the child while it still has the agent's
// handlers (the child resets them); returns as fork does.
pid_t fork_blocked(int& fork_errno) {
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  fork_errno = errno;
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return pid;
}

// The submitter's soft limits its command sent (SLURM_RLIMIT_<NAME>, core/rlimits.hpp),
// taken out of the environment, as Slurm's tasks never see them.
std::vector<std::pair<int, rlim_t>> take_rlimits(std::map<std::string, std::string>& env) {
  std::vector<std::pair<int, rlim_t>> out;
  for (const auto& n : core::rlimit_names()) {
    auto it = env.find(std::string("SLURM_RLIMIT_") + n.name);
    if (it == env.end()) continue;
    const std::string& v = it->second;
    if (!v.empty() && v.size() <= 20 && std::all_of(v.begin(), v.end(), ::isdigit))
      out.push_back({n.resource, static_cast<rlim_t>(std::strtoull(v.c_str(), nullptr, 10))});
    env.erase(it);
  }
  return out;
}

// In the child: each soft limit as sent, but never above the node's hard limit (the value
// comes from the client, so it may lower what the job gets, never raise it).
void child_apply_rlimits(const std::vector<std::pair<int, rlim_t>>& limits) {
  for (const auto& [resource, value] : limits) {
    const auto r = static_cast<__rlimit_resource_t>(resource);
    struct rlimit lim {};
    if (::getrlimit(r, &lim) != 0) continue;
    lim.rlim_cur = std::min(value, lim.rlim_max);
    (void)::setrlimit(r, &lim);
  }
}

void write_stderr(std::string_view text) { (void)!::write(2, text.data(), text.size()); }

}  // namespace

void set_node_connection(std::map<std::string, std::string>& env, const NodeConnection& node) {
  if (!node.auth_socket.empty()) {
    env["DROVER_CONTROLLER"] = node.controller;
    env["DROVER_AUTH_SOCKET"] = node.auth_socket;
    env.erase("DROVER_SOCKET");
    return;
  }
  // The agent sees the file system its jobs see (same mount namespace).
  auto it = env.find("DROVER_SOCKET");
  if (it != env.end() && !it->second.empty() && ::access(it->second.c_str(), F_OK) != 0 &&
      (errno == ENOENT || errno == ENOTDIR))
    env.erase(it);
}

mode_t job_umask(const std::map<std::string, std::string>& env) {
  auto it = env.find("SLURM_UMASK");
  if (it == env.end() || it->second.empty() || it->second.size() > 4) return 022;
  mode_t mask = 0;
  for (char c : it->second) {
    if (c < '0' || c > '7') return 022;
    mask = mask * 8 + static_cast<mode_t>(c - '0');
  }
  return mask & 0777;
}

void write_script(const std::string& path, const std::string& text, uid_t uid, gid_t gid) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  if (fd < 0) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  bool ok = net::write_fully(fd, text);
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
  // Everything the child needs is prepared before fork. The batch shell runs with the
  // submitter's umask but, as on Slurm, without SLURM_UMASK in its environment.
  const mode_t mask = job_umask(spec.env);
  std::map<std::string, std::string> env = spec.env;
  env.erase("SLURM_UMASK");
  const auto limits = take_rlimits(env);
  ExecVectors ev(env, spec.argv.empty() ? std::vector<std::string>{spec.script_path} : spec.argv);

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  int fork_errno = 0;
  pid_t pid = fork_blocked(fork_errno);
  if (pid != 0) {
    ::close(exec_pipe[1]);
    if (pid < 0) {
      ::close(exec_pipe[0]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
    }
    return {pid, exec_pipe[0]};
  }

  // Child.
  batch_child = true;
  ::close(exec_pipe[0]);
  child_reset_signals();
  // Into the job's cgroup before anything of the job runs, so none of its processes escapes.
  if (!place_self(spec.cgroup_procs)) child_fail("cgroup.procs");
  ev.set_task_pid();
  child_apply_rlimits(limits);
  child_become_user(spec.user, spec.uid, spec.gid);
  ::umask(mask);
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
  // Nothing of the agent's (its controller link, asio's descriptors) leaks into the job; the
  // exec pipe (close-on-exec) stays open until execve.
  const unsigned keep = static_cast<unsigned>(exec_pipe[1]);
  if (keep > 3) ::close_range(3, keep - 1, 0);
  ::close_range(keep + 1, ~0U, 0);
  ::execve(spec.script_path.c_str(), ev.argv.data(), ev.envp.data());
  child_fail("execve");
}

int open_as_user(const std::string& path, int flags, const std::string& user, uid_t uid, gid_t gid,
                 mode_t mask) {
  const mode_t mode = 0666 & ~mask;
  if (::geteuid() != 0) {
    // The agent's own umask (077) must not apply to the job's file: a file this call creates
    // gets the job's mode exactly.
    if (flags & O_CREAT) {
      const int fd = ::open(path.c_str(), flags | O_EXCL | O_CLOEXEC, mode);
      if (fd >= 0) {
        (void)::fchmod(fd, mode);
        return fd;
      }
      if (errno != EEXIST) return -errno;
    }
    const int fd = ::open(path.c_str(), (flags & ~O_CREAT) | O_CLOEXEC);
    return fd >= 0 ? fd : -errno;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return -errno;
  int fork_errno = 0;
  const pid_t pid = fork_blocked(fork_errno);
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return -fork_errno;
  }
  if (pid == 0) {
    ::close(sv[0]);
    child_reset_signals();
    child_become_user(user, uid, gid);
    ::umask(mask);
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    int err = fd >= 0 ? 0 : errno;
    iovec iov{&err, sizeof err};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (fd >= 0) {
      m.msg_control = control;
      m.msg_controllen = sizeof control;
      cmsghdr* c = CMSG_FIRSTHDR(&m);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ::_exit(::sendmsg(sv[1], &m, 0) < 0 ? 1 : 0);
  }
  ::close(sv[1]);
  int err = EIO, fd = -1;
  iovec iov{&err, sizeof err};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err) && err == 0)
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  ::close(sv[0]);
  // The agent's SIGCHLD handler may reap it first; either way it is gone.
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (fd >= 0) return fd;
  return n == static_cast<ssize_t>(sizeof err) && err != 0 ? -err : -EIO;
}

ScriptRun run_task_script(const std::string& path, const TaskSpec& task, bool capture) {
  ExecVectors ev(task.env, {path});
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  int fork_errno = 0;
  const pid_t pid = fork_blocked(fork_errno);
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
  }
  if (pid == 0) {
    child_reset_signals();
    ::setsid();
    ev.set_task_pid();
    child_become_user(task.user, task.uid, task.gid);
    ::umask(job_umask(task.env));
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(capture ? out[1] : null, 1) < 0 ||
        ::dup2(null, 2) < 0)
      ::_exit(127);
    if (::chdir(task.workdir.c_str()) != 0 && ::chdir("/tmp") != 0) ::_exit(127);
    ::close_range(3, ~0U, 0);
    ::execve(path.c_str(), ev.argv.data(), ev.envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ScriptRun run;
  char buf[4096];
  while (true) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (run.out.size() < (1u << 20)) run.out.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL);  // whatever it left behind
  return run;
}

pid_t spawn_task(const TaskSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("no program to run");
  const mode_t mask = job_umask(spec.env);
  auto path_it = spec.env.find("PATH");
  const std::string path_var =
      path_it != spec.env.end() ? path_it->second : "/usr/local/bin:/usr/bin:/bin";
  std::map<std::string, std::string> env = spec.env;
  const auto limits = take_rlimits(env);
  ExecVectors ev(env, spec.argv);
  const std::vector<std::string>& args = ev.args;
  // Where the program may be: a name with a slash as given, else each directory of PATH.
  std::vector<std::string> candidates;
  const std::string& prog = args.front();
  if (prog.find('/') != std::string::npos) {
    candidates.push_back(prog);
  } else {
    size_t start = 0;
    while (start <= path_var.size()) {
      size_t end = path_var.find(':', start);
      if (end == std::string::npos) end = path_var.size();
      std::string dir = path_var.substr(start, end - start);
      candidates.push_back((dir.empty() ? "." : dir) + "/" + prog);
      start = end + 1;
    }
  }
  const std::string chdir_msg =
      spec.stepd_name + ": error: couldn't chdir to `" + spec.workdir + "': ";
  // Slurm names a relative program by its full path (the working directory before it).
  const std::string shown =
      prog.find('/') != std::string::npos && prog.front() != '/' ? spec.workdir + "/" + prog : prog;
  const std::string exec_msg = spec.stepd_name + ": error: execve(): " + shown + ": ";
  int fork_errno = 0;
  pid_t pid = fork_blocked(fork_errno);
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
  if (pid > 0) return pid;

  // Child.
  child_reset_signals();
  if (!place_self(spec.cgroup_procs)) child_fail("cgroup.procs");
  ev.set_task_pid();
  child_apply_rlimits(limits);
  child_become_user(spec.user, spec.uid, spec.gid);
  ::umask(mask);
  for (int i = 0; i < 3; ++i) {
    if (spec.stdio_fds[i] >= 0) {
      if (::dup2(spec.stdio_fds[i], i) < 0) child_fail("dup2");
    } else {
      const int flags = i == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (spec.append ? O_APPEND : O_TRUNC);
      if (i == 2 && spec.stdio_paths[2] == spec.stdio_paths[1] && spec.stdio_fds[1] < 0) {
        if (::dup2(1, 2) < 0) child_fail("dup2");
      } else {
        redirect(i, spec.stdio_paths[i], flags);
      }
    }
  }
  if (::chdir(spec.workdir.c_str()) != 0) {
    write_stderr(chdir_msg);
    write_stderr(std::strerror(errno));
    write_stderr(": going to /tmp instead\n");
    if (::chdir("/tmp") != 0) child_fail("chdir");
  }
  if (!spec.prelude_out.empty())
    (void)!::write(1, spec.prelude_out.data(), spec.prelude_out.size());
  if (!spec.prelude_err.empty()) write_stderr(spec.prelude_err);
  if (spec.prelude_exit >= 0) ::_exit(spec.prelude_exit);
  ::close_range(3, ~0U, 0);
  int err = ENOENT;
  for (const auto& c : candidates) {
    ::execve(c.c_str(), ev.argv.data(), ev.envp.data());
    // Keep looking past missing files; remember a file that is there but cannot run.
    if (errno != ENOENT && errno != ENOTDIR) err = errno;
  }
  // One write, so tasks sharing srun's stderr do not interleave within the line.
  char line[4096];
  const char* reason = std::strerror(err);
  const size_t n1 = std::min(exec_msg.size(), sizeof line - 1);
  std::memcpy(line, exec_msg.data(), n1);
  size_t n = n1;
  const size_t n2 = std::min(std::strlen(reason), sizeof line - 2 - n);
  std::memcpy(line + n, reason, n2);
  n += n2;
  line[n++] = '\n';
  write_stderr(std::string_view(line, n));
  ::_exit(err);
}

}  // namespace drover::agent
