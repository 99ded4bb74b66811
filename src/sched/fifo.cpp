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
      const PartitionView* part = nullptr;
      for (const auto& p : view.partitions)
        if (p.name == job->partition) part = &p;
      if (part == nullptr) {
        d.reasons.push_back({job->id, "BadConstraints"});
        continue;
      }
      if (!part->not_running_reason.empty()) {
        d.reasons.push_back({job->id, part->not_running_reason});
        continue;
      }
      if (part->max_time_min >= 0 &&
          (job->time_limit_min < 0 || job->time_limit_min > part->max_time_min)) {
        d.reasons.push_back({job->id, "PartitionTimeLimit"});
        continue;
      }
      if (blocked.count(part->name)) {
        d.reasons.push_back({job->id, "Priority"});
        continue;
      }
      int limit = 1;
      if (auto it = view.start_limit.find(job->id); it != view.start_limit.end())
        limit = it->second;
      int started = 0;
      for (; started < limit; ++started) {
        std::vector<core::NodeAlloc> alloc;
        if (!place(job->spec, *part, working, false, alloc)) break;
        for (const auto& a : alloc) {
          core::Node& n = nodes[node_index[a.node]];
          n.alloc_cpus += a.cpus;
          n.alloc_mem_mb += a.mem_mb;
          n.running_jobs += 1;
        }
        d.starts.push_back({job->id, part->name, std::move(alloc)});
      }
      if (started == limit) continue;
      // A job that could not run even on an empty partition must not hold up the queue.
      if (static_cast<int>(part->nodes.size()) < job->spec.nodes_min ||
          (part->max_nodes > 0 && job->spec.nodes_min > part->max_nodes)) {
        d.reasons.push_back({job->id, "PartitionNodeLimit"});
        continue;
      }
      if (!can_ever_fit(job->spec, *part, view)) {
        d.reasons.push_back({job->id, "Resources"});
        continue;
      }
      blocked.insert(part->name);
      d.reasons.push_back({job->id, "Resources"});
    }
    return d;
  }
};

}  // namespace

std::unique_ptr<Scheduler> make_fifo_scheduler() { return std::make_unique<FifoScheduler>(); }

}  // namespace drover::sched
