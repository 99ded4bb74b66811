#include "ctld/node_table.hpp"

namespace drover::ctld {

NodeId NodeTable::add(core::Node node, bool dynamic) {
  if (by_name_.count(node.name)) return kNoNode;
  size_t at = slots_.size();
  if (dynamic) {
    for (size_t i = static_end_; i < slots_.size(); ++i)
      if (!slots_[i]) {
        at = i;
        break;
      }
  } else if (static_end_ == slots_.size()) {
    // slurm.conf's nodes come first, before any dynamic one.
    static_end_ = slots_.size() + 1;
  }
  if (at == slots_.size()) {
    slots_.emplace_back();
    dynamic_.push_back(false);
  }
  slots_[at] = std::make_unique<core::Node>(std::move(node));
  dynamic_[at] = dynamic;
  by_name_.emplace(slots_[at]->name, static_cast<NodeId>(at));
  ++count_;
  if (dynamic) ++dynamic_count_;
  return static_cast<NodeId>(at);
}

bool NodeTable::remove(NodeId id) {
  if (!valid(id)) return false;
  const auto i = static_cast<size_t>(id);
  by_name_.erase(slots_[i]->name);
  slots_[i].reset();
  if (dynamic_[i]) --dynamic_count_;
  dynamic_[i] = false;
  --count_;
  while (!slots_.empty() && !slots_.back() && slots_.size() > static_end_) {
    slots_.pop_back();
    dynamic_.pop_back();
  }
  return true;
}

NodeId NodeTable::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? kNoNode : it->second;
}

std::vector<const core::Node*> NodeTable::by_id() const {
  std::vector<const core::Node*> out;
  out.reserve(slots_.size());
  for (const auto& s : slots_) out.push_back(s.get());
  return out;
}

std::vector<NodeId> NodeTable::ids() const {
  std::vector<NodeId> out;
  out.reserve(count_);
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i]) out.push_back(static_cast<NodeId>(i));
  return out;
}

}  // namespace drover::ctld
