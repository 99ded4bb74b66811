#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"
#include "core/node.hpp"

namespace drover::sched {

// A partition as the engine sees it: which nodes (indices into ClusterView::nodes) it holds.
struct PartitionView {
  std::string name;
  std::vector<int> nodes;
  // Why pending jobs here may not start at all ("PartitionDown", "PartitionInactive");
  // empty when the partition runs jobs (UP, or DRAIN for jobs already queued).
  std::string not_running_reason;
  int64_t max_time_min = -1;  // -1: unlimited
  int max_nodes = -1;
};

struct ClusterView {
  std::vector<const core::Node*> nodes;
  std::vector<PartitionView> partitions;
  // Pending jobs to consider; the engine orders them itself.
  std::vector<const core::Job*> pending;
  int64_t def_mem_per_cpu_mb = 0;   // DefMemPerCPU (0: unset)
  int64_t def_mem_per_node_mb = 0;  // DefMemPerNode (0: unset: a job gets the whole node)
  // Partitions already known to start nothing more (from an earlier pass, when nothing has
  // been freed since): lets a pass over only newly submitted jobs give the same answer.
  std::set<std::string> blocked_partitions;
  // How many instances of a pending job may start in this pass (job arrays: one per task,
  // within the array's running limit); absent means one.
  std::unordered_map<uint64_t, int> start_limit;
};

struct Start {
  uint64_t job_id;
  std::string partition;
  std::vector<core::NodeAlloc> alloc;
};

struct PendingReason {
  uint64_t job_id;
  std::string reason;
};

struct Decisions {
  std::vector<Start> starts;
  std::vector<PendingReason> reasons;        // for every pending job not started
  std::set<std::string> blocked_partitions;  // where a job could not start, so none behind it may
};

// The scheduling engine's interface: state and time in, decisions out. No I/O, no clock.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Decisions schedule(const ClusterView& view, int64_t now) = 0;
};

// Whether a job could ever run on the given partition's nodes if they were all idle.
// Used at submission to reject impossible requests.
bool can_ever_fit(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view);

// Fills `out` with one allocation for `spec` on the nodes of `part` given their current
// free resources, or returns false. Block distribution over nodes in index order.
bool place(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view,
           bool assume_idle, std::vector<core::NodeAlloc>& out);

std::unique_ptr<Scheduler> make_fifo_scheduler();

}  // namespace drover::sched
