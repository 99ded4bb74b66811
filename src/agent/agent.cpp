#include "agent/agent.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <filesystem>

#include "agent/launch.hpp"
#include "agent/stepd.hpp"
#include "agent/stepd_proto.hpp"
#include "core/export_env.hpp"
#include "net/auth.hpp"
#include "net/protocol.hpp"
#include "proto/decode.hpp"

namespace drover::agent {
namespace asio = boost::asio;
using nlohmann::json;

namespace {
// What scontrol show node reports as CPULoad and FreeMem.
proto::Heartbeat node_health() {
  double load[1] = {0};
  struct sysinfo si {};
  proto::Heartbeat h;
  if (::getloadavg(load, 1) == 1) h.cpu_load = load[0];
  if (::sysinfo(&si) == 0)
    h.free_mem = static_cast<int64_t>(si.freeram) * si.mem_unit / (1024 * 1024);
  return h;
}

// How a job ended, in an exit report or a registration: OOM kills and its peak memory
// (bytes) when known.
proto::JobExited exit_report(uint64_t job_id, const Agent::Finished& f) {
  proto::JobExited e{job_id, f.status, f.run, f.usage.oom_kills, std::nullopt};
  if (f.usage.max_rss_bytes >= 0) e.max_rss = f.usage.max_rss_bytes;
  return e;
}

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

}  // namespace

Agent::Agent(AgentOptions opts)
    : opts_(std::move(opts)), instance_(net::to_hex(net::random_bytes(8))) {
  if (opts_.cpus <= 0) opts_.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  if (opts_.real_memory_mb <= 0)
    opts_.real_memory_mb =
        static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGE_SIZE) / (1024 * 1024);
}

int Agent::run() {
  std::filesystem::create_directories(opts_.spool_dir);
  // Batch jobs whose supervisors outlived a previous agent go on: this agent takes them over
  // and lists them as running. What else a previous agent left (srun's tasks, a job whose
  // supervisor died) is gone before this one registers: the controller requeues the jobs it
  // does not hear of, and they must not run twice at once.
  const auto adopted = adopt_supervisors();
  if (auto left = proctrack_.kill_leftovers(std::chrono::seconds(15), adopted); !left.empty())
    spdlog::warn("removed {} job cgroup(s) a previous agent of {} left", left.size(), opts_.node);
  // Exits recorded (by supervisors, or a previous agent) and never acknowledged: reported in
  // the registration, so that the controller ends those jobs as they ended rather than requeue
  // them. Read after the adoption: a supervisor records its job's exit before it removes its
  // socket, so a job is either adopted or found here. Those whose leftover cgroup was just
  // removed count too: their shell had ended, only stragglers were killed.
  try {
    exits_.open();
  } catch (const std::exception& e) {
    spdlog::error("exit records: {}", e.what());  // each exit says so when it cannot be saved
  }
  finished_ = exits_.load();
  if (!finished_.empty())
    spdlog::info("{} job exit(s) a previous agent of {} recorded, to report", finished_.size(),
                 opts_.node);
  steps_.on_step_end = [this](uint64_t job_id, uint32_t step_id, int status) {
    step_ended(job_id, step_id);
    send(proto::StepExited{job_id, step_id, status});
  };
  steps_.on_launch = [this](const std::shared_ptr<net::Connection>& srun, const json& cred,
                            const json& launch) { return hand_step(srun, cred, launch); };
  steps_.use_node_connection(node_connection());
  steps_.listen(opts_.listen_address);
  spdlog::info("listening for srun on {}", steps_.launch_addr());
  child_signals_.async_wait([this](auto, int) { reap(); });
  stop_signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (!ec) shutdown();
  });
  connect();
  io_.run();
  return 0;
}

NodeConnection Agent::node_connection() const {
  return {opts_.controller_host + ":" + std::to_string(opts_.controller_port), opts_.auth_socket};
}

std::string Agent::job_dir(uint64_t job_id) const {
  return opts_.spool_dir + "/job" + std::to_string(job_id);
}

void Agent::connect() {
  if (stopping_) return;
  auto sock = std::make_shared<asio::ip::tcp::socket>(io_);
  asio::ip::tcp::endpoint ep;
  try {
    ep = asio::ip::tcp::endpoint(asio::ip::make_address(opts_.controller_host),
                                 static_cast<unsigned short>(opts_.controller_port));
  } catch (const std::exception&) {
    asio::ip::tcp::resolver resolver(io_);
    boost::system::error_code ec;
    auto results =
        resolver.resolve(opts_.controller_host, std::to_string(opts_.controller_port), ec);
    if (ec || results.empty()) return schedule_reconnect();
    ep = *results.begin();
  }
  sock->async_connect(ep, [this, sock](boost::system::error_code ec) {
    if (ec) return schedule_reconnect();
    sock->set_option(asio::ip::tcp::no_delay(true), ec);
    authenticated_ = false;
    conn_ = std::make_shared<net::Connection>(net::Connection::Socket(std::move(*sock)));
    auto self_conn = conn_;
    conn_->start([this](std::string payload) { on_message(payload); },
                 [this, self_conn](const std::string& why) {
                   if (conn_ != self_conn) return;
                   spdlog::info("controller connection lost: {}", why);
                   conn_.reset();
                   authenticated_ = false;
                   heartbeat_timer_.cancel();
                   schedule_reconnect();
                 });
  });
}

void Agent::schedule_reconnect() {
  if (stopping_) return;
  reconnect_timer_.expires_after(std::chrono::milliseconds(reconnect_delay_ms_));
  reconnect_delay_ms_ = std::min(reconnect_delay_ms_ * 2, 2000);
  reconnect_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) connect();
  });
}

void Agent::send(const proto::FromAgent& msg) {
  if (conn_ && authenticated_) conn_->send(proto::dump(proto::to_json(msg)));
}

void Agent::on_message(const std::string& payload) {
  // Every frame is decoded once, here (proto/agent_msg.hpp): a frame of the wrong shape is
  // logged, never an exception out of the I/O thread.
  try {
    const proto::ToAgent msg = proto::decode_to_agent(proto::decode_object(payload));
    if (authenticated_)
      dispatch(msg);
    else
      handshake(msg);
  } catch (const std::exception& e) {
    spdlog::error("bad message from the controller: {}", e.what());
  }
}

void Agent::handshake(const proto::ToAgent& msg) {
  if (const auto* hello = std::get_if<proto::Hello>(&msg)) {
    nonce_c_ = hello->nonce;
    nonce_a_ = net::to_hex(net::random_bytes(16));
    proto::Register reg;
    reg.node = opts_.node;
    reg.version = net::kProtocolVersion;
    reg.nonce = nonce_a_;
    reg.mac = net::agent_proof(opts_.key, nonce_c_, nonce_a_, opts_.node);
    reg.cpus = opts_.cpus;
    reg.real_memory = opts_.real_memory_mb;
    reg.launch_addr = steps_.launch_addr();
    for (const auto& [id, r] : running_) reg.running.push_back({id, r.run});
    for (const auto& [id, f] : finished_) reg.finished.push_back(exit_report(id, f));
    reg.instance = instance_;
    if (opts_.dynamic) {
      reg.dynamic = true;
      reg.conf = opts_.dynamic_conf;
    }
    const proto::Heartbeat health = node_health();
    reg.cpu_load = health.cpu_load;
    reg.free_mem = health.free_mem;
    struct sysinfo si {};
    if (::sysinfo(&si) == 0) reg.boot_time = static_cast<int64_t>(::time(nullptr)) - si.uptime;
    conn_->send(proto::dump(reg.to_json()), false);
  } else if (const auto* welcome = std::get_if<proto::Welcome>(&msg)) {
    const std::string& step_pub = welcome->step_pub;
    if (!net::constant_time_equal(welcome->mac,
                                  net::controller_proof(opts_.key, nonce_a_, nonce_c_, step_pub))) {
      spdlog::error("controller failed authentication; dropping the connection");
      conn_->close();
      return;
    }
    conn_->set_session_key(net::session_key(opts_.key, nonce_c_, nonce_a_), false);
    steps_.set_step_public_key(step_pub);
    authenticated_ = true;
    reconnect_delay_ms_ = 100;
    heartbeat_interval_s_ =
        static_cast<int>(std::clamp<int64_t>(welcome->heartbeat_interval, 1, 3600));
    spdlog::info("registered with controller as {}", opts_.node);
    // Exits that came after the registration was written were not sent: send them now
    // (the controller ignores a report it has already applied).
    for (const auto& [id, f] : finished_) send_exit(id, f);
    heartbeat();
  } else if (const auto* refusal = std::get_if<proto::Refusal>(&msg)) {
    spdlog::error("controller refused registration: {}", refusal->error);
  }
}

void Agent::dispatch(const proto::ToAgent& msg) {
  std::visit(
      Overload{
          [this](const proto::Launch& m) { launch(m); },
          [this](const proto::Terminate& m) {
            const std::string step_notice = m.step_notice.value_or("");
            steps_.terminate_job(m.job_id, m.kill_wait, step_notice);
            for (auto it = step_links_.lower_bound({m.job_id, 0});
                 it != step_links_.end() && it->first.first == m.job_id; ++it)
              it->second->send(stepd::encode(stepd::Terminate{m.kill_wait, step_notice}), false);
            terminate(m.job_id, m.kill_wait, m.notice.value_or(""));
          },
          [this](const proto::StepSignal& m) {
            steps_.signal_step(m.job_id, m.step_id, m.signal, m.terminate, m.kill_wait,
                               m.step_notice, m.graceful);
            if (auto it = step_links_.find({m.job_id, m.step_id}); it != step_links_.end())
              it->second->send(stepd::encode(stepd::StepSignal{m.signal, m.terminate, m.kill_wait,
                                                               m.step_notice, m.graceful}),
                               false);
          },
          [this](const proto::Signal& m) { signal_job(m.job_id, m.signal, m.batch_only); },
          [this](const proto::ExitAck& m) {
            auto it = finished_.find(m.job_id);
            if (it != finished_.end() && it->second.run == m.run.value_or(it->second.run))
              forget_exit(it);
          },
          [](const proto::Refusal& m) { spdlog::error("controller: {}", m.error); },
          [](const auto&) {},  // the handshake's, again: nothing to do
      },
      msg);
}

void Agent::heartbeat() {
  send(node_health());
  heartbeat_timer_.expires_after(std::chrono::seconds(heartbeat_interval_s_));
  heartbeat_timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec && authenticated_) heartbeat();
  });
}

void Agent::launch(const proto::Launch& msg) {
  LaunchSpec spec;
  spec.job_id = msg.job_id;
  const uint32_t run = msg.run;
  if (auto it = running_.find(spec.job_id); it != running_.end()) {
    if (it->second.run != run)
      spdlog::error("job {} run {} not launched: run {} still has processes", spec.job_id, run,
                    it->second.run);
    return;  // a duplicate launch
  }
  if (auto it = finished_.find(spec.job_id); it != finished_.end()) {
    if (it->second.run == run) return send_exit(spec.job_id, it->second);  // ran already
    forget_exit(it);  // an earlier run's report: the controller has moved past it
  }
  spec.uid = msg.uid;
  spec.gid = msg.gid;
  spec.user = msg.user;
  spec.argv = msg.argv;
  spec.env = msg.env;
  spec.workdir = msg.workdir;
  spec.std_out = msg.std_out;
  spec.std_err = msg.std_err;
  spec.std_in = msg.std_in;
  spec.append = msg.open_mode == "append";
  if (msg.get_user_env) {
    // As slurmd: the login environment fills in what the job's environment lacks.
    // Blocking here is bounded by the timeout and only for jobs that ask for it.
    core::add_login_environment(spec.env, login_environment(spec.user, 8));
    spec.env["_"] = "/usr/sbin/slurmstepd";
  }
  spec.env["SLURMD_NODENAME"] = opts_.node;
  set_node_connection(spec.env, node_connection());
  try {
    std::string dir = job_dir(spec.job_id);
    std::filesystem::create_directories(dir);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all |
                                          std::filesystem::perms::group_exec |
                                          std::filesystem::perms::others_exec);
    spec.script_path = dir + "/slurm_script";
    write_script(spec.script_path, msg.script, spec.uid, spec.gid);
    if (!spec.argv.empty()) spec.argv[0] = spec.script_path;
    const SupervisorLink link =
        start_supervisor(opts_.spool_dir, stepd::socket_path(opts_.spool_dir, spec.job_id));
    attach_supervisor(spec.job_id, run, 0, link.fd);
    // --mem/--mem-per-cpu: what the job holds on this node is its limit here.
    running_.at(spec.job_id)
        .stepd->send(
            stepd::encode(stepd::Launch{std::move(spec), run, msg.mem_mb, opts_.node, msg.confine}),
            false);
    spdlog::info("job {}: supervisor started, pid {}", msg.job_id, link.pid);
  } catch (const std::exception& e) {
    spdlog::error("job {} failed to launch: {}", spec.job_id, e.what());
    report_exit(spec.job_id, run, 1 << 8);
  }
}

std::set<std::pair<uint64_t, std::string>> Agent::adopt_supervisors() {
  std::set<std::pair<uint64_t, std::string>> adopted;
  const std::string dir = stepd::socket_dir(opts_.spool_dir);
  for (uint64_t id : stepd::listed_jobs(dir)) {
    const auto a = stepd::adopt(opts_.spool_dir, id, std::chrono::seconds(5));
    if (!a) continue;
    spdlog::info("job {}: run {} (pid {}) goes on under its supervisor; adopted", id, a->status.run,
                 a->status.pid);
    attach_supervisor(id, a->status.run, a->status.pid, a->fd);
    adopted.insert({id, "batch"});
  }
  for (const auto& [job, step] : stepd::listed_steps(dir)) {
    const int fd = stepd::adopt_step(opts_.spool_dir, job, step, std::chrono::seconds(5));
    if (fd < 0) continue;
    spdlog::info("step {}.{} goes on under its supervisor; adopted", job, step);
    attach_step_supervisor(job, step, fd);
    adopted.insert({job, std::to_string(step)});
  }
  return adopted;
}

bool Agent::hand_step(const std::shared_ptr<net::Connection>& srun, const json& cred,
                      const json& launch) {
  const uint64_t job = proto::get_uint(cred, "job_id");
  const auto step = static_cast<uint32_t>(proto::get_uint(cred, "step_id"));
  net::Connection::SessionState session;
  const int fd = srun->hand_over(session);
  if (fd < 0) return false;  // a frame still on its way out: the step runs here, unsupervised
  try {
    const SupervisorLink link =
        start_supervisor(opts_.spool_dir, stepd::step_socket_path(opts_.spool_dir, job, step), fd);
    ::close(fd);
    attach_step_supervisor(job, step, link.fd);
    step_links_.at({job, step})
        ->send(stepd::encode(stepd::StepLaunch{job, step, opts_.node, proto::dump(cred),
                                               proto::dump(launch), srun->peer(), session.key,
                                               session.send_dir, session.recv_dir, session.send_seq,
                                               session.recv_seq}),
               false);
    spdlog::info("step {}.{}: supervisor started for srun at {}, pid {}", job, step, srun->peer(),
                 link.pid);
  } catch (const std::exception& e) {
    ::close(fd);
    spdlog::error("step {}.{}: cannot start its supervisor ({}); srun's link is dropped", job, step,
                  e.what());
  }
  return true;
}

void Agent::attach_step_supervisor(uint64_t job_id, uint32_t step_id, int fd) {
  auto link = std::make_shared<net::Connection>(
      net::Connection::Socket(io_, asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), fd));
  if (auto old = step_links_.find({job_id, step_id}); old != step_links_.end())
    old->second->close();
  step_links_[{job_id, step_id}] = link;
  std::weak_ptr<net::Connection> weak = link;
  link->start(
      [this, job_id, step_id, weak](std::string payload) {
        if (auto l = weak.lock()) step_supervisor_message(job_id, step_id, l, payload);
      },
      [this, job_id, step_id, weak](const std::string&) {
        if (auto l = weak.lock()) step_supervisor_gone(job_id, step_id, l, SIGKILL);
      });
}

void Agent::step_supervisor_message(uint64_t job_id, uint32_t step_id,
                                    const std::shared_ptr<net::Connection>& link,
                                    const std::string& payload) {
  try {
    const stepd::Message m = stepd::decode(payload);
    if (const auto* e = std::get_if<stepd::StepExited>(&m);
        e && e->job_id == job_id && e->step_id == step_id)
      step_supervisor_gone(job_id, step_id, link, e->status);
  } catch (const std::exception& e) {
    spdlog::error("step {}.{}: bad message from its supervisor: {}", job_id, step_id, e.what());
  }
}

// The step has ended (or its supervisor died, which ends it): the controller hears it even
// when srun is gone, and what its tasks left goes.
void Agent::step_supervisor_gone(uint64_t job_id, uint32_t step_id,
                                 const std::shared_ptr<net::Connection>& link, int status) {
  auto it = step_links_.find({job_id, step_id});
  if (stopping_ || it == step_links_.end() || it->second != link) return;
  step_links_.erase(it);
  link->close();
  if (status == SIGKILL)
    spdlog::error("step {}.{}: its supervisor is gone without the step's end", job_id, step_id);
  step_ended(job_id, step_id);
  send(proto::StepExited{job_id, step_id, status});
}

void Agent::attach_supervisor(uint64_t job_id, uint32_t run, pid_t pid, int fd) {
  auto link = std::make_shared<net::Connection>(
      net::Connection::Socket(io_, asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), fd));
  running_[job_id] = Running{link, run, pid};
  link->start(
      [this, job_id, weak = std::weak_ptr<net::Connection>(link)](std::string payload) {
        if (auto l = weak.lock()) on_supervisor_message(job_id, l, payload);
      },
      [this, job_id, weak = std::weak_ptr<net::Connection>(link)](const std::string&) {
        if (auto l = weak.lock()) supervisor_gone(job_id, l);
      });
}

void Agent::on_supervisor_message(uint64_t job_id, const std::shared_ptr<net::Connection>& link,
                                  const std::string& payload) {
  auto it = running_.find(job_id);
  if (it == running_.end() || it->second.stepd != link) return;
  try {
    const stepd::Message m = stepd::decode(payload);
    if (const auto* s = std::get_if<stepd::Started>(&m)) {
      it->second.pid = s->pid;
      spdlog::info("job {} started, pid {}", job_id, s->pid);
      send(proto::JobStarted{job_id, s->pid});
    } else if (const auto* e = std::get_if<stepd::Exited>(&m); e && e->job_id == job_id) {
      job_ended(job_id, e->record);
    }
  } catch (const std::exception& e) {
    spdlog::error("job {}: bad message from its supervisor: {}", job_id, e.what());
  }
}

void Agent::supervisor_gone(uint64_t job_id, const std::shared_ptr<net::Connection>& link) {
  auto it = running_.find(job_id);
  if (stopping_ || it == running_.end() || it->second.stepd != link) return;
  const uint32_t run = it->second.run;
  // Its exit message may not have made it: the record it wrote before it went says how the
  // job ended.
  auto stored = exits_.load();
  if (auto f = stored.find(job_id); f != stored.end() && f->second.run == run)
    return job_ended(job_id, f->second);
  // The supervisor itself died (killed, out of memory): the job cannot be watched any more and
  // ends here, as a job whose processes were killed.
  spdlog::error("job {}: its supervisor is gone without recording an exit; killing the job",
                job_id);
  proctrack_.kill(job_id);
  if (it->second.pid > 0) ::kill(-it->second.pid, SIGKILL);
  when_gone(job_id, "", [this, job_id, run] {
    auto it = running_.find(job_id);
    if (it == running_.end() || it->second.run != run) return;
    proctrack_.remove(job_id);
    running_.erase(it);
    std::error_code ignored;
    std::filesystem::remove_all(job_dir(job_id), ignored);
    report_exit(job_id, run, SIGKILL);
    maybe_stop();
  });
}

void Agent::job_ended(uint64_t job_id, const Finished& f) {
  auto it = running_.find(job_id);
  if (it == running_.end()) return;
  it->second.stepd->close();
  running_.erase(it);
  spdlog::info("job {} ended, wait status {}", job_id, f.status);
  // The supervisor has recorded it in the exit store: reported from there until acknowledged.
  send_exit(job_id, finished_[job_id] = f);
  maybe_stop();
}

void Agent::terminate(uint64_t job_id, int64_t kill_wait_s, const std::string& notice) {
  auto it = running_.find(job_id);
  if (it == running_.end()) {
    // Nothing runs: tell the controller again how it ended, if we know.
    if (auto f = finished_.find(job_id); f != finished_.end()) send_exit(job_id, f->second);
    // No batch shell here (a node of a multi-node job, an allocation): what its steps left.
    if (proctrack_.populated(job_id)) {
      proctrack_.signal(job_id, "", SIGCONT);
      proctrack_.signal(job_id, "", SIGTERM);
      auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::seconds(kill_wait_s));
      timer->async_wait([this, timer, job_id](boost::system::error_code ec) {
        if (ec || running_.count(job_id)) return;
        proctrack_.kill(job_id);
        when_gone(job_id, "", [this, job_id] {
          if (!running_.count(job_id)) proctrack_.remove(job_id);
        });
      });
    }
    return;
  }
  it->second.stepd->send(stepd::encode(stepd::Terminate{kill_wait_s, notice}), false);
}

void Agent::signal_job(uint64_t job_id, int sig, bool batch_only) {
  auto it = running_.find(job_id);
  if (it != running_.end())
    it->second.stepd->send(stepd::encode(stepd::Signal{sig, batch_only}), false);
}

void Agent::reap() {
  int status = 0;
  pid_t pid;
  // srun's tasks; the supervisors this agent started (their jobs' ends come over their links).
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) steps_.child_exited(pid, status);
  maybe_stop();
  if (!io_.stopped()) child_signals_.async_wait([this](auto, int) { reap(); });
}

void Agent::when_gone(uint64_t job_id, const std::string& step, std::function<void()> then) {
  if (!proctrack_.populated(job_id, step)) return then();
  // Killed processes take a moment to go (longer in uninterruptible sleep): bounded, so a
  // stuck one delays the report by at most that long.
  auto timer = std::make_shared<asio::steady_timer>(io_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto poll = std::make_shared<std::function<void()>>();
  *poll = [this, timer, deadline, job_id, step, then = std::move(then),
           weak = std::weak_ptr<std::function<void()>>(poll)] {
    if (!proctrack_.populated(job_id, step)) return then();
    if (std::chrono::steady_clock::now() > deadline) {
      spdlog::error("job {}: processes are left after SIGKILL; reporting its end anyway", job_id);
      return then();
    }
    proctrack_.kill(job_id, step);
    timer->expires_after(std::chrono::milliseconds(50));
    timer->async_wait([self = weak.lock()](boost::system::error_code ec) {
      if (!ec && self) (*self)();
    });
  };
  (*poll)();
}

void Agent::step_ended(uint64_t job_id, uint32_t step_id) {
  // Every task has ended: what they started goes with them.
  const std::string step = std::to_string(step_id);
  proctrack_.kill(job_id, step);
  when_gone(job_id, step, [this, job_id, step] {
    proctrack_.remove(job_id, step);
    if (!running_.count(job_id)) proctrack_.remove(job_id);  // fails while other steps run
  });
}

void Agent::maybe_stop() {
  if (stopping_ && steps_.idle()) io_.stop();
}

void Agent::report_exit(uint64_t job_id, uint32_t run, int status, ProcTrack::Usage usage) {
  const Finished f{status, run, usage};
  // On disk before it is sent: the controller acknowledges it once journaled, and until then
  // the agent may be killed; its successor reports it from there.
  exits_.save(job_id, f);
  send_exit(job_id, finished_[job_id] = f);
}

void Agent::forget_exit(std::map<uint64_t, Finished>::iterator it) {
  exits_.remove(it->first);
  finished_.erase(it);
}

void Agent::send_exit(uint64_t job_id, const Finished& f) { send(exit_report(job_id, f)); }

void Agent::shutdown() {
  // As slurmd: the agent goes, batch jobs and srun steps go on under their supervisors (the
  // next agent adopts them); a step that could not be handed over ends.
  stopping_ = true;
  spdlog::info("stopping; {} batch job(s) and {} step(s) go on under their supervisors",
               running_.size(), step_links_.size());
  reconnect_timer_.cancel();
  heartbeat_timer_.cancel();
  if (conn_) conn_->close();
  for (auto& [id, r] : running_) r.stepd->close();
  for (auto& [id, link] : step_links_) link->close();
  steps_.stop_all(5);
  maybe_stop();
}

}  // namespace drover::agent
