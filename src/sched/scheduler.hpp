#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"
#include "core/node.hpp"
#include "sched/plan_memory.hpp"

namespace drover::sched {

// What happens to a preempted job (PreemptMode; SUSPEND is not supported yet).
enum class PreemptMode : uint8_t { Off, Cancel, Requeue };

// A partition as the engine sees it: which nodes (indices into ClusterView::nodes) it holds.
struct PartitionView {
  std::string name;
  std::vector<int> nodes;
  // Why pending jobs here may not start at all ("PartitionDown", "PartitionInactive");
  // empty when the partition runs jobs (UP, or DRAIN for jobs already queued).
  std::string not_running_reason;
  int64_t max_time_min = -1;  // -1: unlimited
  int max_nodes = -1;
  int priority_tier = 1;  // higher tiers are scheduled first
  // preempt/partition_prio: what happens to this partition's jobs when preempted (unset:
  // the cluster's PreemptMode) and how long they get to end (GraceTime, seconds).
  std::optional<PreemptMode> preempt_mode = std::nullopt;
  int64_t grace_time_s = 0;
};

// Which running jobs a pending one may preempt (PreemptType), and how.
struct PreemptionView {
  enum class Type : uint8_t { None, PartitionPrio, Qos } type = Type::None;
  PreemptMode mode = PreemptMode::Off;  // the cluster's PreemptMode; Off: no preemption
  int64_t exempt_time_s = -1;           // PreemptExemptTime (-1: none)
  struct Qos {
    std::vector<std::string> preempts;  // the QOS its jobs may preempt (Preempt=)
    std::optional<PreemptMode> mode;    // for its jobs when preempted
    int64_t grace_time_s = 0;
    int64_t exempt_time_s = -1;  // -1: the cluster's
  };
  std::unordered_map<std::string, Qos> qos;  // preempt/qos: by QOS name
};

// An advance reservation as the engine sees it: its nodes are kept for its members over
// [start, end); other jobs may use them only where they end before it starts.
struct ReservationView {
  std::string name;
  int64_t start = 0, end = 0;
  std::vector<int> nodes;  // indices into ClusterView::nodes
  bool flex = false;       // members may also run outside its nodes and window (FLEX)
};

// How the engine plans. Slurm's names where Slurm has the knob.
enum class Policy : uint8_t {
  Fifo,          // sched/builtin: strict order per partition, no backfill
  Easy,          // backfill with a reservation for the first blocked job of each partition only
  Conservative,  // backfill where every blocked job gets a reservation (Slurm's sched/backfill)
};

struct SchedulerParams {
  Policy policy = Policy::Conservative;
  // Start times are rounded up to this (bf_resolution); it bounds the profile's size.
  int64_t bf_resolution_s = 60;
  // Jobs whose earliest start lies beyond now + window get no reservation (bf_window);
  // 0: no window, the whole queue is planned.
  int64_t bf_window_s = 0;
  int bf_max_job_test = 0;  // 0: every pending job is considered
  int bf_max_job_user = 0;  // 0: no per-user cap on jobs considered
  // Deterministic stand-in for bf_max_time: node timeline examinations per pass (0: none).
  // Jobs not reached keep reason "Priority" (or their previous reason) and no planned start.
  uint64_t work_budget = 0;
};

class Limits;  // sched/limits.hpp

struct ClusterView {
  std::vector<const core::Node*> nodes;
  std::vector<PartitionView> partitions;
  // Pending jobs to consider; the engine orders them itself.
  std::vector<const core::Job*> pending;
  // Jobs holding resources (running or completing), for their CPU/device ids and their
  // expected end (start_time + time limit; an overdue job is expected to end any moment).
  std::vector<const core::Job*> running;
  // Reservations not yet over. A pending job naming one (spec.reservation) is a member: it
  // runs only on its nodes within its window (unless FLEX), and is expected to end by its
  // end (ResvOverRun=0).
  std::vector<ReservationView> reservations;
  int64_t def_mem_per_cpu_mb = 0;   // DefMemPerCPU (0: unset)
  int64_t def_mem_per_node_mb = 0;  // DefMemPerNode (0: unset: a job gets the whole node)
  // Partitions already known to start nothing more (from an earlier pass, when nothing has
  // been freed since): lets a pass over only newly submitted jobs give the same answer.
  std::set<std::string> blocked_partitions;
  // How many instances of a pending job may start in this pass (job arrays: one per task,
  // within the array's running limit); absent means one.
  std::unordered_map<uint64_t, int> start_limit;
  SchedulerParams params;
  // Association and QOS limits (AccountingStorageEnforce); null: none. A job a limit holds
  // back gets the limit's reason and no reservation, and does not hold up the jobs behind it.
  const Limits* limits = nullptr;
  PreemptionView preemption;
  // bf_max_time: asked before each pending job is considered; once it says yes, the pass
  // considers no more (they keep their reasons, and the controller their planned starts).
  // The controller gives it a wall-clock deadline; unset (the simulator, tests): never, so
  // the engine stays deterministic.
  std::function<bool()> out_of_time;
  // The pass plans the whole queue: a job it considers and does not plan loses the plan an
  // earlier pass made (PlanMemory). Unset, such plans stay until the caller forgets them.
  bool whole_queue = false;
};

struct Start {
  uint64_t job_id;
  std::string partition;
  std::vector<core::NodeAlloc> alloc;
};

// A running job to stop so that a pending one can start (it starts once they are gone).
struct Preemption {
  uint64_t job_id;       // the job preempted
  uint64_t for_job;      // the pending job it makes room for
  PreemptMode mode;      // Cancel or Requeue
  int64_t grace_time_s;  // SIGTERM, then SIGKILL after this long (0: KillWait)
};

struct PendingReason {
  uint64_t job_id;
  std::string reason;
};

// Where and when a pending job is expected to start (squeue --start, sbatch --test-only).
struct PlannedStart {
  uint64_t job_id;
  int64_t start_time;
  std::string partition;
  std::vector<std::string> nodes;
  // The same nodes by index in ClusterView::nodes, with the tasks planned there: the engine
  // remembers them (Scheduler::plans), and the next pass keeps them when it can.
  std::vector<PlannedShare> shares;
};

struct Decisions {
  std::vector<Start> starts;
  std::vector<PendingReason> reasons;        // for every pending job not started
  std::vector<PlannedStart> planned;         // jobs given a reservation in the plan
  std::vector<Preemption> preempted;         // running jobs to stop
  std::set<std::string> blocked_partitions;  // where a job could not start, so none behind it may
  uint64_t work = 0;                         // node timeline examinations this pass
  // Pending jobs the pass did not get to because out_of_time said so, in priority order.
  std::vector<uint64_t> not_considered;
};

// The scheduling engine's interface: state and time in, decisions out. No I/O, no clock.
// An engine keeps what it compiled and its buffers from one call to the next (decisions are
// the same as a fresh engine's given the same plans); one engine is not to be called from two
// threads at once.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  // Plans the view's pending jobs; records each planned job's placement in plans() (and, with
  // ClusterView::whole_queue, forgets those of jobs it considered and could not plan).
  virtual Decisions schedule(const ClusterView& view, int64_t now) = 0;
  // The engine's plan memory. The caller forgets a job's plan when it leaves the queue (starts,
  // ends), hands it on to an array task split off (PlanMemory::inherit), and forgets plans on
  // a node that goes away; nothing else writes it.
  const PlanMemory& plans() const { return plans_; }
  PlanMemory& plans() { return plans_; }

 protected:
  PlanMemory plans_;
};

// Whether a job could ever run on the given partition's nodes if they were all idle.
// Used at submission to reject impossible requests.
bool can_ever_fit(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view);

// Fills `out` with one allocation for `spec` on the nodes of `part` given their current
// free resources, or returns false. Block distribution over nodes in index order.
bool place(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view,
           bool assume_idle, std::vector<core::NodeAlloc>& out);

// The engine; its policy comes from each view's params.
std::unique_ptr<Scheduler> make_scheduler();
// The engine pinned to Policy::Fifo whatever the view says (sched/builtin).
std::unique_ptr<Scheduler> make_fifo_scheduler();

}  // namespace drover::sched
