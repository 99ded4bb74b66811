#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/node.hpp"
#include "core/slurm_conf.hpp"

namespace drover::ctld {

// A node as slurm.conf (or a dynamic node's definition, in the same syntax) describes it.
core::Node node_from_conf(const core::NodeConf& nc);

// A node's id for as long as it exists in this controller: other nodes joining or leaving do
// not change it. It is also the node's index in sched::ClusterView::nodes, so partitions,
// reservations and plans (sched::PlanMemory) hand it to the engine as it is.
using NodeId = int;
inline constexpr NodeId kNoNode = -1;

// The controller's nodes: slurm.conf's, in its order, then dynamic ones (slurmd -Z, scontrol
// create). A node's record never moves in memory while it exists (the engine keeps pointers
// to them from pass to pass).
class NodeTable {
 public:
  // Adds a node under the lowest free id after slurm.conf's nodes (a dynamic node takes the
  // place one deleted before it left, as Slurm fills its node table); kNoNode when the name is
  // already taken.
  NodeId add(core::Node node, bool dynamic = false);
  // Removes a node; its id may be given to a node added later. False when there is none.
  bool remove(NodeId id);

  NodeId find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != kNoNode; }
  core::Node* get(NodeId id) { return valid(id) ? slots_[static_cast<size_t>(id)].get() : nullptr; }
  const core::Node* get(NodeId id) const {
    return valid(id) ? slots_[static_cast<size_t>(id)].get() : nullptr;
  }
  core::Node* get(std::string_view name) { return get(find(name)); }
  const core::Node* get(std::string_view name) const { return get(find(name)); }
  bool dynamic(NodeId id) const { return valid(id) && meta_[static_cast<size_t>(id)].dynamic; }
  // A dynamic node's State=FUTURE (created by scontrol, no agent has registered as it yet;
  // Slurm lists such nodes only when asked to), and its definition as a slurm.conf node line.
  bool future(NodeId id) const { return valid(id) && meta_[static_cast<size_t>(id)].future; }
  void set_future(NodeId id, bool future) {
    if (valid(id)) meta_[static_cast<size_t>(id)].future = future;
  }
  // A dynamic node created State=CLOUD: while no agent has registered as it, it is powered
  // down (Slurm's power saving: sinfo "idle~"), or powering up once its start was asked for
  // ("idle#"); listed, unlike FUTURE nodes.
  bool cloud(NodeId id) const { return valid(id) && meta_[static_cast<size_t>(id)].cloud; }
  void set_cloud(NodeId id, bool cloud) {
    if (valid(id)) meta_[static_cast<size_t>(id)].cloud = cloud;
  }
  bool powering_up(NodeId id) const {
    return valid(id) && meta_[static_cast<size_t>(id)].powering_up;
  }
  void set_powering_up(NodeId id, bool on) {
    if (valid(id)) meta_[static_cast<size_t>(id)].powering_up = on;
  }
  const std::string& definition(NodeId id) const {
    return meta_.at(static_cast<size_t>(id)).definition;
  }
  void set_definition(NodeId id, std::string line) {
    if (valid(id)) meta_[static_cast<size_t>(id)].definition = std::move(line);
  }

  size_t size() const { return count_; }  // nodes that exist
  size_t dynamic_count() const { return dynamic_count_; }
  // One past the highest id in use: ids run over [0, id_end()), with holes where nodes left.
  NodeId id_end() const { return static_cast<NodeId>(slots_.size()); }
  // Every node by id, null where there is none (what sched::ClusterView::nodes takes).
  std::vector<const core::Node*> by_id() const;
  // The ids of existing nodes, in Slurm's order.
  std::vector<NodeId> ids() const;

  // Iteration over existing nodes in Slurm's order (id order).
  template <class Node, class Slots>
  class Iter {
   public:
    Iter(Slots* s, size_t i) : s_(s), i_(i) { skip(); }
    Node& operator*() const { return *(*s_)[i_]; }
    Node* operator->() const { return (*s_)[i_].get(); }
    NodeId id() const { return static_cast<NodeId>(i_); }
    Iter& operator++() {
      ++i_;
      skip();
      return *this;
    }
    bool operator!=(const Iter& o) const { return i_ != o.i_; }
    bool operator==(const Iter& o) const { return i_ == o.i_; }

   private:
    void skip() {
      while (i_ < s_->size() && !(*s_)[i_]) ++i_;
    }
    Slots* s_;
    size_t i_;
  };
  using Slots = std::vector<std::unique_ptr<core::Node>>;
  using iterator = Iter<core::Node, Slots>;
  using const_iterator = Iter<const core::Node, const Slots>;
  iterator begin() { return {&slots_, 0}; }
  iterator end() { return {&slots_, slots_.size()}; }
  const_iterator begin() const { return {&slots_, 0}; }
  const_iterator end() const { return {&slots_, slots_.size()}; }

 private:
  bool valid(NodeId id) const {
    return id >= 0 && static_cast<size_t>(id) < slots_.size() && slots_[static_cast<size_t>(id)];
  }
  Slots slots_;
  struct Meta {
    bool dynamic = false, future = false, cloud = false, powering_up = false;
    std::string definition;
  };
  std::vector<Meta> meta_;  // by id
  // Keys are views of the names held in slots_ (records do not move).
  std::unordered_map<std::string_view, NodeId> by_name_;
  size_t count_ = 0, dynamic_count_ = 0;
  size_t static_end_ = 0;  // ids below belong to slurm.conf's nodes
};

}  // namespace drover::ctld
