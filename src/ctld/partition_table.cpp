#include "ctld/partition_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace drover::ctld {

PartitionTable::PartitionTable(std::vector<Partition> parts) : parts_(std::move(parts)) {
  for (size_t i = 0; i < parts_.size(); ++i)
    for (size_t k = 0; k < i; ++k)
      if (parts_[k].name == parts_[i].name)
        throw std::invalid_argument("partition " + parts_[i].name + " defined twice");
}

const Partition* PartitionTable::find(std::string_view name) const {
  for (const auto& p : parts_)
    if (p.name == name) return &p;
  return nullptr;
}

Partition* PartitionTable::find(std::string_view name) {
  for (auto& p : parts_)
    if (p.name == name) return &p;
  return nullptr;
}

const Partition* PartitionTable::default_partition() const {
  const Partition* out = nullptr;
  for (const auto& p : parts_)
    if (p.is_default) out = &p;
  return out;
}

std::vector<std::string> PartitionTable::make_sole_default(std::string_view name) {
  std::vector<std::string> stopped;
  for (auto& p : parts_) {
    if (p.name == name) {
      p.is_default = true;
    } else if (p.is_default) {
      p.is_default = false;
      stopped.push_back(p.name);
    }
  }
  return stopped;
}

std::vector<std::string> PartitionTable::holding(NodeId id) const {
  std::vector<std::string> out;
  for (const auto& p : parts_)
    if (std::find(p.nodes.begin(), p.nodes.end(), id) != p.nodes.end()) out.push_back(p.name);
  return out;
}

void PartitionTable::remove_node(NodeId id) {
  for (auto& p : parts_) std::erase(p.nodes, id);
}

}  // namespace drover::ctld
