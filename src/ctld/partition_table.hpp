#pragma once
// The controller's partitions, in slurm.conf's order (the order sinfo and scontrol list them).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/slurm_conf.hpp"
#include "ctld/node_table.hpp"
#include "sched/scheduler.hpp"

namespace drover::ctld {

struct Partition {
  std::string name;
  std::vector<NodeId> nodes;  // in Slurm's order
  bool is_default = false;
  std::string not_running_reason;  // see sched::PartitionView
  std::string state = "UP";
  int64_t max_time_min = -1, default_time_min = -1;
  int max_nodes = -1;
  std::optional<sched::PreemptMode> preempt_mode;  // PreemptMode= (unset: the cluster's)
  int64_t grace_time_s = 0;                        // GraceTime=
  core::PartitionConf conf;
  nlohmann::json admin = nlohmann::json::object();  // what scontrol update changed, journaled
};

// Partitions by name, in their order. Which settings a partition takes is the rules' (the
// state machine's partition_from_conf, apply_partition_settings); this keeps the table: one
// record per name, the default, and nodes leaving.
class PartitionTable {
 public:
  PartitionTable() = default;
  // Throws std::invalid_argument for a name given twice.
  explicit PartitionTable(std::vector<Partition> parts);

  using iterator = std::vector<Partition>::iterator;
  using const_iterator = std::vector<Partition>::const_iterator;
  iterator begin() { return parts_.begin(); }
  iterator end() { return parts_.end(); }
  const_iterator begin() const { return parts_.begin(); }
  const_iterator end() const { return parts_.end(); }
  size_t size() const { return parts_.size(); }
  bool empty() const { return parts_.empty(); }
  const Partition& front() const { return parts_.front(); }

  const Partition* find(std::string_view name) const;
  Partition* find(std::string_view name);
  // Where a job that names no partition goes: the last one marked default, as Slurm reads
  // slurm.conf; null when none is.
  const Partition* default_partition() const;
  // `name` becomes the only default; returns the partitions that stopped being it.
  std::vector<std::string> make_sole_default(std::string_view name);
  // The partitions a node is in, in their order.
  std::vector<std::string> holding(NodeId id) const;
  // A node leaves every partition (it was deleted).
  void remove_node(NodeId id);

 private:
  std::vector<Partition> parts_;
};

}  // namespace drover::ctld
