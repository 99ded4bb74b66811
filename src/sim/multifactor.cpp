#include "sim/multifactor.hpp"

#include <algorithm>
#include <string>

namespace drover::sim {

SimMultifactor::SimMultifactor(uint32_t cluster_cpus, uint32_t cluster_nodes)
    : cluster_cpus_(cluster_cpus), cluster_nodes_(cluster_nodes) {
  conf_.type = sched::PriorityType::Multifactor;
  conf_.weight_age = 1000;
  conf_.weight_fairshare = 10000;
  conf_.weight_job_size = 1000;
}

sched::AssocId SimMultifactor::user_assoc(uint32_t uid) {
  auto it = users_.find(uid);
  if (it != users_.end()) return it->second;
  dirty_ = true;
  const sched::AssocId id = tree_.add_user("u" + std::to_string(uid), "root");
  users_.emplace(uid, id);
  return id;
}

void SimMultifactor::refresh(int64_t now) {
  if (!dirty_ && now == shares_at_) return;
  tree_.decay_to(now, conf_.decay_half_life_s);
  shares_ = sched::compute_fairshare(tree_, sched::fairshare_options(conf_));
  shares_at_ = now;
  dirty_ = false;
}

uint32_t SimMultifactor::priority(const core::Job& job, int64_t now) {
  const sched::AssocId id = user_assoc(job.uid);
  refresh(now);
  sched::JobPriorityInput in;
  in.now = now;
  in.submit_time = job.submit_time;
  in.eligible_time = job.submit_time;
  in.cpus =
      static_cast<uint32_t>(std::max(1, job.spec.ntasks) * std::max(1, job.spec.cpus_per_task));
  in.min_nodes = static_cast<uint32_t>(std::max(1, job.spec.nodes_min));
  in.time_limit_min = job.time_limit_min < 0 ? core::kInfinite : job.time_limit_min;
  in.cluster_cpus = cluster_cpus_;
  in.cluster_nodes = cluster_nodes_;
  in.fairshare = sched::job_fairshare_factor(tree_, shares_, id, sched::fairshare_options(conf_));
  return sched::multifactor_priority(sched::compute_priority_factors(in, conf_), conf_);
}

void SimMultifactor::job_ended(const core::Job& job, int64_t now) {
  if (job.start_time == core::kNoTime || now <= job.start_time) return;
  const sched::AssocId id = user_assoc(job.uid);
  tree_.decay_to(now, conf_.decay_half_life_s);
  tree_.add_running_usage(id, job.start_time, now, job.alloc_cpus(), conf_.decay_half_life_s);
  dirty_ = true;
}

}  // namespace drover::sim
