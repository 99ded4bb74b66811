#include "agent/stepd.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>

#include "agent/exit_store.hpp"
#include "agent/proctrack.hpp"
#include "agent/stepd_proto.hpp"
#include "agent/steps.hpp"
#include "net/connection.hpp"
#include "net/peercred.hpp"
#include "proto/decode.hpp"

namespace drover::agent {
namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// Slurm tells the job why it is being killed, in its error file. The supervisor is root, so it
// writes only to a regular file (not through a symlink) that the job's user owns.
void append_notice(const std::string& path, uid_t owner, const std::string& line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != owner) {
    ::close(fd);
    return;
  }
  std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
}

// A supervisor's link to its node's agent: the connection it was started with, then whichever
// agent connects to its socket. Only the supervisor's own user may (root in production), and
// the newest agent speaks for the node: an older link goes. Shared by batch and step
// supervisors; the owner's io_context runs it.
class AgentLink {
 public:
  using OnMessage =
      std::function<void(const std::shared_ptr<net::Connection>&, const std::string&)>;
  explicit AgentLink(asio::io_context& io) : io_(io) {}

  // `on_closed` runs when an agent's connection closes, once it is no longer the current one.
  void start(int link_fd, int listen_fd, OnMessage on_message, std::function<void()> on_closed) {
    on_message_ = std::move(on_message);
    on_closed_ = std::move(on_closed);
    acceptor_.assign(asio::local::stream_protocol(), listen_fd);
    attach(std::make_shared<net::Connection>(net::Connection::Socket(
        io_, asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), link_fd)));
    accept();
  }
  void send(const stepd::Message& m) {
    if (agent_) agent_->send(stepd::encode(m), false);
  }
  const std::shared_ptr<net::Connection>& current() const { return agent_; }
  // The job or step has ended: no agent may connect any more.
  void stop_listening() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  void accept() {
    acceptor_.async_accept(
        [this](boost::system::error_code ec, asio::local::stream_protocol::socket sock) {
          if (ec) return;  // closed: the job has ended
          auto cred = net::peer_credentials(sock.native_handle());
          if (cred && cred->uid == ::geteuid())
            attach(std::make_shared<net::Connection>(net::Connection::Socket(std::move(sock))));
          accept();
        });
  }
  void attach(std::shared_ptr<net::Connection> conn) {
    if (agent_) agent_->close();
    agent_ = conn;
    conn->start([this, conn](std::string payload) { on_message_(conn, payload); },
                [this, conn](const std::string&) {
                  if (agent_ == conn) agent_.reset();
                  on_closed_();
                });
  }

  asio::io_context& io_;
  asio::local::stream_protocol::acceptor acceptor_{io_};
  std::shared_ptr<net::Connection> agent_;
  OnMessage on_message_;
  std::function<void()> on_closed_;
};

class Supervisor {
 public:
  Supervisor(stepd::Launch launch, std::string spool_dir)
      : launch_(std::move(launch)),
        spool_(std::move(spool_dir)),
        sock_path_(stepd::socket_path(spool_, launch_.spec.job_id)),
        exits_(spool_ + "/exits") {}

  int run(int fd, int listen_fd) {
    const uint64_t id = launch_.spec.job_id;
    link_.start(
        fd, listen_fd, [this](const auto& conn, const std::string& m) { on_message(conn, m); },
        [this] {
          if (done_) io_.stop();
        });
    children_.async_wait([this](auto, int) { reap(); });
    try {
      exits_.open();
    } catch (const std::exception& e) {
      spdlog::error("exit records: {}", e.what());  // the exit then reaches only a live agent
    }
    try {
      track_ = std::make_unique<ProcTrack>(launch_.node, spool_);
      track_->keep_subtree();
      launch_.spec.cgroup_procs = track_->prepare(id, "batch", launch_.mem_mb,
                                                  launch_.confine ? &*launch_.confine : nullptr);
      Spawned child{};
      try {
        child = spawn_batch(launch_.spec);
      } catch (...) {
        for (int cfd : launch_.spec.cgroup_procs) ::close(cfd);
        throw;
      }
      for (int cfd : launch_.spec.cgroup_procs) ::close(cfd);
      pid_ = child.pid;
      auto exec_pipe = std::make_shared<asio::posix::stream_descriptor>(io_, child.exec_fd);
      auto byte = std::make_shared<char>();
      exec_pipe->async_read_some(asio::buffer(byte.get(), 1),
                                 [this, exec_pipe, byte](auto, size_t) { on_exec(); });
      spdlog::info("job {} started, pid {}", id, pid_);
      send(stepd::Started{pid_});
    } catch (const std::exception& e) {
      spdlog::error("job {} failed to launch: {}", id, e.what());
      finish({1 << 8, launch_.run, {}});
    }
    io_.run();
    return 0;
  }

 private:
  void send(const stepd::Message& m) { link_.send(m); }

  void on_message(const std::shared_ptr<net::Connection>& conn, const std::string& payload) {
    try {
      const stepd::Message m = stepd::decode(payload);
      if (const auto* s = std::get_if<stepd::Signal>(&m)) {
        if (pid_ > 0 && !shell_exited_) ::kill(s->batch_only ? pid_ : -pid_, s->sig);
      } else if (const auto* t = std::get_if<stepd::Terminate>(&m)) {
        terminate(t->kill_wait_s, t->notice);
      } else if (std::holds_alternative<stepd::StatusRequest>(m)) {
        conn->send(stepd::encode(stepd::Status{launch_.spec.job_id, launch_.run, pid_}), false);
      }
    } catch (const std::exception& e) {
      spdlog::error("job {}: bad message from the agent: {}", launch_.spec.job_id, e.what());
    }
  }

  void on_exec() {
    exec_pending_ = false;
    if (auto d = std::move(deferred_)) {
      deferred_.reset();
      terminate(d->kill_wait_s, d->notice);
    }
  }

  void terminate(int64_t kill_wait_s, const std::string& notice) {
    const uint64_t id = launch_.spec.job_id;
    if (pid_ <= 0 || done_) return;
    if (shell_exited_) return track_->kill(id);  // being killed already
    if (exec_pending_) {
      // Its output files are not open yet (a notice would be truncated away): wait for exec.
      if (!deferred_) deferred_ = stepd::Terminate{kill_wait_s, notice};
      return;
    }
    if (!notice.empty() && !kill_timer_)
      append_notice(launch_.spec.std_err, owner(),
                    "slurmstepd-" + launch_.node + ": error: " + notice);
    // Every process of the job: its process group, and through its cgroup those that left it.
    ::kill(-pid_, SIGCONT);
    ::kill(-pid_, SIGTERM);
    track_->signal(id, "", SIGCONT);
    track_->signal(id, "", SIGTERM);
    if (kill_timer_) return;  // the first sequence's SIGKILL stands
    kill_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(kill_wait_s));
    kill_timer_->async_wait([this, id](boost::system::error_code ec) {
      if (ec || shell_exited_) return;
      ::kill(-pid_, SIGKILL);
      track_->kill(id);
    });
  }

  uid_t owner() const { return ::geteuid() == 0 ? launch_.spec.uid : ::geteuid(); }

  void reap() {
    int status = 0;
    pid_t pid;
    struct rusage ru {};
    while ((pid = ::wait4(-1, &status, WNOHANG, &ru)) > 0)
      if (pid == pid_ && !shell_exited_) shell_ended(status, ru.ru_maxrss);
    if (!io_.stopped()) children_.async_wait([this](auto, int) { reap(); });
  }

  void shell_ended(int status, int64_t shell_max_rss_kb) {
    const uint64_t id = launch_.spec.job_id;
    // The batch shell is gone: none of its children may linger, in its process group or not.
    ::kill(-pid_, SIGKILL);
    shell_exited_ = true;
    kill_timer_.reset();
    track_->kill(id);
    gone_deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    when_gone(status, shell_max_rss_kb);
  }

  // The job has ended once its last process has: only then is it recorded (and may run again).
  // Killed processes take a moment to go (longer in uninterruptible sleep): bounded, so a stuck
  // one delays the record by at most that long.
  void when_gone(int status, int64_t shell_max_rss_kb) {
    const uint64_t id = launch_.spec.job_id;
    if (track_->populated(id)) {
      if (std::chrono::steady_clock::now() < gone_deadline_) {
        track_->kill(id);
        poll_timer_.expires_after(std::chrono::milliseconds(50));
        poll_timer_.async_wait([this, status, shell_max_rss_kb](boost::system::error_code ec) {
          if (!ec) when_gone(status, shell_max_rss_kb);
        });
        return;
      }
      spdlog::error("job {}: processes are left after SIGKILL; recording its end anyway", id);
    }
    ProcTrack::Usage usage = track_->usage(id);
    // No memory cgroup: the largest process among the shell and the descendants it waited for.
    if (usage.max_rss_bytes < 0 && shell_max_rss_kb > 0)
      usage.max_rss_bytes = shell_max_rss_kb * 1024;
    if (usage.oom_kills > 0)  // as Slurm 22.05's task/cgroup says it
      append_notice(launch_.spec.std_err, owner(),
                    "slurmstepd-" + launch_.node + ": error: Detected " +
                        std::to_string(usage.oom_kills) +
                        " oom-kill event(s) in StepId=" + std::to_string(id) +
                        ".batch. Some of your processes may have been killed by the cgroup "
                        "out-of-memory handler.");
    track_->remove(id);
    std::error_code ignored;
    fs::remove_all(spool_ + "/job" + std::to_string(id), ignored);
    spdlog::info("job {} ended, wait status {}{}", id, status,
                 usage.oom_kills > 0 ? ", " + std::to_string(usage.oom_kills) + " OOM kill(s)"
                                     : std::string());
    finish({status, launch_.run, usage});
  }

  // On disk before the socket goes: an agent that finds no socket finds the record instead.
  void finish(const ExitRecord& rec) {
    done_ = true;
    exits_.save(launch_.spec.job_id, rec);
    ::unlink(sock_path_.c_str());
    link_.stop_listening();
    children_.cancel();
    if (!link_.current()) return io_.stop();
    send(stepd::Exited{launch_.spec.job_id, rec});
    // The agent closes the link once it has the exit; a silent one is not waited for long.
    linger_timer_.expires_after(std::chrono::seconds(2));
    linger_timer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) io_.stop();
    });
  }

  stepd::Launch launch_;
  std::string spool_, sock_path_;
  ExitStore exits_;
  asio::io_context io_;
  asio::signal_set children_{io_, SIGCHLD};
  AgentLink link_{io_};
  asio::steady_timer poll_timer_{io_}, linger_timer_{io_};
  std::unique_ptr<ProcTrack> track_;
  std::unique_ptr<asio::steady_timer> kill_timer_;
  std::optional<stepd::Terminate> deferred_;
  std::chrono::steady_clock::time_point gone_deadline_;
  pid_t pid_ = 0;
  bool exec_pending_ = true, shell_exited_ = false, done_ = false;
};

// An srun step's supervisor: the tasks of one step on this node and srun's link to them,
// handed over by the agent once it had checked the step's credential (StepServer::on_launch).
// It runs them as the agent would (StepServer, in this process), so their I/O to srun goes on
// without the agent; the agent relays scancel and job ends to it and hears the step's end.
class StepSupervisor {
 public:
  StepSupervisor(stepd::StepLaunch launch, std::string spool_dir)
      : launch_(std::move(launch)),
        spool_(std::move(spool_dir)),
        sock_path_(stepd::step_socket_path(spool_, launch_.job_id, launch_.step_id)) {}

  int run(int link_fd, int listen_fd, int srun_fd) {
    link_.start(
        link_fd, listen_fd, [this](const auto& conn, const std::string& m) { on_message(conn, m); },
        [this] {
          if (finishing_) io_.stop();
        });
    children_.async_wait([this](auto, int) { reap(); });
    track_ = std::make_unique<ProcTrack>(launch_.node, spool_);
    track_->keep_subtree();
    steps_ = std::make_unique<StepServer>(io_, launch_.node, "", track_.get());
    steps_->on_step_end = [this](uint64_t, uint32_t, int status) {
      ended_ = true;
      status_ = status;
      spdlog::info("step {}.{} ended, wait status {}", launch_.job_id, launch_.step_id, status);
      if (link_.current()) {
        send(stepd::StepExited{launch_.job_id, launch_.step_id, status});
        delivered_ = true;
      }
      maybe_finish();
    };
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(srun_fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error(std::string("srun link: ") + std::strerror(errno));
    auto srun = std::make_shared<net::Connection>(net::Connection::Socket(
        io_, asio::generic::stream_protocol(addr.ss_family, SOCK_STREAM), srun_fd));
    srun->set_peer(launch_.peer);
    srun->resume(
        {launch_.key, launch_.send_dir, launch_.recv_dir, launch_.send_seq, launch_.recv_seq});
    steps_->resume(srun, proto::decode_object(launch_.cred), proto::decode_object(launch_.launch));
    io_.run();
    return 0;
  }

 private:
  void send(const stepd::Message& m) { link_.send(m); }

  void on_message(const std::shared_ptr<net::Connection>& conn, const std::string& payload) {
    try {
      const stepd::Message m = stepd::decode(payload);
      if (const auto* s = std::get_if<stepd::StepSignal>(&m)) {
        steps_->signal_step(launch_.job_id, launch_.step_id, s->sig, s->terminate, s->kill_wait_s,
                            s->notice, s->graceful);
      } else if (const auto* t = std::get_if<stepd::Terminate>(&m)) {
        steps_->terminate_job(launch_.job_id, t->kill_wait_s, t->notice);
      } else if (std::holds_alternative<stepd::StatusRequest>(m)) {
        conn->send(stepd::encode(stepd::StepStatus{launch_.job_id, launch_.step_id}), false);
        // A step that ended while no agent was there: the new one hears it now.
        if (ended_ && !delivered_ && conn == link_.current()) {
          send(stepd::StepExited{launch_.job_id, launch_.step_id, status_});
          delivered_ = true;
          maybe_finish();
        }
      }
    } catch (const std::exception& e) {
      spdlog::error("step {}.{}: bad message from the agent: {}", launch_.job_id, launch_.step_id,
                    e.what());
    }
  }

  void reap() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) steps_->child_exited(pid, status);
    maybe_finish();
    if (!io_.stopped()) children_.async_wait([this](auto, int) { reap(); });
  }

  // Done once every task has ended and srun's link is closed (its output all sent); a step
  // whose end no agent has heard yet waits a while for the next agent.
  void maybe_finish() {
    if (finishing_ || !ended_) return;
    if (!poll_) {
      poll_.emplace(io_);
      poll_again();
    }
    if (!steps_->no_sessions()) return;
    if (!delivered_) {
      if (!linger_deadline_)
        linger_deadline_ = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      if (std::chrono::steady_clock::now() < *linger_deadline_) return;
    }
    finishing_ = true;
    ::unlink(sock_path_.c_str());
    link_.stop_listening();
    children_.cancel();
    poll_->cancel();
    if (!link_.current()) return io_.stop();
    linger_.expires_after(std::chrono::seconds(2));
    linger_.async_wait([this](boost::system::error_code ec) {
      if (!ec) io_.stop();
    });
  }

  void poll_again() {
    poll_->expires_after(std::chrono::milliseconds(200));
    poll_->async_wait([this](boost::system::error_code ec) {
      if (ec || finishing_) return;
      maybe_finish();
      if (!finishing_) poll_again();
    });
  }

  stepd::StepLaunch launch_;
  std::string spool_, sock_path_;
  asio::io_context io_;
  asio::signal_set children_{io_, SIGCHLD};
  AgentLink link_{io_};
  asio::steady_timer linger_{io_};
  std::optional<asio::steady_timer> poll_;
  std::optional<std::chrono::steady_clock::time_point> linger_deadline_;
  std::unique_ptr<ProcTrack> track_;
  std::unique_ptr<StepServer> steps_;
  bool ended_ = false, delivered_ = false, finishing_ = false;
  int status_ = 0;
};

}  // namespace

int run_supervisor(int link_fd, int listen_fd, const std::string& spool_dir, int srun_fd) {
  // Signals meant for the agent or a terminal do not end the supervisor: it ends with its job.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  std::optional<stepd::Message> first;
  try {
    if (auto frame = stepd::read_frame(link_fd, std::chrono::seconds(30))) {
      first = stepd::decode(*frame);
      const bool step = std::holds_alternative<stepd::StepLaunch>(*first);
      if (!std::holds_alternative<stepd::Launch>(*first) && !(step && srun_fd >= 0)) first.reset();
    }
  } catch (const std::exception& e) {
    spdlog::error("bad launch: {}", e.what());
  }
  if (!first) {
    // The agent died before it sent the job: nothing was started, and nothing is left to find.
    sockaddr_un addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0 &&
        addr.sun_path[0] != '\0')
      ::unlink(addr.sun_path);
    ::close(link_fd);
    ::close(listen_fd);
    if (srun_fd >= 0) ::close(srun_fd);
    return 1;
  }
  try {
    if (auto* l = std::get_if<stepd::Launch>(&*first)) {
      if (srun_fd >= 0) ::close(srun_fd);
      spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] [stepd " + std::to_string(l->spec.job_id) +
                          "] %v");
      Supervisor s(std::move(*l), spool_dir);
      return s.run(link_fd, listen_fd);
    }
    auto& l = std::get<stepd::StepLaunch>(*first);
    spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] [stepd " + std::to_string(l.job_id) + "." +
                        std::to_string(l.step_id) + "] %v");
    StepSupervisor s(std::move(l), spool_dir);
    return s.run(link_fd, listen_fd, srun_fd);
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}

int listen_socket(const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string();
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("supervisor socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  ::unlink(path.c_str());  // a dead supervisor's: a live one's job is never launched again
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(path.c_str(), 0600) != 0 || ::listen(fd, 16) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(path.c_str());
    throw std::runtime_error("supervisor socket " + path + ": " + std::strerror(err));
  }
  return fd;
}

SupervisorLink start_supervisor(const std::string& spool_dir, const std::string& socket_path,
                                int srun_fd) {
  const int listen_fd = listen_socket(socket_path);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    const int err = errno;
    ::close(listen_fd);
    ::unlink(socket_path.c_str());
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(err));
  }
  // Built before fork: the child only execs.
  const std::string self = "/proc/self/exe", arg0 = "droverd", flag = "--stepd", spool = "--spool";
  std::vector<char*> argv = {const_cast<char*>(arg0.c_str()), const_cast<char*>(flag.c_str()),
                             const_cast<char*>(spool.c_str()), const_cast<char*>(spool_dir.c_str()),
                             nullptr};
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t pid = ::fork();
  const int fork_errno = errno;
  if (pid == 0) {
    // Its own session: a signal to the agent's process group or terminal is not the job's.
    ::setsid();
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // The link is its fd 3, the socket fd 4 and srun's link (a step's) fd 5; nothing else of
    // the agent's (its controller link, other sruns') stays. Each is moved above 5 first, so
    // no dup2 overwrites another.
    const int link = ::fcntl(sv[1], F_DUPFD, 6), listening = ::fcntl(listen_fd, F_DUPFD, 6);
    const int srun = srun_fd >= 0 ? ::fcntl(srun_fd, F_DUPFD, 6) : -1;
    if (link < 0 || listening < 0 || ::dup2(link, 3) < 0 || ::dup2(listening, 4) < 0 ||
        (srun_fd >= 0 && (srun < 0 || ::dup2(srun, 5) < 0)))
      ::_exit(127);
    ::close_range(srun_fd >= 0 ? 6 : 5, ~0U, 0);
    ::execv(self.c_str(), argv.data());
    ::_exit(127);
  }
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::close(sv[1]);
  ::close(listen_fd);
  if (pid < 0) {
    ::close(sv[0]);
    ::unlink(socket_path.c_str());
    throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
  }
  return {sv[0], pid};
}

}  // namespace drover::agent
