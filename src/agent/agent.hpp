#pragma once
#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "agent/exit_store.hpp"
#include "agent/launch.hpp"
#include "agent/proctrack.hpp"
#include "agent/steps.hpp"
#include "net/connection.hpp"
#include "proto/agent_msg.hpp"

namespace drover::agent {

struct AgentOptions {
  std::string node;
  std::string controller_host = "127.0.0.1";
  int controller_port = 6817;
  std::string key;
  std::string spool_dir;
  std::string listen_address = "127.0.0.1";  // where srun reaches this agent (any free port)
  int cpus = 0;                              // reported resources (0: this machine's)
  int64_t real_memory_mb = 0;
  // -Z: a dynamic node, one slurm.conf need not list; `dynamic_conf` (--conf) is its node
  // line's attributes ("CPUs=.. RealMemory=.. Gres=.. Feature=..") over what was found.
  bool dynamic = false;
  std::string dynamic_conf;
  // The vouching socket droverd serves beside the agent (--auth-socket; empty: none): commands
  // in this node's jobs get their credential there (launch.hpp NodeConnection).
  std::string auth_socket;
};

// The node agent: keeps one authenticated connection to the controller, starts a supervisor
// for each batch job and each srun step (which runs the job's shell or the step's tasks and
// outlives the agent), relays signals and ends to them, and reports how they ended. Exits are
// remembered until the controller acknowledges them, on disk too, so none is lost across a
// controller restart, a dropped connection or the agent's own death.
class Agent {
 public:
  explicit Agent(AgentOptions opts);
  int run();

  using Finished = ExitRecord;

 private:
  // A batch job, run by its supervisor (stepd.hpp): the agent only relays to it.
  struct Running {
    std::shared_ptr<net::Connection> stepd;  // the link to the job's supervisor
    uint32_t run;   // which run of the job (a requeued job runs again under the same id)
    pid_t pid = 0;  // the batch shell, once the supervisor has forked it
  };
  void connect();
  void schedule_reconnect();
  void on_message(const std::string& payload);
  // on_message's frame before and after the registration is accepted. Throw on a bad field.
  void handshake(const proto::ToAgent& msg);
  void dispatch(const proto::ToAgent& msg);
  void send(const proto::FromAgent& msg);
  void heartbeat();
  void launch(const proto::Launch& msg);
  void terminate(uint64_t job_id, int64_t kill_wait_s, const std::string& notice);
  void signal_job(uint64_t job_id, int sig, bool batch_only);
  void reap();
  // Supervisors a previous agent of this node started and that still run their jobs and
  // steps: taken over, before the registration lists the jobs as running. Returns the (job,
  // step) cgroups they hold ("batch" for a batch job).
  std::set<std::pair<uint64_t, std::string>> adopt_supervisors();
  // StepServer::on_launch: srun's link and the step go to a supervisor of their own.
  bool hand_step(const std::shared_ptr<net::Connection>& srun, const nlohmann::json& cred,
                 const nlohmann::json& launch);
  void attach_step_supervisor(uint64_t job_id, uint32_t step_id, int fd);
  void step_supervisor_message(uint64_t job_id, uint32_t step_id,
                               const std::shared_ptr<net::Connection>& link,
                               const std::string& payload);
  void step_supervisor_gone(uint64_t job_id, uint32_t step_id,
                            const std::shared_ptr<net::Connection>& link, int status);
  void attach_supervisor(uint64_t job_id, uint32_t run, pid_t pid, int fd);
  void on_supervisor_message(uint64_t job_id, const std::shared_ptr<net::Connection>& link,
                             const std::string& payload);
  void supervisor_gone(uint64_t job_id, const std::shared_ptr<net::Connection>& link);
  void job_ended(uint64_t job_id, const Finished& f);
  void report_exit(uint64_t job_id, uint32_t run, int status, ProcTrack::Usage usage = {});
  void when_gone(uint64_t job_id, const std::string& step, std::function<void()> then);
  void step_ended(uint64_t job_id, uint32_t step_id);
  void maybe_stop();
  void send_exit(uint64_t job_id, const Finished& f);
  void forget_exit(std::map<uint64_t, Finished>::iterator it);
  void shutdown();
  std::string job_dir(uint64_t job_id) const;
  NodeConnection node_connection() const;

  AgentOptions opts_;
  boost::asio::io_context io_;
  boost::asio::signal_set child_signals_{io_, SIGCHLD};
  boost::asio::signal_set stop_signals_{io_, SIGTERM, SIGINT};
  boost::asio::steady_timer reconnect_timer_{io_};
  boost::asio::steady_timer heartbeat_timer_{io_};
  std::shared_ptr<net::Connection> conn_;
  bool authenticated_ = false;
  bool stopping_ = false;
  std::string nonce_a_, nonce_c_;
  int heartbeat_interval_s_ = 10;
  int reconnect_delay_ms_ = 100;
  std::map<uint64_t, Running> running_;
  // srun steps run by their supervisors: the links to them.
  std::map<std::pair<uint64_t, uint32_t>, std::shared_ptr<net::Connection>> step_links_;
  std::map<uint64_t, Finished> finished_;        // until the controller acknowledges them
  ExitStore exits_{opts_.spool_dir + "/exits"};  // finished_, as it outlives this process
  // This process among the node's agents (new at each start): the controller sends a launch
  // again, rather than requeue its job, when the same process registers without it.
  std::string instance_;
  ProcTrack proctrack_{opts_.node, opts_.spool_dir};
  StepServer steps_{io_, opts_.node, opts_.key, &proctrack_};
};

}  // namespace drover::agent
