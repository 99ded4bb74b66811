#include "cli/step_launch.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "cli/client.hpp"
#include "core/hostlist.hpp"
#include "core/task_lines.hpp"
#include "net/auth.hpp"
#include "net/connection.hpp"
#include "net/fd_io.hpp"
#include "proto/request.hpp"
#include "proto/step_io.hpp"

namespace drover::cli {
namespace asio = boost::asio;
using nlohmann::json;

namespace {

// srun's own stdout/stderr: output that cannot be written is lost, as a task's would be.
void write_all(int fd, std::string_view data) { (void)net::write_fully(fd, data); }

void say(const std::string& line) { write_all(2, "srun: " + line + "\n"); }

// "0-2,5" from task ids.
std::string ranges(const std::vector<uint32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

std::string signal_text(int sig) {
  const char* s = ::strsignal(sig);
  return s ? s : "Signal " + std::to_string(sig);
}

class Launcher {
 public:
  explicit Launcher(const LaunchRequest& req) : req_(req) {
    job_id_ = req.step.at("job_id").get<uint64_t>();
    step_id_ = req.step.at("step_id").get<uint32_t>();
    ntasks_ = req.step.value("ntasks", 1);
    kill_wait_ = req.step.value("kill_wait", 30);
  }

  StepOutcome run() {
    signals_.add(SIGQUIT);
    signals_.add(SIGUSR1);
    signals_.add(SIGUSR2);
    for (const auto& node : req_.step.at("nodes")) {
      auto link = std::make_shared<Link>();
      link->name = node.at("name").get<std::string>();
      link->addr = node.at("addr").get<std::string>();
      link->tasks = node.at("tasks").get<std::vector<uint32_t>>();
      links_.push_back(link);
      for (uint32_t t : link->tasks) task_node_[t] = link.get();
      connect(link);
    }
    signals_.async_wait([this](auto ec, int sig) { on_signal(ec, sig); });
    start_stdin();
    io_.run();
    // io_ stops once every link is done or failed, which may be before a link's posted close
    // has run: its connection still holds handlers that hold the link. Dropping the link's
    // side here lets the pair go when io_'s pending handlers do.
    for (const auto& link : links_) link->conn.reset();
    return finish();
  }

 private:
  struct Link {
    std::string name, addr;
    std::vector<uint32_t> tasks;
    std::shared_ptr<net::Connection> conn;
    std::string nonce_s;
    bool accepted = false, launched = false, done = false, failed = false;
  };
  std::string step_name() const {
    return "StepId=" + std::to_string(job_id_) + "." + std::to_string(step_id_);
  }

  void connect(const std::shared_ptr<Link>& link) {
    auto sock = std::make_shared<asio::ip::tcp::socket>(io_);
    const auto colon = link->addr.rfind(':');
    asio::ip::tcp::endpoint ep;
    try {
      ep = asio::ip::tcp::endpoint(
          asio::ip::make_address(link->addr.substr(0, colon)),
          static_cast<unsigned short>(std::stoi(link->addr.substr(colon + 1))));
    } catch (const std::exception&) {
      return link_failed(link, "Unable to contact " + link->name);
    }
    sock->async_connect(ep, [this, sock, link](boost::system::error_code ec) {
      if (ec)
        return link_failed(link, "Task launch for " + step_name() + " failed on node " +
                                     link->name + ": " + ec.message());
      sock->set_option(asio::ip::tcp::no_delay(true), ec);
      link->conn = std::make_shared<net::Connection>(net::Connection::Socket(std::move(*sock)));
      link->conn->start([this, link](std::string payload) { on_message(link, payload); },
                        [this, link](const std::string& why) { on_close(link, why); });
      link->nonce_s = net::to_hex(net::random_bytes(16));
      link->conn->send(json{{"type", "hello"},
                            {"cred", req_.step.at("cred")},
                            {"sig", req_.step.at("sig")},
                            {"nonce", link->nonce_s}}
                           .dump(),
                       false);
    });
  }

  // A frame of the wrong shape from a node fails that node's link, never srun.
  void on_message(const std::shared_ptr<Link>& link, const std::string& payload) {
    try {
      handle_message(link, payload);
    } catch (const std::exception& e) {
      link_failed(link, "Task launch for " + step_name() + " failed on node " + link->name +
                            ": bad message: " + e.what());
      link->conn->close();
    }
  }

  void handle_message(const std::shared_ptr<Link>& link, const std::string& payload) {
    if (auto io = proto::decode_step_io(payload)) {
      output(io->task, io->kind, io->data);
      return;
    }
    json msg = json::parse(payload, nullptr, false);
    if (msg.is_discarded()) return;
    const std::string type = msg.value("type", "");
    if (!link->accepted) {
      if (type == "accept") {
        link->accepted = true;
        // Each node's link has its own key (net/keys.hpp): one node cannot read another's.
        const std::string step_key = req_.step.at("step_keys").at(link->name).get<std::string>();
        link->conn->set_session_key(
            net::hmac_sha256(step_key, link->nonce_s + "|" + msg.value("nonce", "")), true);
        send_launch(link);
      } else {
        link_failed(link, "Task launch for " + step_name() + " failed on node " + link->name +
                              ": " + msg.value("error", "refused"));
      }
      return;
    }
    if (type == "launched") {
      link->launched = true;
      for (auto& s : pending_signals_) link->conn->send(s);
      flush_stdin(link);
    } else if (type == "exit") {
      const uint32_t task = msg.at("task").get<uint32_t>();
      // A task whose -i/-o/-e file its node could not open never ran. Slurm 22.05 says this
      // (not why) and counts the task as a success: exit status 0 (observed, 108_srun_file_errors).
      if (const std::string why = msg.value("io_error", ""); !why.empty()) {
        if (!req_.quiet)
          say("error: task " + std::to_string(task) +
              " launch failed: Slurmd could not connect IO");
        reported_.insert(task);
        task_exit(task, 0);
        return;
      }
      task_exit(task, msg.value("status", 0));
    } else if (type == "notice") {
      say_aborted();
      // Shown once, from the step's first node as Slurm does (another node's when the first
      // one's link is gone), whichever node's arrives first.
      if (!notice_shown_ && (link == links_.front() || links_.front()->failed)) {
        write_all(2, msg.value("text", "") + "\n");
        notice_shown_ = true;
      }
    } else if (type == "done") {
      link->done = true;
      link->conn->close();
    }
  }

  void send_launch(const std::shared_ptr<Link>& link) {
    json launch = {{"type", "launch"}, {"argv", req_.argv},        {"env", req_.env},
                   {"cwd", req_.cwd},  {"stdin", req_.stdin_mode}, {"open_mode", req_.open_mode}};
    auto per_task = [&](const std::map<uint32_t, std::string>& files) {
      json j = json::object();
      for (uint32_t t : link->tasks)
        if (auto it = files.find(t); it != files.end()) j[std::to_string(t)] = it->second;
      return j;
    };
    for (const auto& [key, path] : {std::pair{"task_prolog", &req_.task_prolog},
                                    {"task_epilog", &req_.task_epilog},
                                    {"conf_task_prolog", &req_.conf_task_prolog},
                                    {"conf_task_epilog", &req_.conf_task_epilog}})
      if (!path->empty()) launch[key] = *path;
    launch["stdout_files"] = per_task(req_.stdout_files);
    launch["stderr_files"] = per_task(req_.stderr_files);
    launch["stdin_files"] = per_task(req_.stdin_files);
    // -l: the nodes label what they write to -o/-e files themselves, as Slurm's stepd does.
    if (req_.label) {
      launch["label"] = true;
      launch["ntasks"] = ntasks_;
    }
    if (!req_.task_argv.empty()) {
      json argvs = json::object();
      for (uint32_t t : link->tasks)
        if (auto it = req_.task_argv.find(t); it != req_.task_argv.end())
          argvs[std::to_string(t)] = it->second;
      launch["task_argv"] = argvs;
    }
    link->conn->send(launch.dump(-1, ' ', false, json::error_handler_t::replace));
  }

  void on_close(const std::shared_ptr<Link>& link, const std::string&) {
    if (link->done || link->failed) return check_done();
    link->failed = true;
    // Tasks whose end we never heard of are lost with the node's link.
    std::vector<uint32_t> lost;
    for (uint32_t t : link->tasks)
      if (!status_.count(t)) lost.push_back(t);
    if (!lost.empty() && link->launched)
      say("error: " + link->name + ": task" + (lost.size() > 1 ? "s " : " ") + ranges(lost) +
          ": Lost connection to node");
    for (uint32_t t : lost) status_[t] = SIGKILL;
    if (!link->launched) launch_failed_ = true;
    check_done();
  }

  void link_failed(const std::shared_ptr<Link>& link, const std::string& why) {
    if (link->failed) return;
    link->failed = true;
    launch_failed_ = true;
    say("error: " + why);
    for (uint32_t t : link->tasks)
      if (!status_.count(t)) status_[t] = 1 << 8;
    if (link->conn) link->conn->close();
    // The other nodes' tasks of a step that cannot start whole are ended.
    broadcast_signal(SIGKILL);
    check_done();
  }

  void say_aborted() {
    if (aborted_said_) return;
    aborted_said_ = true;
    say("Job step aborted: Waiting up to " + std::to_string(kill_wait_ + 2) +
        " seconds for job step to finish.");
  }

  // Ends the step through the controller, as scancel N.S does (its tasks are killed and each
  // node tells why).
  void announce_termination() {
    if (termination_said_) return;
    termination_said_ = true;
    say("forcing job termination");
    say_aborted();
  }

  void force_termination() {
    if (forcing_) return;
    forcing_ = true;
    announce_termination();
    cancel_step();
  }

  void cancel_step() {
    const std::string ref = std::to_string(job_id_) + "." + std::to_string(step_id_);
    try {
      proto::CancelRequest cancel;
      cancel.steps = std::vector<proto::StepRef>{{ref, job_id_, step_id_}};
      call_controller(cancel);
    } catch (const ControllerUnreachable&) {
      broadcast_signal(SIGKILL);
    }
  }

  void output(uint32_t task, proto::StepIo kind, std::string_view data) {
    // Tasks' output goes on in whole lines (core::TaskLines), so that lines of different
    // tasks never interleave; -u without -l passes it on as it comes.
    const int fd = kind == proto::StepIo::Stderr ? 2 : 1;
    const std::string out = lines_.add(task, fd, data);
    if (!out.empty()) write_all(fd, out);
  }

  void flush_task_output(uint32_t task) {
    for (int fd : {1, 2})
      if (const std::string rest = lines_.flush(task, fd); !rest.empty()) write_all(fd, rest);
  }

  void task_exit(uint32_t task, int status) {
    if (status_.count(task)) return;
    status_[task] = status;
    flush_task_output(task);
    const bool bad = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (bad && req_.kill_on_bad_exit && !killing_) {
      killing_ = true;
      report_task(task, status);
      say("launch/slurm: _step_signal: Terminating " + step_name());
      broadcast_signal(SIGCONT);
      broadcast_signal(SIGTERM);
    }
    if (req_.wait_s > 0 && !wait_timer_) {
      wait_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(req_.wait_s));
      wait_timer_->async_wait([this](boost::system::error_code ec) {
        if (ec || status_.size() >= static_cast<size_t>(ntasks_)) return;
        // As Slurm's: where the tasks stand, then the step is ended as scancel ends it.
        say("First task exited " + std::to_string(req_.wait_s) + "s ago");
        report_status();
        say("launch/slurm: _step_signal: Terminating " + step_name());
        say_aborted();
        if (!forcing_) {
          forcing_ = true;
          cancel_step();
        }
      });
    }
    check_done();
  }

  void check_done() {
    for (const auto& l : links_)
      if (!l->done && !l->failed) return;
    signals_.cancel();
    if (wait_timer_) wait_timer_->cancel();
    if (int_timer_) int_timer_->cancel();
    io_.stop();
  }

  void broadcast_signal(int sig) {
    std::string msg = json{{"type", "signal"}, {"signal", sig}}.dump();
    pending_signals_.push_back(msg);
    for (const auto& l : links_)
      if (l->launched && !l->done && !l->failed) l->conn->send(msg);
  }

  void on_signal(boost::system::error_code ec, int sig) {
    if (ec) return;
    if (sig == SIGINT) {
      const auto now = std::chrono::steady_clock::now();
      if (req_.disable_status && !req_.quit_on_interrupt) {
        say("sending Ctrl-C to " + step_name());
        broadcast_signal(SIGINT);
      } else if (req_.quit_on_interrupt ||
                 (interrupts_ > 0 && now - last_interrupt_ < std::chrono::seconds(1))) {
        if (aborting_) std::_Exit(1);  // a third one: leave at once
        aborting_ = true;
        cancelled_ = true;
        say("sending Ctrl-C to " + step_name());
        broadcast_signal(SIGINT);
        // --quit-on-interrupt says at once that the step is ended, as Slurm's does; either way
        // the tasks get a moment to die of the SIGINT before the step is ended.
        if (req_.quit_on_interrupt) announce_termination();
        int_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(300));
        int_timer_->async_wait([this](boost::system::error_code e) {
          if (!e) force_termination();
        });
      } else {
        say("interrupt (one more within 1 sec to abort)");
        report_status();
      }
      ++interrupts_;
      last_interrupt_ = now;
    } else if (sig == SIGUSR1 || sig == SIGUSR2) {
      broadcast_signal(sig);
    } else {  // SIGTERM, SIGHUP, SIGQUIT: the step is ended
      if (sig == SIGQUIT) say("Quit");
      cancelled_ = true;
      force_termination();
    }
    signals_.async_wait([this](auto e, int s) { on_signal(e, s); });
  }

  void report_status() {
    std::vector<uint32_t> running, failed, done;
    for (int t = 0; t < ntasks_; ++t) {
      const auto it = status_.find(static_cast<uint32_t>(t));
      if (it == status_.end())
        running.push_back(static_cast<uint32_t>(t));
      else if (WIFEXITED(it->second) && WEXITSTATUS(it->second) == 0)
        done.push_back(static_cast<uint32_t>(t));
      else
        failed.push_back(static_cast<uint32_t>(t));
    }
    auto line = [&](const std::vector<uint32_t>& tasks, const char* what) {
      if (!tasks.empty())
        say(step_name() + " task" + (tasks.size() > 1 ? "s " : " ") + ranges(tasks) + ": " + what);
    };
    line(running, "running");
    line(failed, "exited abnormally");
    line(done, "exited");
  }

  // srun's stdin, read by a thread (it may be a terminal, a pipe or a file) and sent on. The
  // thread may outlive the step (blocked in read): it reaches the step only through `feed_`,
  // which the step disconnects when it ends.
  struct StdinFeed {
    std::mutex m;
    Launcher* launcher = nullptr;
  };
  void start_stdin() {
    if (req_.stdin_mode == "none" || !req_.stdin_files.empty()) return;
    target_task_ = proto::kAllTasks;
    if (req_.stdin_mode != "all") target_task_ = static_cast<uint32_t>(std::stoul(req_.stdin_mode));
    feed_ = std::make_shared<StdinFeed>();
    feed_->launcher = this;
    std::thread([feed = feed_] {
      char buf[16384];
      while (true) {
        ssize_t n = ::read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        std::string chunk = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
        {
          std::lock_guard lock(feed->m);
          if (!feed->launcher) return;
          Launcher* l = feed->launcher;
          asio::post(l->io_, [l, chunk] {
            l->stdin_chunks_.push_back(chunk);
            for (const auto& link : l->links_) l->send_stdin(link, chunk);
          });
        }
        if (n <= 0) return;
      }
    }).detach();
  }

 public:
  ~Launcher() {
    if (feed_) {
      std::lock_guard lock(feed_->m);
      feed_->launcher = nullptr;
    }
  }

 private:
  void send_stdin(const std::shared_ptr<Link>& l, const std::string& chunk) {
    if (!l->launched || l->done || l->failed) return;
    if (target_task_ != proto::kAllTasks &&
        std::find(l->tasks.begin(), l->tasks.end(), target_task_) == l->tasks.end())
      return;
    l->conn->send(proto::encode_step_io(proto::StepIo::Stdin, target_task_, chunk));
  }

  void flush_stdin(const std::shared_ptr<Link>& l) {
    for (const auto& c : stdin_chunks_) send_stdin(l, c);
  }

  static std::string how_ended(int st) {
    if (WIFEXITED(st)) return "Exited with exit code " + std::to_string(WEXITSTATUS(st));
    return signal_text(WTERMSIG(st)) + (WCOREDUMP(st) ? " (core dumped)" : "");
  }

  // One task's bad end, said at once (before srun acts on it).
  void report_task(uint32_t task, int status) {
    if (req_.quiet || reported_.count(task)) return;
    reported_.insert(task);
    auto it = task_node_.find(task);
    say("error: " + (it != task_node_.end() ? it->second->name : std::string("?")) + ": task " +
        std::to_string(task) + ": " + how_ended(status));
  }

  StepOutcome finish() {
    StepOutcome out;
    out.status = status_;
    out.launch_failed = launch_failed_;
    out.cancelled = cancelled_;
    // Slurm's report: per node, tasks that ended the same bad way are named together.
    for (const auto& l : links_) {
      std::map<std::string, std::vector<uint32_t>> groups;
      for (uint32_t t : l->tasks) {
        auto it = status_.find(t);
        if (it == status_.end()) continue;
        const int st = it->second;
        if (reported_.count(t)) {  // said already; still counts
          if (WIFEXITED(st)) out.max_exit = std::max(out.max_exit, WEXITSTATUS(st));
          continue;
        }
        if (WIFEXITED(st) && WEXITSTATUS(st) != 0) {
          out.max_exit = std::max(out.max_exit, WEXITSTATUS(st));
          if (!l->failed || l->launched) groups[how_ended(st)].push_back(t);
        } else if (WIFSIGNALED(st)) {
          if (!out.term_signal) out.term_signal = WTERMSIG(st);
          if (l->launched && !l->failed)
            groups[signal_text(WTERMSIG(st)) + (WCOREDUMP(st) ? " (core dumped)" : "")].push_back(
                t);
        }
      }
      if (req_.quiet) continue;
      for (const auto& [what, tasks] : groups)
        say("error: " + l->name + ": task" + (tasks.size() > 1 ? "s " : " ") + ranges(tasks) +
            ": " + what);
    }
    // Any task ended by a signal: the largest 128+signal; else the largest exit code.
    int worst_signal = 0;
    bool force_terminated = false;
    for (const auto& [t, st] : status_)
      if (WIFSIGNALED(st)) {
        worst_signal = std::max(worst_signal, WTERMSIG(st));
        force_terminated = force_terminated || WTERMSIG(st) == SIGKILL || WTERMSIG(st) == SIGTERM;
      }
    out.exit_code = worst_signal ? 128 + worst_signal : out.max_exit;
    if (force_terminated && !aborted_said_ && !req_.quiet) say("Force Terminated " + step_name());
    if (out.launch_failed && out.exit_code == 0) out.exit_code = 1;
    return out;
  }

  const LaunchRequest& req_;
  asio::io_context io_;
  asio::signal_set signals_{io_, SIGINT, SIGTERM, SIGHUP};
  std::vector<std::shared_ptr<Link>> links_;
  std::map<uint32_t, Link*> task_node_;
  std::map<uint32_t, int> status_;
  core::TaskLines lines_{static_cast<uint32_t>(req_.step.value("ntasks", 1)), req_.label,
                         req_.unbuffered};
  std::vector<std::string> pending_signals_;
  std::vector<std::string> stdin_chunks_;
  uint32_t target_task_ = proto::kAllTasks;
  std::shared_ptr<StdinFeed> feed_;
  std::unique_ptr<asio::steady_timer> wait_timer_, int_timer_;
  uint64_t job_id_ = 0;
  uint32_t step_id_ = 0;
  int ntasks_ = 1;
  int interrupts_ = 0;
  bool termination_said_ = false;
  std::chrono::steady_clock::time_point last_interrupt_;
  bool launch_failed_ = false, killing_ = false, aborting_ = false, cancelled_ = false;
  bool aborted_said_ = false, notice_shown_ = false, forcing_ = false;
  std::set<uint32_t> reported_;  // tasks whose bad end was already reported (-K)
  int kill_wait_ = 30;
};

}  // namespace

StepOutcome run_step(const LaunchRequest& req) {
  Launcher launcher(req);
  return launcher.run();
}

}  // namespace drover::cli
