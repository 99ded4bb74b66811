#pragma once
// priority/multifactor for the simulator (--policy multifactor): the controller's formulas
// (sched/priority, sched/fairshare) over the trace's users. Each user is an association
// under root with equal shares (SWF traces carry no accounts); a job's usage (CPUs x run
// time) is charged to its user as it ends and decays with PriorityDecayHalfLife, and Fair
// Tree ranks the users. Weights: age 1000 (PriorityMaxAge 7 days), fair share 10000, job
// size 1000 (larger jobs first, as Slurm without PriorityFavorSmall); half-life 7 days.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"
#include "sched/fairshare.hpp"
#include "sched/priority.hpp"

namespace drover::sim {

class SimMultifactor {
 public:
  SimMultifactor(uint32_t cluster_cpus, uint32_t cluster_nodes);
  // Makes the job's user an association. Every pending job's user must be known before any
  // priority of a pass is computed: a user appearing changes everyone's fair-share rank.
  void see(const core::Job& job) { user_assoc(job.uid); }
  // The job's priority at `now` (a PriorityFn for the replay).
  uint32_t priority(const core::Job& job, int64_t now);
  // Charges a job's run to its user (called as it ends).
  void job_ended(const core::Job& job, int64_t now);
  const sched::PriorityConfig& config() const { return conf_; }

 private:
  sched::AssocId user_assoc(uint32_t uid);
  void refresh(int64_t now);

  sched::PriorityConfig conf_;
  uint32_t cluster_cpus_, cluster_nodes_;
  sched::AssocTree tree_;
  std::unordered_map<uint32_t, sched::AssocId> users_;
  std::vector<sched::ShareInfo> shares_;
  int64_t shares_at_ = -1;  // when shares_ was computed
  bool dirty_ = true;       // usage or users changed since
};

}  // namespace drover::sim
