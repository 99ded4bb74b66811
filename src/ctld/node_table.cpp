#include "ctld/node_table.hpp"

#include <cstdlib>

#include "core/error.hpp"
#include "core/gres.hpp"

namespace drover::ctld {

core::Node node_from_conf(const core::NodeConf& nc) {
  core::Node n;
  n.name = nc.name;
  n.cpus = nc.cpus;
  n.sockets = nc.sockets;
  n.cores_per_socket = nc.cores_per_socket;
  n.threads_per_core = nc.threads_per_core;
  n.real_memory_mb = nc.real_memory_mb;
  n.gres = nc.gres;
  if (!nc.gres.empty()) {
    try {
      n.gres_total = core::parse_gres_list(nc.gres);
    } catch (const core::ParseError&) {
      // slurm.conf validation reports it; the node offers no GRES.
    }
  }
  n.features = nc.features;
  n.active_features = nc.features;
  n.weight = nc.weight;
  if (auto it = nc.other.find("TmpDisk"); it != nc.other.end())
    n.tmp_disk_mb = std::atoll(it->second.c_str());
  return n;
}

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
    meta_.emplace_back();
  }
  slots_[at] = std::make_unique<core::Node>(std::move(node));
  meta_[at] = Meta{dynamic, false, false, false, {}};
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
  if (meta_[i].dynamic) --dynamic_count_;
  meta_[i] = Meta{};
  --count_;
  while (!slots_.empty() && !slots_.back() && slots_.size() > static_end_) {
    slots_.pop_back();
    meta_.pop_back();
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
