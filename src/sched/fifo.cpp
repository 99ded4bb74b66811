#include <algorithm>
#include <map>
#include <set>

#include "sched/scheduler.hpp"

namespace drover::sched {
namespace {

// First in, first out within each partition (Slurm's sched/builtin): once a job cannot
// start, nothing behind it in the same partition starts either. Never over-allocates:
// every start is charged against a private copy of the nodes' free resources.
class FifoScheduler final : public Scheduler {
 public:
  // Starts up to `limit` instances of `job` in `part`; returns how many started and, when
  // not all, sets `why` to the pending reason.
  static int try_partition(const core::Job& job, const PartitionView* part, int limit,
                           const ClusterView& view, ClusterView& working,
                           std::vector<core::Node>& nodes,
                           std::map<std::string, size_t>& node_index,
                           std::set<std::string>& blocked, Decisions& d, std::string& why) {
    if (part == nullptr) {
      why = "BadConstraints";
      return 0;
    }
    if (!part->not_running_reason.empty()) {
      why = part->not_running_reason;
      return 0;
    }
    if (part->max_time_min >= 0 &&
        (job.time_limit_min < 0 || job.time_limit_min > part->max_time_min)) {
      why = "PartitionTimeLimit";
      return 0;
    }
    if (blocked.count(part->name)) {
      why = "Priority";
      return 0;
    }
    int started = 0;
    for (; started < limit; ++started) {
      std::vector<core::NodeAlloc> alloc;
      if (!place(job.spec, *part, working, false, alloc)) break;
      for (const auto& a : alloc) {
        core::Node& n = nodes[node_index[a.node]];
        n.alloc_cpus += a.cpus;
        n.alloc_mem_mb += a.mem_mb;
        n.running_jobs += 1;
        n.gres_used.insert(n.gres_used.end(), a.gres.begin(), a.gres.end());
      }
      d.starts.push_back({job.id, part->name, std::move(alloc)});
    }
    if (started == limit) return started;
    // A job that could not run even on an empty partition must not hold up the queue.
    if (static_cast<int>(part->nodes.size()) < job.spec.nodes_min ||
        (part->max_nodes > 0 && job.spec.nodes_min > part->max_nodes)) {
      // Slurm: a node count the user asked for is a node limit; one derived from the task
      // count is a configuration mismatch.
      why = job.spec.nodes_set ? "PartitionNodeLimit" : "PartitionConfig";
      return started;
    }
    why = "Resources";
    if (!can_ever_fit(job.spec, *part, view)) return started;
    blocked.insert(part->name);
    return started;
  }

  Decisions schedule(const ClusterView& view, int64_t /*now*/) override {
    Decisions d;
    std::vector<core::Node> nodes;
    nodes.reserve(view.nodes.size());
    for (const core::Node* n : view.nodes) nodes.push_back(*n);
    ClusterView working = view;
    for (size_t i = 0; i < nodes.size(); ++i) working.nodes[i] = &nodes[i];
    std::map<std::string, size_t> node_index;
    for (size_t i = 0; i < nodes.size(); ++i) node_index[nodes[i].name] = i;

    std::vector<const core::Job*> order = view.pending;
    std::sort(order.begin(), order.end(), [](const core::Job* a, const core::Job* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      if (a->submit_time != b->submit_time) return a->submit_time < b->submit_time;
      return a->id < b->id;
    });

    std::set<std::string>& blocked = d.blocked_partitions;
    blocked = view.blocked_partitions;
    for (const core::Job* job : order) {
      // A job may name several partitions: it starts in the first (in its order) where it
      // can start now; while pending, the first partition's reason is shown.
      std::vector<std::string> names = job->spec.partitions;
      if (names.size() < 2) names = {job->partition};
      int limit = 1;
      if (auto it = view.start_limit.find(job->id); it != view.start_limit.end())
        limit = it->second;
      std::string reason;
      for (const auto& name : names) {
        const PartitionView* part = nullptr;
        for (const auto& p : view.partitions)
          if (p.name == name) part = &p;
        std::string why;
        int started =
            try_partition(*job, part, limit, view, working, nodes, node_index, blocked, d, why);
        if (reason.empty()) reason = why;
        limit -= started;
        if (limit <= 0 || started > 0) break;
      }
      if (limit > 0 && !reason.empty()) d.reasons.push_back({job->id, reason});
    }
    return d;
  }
};

}  // namespace

std::unique_ptr<Scheduler> make_fifo_scheduler() { return std::make_unique<FifoScheduler>(); }
// Until the backfill engine lands every policy runs FIFO.
std::unique_ptr<Scheduler> make_scheduler() { return std::make_unique<FifoScheduler>(); }

}  // namespace drover::sched
