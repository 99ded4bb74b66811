#pragma once
// What the operator decided about NodeSet sizes, most recent last, for people: the dashboard's
// Kubernetes view and `kubectl describe`-style troubleshooting. The operator's thread appends;
// readers (the dashboard, on the HTTP threads) copy. Bounded, so an autoscaler deciding every
// second for weeks holds a fixed amount.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "core/thread_annotations.hpp"

namespace drover::k8s::op {

struct ScaleDecision {
  int64_t time = 0;      // unix seconds
  std::string nodeset;   // the NodeSet's name
  int from = 0, to = 0;  // spec.replicas before and after (equal: a decision to hold)
  // Why, in words a user reads ("3 nodes for job 42 (-N3)", "idle 600 s: node ns-2 removed",
  // "job 43 needs 5 nodes, at most 4").
  std::string reason;
  std::vector<uint64_t> jobs;  // the pending jobs it is for, if any
};

class DecisionLog {
 public:
  explicit DecisionLog(size_t capacity = 500) : capacity_(capacity) {}

  void add(ScaleDecision d) {
    std::lock_guard lock(mu_);
    log_.push_back(std::move(d));
    while (log_.size() > capacity_) log_.pop_front();
  }
  // The newest `limit` decisions, oldest first; of one NodeSet when `nodeset` is not empty.
  std::vector<ScaleDecision> recent(size_t limit, const std::string& nodeset = "") const {
    std::lock_guard lock(mu_);
    std::vector<ScaleDecision> out;
    for (auto it = log_.rbegin(); it != log_.rend() && out.size() < limit; ++it)
      if (nodeset.empty() || it->nodeset == nodeset) out.push_back(*it);
    return {out.rbegin(), out.rend()};
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::deque<ScaleDecision> log_ DROVER_GUARDED_BY(mu_);
};

}  // namespace drover::k8s::op
