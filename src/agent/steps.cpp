#include "agent/steps.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "agent/launch.hpp"
#include "agent/proctrack.hpp"
#include "core/hostlist.hpp"
#include "core/task_lines.hpp"
#include "core/task_prolog.hpp"
#include "net/auth.hpp"
#include "net/connection.hpp"
#include "net/fd_io.hpp"
#include "net/keys.hpp"
#include "proto/decode.hpp"
#include "proto/step_io.hpp"

namespace drover::agent {
namespace asio = boost::asio;
using nlohmann::json;

namespace {
using Pipe = asio::posix::stream_descriptor;

std::string ip_of(const std::string& endpoint) {
  const auto colon = endpoint.rfind(':');
  std::string ip = colon == std::string::npos ? endpoint : endpoint.substr(0, colon);
  if (ip.size() > 2 && ip.front() == '[') ip = ip.substr(1, ip.size() - 2);
  return ip;
}
}  // namespace

// An output file the agent writes for a step's tasks, opened once per node as the user.
// A task's -o/-e file that could not be opened: the task does not run, srun says why.
struct TaskFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
constexpr const char* kStdioName[3] = {"stdin", "stdout", "stderr"};

struct FileSink {
  int fd = -1;
  ~FileSink() {
    if (fd >= 0) ::close(fd);
  }
  // A full disk loses output, as it would for the task itself.
  void write(const std::string& text) const { (void)net::write_fully(fd, text); }
};

struct StepServer::Session : std::enable_shared_from_this<Session> {
  struct Task {
    uint32_t gid = 0;
    pid_t pid = -1;
    int status = 0;
    bool reaped = false, exit_sent = false;
    int open_outputs = 0;
    std::shared_ptr<Pipe> in;
    std::deque<std::string> in_queue;
    bool in_writing = false, in_eof = false;
    // stdout/stderr (1, 2) written by the agent into a file: labelled lines (-l), or a file
    // several of this node's tasks share (one open file, appended to in whole lines).
    std::shared_ptr<FileSink> sink[3];
    std::string io_error;  // why its -o/-e file could not be opened (srun says it)
    // The task as it was before its prologs, for its epilogs (null: none to run).
    std::shared_ptr<const TaskSpec> epilog_task;
  };

  // The task prologs (slurm.conf's TaskProlog, then srun's --task-prolog), as Slurm's stepd
  // runs them: what they export, unset and print goes to the task; a failure is the task's end.
  void run_prologs(TaskSpec& spec) {
    for (const auto& entry : {std::pair{conf_prolog, false}, std::pair{user_prolog, true}}) {
      // Named copies, not a structured binding: Clang before 16 cannot capture one.
      const std::string& path = entry.first;
      const bool user = entry.second;
      if (path.empty()) continue;
      const std::string who = user ? "user task_prolog" : "task_prolog";
      const std::string err = spec.stepd_name + ": error: ";
      auto failed = [&](int code, const std::string& why) {
        if (!why.empty())
          spec.prelude_err += err + "run_command: " + who + " " + why + "\n" + err + who +
                              " did not exit normally. reason: Run command failed - "
                              "configuration error\n";
        spec.prelude_err += err + (user ? "--task-prolog" : "TaskProlog") +
                            " failed status=" + std::to_string(code) + "\n";
        spec.prelude_exit = code;
      };
      if (path.front() != '/') return failed(1, "is not fully qualified pathname (" + path + ")");
      if (::access(path.c_str(), X_OK) != 0)
        return failed(1, "can not be executed (" + path + ") " + std::strerror(errno));
      ScriptRun run;
      try {
        run = run_task_script(path, spec, true);
      } catch (const std::exception& e) {
        return failed(1, std::string("can not be executed (") + path + ") " + e.what());
      }
      spec.prelude_out += core::apply_task_prolog_output(run.out, spec.env);
      const int code = WIFEXITED(run.status) ? WEXITSTATUS(run.status) : 128 + WTERMSIG(run.status);
      if (code != 0) return failed(code, "");
    }
  }

  // The task epilogs (srun's --task-epilog, then TaskEpilog) once the task has ended; what
  // they print is not the task's.
  void run_epilogs(const TaskSpec& task) {
    for (const std::string* path : {&user_epilog, &conf_epilog}) {
      if (path->empty() || path->front() != '/') continue;
      try {
        (void)run_task_script(*path, task, false);
      } catch (const std::exception& e) {
        spdlog::warn("{}: task epilog {}: {}", step_name(), *path, e.what());
      }
    }
  }
  std::string conf_prolog, user_prolog, user_epilog, conf_epilog;

  Session(StepServer& s, std::shared_ptr<net::Connection> c) : server(s), conn(std::move(c)) {}

  StepServer& server;
  std::shared_ptr<net::Connection> conn;
  std::string nonce_s;
  std::shared_ptr<void> handshake_ticket;  // StepServer::handshakes_' slot, until authenticated
  bool authenticated = false, launched = false, done = false, conn_closed = false;
  bool end_reported = false;
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  json cred;
  std::vector<Task> tasks;
  std::unique_ptr<asio::steady_timer> kill_timer;
  std::unique_ptr<core::TaskLines> file_lines;             // how sinks get their lines
  std::map<std::string, std::shared_ptr<FileSink>> sinks;  // by path

  std::string step_name() const {
    return "StepId=" + std::to_string(job_id) + "." + std::to_string(step_id);
  }

  // Every frame is decoded (proto/decode.hpp) and its fields read inside the try: srun's port
  // is open to anyone who can reach the node, so a frame of the wrong shape is refused, never
  // an exception out of the I/O thread.
  void on_message(const std::string& payload) {
    try {
      if (!authenticated) return handshake(payload);
      if (auto io = proto::decode_step_io(payload)) {
        if (io->kind == proto::StepIo::Stdin) write_stdin(io->task, std::string(io->data));
        return;
      }
      json msg = proto::decode_object(payload);
      const std::string type = proto::get_string(msg, "type");
      if (type == "launch" && !launched) {
        if (server.connection_) {
          auto env = msg.value("env", std::map<std::string, std::string>{});
          set_node_connection(env, *server.connection_);
          msg["env"] = std::move(env);
        }
        if (server.on_launch && server.on_launch(conn, cred, msg)) return handed_over();
        launch(msg);
      } else if (type == "signal") {
        signal_tasks(static_cast<int>(proto::get_int(msg, "signal", SIGTERM)));
      }
    } catch (const std::exception& e) {
      refuse(std::string("Invalid request: ") + e.what());
    }
  }

  // The step went to a supervisor with the link: nothing of it is left here.
  void handed_over() {
    handshake_ticket.reset();
    boost::asio::post(server.io_,
                      [self = shared_from_this()] { self->server.sessions_.erase(self); });
  }

  void refuse(const std::string& why) {
    if (uint64_t more = 0; server.refusal_log_.allow(more))
      spdlog::warn("srun from {} refused: {}{}", conn->peer(), why,
                   net::LogLimiter::held_back_suffix(more));
    conn->send(proto::dump({{"type", "error"}, {"error", why}}), false);
    conn->close();
  }

  void handshake(const std::string& payload) {
    const json msg = proto::decode_object(payload);
    if (proto::get_string(msg, "type") != "hello") return refuse("bad hello");
    const std::string cred_text = proto::get_string(msg, "cred");
    const std::string sig = proto::get_string(msg, "sig");
    nonce_s = proto::get_string(msg, "nonce");
    if (nonce_s.size() < 16 || server.step_pub_.empty() ||
        !net::step_verify(server.step_pub_, "step-cred|" + cred_text, sig))
      return refuse("Invalid job credential");
    // Signed by the controller, but checked as any frame (a key shared with a bug is no proof
    // of shape).
    cred = proto::decode_object(cred_text);
    if (!cred.contains("nodes") || !cred["nodes"].is_object() ||
        !cred["nodes"].contains(server.node_) || !cred["nodes"][server.node_].is_object())
      return refuse("Invalid job credential");
    if (proto::get_int(cred, "expires") < static_cast<int64_t>(::time(nullptr)))
      return refuse("Job credential expired");
    job_id = proto::get_uint(cred, "job_id");
    step_id = static_cast<uint32_t>(proto::get_uint(cred, "step_id"));
    auto key =
        std::make_tuple(job_id, step_id, static_cast<uint32_t>(proto::get_uint(cred, "run")));
    if (!server.launched_.insert(key).second) return refuse("Job credential replayed");
    const std::string nonce_a = net::to_hex(net::random_bytes(16));
    conn->send(json{{"type", "accept"}, {"nonce", nonce_a}}.dump(), false);
    const std::string step_key = net::step_key(server.key_, sig);
    conn->set_session_key(net::hmac_sha256(step_key, nonce_s + "|" + nonce_a), false);
    authenticated = true;
    handshake_ticket.reset();
  }

  void launch(const json& msg) {
    launched = true;
    const json& mine = cred["nodes"][server.node_];
    const std::vector<uint32_t> gids = mine.value("tasks", std::vector<uint32_t>{});
    const std::vector<int> gpu_ids = mine.value("gpu_ids", std::vector<int>{});
    std::vector<std::string> step_nodes;
    try {
      step_nodes = core::expand_hostlist(cred.value("nodelist", ""));
    } catch (const std::exception&) {
    }
    int node_id = 0;
    for (size_t i = 0; i < step_nodes.size(); ++i)
      if (step_nodes[i] == server.node_) node_id = static_cast<int>(i);

    TaskSpec base;
    base.uid = cred.value("uid", uid_t{65534});
    base.gid = cred.value("gid", gid_t{65534});
    base.user = cred.value("user", "");
    base.stepd_name = "slurmstepd-" + server.node_;
    if (::geteuid() != 0) {  // an unprivileged agent runs everything as itself
      base.uid = ::geteuid();
      base.gid = ::getegid();
    }
    base.argv = msg.value("argv", std::vector<std::string>{});
    base.env = msg.value("env", std::map<std::string, std::string>{});
    base.workdir = msg.value("cwd", "/");
    conf_prolog = msg.value("conf_task_prolog", "");
    user_prolog = msg.value("task_prolog", "");
    user_epilog = msg.value("task_epilog", "");
    conf_epilog = msg.value("conf_task_epilog", "");
    base.append = msg.value("open_mode", "") == "append";
    const std::string stdin_mode = msg.value("stdin", "all");
    const json out_files = msg.value("stdout_files", json::object());
    const json err_files = msg.value("stderr_files", json::object());
    const json in_files = msg.value("stdin_files", json::object());
    const json task_argv = msg.value("task_argv", json::object());  // --multi-prog
    // Files this node's tasks write through the agent: every file with -l (labelled lines, as
    // Slurm's stepd writes them), and a file two of them share (a task opening it itself
    // would truncate, and write over, what another wrote).
    const bool label = msg.value("label", false);
    file_lines = std::make_unique<core::TaskLines>(msg.value("ntasks", 1u), label, false);
    std::map<std::string, std::set<uint32_t>> tasks_of_path;
    for (const json* files : {&out_files, &err_files})
      for (uint32_t g : gids)
        if (files->contains(std::to_string(g)))
          tasks_of_path[(*files)[std::to_string(g)].get<std::string>()].insert(g);
    std::string gtids;
    for (uint32_t g : gids) gtids += (gtids.empty() ? "" : ",") + std::to_string(g);
    base.env["SLURMD_NODENAME"] = server.node_;
    base.env["SLURM_NODEID"] = std::to_string(node_id);
    base.env["SLURM_GTIDS"] = gtids;
    base.env["SLURM_TOPOLOGY_ADDR"] = server.node_;
    base.env["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node";
    base.env["SLURM_LAUNCH_NODE_IPADDR"] = ip_of(conn->peer());
    base.env["SLURM_SRUN_COMM_HOST"] = ip_of(conn->peer());
    if (!base.env.count("SLURM_SRUN_COMM_PORT")) {  // srun listens on nothing: its link's port
      const std::string port = conn->peer().substr(conn->peer().rfind(':') + 1);
      base.env["SLURM_SRUN_COMM_PORT"] = port;
      base.env["SLURM_STEP_LAUNCHER_PORT"] = port;
    }
    base.env["SLURM_CPUS_ON_NODE"] =
        std::to_string(mine.value("cpu_ids", std::vector<int>{}).size());
    if (!gpu_ids.empty()) {
      std::string list;
      for (int g : gpu_ids) list += (list.empty() ? "" : ",") + std::to_string(g);
      base.env["CUDA_VISIBLE_DEVICES"] = list;
      base.env["GPU_DEVICE_ORDINAL"] = list;
    }

    // The step's own cgroup (under its job's): its tasks and whatever they start end with it.
    std::vector<int> cgroup_procs;
    if (server.track_) {
      try {
        // The controller's confinement for this node, signed with the rest of the credential.
        std::optional<proto::Confine> confine, step_memory;
        if (mine.contains("confine")) confine = proto::Confine::from_json(mine["confine"]);
        if (mine.contains("step_confine"))
          step_memory = proto::Confine::from_json(mine["step_confine"]);
        cgroup_procs = server.track_->prepare(
            job_id, std::to_string(step_id), mine.value("job_mem_mb", int64_t{0}),
            confine ? &*confine : nullptr, step_memory ? &*step_memory : nullptr);
      } catch (const std::exception& e) {
        spdlog::error("{}: tasks not confined: {}", step_name(), e.what());
      }
    }
    base.cgroup_procs = cgroup_procs;
    json pids = json::object();
    tasks.reserve(gids.size());
    for (size_t local = 0; local < gids.size(); ++local) {
      const uint32_t gid = gids[local];
      const std::string key = std::to_string(gid);
      TaskSpec spec = base;
      if (task_argv.contains(key)) spec.argv = task_argv[key].get<std::vector<std::string>>();
      spec.env["SLURM_PROCID"] = key;
      spec.env["SLURM_LOCALID"] = std::to_string(local);
      // Slurm 22.05 adds a missing TMPDIR to the first task of each node only (observed).
      if (local == 0 && !spec.env.count("TMPDIR")) spec.env["TMPDIR"] = "/tmp";
      Task t;
      t.gid = gid;
      int child_ends[3] = {-1, -1, -1}, ours[3] = {-1, -1, -1};
      const bool wants_stdin = stdin_mode == "all" || (stdin_mode != "none" && stdin_mode == key);
      try {
        for (int fd = 0; fd < 3; ++fd) {
          const json& files = fd == 0 ? in_files : fd == 1 ? out_files : err_files;
          if (files.contains(key)) {
            const std::string path = files[key].get<std::string>();
            if (fd == 0 || (!label && tasks_of_path[path].size() < 2)) {
              // The task's own file, opened here as the job's user so that srun hears when
              // it cannot be; stderr into stdout's file shares its descriptor.
              if (fd == 2 && child_ends[1] >= 0 && out_files.contains(key) &&
                  out_files[key].get<std::string>() == path) {
                spec.stdio_fds[2] = child_ends[1];
                continue;
              }
              const int flags =
                  fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | (base.append ? O_APPEND : O_TRUNC);
              child_ends[fd] = spec.stdio_fds[fd] = open_task_file(path, fd, flags, base);
              continue;
            }
            t.sink[fd] = sink_for(path, fd, base);
          }
          if (fd == 0 && !wants_stdin) continue;  // /dev/null
          int p[2];
          if (::pipe2(p, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
          child_ends[fd] = fd == 0 ? p[0] : p[1];
          ours[fd] = fd == 0 ? p[1] : p[0];
          spec.stdio_fds[fd] = child_ends[fd];
        }
        if (!user_epilog.empty() || !conf_epilog.empty())
          t.epilog_task = std::make_shared<const TaskSpec>(spec);
        run_prologs(spec);
        t.pid = spawn_task(spec);
      } catch (const TaskFileError& e) {
        spdlog::warn("{} task {}: {}", step_name(), gid, e.what());
        t.io_error = e.what();
        t.reaped = true;
        t.status = 0;  // as Slurm counts it (see srun's step_launch)
      } catch (const std::exception& e) {
        spdlog::error("{} task {} failed to start: {}", step_name(), gid, e.what());
        t.reaped = true;
        t.status = 1 << 8;
      }
      for (int fd = 0; fd < 3; ++fd)
        if (child_ends[fd] >= 0) ::close(child_ends[fd]);
      if (t.pid < 0) {
        for (int fd = 0; fd < 3; ++fd)
          if (ours[fd] >= 0) ::close(ours[fd]);
      } else {
        server.task_owner_[t.pid] = this;
        pids[key] = t.pid;
        if (ours[0] >= 0) t.in = std::make_shared<Pipe>(server.io_, ours[0]);
        for (int fd = 1; fd < 3; ++fd)
          if (ours[fd] >= 0) ++t.open_outputs;
      }
      tasks.push_back(std::move(t));
      for (int fd = 1; fd < 3; ++fd)
        if (ours[fd] >= 0 && tasks.back().pid >= 0)
          read_output(tasks.size() - 1, std::make_shared<Pipe>(server.io_, ours[fd]),
                      fd == 1 ? proto::StepIo::Stdout : proto::StepIo::Stderr);
    }
    for (int fd : cgroup_procs) ::close(fd);
    spdlog::info("{}: {} task(s) started for srun at {}", step_name(), tasks.size(), conn->peer());
    conn->send(json{{"type", "launched"}, {"pids", pids}, {"node", server.node_}}.dump());
    for (size_t i = 0; i < tasks.size(); ++i) maybe_report(i);
    maybe_ended();
  }

  void read_output(size_t index, std::shared_ptr<Pipe> pipe, proto::StepIo kind) {
    auto buf = std::make_shared<std::array<char, 16384>>();
    pipe->async_read_some(asio::buffer(*buf), [self = shared_from_this(), index, pipe, kind, buf](
                                                  boost::system::error_code ec, size_t n) {
      Task& t = self->tasks[index];
      const int fd = kind == proto::StepIo::Stderr ? 2 : 1;
      if (n > 0) {
        if (t.sink[fd])
          t.sink[fd]->write(self->file_lines->add(t.gid, fd, std::string_view(buf->data(), n)));
        else
          self->conn->send(proto::encode_step_io(kind, t.gid, std::string_view(buf->data(), n)));
      }
      if (ec) {
        if (t.sink[fd]) t.sink[fd]->write(self->file_lines->flush(t.gid, fd));
        --t.open_outputs;
        self->maybe_report(index);
        return;
      }
      self->read_output(index, pipe, kind);
    });
  }

  // A task's stdin/stdout/stderr (`stdio`) file, a name relative to its working directory,
  // opened with `flags` as the task's user. Throws TaskFileError when it cannot be opened.
  static int open_task_file(const std::string& path, int stdio, int flags, const TaskSpec& as) {
    const std::string where = path.empty() || path.front() == '/' ? path : as.workdir + "/" + path;
    const int fd = open_as_user(where, flags, as.user, as.uid, as.gid, job_umask(as.env));
    if (fd < 0)
      throw TaskFileError(std::string("Could not open ") + kStdioName[stdio] +
                          " file: " + std::strerror(-fd));
    return fd;
  }

  // The file at `path`, opened once for the step on this node: truncated unless
  // --open-mode=append, written at its end.
  std::shared_ptr<FileSink> sink_for(const std::string& path, int stdio, const TaskSpec& as) {
    if (auto it = sinks.find(path); it != sinks.end()) return it->second;
    auto sink = std::make_shared<FileSink>();
    sink->fd =
        open_task_file(path, stdio, O_WRONLY | O_CREAT | O_APPEND | (as.append ? 0 : O_TRUNC), as);
    return sinks[path] = sink;
  }

  void write_stdin(uint32_t gid, std::string data) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      Task& t = tasks[i];
      if ((gid != proto::kAllTasks && t.gid != gid) || !t.in || t.in_eof) continue;
      if (data.empty()) t.in_eof = true;
      t.in_queue.push_back(data);
      if (!t.in_writing) pump_stdin(i);
    }
  }

  void pump_stdin(size_t index) {
    Task& t = tasks[index];
    if (!t.in) return;
    if (t.in_queue.empty()) {
      t.in_writing = false;
      return;
    }
    if (t.in_queue.front().empty()) {  // end of input
      t.in_queue.clear();
      t.in->close();
      t.in.reset();
      t.in_writing = false;
      return;
    }
    t.in_writing = true;
    auto chunk = std::make_shared<std::string>(std::move(t.in_queue.front()));
    t.in_queue.pop_front();
    asio::async_write(
        *t.in, asio::buffer(*chunk),
        [self = shared_from_this(), index, chunk](boost::system::error_code ec, size_t) {
          Task& t = self->tasks[index];
          if (ec) {  // the task closed its stdin: drop what it will never read
            t.in_queue.clear();
            t.in_eof = true;
            if (t.in) t.in->close();
            t.in.reset();
            t.in_writing = false;
            return;
          }
          self->pump_stdin(index);
        });
  }

  void signal_tasks(int sig) {
    for (const auto& t : tasks)
      if (t.pid > 0 && !t.reaped) ::kill(-t.pid, sig);
  }

  void notify(const std::string& notice) {
    if (notice.empty()) return;
    conn->send(json{
        {"type", "notice"},
        {"text", "slurmstepd-" + server.node_ + ": error: *** STEP " + std::to_string(job_id) +
                     "." + std::to_string(step_id) + " ON " + server.node_ + " " + notice + " ***"}}
                   .dump());
  }

  void terminate(int64_t kill_wait_s) {
    signal_tasks(SIGCONT);
    signal_tasks(SIGTERM);
    if (kill_timer) return;
    kill_timer =
        std::make_unique<asio::steady_timer>(server.io_, std::chrono::seconds(kill_wait_s));
    kill_timer->async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->signal_tasks(SIGKILL);
    });
  }

  // Tells the agent once every task has ended.
  void maybe_ended() {
    if (end_reported || !launched) return;
    int worst = 0;
    for (const auto& t : tasks) {
      if (!t.reaped) return;
      if (worst == 0 || (WIFSIGNALED(t.status) && !WIFSIGNALED(worst)) ||
          (WIFEXITED(t.status) && WIFEXITED(worst) && WEXITSTATUS(t.status) > WEXITSTATUS(worst)))
        worst = t.status;
    }
    end_reported = true;
    if (server.on_step_end) server.on_step_end(job_id, step_id, worst);
  }

  bool child_exited(pid_t pid, int status) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      Task& t = tasks[i];
      if (t.pid != pid) continue;
      if (t.epilog_task) run_epilogs(*t.epilog_task);
      t.reaped = true;
      t.status = status;
      maybe_ended();
      ::kill(-pid, SIGKILL);  // nothing of the task lingers
      if (t.in) {
        t.in->close();
        t.in.reset();
      }
      maybe_report(i);
      return true;
    }
    return false;
  }

  // A task's exit goes to srun once its output has all been sent.
  void maybe_report(size_t index) {
    Task& t = tasks[index];
    if (!t.reaped || t.open_outputs > 0 || t.exit_sent) return;
    t.exit_sent = true;
    if (t.pid > 0) server.task_owner_.erase(t.pid);
    json exit_msg{{"type", "exit"}, {"task", t.gid}, {"status", t.status}};
    if (!t.io_error.empty()) exit_msg["io_error"] = t.io_error;
    conn->send(exit_msg.dump());
    for (const auto& other : tasks)
      if (!other.exit_sent) return;
    done = true;
    if (kill_timer) kill_timer->cancel();
    conn->send(json{{"type", "done"}}.dump());
  }

  // Gone from the agent's books once srun has hung up and no task is left to reap.
  bool finished() const {
    if (!conn_closed) return false;
    for (const auto& t : tasks)
      if (t.pid > 0 && !t.reaped) return false;
    return true;
  }

  void closed() {
    conn_closed = true;
    handshake_ticket.reset();
    if (!done && launched) {
      spdlog::info("{}: srun went away; ending its tasks", step_name());
      terminate(2);
    }
  }
};

StepServer::StepServer(asio::io_context& io, std::string node, std::string key, ProcTrack* track)
    : io_(io), node_(std::move(node)), key_(std::move(key)), track_(track), acceptor_(io) {}

StepServer::~StepServer() = default;

void StepServer::listen(const std::string& address) {
  asio::ip::tcp::endpoint ep(asio::ip::make_address(address), 0);
  acceptor_.open(ep.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(ep);
  acceptor_.listen(asio::socket_base::max_listen_connections);
  accept();
}

std::string StepServer::launch_addr() const {
  if (!acceptor_.is_open()) return "";
  auto ep = acceptor_.local_endpoint();
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

void StepServer::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket sock) {
    if (ec) {
      if (acceptor_.is_open()) accept();
      return;
    }
    sock.set_option(asio::ip::tcp::no_delay(true), ec);
    std::string peer;
    if (auto ep = sock.remote_endpoint(ec); !ec)
      peer = ep.address().to_string() + ":" + std::to_string(ep.port());
    auto ticket = admission_.admit();
    auto handshake = ticket ? handshakes_.admit() : nullptr;
    if (!handshake) return accept();  // full: the socket closes as it goes
    auto conn = std::make_shared<net::Connection>(net::Connection::Socket(std::move(sock)));
    conn->set_peer(peer);
    net::Connection::Limits limits;
    limits.max_frame_unauthenticated = 1u << 20;  // a hello, with the step's credential
    limits.handshake_timeout = std::chrono::seconds(10);
    conn->set_limits(limits);
    auto session = std::make_shared<Session>(*this, conn);
    session->handshake_ticket = std::move(handshake);
    start_session(session, std::move(ticket));
    accept();
  });
}

void StepServer::start_session(const std::shared_ptr<Session>& session,
                               std::shared_ptr<void> admission_ticket) {
  sessions_.insert(session);
  std::weak_ptr<Session> weak = session;
  session->conn->start(
      [weak](std::string payload) {
        if (auto s = weak.lock()) s->on_message(payload);
      },
      [this, weak, admission_ticket](const std::string&) {
        auto s = weak.lock();
        if (!s) return;
        s->closed();
        if (s->finished()) sessions_.erase(s);  // pending handlers keep it alive till done
      });
}

void StepServer::resume(std::shared_ptr<net::Connection> link, const json& cred,
                        const json& launch) {
  auto session = std::make_shared<Session>(*this, std::move(link));
  session->authenticated = true;
  session->cred = cred;
  session->job_id = proto::get_uint(cred, "job_id");
  session->step_id = static_cast<uint32_t>(proto::get_uint(cred, "step_id"));
  launched_.insert(
      {session->job_id, session->step_id, static_cast<uint32_t>(proto::get_uint(cred, "run"))});
  start_session(session, nullptr);
  session->launched = true;
  session->launch(launch);
}

bool StepServer::child_exited(pid_t pid, int status) {
  auto it = task_owner_.find(pid);
  if (it == task_owner_.end()) return false;
  Session* s = it->second;
  task_owner_.erase(it);
  s->child_exited(pid, status);
  if (s->finished())
    for (auto sit = sessions_.begin(); sit != sessions_.end(); ++sit)
      if (sit->get() == s) {
        sessions_.erase(sit);
        break;
      }
  return true;
}

void StepServer::terminate_job(uint64_t job_id, int64_t kill_wait_s, const std::string& notice) {
  for (const auto& s : sessions_)
    if (s->job_id == job_id && s->launched && !s->done) {
      s->notify(notice);
      s->terminate(kill_wait_s);
    }
}

void StepServer::signal_step(uint64_t job_id, uint32_t step_id, int sig, bool terminate,
                             int64_t kill_wait_s, const std::string& notice, bool graceful) {
  for (const auto& s : sessions_) {
    if (s->job_id != job_id || s->step_id != step_id || !s->launched || s->done) continue;
    s->notify(notice);
    if (terminate && graceful)
      s->terminate(kill_wait_s);
    else
      s->signal_tasks(terminate ? SIGKILL : sig);  // a cancelled step is killed at once
  }
}

void StepServer::stop_all(int64_t kill_wait_s) {
  acceptor_.close();
  for (const auto& s : sessions_)
    if (s->launched) s->terminate(kill_wait_s);
}

}  // namespace drover::agent
