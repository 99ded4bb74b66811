#include "k8s/operator/snapshot.hpp"

namespace drover::k8s::op {

DroverNode to_drover_node(const core::Node& n, bool dynamic, ReasonBy reason_by,
                          std::vector<JobOnNode> jobs) {
  DroverNode d;
  d.name = n.name;
  switch (n.base()) {
    case core::NodeBase::Down:
      d.state = NodeState::Down;
      break;
    case core::NodeBase::Unknown:
      d.state = NodeState::Future;
      break;
    case core::NodeBase::Idle:
      d.state = NodeState::Idle;
      break;
    case core::NodeBase::Mixed:
      d.state = NodeState::Mixed;
      break;
    case core::NodeBase::Allocated:
      d.state = NodeState::Allocated;
      break;
  }
  // A node holding jobs is never reported idle, whatever its CPU count says.
  if (d.state == NodeState::Idle && !jobs.empty()) d.state = NodeState::Mixed;
  d.drain = n.drain;
  d.not_responding = n.not_responding;
  d.dynamic = dynamic;
  d.reason = n.reason;
  d.reason_by = n.reason.empty() ? ReasonBy::None : reason_by;
  d.reason_since = n.reason_time;
  d.registered = n.registered;
  d.registered_since = n.agent_start_time;
  d.features = n.features;
  d.jobs = std::move(jobs);
  return d;
}

int64_t expected_end(int64_t start_time, int64_t time_limit_min) {
  if (start_time <= 0 || time_limit_min < 0) return 0;
  return start_time + time_limit_min * 60;
}

}  // namespace drover::k8s::op
