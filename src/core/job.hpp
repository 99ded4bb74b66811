#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/array_spec.hpp"
#include "core/dependency.hpp"
#include "core/gres.hpp"
#include "core/istring.hpp"

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
inline constexpr uint8_t kHeldUser = 1, kHeldAdmin = 2;
inline constexpr int64_t kTimeNotSet = -2;  // no --time: the partition's default applies

// What the submitter asked for, after option parsing and defaults. Sent by sbatch, kept
// verbatim for the life of the job. Texts are interned (IString): the controller holds every
// pending job's spec, most of these fields are empty, and the rest mostly repeat across jobs.
struct JobSpec {
  IString name;
  std::vector<std::string> partitions;  // empty: the default partition
  int ntasks = 1;
  // Flags together (no padding between them): every pending job holds a spec.
  bool ntasks_set = false;
  bool nodes_set = false;
  bool cpus_per_task_set = false;
  bool exclusive = false;
  // -k/--no-kill: a failed node (not the batch host) leaves the allocation instead of ending
  // the job.
  bool no_kill = false;
  int nodes_min = 1;
  int nodes_max = 0;  // 0: no upper bound given
  int cpus_per_task = 1;
  int ntasks_per_node = 0;               // 0: not given
  int min_cpus = 0;                      // --mincpus: CPUs per node at least (0: not given)
  int64_t tmp_disk_mb = 0;               // --tmp: temporary disk per node
  int64_t mem_per_node_mb = -1;          // -1: not given; 0: all memory of each node
  int64_t mem_per_cpu_mb = -1;           // -1: not given
  int64_t time_limit_min = kTimeNotSet;  // minutes; -1 (kInfinite) unlimited
  IString workdir;
  IString std_out, std_err, std_in;                // patterns; empty: Slurm defaults
  IString script;                                  // the batch script text
  std::vector<std::string> argv;                   // script arguments (argv[0] is the script name)
  std::map<std::string, std::string> environment;  // exported to the job
  IString submit_host;
  int64_t submit_sid = 0;  // the submitting shell's session (AllocNode:Sid)
  IString command;         // absolute script path; empty for --wrap and stdin
  IString comment;
  IString account, qos;
  // Submission options kept verbatim as given (the controller parses and checks them).
  IString array;                 // --array spec, "" for an ordinary job
  IString dependency;            // --dependency spec
  int64_t begin_time = 0;        // --begin as Unix seconds (0: not given)
  int64_t deadline = 0;          // --deadline as Unix seconds (0: not given)
  bool hold = false;             // -H/--hold
  int nice = 0;                  // --nice
  int requeue = -1;              // --requeue (1) / --no-requeue (0); -1: the cluster's JobRequeue
  int kill_on_invalid_dep = -1;  // -1: the cluster's default (kill_invalid_depend)
  IString signal;                // --signal [{R|B}:]num[@time]
  IString nodelist, exclude;     // -w / -x as given (hostlists)
  IString constraint;            // -C
  IString gres, gpus, gpus_per_node, gpus_per_task;  // as given (validated by ctld)
  int64_t mem_per_gpu_mb = -1;
  IString reservation, licenses;
  IString mail_type, mail_user;
  IString open_mode;          // "append" / "truncate"; "" default
  IString submit_dir;         // sbatch's working directory (SLURM_SUBMIT_DIR); -D may differ
  int submit_nice = 0;        // the submitting process's nice (SLURM_PRIO_PROCESS)
  bool get_user_env = false;  // add the user's login environment at launch (see export_env)
  bool asks_for_gres() const {
    return !gres.empty() || !gpus.empty() || !gpus_per_node.empty() || !gpus_per_task.empty();
  }
  bool default_name = false;  // named "sbatch" for want of one (script on stdin, no -J):
                              // Slurm then sets no SLURM_JOB_NAME
  // An allocation without a batch shell (salloc, or srun outside an allocation): nothing is
  // launched when it starts; it ends when its holder says so, is cancelled or times out.
  bool interactive = false;
};

// Which resources a job holds on one node.
struct NodeAlloc {
  NodeAlloc() = default;
  NodeAlloc(std::string node_, int cpus_, int64_t mem_mb_, int tasks_,
            std::vector<GresCount> gres_ = {})
      : node(std::move(node_)),
        cpus(cpus_),
        mem_mb(mem_mb_),
        tasks(tasks_),
        gres(std::move(gres_)) {}
  std::string node;
  int cpus = 0;
  int64_t mem_mb = 0;
  int tasks = 0;
  std::vector<GresCount> gres;  // GPUs etc. held there
  // Which CPUs (0-based, the node's CPU numbering) and which GPUs (index among the node's
  // GPUs in Gres= order: CUDA_VISIBLE_DEVICES) the job holds there.
  std::vector<uint16_t> cpu_ids;
  std::vector<uint16_t> gpu_ids;
};

// A job step started by srun inside an allocation (the batch shell, N.batch, is not one).
struct Step {
  uint32_t id = 0;
  std::string name;  // -J, else the command's base name
  JobState state = JobState::Running;
  int64_t start_time = kNoTime, end_time = kNoTime;
  int exit_code = 0, exit_signal = 0;  // the largest exit code / a signal that ended a task
  int ntasks = 0;
  int cpus_per_task = 1;
  bool overlap = false;          // --overlap: shares the CPUs other steps hold
  std::string distribution;      // "block", "cyclic"
  std::vector<NodeAlloc> alloc;  // per node: CPUs (ids), memory, tasks, GPUs
  std::string command;           // the command line (scontrol show step, sacct SubmitLine)
  std::string srun_host;         // where srun runs
  int64_t srun_pid = 0;
  int64_t time_limit_min = -1;  // -1: the job's
  uint32_t cancelled_by = 0xffffffff;
  std::vector<std::string> node_names() const;
};

struct Job {
  uint64_t id = 0;
  JobSpec spec;
  uint32_t uid = 0, gid = 0;
  IString user, group;
  IString partition;  // the partition it runs (or will run) in
  JobState state = JobState::Pending;
  bool completing = false;  // processes still being killed / reported
  IString reason = "None";  // pending reason or end reason (e.g. "TimeLimit")
  // Set by the controller itself (an administrator may change it), never by the job's user: why
  // the system requeued or cancelled it (Slurm's SystemComment).
  IString system_comment;
  int64_t submit_time = kNoTime, eligible_time = kNoTime, start_time = kNoTime, end_time = kNoTime;
  int64_t last_sched_eval = kNoTime;
  int64_t time_limit_min = -1;  // effective limit (partition default applied); -1 = unlimited
  uint32_t priority = 0;
  int exit_code = 0;  // from the batch shell
  int exit_signal = 0;
  uint32_t cancelled_by = 0xffffffff;  // uid that cancelled, if any
  uint32_t restarts = 0;
  // How many times it has started: names each launch to its agent, so that reports of an
  // earlier launch (the job requeued since) end nothing.
  uint32_t launches = 0;
  std::vector<NodeAlloc> alloc;  // empty unless running / completing
  IString batch_host;
  // Pending: the nodes the plan expects it to start on (SchedNodes; the placement itself is
  // the engine's, sched::PlanMemory).
  IString sched_nodes;
  // The submission whose script and environment this job runs: the controller keeps them in
  // the journal, not in memory (0: they are in `spec`, as jobs journaled before that).
  uint64_t payload_id = 0;

  // Job arrays: every task's record has array_job_id (the id sbatch printed). The pending
  // remainder is one record holding the not-yet-started indices in array_pending; a task is
  // split off into its own record (a new job id, or the array's own id for the last task)
  // when it starts or is acted on alone.
  uint64_t array_job_id = 0;              // 0: not part of an array
  uint32_t array_task_id = kNoArrayTask;  // this record's task; kNoArrayTask for the remainder
  IndexSet array_pending;                 // indices not split off yet (the remainder record)
  uint32_t array_max_running = 0;         // the spec's '%' limit (0: none)

  // Eligibility beyond resources.
  uint8_t held = 0;           // kHeldUser / kHeldAdmin; a held job has priority 0
  Dependency dependency;      // parsed --dependency with each entry's state
  int nice = 0;               // current nice (the spec's, or as updated)
  bool warning_sent = false;  // the --signal warning has gone out for this run
  int64_t batch_max_rss_kb =
      -1;  // the batch step's peak memory as its agent saw it (-1: not known)

  // srun's steps of the current run (finished ones stay until the job is purged).
  std::vector<Step> steps;
  uint32_t next_step_id = 0;

  bool allocated() const { return !alloc.empty(); }
  int alloc_cpus() const;
  int64_t alloc_mem_mb() const;
  std::vector<std::string> node_names() const;
};

}  // namespace drover::core
