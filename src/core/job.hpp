#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

// Slurm's base job states. A job that is ending keeps its final state and sets `completing`
// until every agent has reported its processes gone (squeue shows CG).
enum class JobState : uint8_t {
  Pending,
  Running,
  Suspended,
  Completed,
  Cancelled,
  Failed,
  Timeout,
  NodeFail,
  Preempted,
  BootFail,
  Deadline,
  OutOfMemory,
};

std::string_view job_state_name(JobState s);                     // "PENDING", "RUNNING", ...
std::string_view job_state_short(JobState s);                    // "PD", "R", ...
std::optional<JobState> parse_job_state(std::string_view name);  // long or short, any case
bool is_finished(JobState s);

inline constexpr int64_t kNoTime = 0;  // unset timestamps (shown as "Unknown"/"None")
inline constexpr uint32_t kNoArrayTask = 0xfffffffe;
inline constexpr int64_t kTimeNotSet = -2;  // no --time: the partition's default applies

// What the submitter asked for, after option parsing and defaults. Sent by sbatch, kept
// verbatim for the life of the job.
struct JobSpec {
  std::string name;
  std::vector<std::string> partitions;  // empty: the default partition
  int ntasks = 1;
  bool ntasks_set = false;
  int nodes_min = 1;
  int nodes_max = 0;  // 0: no upper bound given
  bool nodes_set = false;
  int cpus_per_task = 1;
  bool cpus_per_task_set = false;
  int ntasks_per_node = 0;               // 0: not given
  int64_t mem_per_node_mb = -1;          // -1: not given; 0: all memory of each node
  int64_t mem_per_cpu_mb = -1;           // -1: not given
  int64_t time_limit_min = kTimeNotSet;  // minutes; -1 (kInfinite) unlimited
  bool exclusive = false;
  std::string workdir;
  std::string std_out, std_err, std_in;            // patterns; empty: Slurm defaults
  std::string script;                              // the batch script text
  std::vector<std::string> argv;                   // script arguments (argv[0] is the script name)
  std::map<std::string, std::string> environment;  // exported to the job
  std::string submit_host;
  int64_t submit_sid = 0;  // the submitting shell's session (AllocNode:Sid)
  std::string command;     // absolute script path; empty for --wrap and stdin
  std::string comment;
  std::string account, qos;
};

// Which resources a job holds on one node.
struct NodeAlloc {
  std::string node;
  int cpus = 0;
  int64_t mem_mb = 0;
  int tasks = 0;
};

struct Job {
  uint64_t id = 0;
  JobSpec spec;
  uint32_t uid = 0, gid = 0;
  std::string user, group;
  std::string partition;  // the partition it runs (or will run) in
  JobState state = JobState::Pending;
  bool completing = false;      // processes still being killed / reported
  std::string reason = "None";  // pending reason or end reason (e.g. "TimeLimit")
  int64_t submit_time = kNoTime, eligible_time = kNoTime, start_time = kNoTime, end_time = kNoTime;
  int64_t last_sched_eval = kNoTime;
  int64_t time_limit_min = -1;  // effective limit (partition default applied); -1 = unlimited
  uint32_t priority = 0;
  int exit_code = 0;  // from the batch shell
  int exit_signal = 0;
  uint32_t cancelled_by = 0xffffffff;  // uid that cancelled, if any
  uint32_t restarts = 0;
  std::vector<NodeAlloc> alloc;  // empty unless running / completing
  std::string batch_host;

  bool allocated() const { return !alloc.empty(); }
  int alloc_cpus() const;
  int64_t alloc_mem_mb() const;
  std::vector<std::string> node_names() const;
};

}  // namespace drover::core
