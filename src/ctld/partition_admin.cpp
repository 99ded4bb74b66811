// Operators change partitions (scontrol update PartitionName=... State=DOWN MaxTime=...).
// scontrol checks and types the values; what was set is journaled as a "partition" record
// over slurm.conf's settings and restored, so a change survives a controller restart.
#include <algorithm>

#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

bool StateMachine::apply_partition_settings(Partition& p, const json& set) {
  if (set.contains("nodes")) {
    std::vector<NodeId> idx;
    for (const auto& name : set["nodes"]) {
      const NodeId id = nodes_.find(name.get<std::string>());
      if (id == kNoNode) return false;
      idx.push_back(id);
    }
    p.nodes = std::move(idx);
    p.conf.nodes = set["nodes"].get<std::vector<std::string>>();
  }
  if (set.contains("state")) {
    p.state = p.conf.state = set["state"].get<std::string>();
    // DRAIN still runs what is queued; DOWN and INACTIVE run nothing.
    p.not_running_reason = p.state == "DOWN"       ? "PartitionDown"
                           : p.state == "INACTIVE" ? "PartitionInactive"
                                                   : "";
  }
  if (set.contains("max_time_min"))
    p.max_time_min = p.conf.max_time_min = set["max_time_min"].get<int64_t>();
  if (set.contains("default_time_min"))
    p.default_time_min = p.conf.default_time_min = set["default_time_min"].get<int64_t>();
  if (set.contains("max_nodes")) p.max_nodes = p.conf.max_nodes = set["max_nodes"].get<int>();
  if (set.contains("min_nodes")) p.conf.min_nodes = set["min_nodes"].get<int>();
  if (set.contains("priority_tier")) p.conf.priority_tier = set["priority_tier"].get<int>();
  if (set.contains("priority_job_factor"))
    p.conf.priority_job_factor = set["priority_job_factor"].get<int>();
  if (set.contains("hidden")) p.conf.hidden = set["hidden"].get<bool>();
  if (set.contains("is_default")) p.is_default = p.conf.is_default = set["is_default"].get<bool>();
  return true;
}

json StateMachine::partition_update(const proto::PartitionUpdateRequest& req, const Caller& who,
                                    Effects& fx) {
  if (!is_operator(who)) return error_reply(proto::Errno::kUserIdMissing);
  Partition* part = nullptr;
  Partition next;
  json set;
  // Checked before any change, so a refused request changes nothing; scontrol sends only
  // well-typed values, anything else (a raw client's) is refused, never thrown.
  try {
    part = partitions_.find(req.name);
    if (part == nullptr) return error_reply(proto::Errno::kInvalidPartitionName);
    // The settings as the partition's admin record keeps them.
    set = req.set.to_json();
    if (set.contains("nodes")) {
      if (!set["nodes"].is_array()) return error_reply(proto::Errno::kInvalidNodeName);
      for (const auto& n : set["nodes"])
        if (!n.is_string() || !nodes_.contains(n.get<std::string>()))
          return error_reply(proto::Errno::kInvalidNodeName);
    }
    if (set.contains("state")) {
      const std::string st = set["state"].get<std::string>();
      if (st != "UP" && st != "DOWN" && st != "DRAIN" && st != "INACTIVE")
        return error_reply(proto::Errno::kError, "Invalid request");
    }
    // As Slurm: a DefaultTime beyond the (new) MaxTime is ignored, the rest applies.
    if (set.contains("default_time_min")) {
      const int64_t max = set.value("max_time_min", part->max_time_min);
      const int64_t dflt = set["default_time_min"].get<int64_t>();
      if (max >= 0 && (dflt < 0 || dflt > max)) set.erase("default_time_min");
    }
    next = *part;
    apply_partition_settings(next, set);
  } catch (const json::exception&) {
    return error_reply(proto::Errno::kError, "Invalid request");
  }
  next.admin.update(set);
  *part = std::move(next);
  // One default partition: making this one the default ends the other's turn.
  if (part->is_default && set.contains("is_default"))
    for (const auto& name : partitions_.make_sole_default(part->name)) {
      Partition& p = *partitions_.find(name);
      p.conf.is_default = false;
      p.admin["is_default"] = false;
      fx.journal(journal::Partition{name});
    }
  fx.journal(journal::Partition{part->name});
  acct_.forget_submit_usage();
  full_pass_needed_ = true;
  fx.notify(notice::Reschedule{});
  return proto::Ack{}.to_json();
}

std::optional<proto::Error> StateMachine::part_limits_error(const core::JobSpec& spec,
                                                            const Partition& p) const {
  if (core::to_upper(config_.conf.get("EnforcePartLimits", "NO")) == "NO") return std::nullopt;
  int64_t cpus = 0;
  for (NodeId idx : p.nodes) cpus += nodes_.get(idx)->cpus;
  if (int64_t{spec.ntasks} * std::max(1, spec.cpus_per_task) > cpus)
    return proto::Error(proto::Errno::kTooManyRequestedCpus);
  if (spec.nodes_min > static_cast<int>(p.nodes.size()) ||
      (p.max_nodes > 0 && spec.nodes_min > p.max_nodes))
    return proto::Error(proto::Errno::kInvalidNodeCount);
  if (p.max_time_min >= 0 && spec.time_limit_min != core::kTimeNotSet &&
      (spec.time_limit_min < 0 || spec.time_limit_min > p.max_time_min))
    return proto::Error(proto::Errno::kInvalidTimeLimit);
  return std::nullopt;
}

json StateMachine::partition_admin_record(const std::string& name) const {
  const Partition* p = find_partition(name);
  return p == nullptr ? json::object() : p->admin;
}

void StateMachine::restore_partition_admin(const std::string& name, const json& record) {
  for (auto& p : partitions_) {
    if (p.name != name) continue;
    try {
      Partition next = p;
      // A node since removed from slurm.conf leaves the partition's nodes as configured.
      json set = record;
      if (!apply_partition_settings(next, set)) {
        set.erase("nodes");
        next = p;
        apply_partition_settings(next, set);
      }
      next.admin = set;
      p = std::move(next);
    } catch (const json::exception&) {
      // A record this controller cannot read leaves slurm.conf's settings.
    }
  }
}

}  // namespace drover::ctld
