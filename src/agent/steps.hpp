#pragma once
#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "agent/launch.hpp"
#include "net/admission.hpp"

namespace drover::net {
class Connection;
}

namespace drover::agent {
class ProcTrack;

// srun's tasks on this node. srun connects here with the step credential the controller
// signed (who runs which tasks where, for how long); the agent checks it with the controller's
// public key, both sides derive a session key from this node's step key (net/keys.hpp), and the
// link then carries srun's launch request, input and signals one way and the tasks' output and
// exits the other (see proto/step_io.hpp). A credential launches once. In the agent, a launch
// is handed with the link to the step's supervisor (on_launch), whose own StepServer runs the
// tasks (resume).
class StepServer {
 public:
  // `track` (may be null) puts each step's tasks into a cgroup of their own.
  StepServer(boost::asio::io_context& io, std::string node, std::string key,
             ProcTrack* track = nullptr);
  ~StepServer();
  // Listens on address:0 (any free port). Throws std::exception on failure.
  void listen(const std::string& address);
  std::string launch_addr() const;  // "ip:port", for the controller to hand to srun
  // The controller's public key for step credentials (from its authenticated welcome); until
  // it is known every credential is refused.
  void set_step_public_key(std::string pub) { step_pub_ = std::move(pub); }
  // The agent's: applied to each step's environment as srun asks to launch it, before it is
  // handed to its supervisor (launch.hpp set_node_connection).
  void use_node_connection(NodeConnection c) { connection_ = std::move(c); }
  // From the agent's SIGCHLD reaping: true when `pid` was one of the tasks.
  bool child_exited(pid_t pid, int status);
  // The job ended: its tasks here get SIGCONT+SIGTERM, then SIGKILL after kill_wait_s; srun
  // hears "*** STEP N.S ON <node> <notice> ***" (e.g. "CANCELLED AT <time>") when one is given.
  void terminate_job(uint64_t job_id, int64_t kill_wait_s, const std::string& notice = "");
  // scancel of a step: a signal to its tasks here, or (terminate) the same ending as above.
  // `graceful`: SIGTERM first and SIGKILL after kill_wait_s (a step's time limit).
  void signal_step(uint64_t job_id, uint32_t step_id, int sig, bool terminate, int64_t kill_wait_s,
                   const std::string& notice, bool graceful = false);
  void stop_all(int64_t kill_wait_s);
  bool idle() const { return task_owner_.empty(); }
  // No srun link is open (every session has ended or was handed over).
  bool no_sessions() const { return sessions_.empty(); }
  // Set by the agent: offered each step srun asks to launch, once its credential is checked;
  // true when it took the step over (the link is then no longer this server's). `launch` is
  // srun's launch request.
  std::function<bool(const std::shared_ptr<net::Connection>& link, const nlohmann::json& cred,
                     const nlohmann::json& launch)>
      on_launch;
  // In a step's supervisor: the link and step an agent handed over (on_launch), launched here.
  void resume(std::shared_ptr<net::Connection> link, const nlohmann::json& cred,
              const nlohmann::json& launch);
  // Called when every task of a step here has ended (with the worst wait status), so the
  // controller learns of it even when srun is gone.
  std::function<void(uint64_t job_id, uint32_t step_id, int status)> on_step_end;

  struct Session;

 private:
  friend struct Session;
  void accept();
  void start_session(const std::shared_ptr<Session>& session,
                     std::shared_ptr<void> admission_ticket);

  boost::asio::io_context& io_;
  std::string node_, key_;  // key_: this node's own key
  std::string step_pub_;
  std::optional<NodeConnection> connection_;
  ProcTrack* track_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::set<std::shared_ptr<Session>> sessions_;
  std::map<pid_t, Session*> task_owner_;
  std::set<std::tuple<uint64_t, uint32_t, uint32_t>> launched_;  // (job, step, run)
  // Connection floods: open links, and those still in their handshake (anyone can connect).
  net::Admission admission_{"srun port", 1024}, handshakes_{"srun port (not authenticated)", 64};
  net::LogLimiter refusal_log_;  // anyone can be refused once per connection
};

}  // namespace drover::agent
