#include "core/node.hpp"

namespace drover::core {

void Node::charge(const NodeAlloc& a) {
  alloc_cpus += a.cpus;
  alloc_mem_mb += a.mem_mb;
  running_jobs += 1;
  gres_used.insert(gres_used.end(), a.gres.begin(), a.gres.end());
}

void Node::discharge(const NodeAlloc& a) {
  alloc_cpus -= a.cpus;
  alloc_mem_mb -= a.mem_mb;
  running_jobs -= 1;
  gres_give_back(gres_used, a.gres);
}

NodeBase Node::base() const {
  if (down) return NodeBase::Down;
  if (!registered) return NodeBase::Unknown;
  if (alloc_cpus == 0 && running_jobs == 0) return NodeBase::Idle;
  if (alloc_cpus >= cpus) return NodeBase::Allocated;
  return NodeBase::Mixed;
}

std::string Node::state_long(bool with_flags) const {
  std::string s;
  switch (base()) {
    case NodeBase::Unknown:
      s = "UNKNOWN";
      break;
    case NodeBase::Idle:
      s = "IDLE";
      break;
    case NodeBase::Mixed:
      s = "MIXED";
      break;
    case NodeBase::Allocated:
      s = "ALLOCATED";
      break;
    case NodeBase::Down:
      s = "DOWN";
      break;
  }
  if (with_flags) {
    if (drain) s += "+DRAIN";
    if (maint) s += "+MAINTENANCE";
    if (not_responding) s += "+NOT_RESPONDING";
    if (reserved) s += "+RESERVED";
  }
  return s;
}

std::string Node::state_short() const {
  std::string s;
  NodeBase b = base();
  if (drain && b != NodeBase::Down) {
    s = (b == NodeBase::Idle || b == NodeBase::Unknown) ? "drain" : "drng";
  } else {
    switch (b) {
      case NodeBase::Unknown:
        s = "unk";
        break;
      case NodeBase::Idle:
        s = maint ? "maint" : reserved ? "resv" : "idle";
        break;
      case NodeBase::Mixed:
        s = "mix";
        break;
      case NodeBase::Allocated:
        s = "alloc";
        break;
      case NodeBase::Down:
        s = "down";
        break;
    }
  }
  // A node in a maintenance reservation: "maint" when idle, else its state marked '$'.
  if (maint && s != "maint") s += "$";
  if (not_responding || (!registered && !down)) s += "*";
  return s;
}

}  // namespace drover::core
