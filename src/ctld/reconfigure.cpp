// scontrol reconfigure: slurm.conf read again replaces the configuration in force, while jobs,
// node states and reservations stay as they are. What slurm.conf(5) says needs a restart is
// refused rather than half applied, so the configuration in force is always one whole file.
#include <algorithm>

#include "core/error.hpp"
#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {
namespace {

bool has_flag(const std::string& flags, const std::string& flag) {
  for (const auto& f : core::split_list(flags, ','))
    if (core::iequals(f, flag)) return true;
  return false;
}

}  // namespace

std::string StateMachine::reconfigure(Config next, int64_t /*now*/, Effects& fx) {
  const auto keys = restart_only_changes(config_.conf, next.conf);
  if (!keys.empty()) {
    std::string names;
    for (const auto& k : keys) names += (names.empty() ? "" : ", ") + k;
    return names + " changed: a restart of droverctld is needed for " +
           (keys.size() == 1 ? "it" : "them");
  }
  // Nodes, as slurm.conf defines them: adding, removing or redefining one needs a restart
  // (dynamic nodes come and go with scontrol create/delete instead).
  std::vector<std::string> before, after;
  for (const auto& nc : config_.conf.nodes) before.push_back(nc.name);
  for (const auto& nc : next.conf.nodes) after.push_back(nc.name);
  if (before != after)
    return "nodes were added to or removed from slurm.conf: a restart of droverctld is needed";
  for (size_t i = 0; i < next.conf.nodes.size(); ++i)
    if (node_definition(config_.conf.nodes[i]) != node_definition(next.conf.nodes[i]))
      return "NodeName=" + next.conf.nodes[i].name +
             " changed: a restart of droverctld is needed to redefine a node";
  // A partition that goes must have no jobs left in it.
  for (const auto& [id, job] : jobs_) {
    if (core::is_finished(job.state) || job.partition.empty() ||
        next.conf.find_partition(job.partition))
      continue;
    return "partition " + job.partition + " has job " + std::to_string(id) +
           ": it cannot be removed while it has jobs";
  }

  std::vector<Partition> parts;
  try {
    for (const auto& pc : next.conf.partitions) parts.push_back(partition_from_conf(pc));
    // The accounting entities stay; the limits are rebuilt over the new partitions (QOS=).
    if (acct_.data()) {
      core::AcctDump dump = core::acct_dump_of(*acct_.data());
      dump.source = "accounting";
      apply_accounting(next, std::move(dump));
    }
  } catch (const core::ParseError& e) {
    return e.what();
  }
  // Dynamic nodes stay in the partitions that take them.
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
    if (!nodes_.dynamic(it.id())) continue;
    for (auto& p : parts)
      if (partition_takes(p, *it) &&
          std::find(p.nodes.begin(), p.nodes.end(), it.id()) == p.nodes.end()) {
        auto at = p.conf.all_nodes ? std::lower_bound(p.nodes.begin(), p.nodes.end(), it.id())
                                   : p.nodes.end();
        p.nodes.insert(at, it.id());
      }
  }
  // What scontrol update changed: dropped (Slurm's default), or kept as ReconfigFlags says.
  const std::string flags = next.conf.get("ReconfigFlags", "");
  const bool keep_info = has_flag(flags, "KeepPartInfo");
  const bool keep_state = !keep_info && has_flag(flags, "KeepPartState");
  for (auto& p : parts) {
    const Partition* old = find_partition(p.name);
    if (old == nullptr || old->admin.empty()) continue;
    json set = keep_info ? old->admin : json::object();
    if (keep_state && old->admin.contains("state")) set["state"] = old->admin["state"];
    if (!set.empty()) {
      Partition kept = p;
      if (!apply_partition_settings(kept, set)) {
        set.erase("nodes");
        kept = p;
        apply_partition_settings(kept, set);
      }
      kept.admin = set;
      p = std::move(kept);
    }
  }
  for (const auto& old : partitions_) {
    const auto it = std::find_if(parts.begin(), parts.end(),
                                 [&](const Partition& p) { return p.name == old.name; });
    if (!old.admin.empty() && (it == parts.end() || it->admin != old.admin))
      fx.journal(journal::Partition{old.name});
  }

  next.state_dir = config_.state_dir;
  config_ = std::move(next);
  partitions_ = PartitionTable(std::move(parts));
  if (config_.limits && acct_.data()) {
    const json usage = usage_record();
    acct_.set_tree(config_.limits->fairshare_tree());
    restore_usage(usage);
  }
  acct_.forget_submit_usage();
  full_pass_needed_ = true;
  fx.notify(notice::Reschedule{});
  return "";
}

}  // namespace drover::ctld
