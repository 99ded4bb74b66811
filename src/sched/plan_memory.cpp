#include "sched/plan_memory.hpp"

#include <algorithm>
#include <utility>

namespace drover::sched {

void PlanMemory::set(uint64_t job_id, int64_t start, std::vector<PlannedShare> shares) {
  Plan& p = plans_[job_id];
  p.start = start;
  p.shares = std::move(shares);
}

void PlanMemory::inherit(uint64_t from, uint64_t to) {
  auto it = plans_.find(from);
  if (it == plans_.end()) {
    plans_.erase(to);
    return;
  }
  Plan copy = it->second;  // (a copy first: the insertion may rehash)
  plans_[to] = std::move(copy);
}

void PlanMemory::forget_node(uint32_t node) {
  std::erase_if(plans_, [node](const auto& entry) {
    const auto& shares = entry.second.shares;
    return std::any_of(shares.begin(), shares.end(),
                       [node](const PlannedShare& s) { return s.node == node; });
  });
}

}  // namespace drover::sched
