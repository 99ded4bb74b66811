#pragma once
// The engine's memory of its plan: where and when the last pass that planned each pending job
// expected it to start. The next pass keeps that placement while it still holds the job, so
// that the jobs planned around it keep their reservations (Engine::keep_planned_nodes).
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace drover::sched {

// One node of a planned placement: the node by index in ClusterView::nodes, the job's tasks
// there and the GPUs it takes there.
struct PlannedShare {
  uint32_t node = 0, tasks = 0, job_gpus = 0;
  bool operator==(const PlannedShare&) const = default;
};

struct Plan {
  int64_t start = 0;  // the start the placement was planned for
  std::vector<PlannedShare> shares;
};

// Plans by job id. The engine writes them as it plans; its caller says when a job leaves the
// queue (it started, ended, or was split off an array) or a node goes, since only it knows.
// Not journaled: after a restart the first pass plans afresh.
class PlanMemory {
 public:
  const Plan* find(uint64_t job_id) const {
    auto it = plans_.find(job_id);
    return it == plans_.end() ? nullptr : &it->second;
  }
  void set(uint64_t job_id, int64_t start, std::vector<PlannedShare> shares);
  // The job left the queue, or the pass found no place for it.
  void forget(uint64_t job_id) { plans_.erase(job_id); }
  // An array task split off its remainder starts out with the remainder's plan.
  void inherit(uint64_t from, uint64_t to);
  // Plans on node `node` are made afresh (its index may go to another node).
  void forget_node(uint32_t node);
  size_t size() const { return plans_.size(); }
  void clear() { plans_.clear(); }

 private:
  std::unordered_map<uint64_t, Plan> plans_;
};

}  // namespace drover::sched
