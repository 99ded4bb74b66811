#pragma once
// What the agent and a job's supervisor (droverd --stepd, see stepd.hpp) say to each other over
// the supervisor's Unix socket: framed JSON (proto/frame.hpp), each frame one of the typed
// messages below. The socket lives in a root-only directory of the spool and the supervisor
// also checks its peer's uid (SO_PEERCRED), so only the node's agent talks to it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "agent/exit_store.hpp"
#include "agent/launch.hpp"
#include "proto/agent_msg.hpp"

namespace drover::agent::stepd {

// agent -> supervisor, the first frame on the link the agent starts it with: the job to run.
struct Launch {
  LaunchSpec spec;  // script already written; cgroup_procs empty (the supervisor prepares them)
  uint32_t run = 0;
  int64_t mem_mb = 0;  // the job's memory limit on this node (0: none)
  std::string node;    // for notices ("slurmstepd-<node>: error: ...") and the cgroup subtree
  std::optional<proto::Confine> confine;  // the controller's, when it sent one (over mem_mb)
};
// agent -> supervisor: a signal to the batch shell (batch_only) or its whole process group.
struct Signal {
  int sig = 0;
  bool batch_only = false;
};
// agent -> supervisor: end the job: SIGCONT+SIGTERM now, SIGKILL after kill_wait_s; the notice
// (when given) goes to the job's error file first.
struct Terminate {
  int64_t kill_wait_s = 30;
  std::string notice;
};
// agent -> supervisor: asks for a Status (a new agent adopting the job).
struct StatusRequest {};
// supervisor -> agent: what it runs.
struct Status {
  uint64_t job_id = 0;
  uint32_t run = 0;
  pid_t pid = 0;  // the batch shell; 0 until forked
};
// supervisor -> agent: the batch shell was forked.
struct Started {
  pid_t pid = 0;
};
// supervisor -> agent: the job has ended, every process of it gone; the record is already in the
// exit store, so the supervisor may go.
struct Exited {
  uint64_t job_id = 0;
  ExitRecord record{};
};

// agent -> a step's supervisor, the first frame: an srun step whose link (the supervisor's fd
// 5) the agent hands over after checking its credential. The supervisor launches the tasks
// and carries the session on (its key and sequence numbers), so srun's I/O outlives the agent.
struct StepLaunch {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::string node;
  std::string cred;    // the step credential (JSON), checked by the agent
  std::string launch;  // srun's launch request (JSON)
  std::string peer;    // srun's address
  std::string key;     // the session key (raw)
  char send_dir = 0, recv_dir = 0;
  uint64_t send_seq = 0, recv_seq = 0;
};
// agent -> a step's supervisor: scancel of the step (StepServer::signal_step's arguments).
struct StepSignal {
  int sig = 0;
  bool terminate = false;
  int64_t kill_wait_s = 30;
  std::string notice;
  bool graceful = false;
};
// A step's supervisor -> agent: the step it runs (the reply to a StatusRequest).
struct StepStatus {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
};
// A step's supervisor -> agent: every task of the step here has ended (the worst wait status).
struct StepExited {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  int status = 0;
};

using Message = std::variant<Launch, Signal, Terminate, StatusRequest, Status, Started, Exited,
                             StepLaunch, StepSignal, StepStatus, StepExited>;

std::string encode(const Message& m);
// Throws proto::BadMessage on a frame that is not one of the messages, or has a bad field.
Message decode(const std::string& payload);

// Where a node's supervisors listen: <spool>/stepd/job<id>.sock for a batch job,
// step<id>.<step>.sock for an srun step.
std::string socket_dir(const std::string& spool_dir);
std::string socket_path(const std::string& spool_dir, uint64_t job_id);
std::string step_socket_path(const std::string& spool_dir, uint64_t job_id, uint32_t step_id);
// The jobs with a socket in `dir`, by id (other names ignored).
std::vector<uint64_t> listed_jobs(const std::string& dir);
// The steps with a socket in `dir`.
std::vector<std::pair<uint64_t, uint32_t>> listed_steps(const std::string& dir);

// Blocking helpers for the few places that talk to a supervisor outside an event loop (the
// agent adopting at start, `drover down`). Each throws std::runtime_error with errno text.
int connect_socket(const std::string& path);  // -errno when nobody listens (ECONNREFUSED...)
void write_frame(int fd, const std::string& payload);
// The next frame; nullopt on end of file or after `timeout` without one.
std::optional<std::string> read_frame(int fd, std::chrono::milliseconds timeout);

// What a new agent learns of one job's supervisor: its status and the open link (the caller
// owns fd), or nothing when the supervisor is gone or finishing (its exit is then in the exit
// store, or about to be: it records the exit before it removes its socket). A socket nobody
// listens on any more is removed. Never throws.
struct Adopted {
  Status status;
  int fd = -1;
};
std::optional<Adopted> adopt(const std::string& spool_dir, uint64_t job_id,
                             std::chrono::milliseconds timeout);
// The same for a step's supervisor: the open link (the caller's), or -1.
int adopt_step(const std::string& spool_dir, uint64_t job_id, uint32_t step_id,
               std::chrono::milliseconds timeout);

// Asks every supervisor of the node to end its job (as a Terminate) and waits up to `wait` for
// them to finish; returns how many were still there. For `drover down` of a local cluster.
int terminate_all(const std::string& spool_dir, int64_t kill_wait_s,
                  std::chrono::milliseconds wait);

}  // namespace drover::agent::stepd
