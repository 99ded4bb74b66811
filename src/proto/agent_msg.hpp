#pragma once
// The messages between the controller and a node's agent (droverd), one struct each: every
// frame on an agent link is one of them, a JSON object whose "type" names it. Each side builds
// a message only through its struct (to_json) and decodes a frame once, where it arrives
// (decode_from_agent, decode_to_agent), so everything behind reads typed fields. A wrong type
// or a missing required field is proto::BadMessage.
//
// The JSON is the wire format of protocol version 1 (net/protocol.hpp) key for key: members
// that were optional stay optional (std::optional here), so an agent of the previous release
// reads these as it read the hand-built ones. A new member must be optional, or the version
// goes up (README.md).
#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace drover::proto {

// ---- controller -> agent ----

// The first frame on a new agent link: the controller's challenge.
struct Hello {
  static constexpr const char* kType = "hello";
  std::string nonce;
  int version = 0;  // absent: a controller before versions (0)
  nlohmann::json to_json() const;
  static Hello from_json(const nlohmann::json& j);
};

// The reply to a registration that proved the node's key: the controller's proof, the key that
// checks step credentials, and how often to send a heartbeat.
struct Welcome {
  static constexpr const char* kType = "welcome";
  int version = 0;
  std::string step_pub;
  std::string mac;
  int64_t heartbeat_interval = 10;
  nlohmann::json to_json() const;
  static Welcome from_json(const nlohmann::json& j);
};

// Registration refused (or another error the controller reports); the link is closed after it.
struct Refusal {
  static constexpr const char* kType = "error";
  std::string error;
  // Slurm's number for it (proto/error.hpp); a controller of the previous release sent none.
  std::optional<int32_t> code = {};
  nlohmann::json to_json() const;
  static Refusal from_json(const nlohmann::json& j);
};

// How a job is confined on one node (slurm.conf's ProctrackType and TaskPlugin=task/cgroup with
// cgroup.conf), worked out by the controller: in a batch launch, and in each node's entry of a
// step credential. Absent (an older controller, or no task/cgroup): the job's memory is
// limited to mem_mb as before.
struct Confine {
  bool cgroup = true;       // ProctrackType is not proctrack/pgid: the job has cgroups here
  std::vector<int> cpus;    // ConstrainCores: the CPUs it may run on (empty: any)
  int64_t mem_hard = 0;     // bytes (0: no limit)
  int64_t mem_soft = 0;     // bytes (0: none)
  int64_t memsw = 0;        // RAM+swap, bytes (0: not constrained)
  int64_t swappiness = -1;  // MemorySwappiness (-1: the kernel's)
  // ConstrainDevices: the device files of the node's GRES the job does not hold, which it may
  // not open.
  std::vector<std::string> deny_devices;
  bool constrain_devices = false;
  nlohmann::json to_json() const;
  static Confine from_json(const nlohmann::json& j);
};

// Run a batch job's script (run `run` of job `job_id`): launches are idempotent per run.
struct Launch {
  static constexpr const char* kType = "launch";
  uint64_t job_id = 0;
  uint32_t run = 0;
  uint32_t uid = 0, gid = 0;
  std::string user;
  std::string script;
  // The journal's script and environment for the job (0: none); the controller's server fills
  // `script` and `env` from it before sending.
  uint64_t payload_id = 0;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  bool get_user_env = false;
  std::string workdir = "/";
  std::string open_mode;  // "append" or "" (truncate)
  std::string std_out = "/dev/null";
  std::string std_err = "/dev/null";  // absent on the wire: std_out
  std::string std_in = "/dev/null";
  int64_t mem_mb = 0;              // the memory limit on this node (0: none)
  std::optional<Confine> confine;  // overrides mem_mb when present
  bool resent = false;  // the same launch again after a re-registration (not counted as a start)
  nlohmann::json to_json() const;
  static Launch from_json(const nlohmann::json& j);
};

// End a job on this node: the batch shell (SIGCONT+SIGTERM, SIGKILL after kill_wait) and the
// tasks of its steps here.
struct Terminate {
  static constexpr const char* kType = "terminate";
  uint64_t job_id = 0;
  int64_t kill_wait = 30;
  std::optional<std::string> notice;       // for the batch job's error file
  std::optional<std::string> step_notice;  // what the steps' srun print ("CANCELLED AT ...")
  nlohmann::json to_json() const;
  static Terminate from_json(const nlohmann::json& j);
};

// Signal the batch shell (batch_only) or its whole process group.
struct Signal {
  static constexpr const char* kType = "signal";
  uint64_t job_id = 0;
  int signal = SIGTERM;
  bool batch_only = false;
  nlohmann::json to_json() const;
  static Signal from_json(const nlohmann::json& j);
};

// Signal (or end: terminate) one step's tasks on this node.
struct StepSignal {
  static constexpr const char* kType = "step_signal";
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  int signal = SIGKILL;
  bool terminate = false;
  bool graceful = false;  // its time limit: srun reports the step timed out, not failed
  int64_t kill_wait = 30;
  std::string step_notice;
  nlohmann::json to_json() const;
  static StepSignal from_json(const nlohmann::json& j);
};

// The controller has journaled this exit report: the agent may forget it. Without `run` it
// acknowledges whatever run the agent holds.
struct ExitAck {
  static constexpr const char* kType = "exit_ack";
  uint64_t job_id = 0;
  std::optional<uint32_t> run;
  nlohmann::json to_json() const;
  static ExitAck from_json(const nlohmann::json& j);
};

// ---- agent -> controller ----

// How a batch job ended on this node (also each of Register::finished).
struct JobExited {
  static constexpr const char* kType = "exited";
  uint64_t job_id = 0;
  int status = 0;                  // wait status
  std::optional<uint32_t> run;     // absent: the current run
  int64_t oom_kills = 0;           // on the wire only when > 0
  std::optional<int64_t> max_rss;  // bytes
  nlohmann::json to_json() const;
  static JobExited from_json(const nlohmann::json& j);
};

// A job the agent runs, with its run (absent from agents that sent bare ids: the current run).
struct RunningJob {
  uint64_t job_id = 0;
  std::optional<uint32_t> run;
};

// The agent's answer to Hello: who it is (proved by `mac` over both nonces with the node's
// key), its shape, and what it runs and has finished.
struct Register {
  static constexpr const char* kType = "register";
  std::string node;
  int version = 0;  // absent: an agent before versions (0)
  std::string nonce;
  std::string mac;
  std::optional<int64_t> cpus;
  std::optional<int64_t> real_memory;  // MB
  std::string launch_addr;             // where srun reaches it
  std::vector<RunningJob> running;
  std::vector<JobExited> finished;
  std::string instance;  // this agent process (launches sent to it are resent, not requeued)
  bool dynamic = false;  // -Z: a node slurm.conf need not list
  std::string conf;      // --conf: its node line (dynamic only)
  std::optional<double> cpu_load;
  std::optional<int64_t> free_mem;  // MB
  std::optional<int64_t> boot_time;
  // Where the controller sees the agent's connection from: set by the server, never read
  // from the wire.
  std::string address;
  nlohmann::json to_json() const;
  static Register from_json(const nlohmann::json& j);
};

struct Heartbeat {
  static constexpr const char* kType = "heartbeat";
  std::optional<double> cpu_load;
  std::optional<int64_t> free_mem;  // MB
  nlohmann::json to_json() const;
  static Heartbeat from_json(const nlohmann::json& j);
};

// The batch shell was forked.
struct JobStarted {
  static constexpr const char* kType = "started";
  uint64_t job_id = 0;
  int64_t pid = 0;
  nlohmann::json to_json() const;
  static JobStarted from_json(const nlohmann::json& j);
};

// Every task of a step on this node has ended (the worst wait status).
struct StepExited {
  static constexpr const char* kType = "step_exited";
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  int status = 0;
  nlohmann::json to_json() const;
  static StepExited from_json(const nlohmann::json& j);
};

using ToAgent =
    std::variant<Hello, Welcome, Refusal, Launch, Terminate, Signal, StepSignal, ExitAck>;
using FromAgent = std::variant<Register, Heartbeat, JobStarted, JobExited, StepExited>;

nlohmann::json to_json(const ToAgent& m);
nlohmann::json to_json(const FromAgent& m);
// The message a decoded frame (proto::decode_object) holds. Throws BadMessage: no "type", a
// type that does not travel this way, or a member of the wrong type or missing.
ToAgent decode_to_agent(const nlohmann::json& msg);
FromAgent decode_from_agent(const nlohmann::json& msg);

}  // namespace drover::proto
