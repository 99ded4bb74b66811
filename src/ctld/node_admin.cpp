// Operators drain, down and resume nodes and set their features (scontrol update NodeName=...
// State=... AvailableFeatures=... ActiveFeatures=...). What they set is journaled as a "node"
// record and restored, so a drain survives a restart.
#include <algorithm>

#include "core/hostlist.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

json StateMachine::node_update(const proto::NodeUpdateRequest& req, const Caller& who, int64_t now,
                               Effects& fx) {
  if (!is_operator(who)) return error_reply(proto::Errno::kUserIdMissing);
  std::vector<std::string> names;
  try {
    names = core::expand_hostlist(req.nodes.value_or(""));
  } catch (const std::exception&) {
    return error_reply(proto::Errno::kInvalidNodeName);
  }
  if (names.empty()) return error_reply(proto::Errno::kInvalidNodeName);
  std::vector<core::Node*> targets;
  for (const auto& name : names) {
    core::Node* n = nodes_.get(name);
    if (n == nullptr) return error_reply(proto::Errno::kInvalidNodeName);
    targets.push_back(n);
  }
  const std::string state = req.state.value_or("");
  const std::string reason = req.reason.value_or("");
  // Features: present (even empty) means "set"; a comma-separated list as scontrol takes it.
  auto feature_list =
      [&](const std::optional<std::string>& given) -> std::optional<std::vector<std::string>> {
    if (!given) return std::nullopt;
    std::vector<std::string> out;
    std::string item;
    for (char ch : *given + ",") {
      if (ch != ',') {
        item += ch;
      } else if (!item.empty()) {
        if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
        item.clear();
      }
    }
    return out;
  };
  const auto avail = feature_list(req.features), active = feature_list(req.features_act);
  // Without a node-features plugin, as Slurm 22.05: new available features become the active
  // ones too, once the active ones so far are among them; new active features must be among the
  // available ones.
  auto subset = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
    for (const auto& x : a)
      if (std::find(b.begin(), b.end(), x) == b.end()) return false;
    return true;
  };
  // Checked for every node before any changes, so a refused request changes nothing.
  for (const core::Node* n : targets) {
    if ((state == "RESUME" || state == "IDLE") && !n->drain && !n->down)
      return error_reply(proto::Errno::kInvalidNodeState);
    // Power saving applies to powered-down (State=CLOUD) nodes no agent has registered as:
    // POWER_UP says their start was asked for (sinfo "#"), POWER_DOWN that it was given up.
    const bool power = state == "POWER_DOWN" || state == "POWER_UP";
    const NodeId id = nodes_.find(n->name);
    if (power && nodes_.cloud(id) && !n->registered) continue;
    if (state == "NORESP" || state == "FUTURE" || power)
      return error_reply(proto::Errno::kInvalidNodeState);
    const auto& new_avail = avail ? *avail : n->features;
    const auto& new_active = active ? *active : n->active_features;
    if ((avail || active) && !subset(new_active, new_avail))
      return error_reply(proto::Errno::kActiveFeatureNotSubset);
  }
  for (core::Node* n : targets) {
    auto set_reason = [&] {
      n->reason = reason;
      n->reason_uid = who.uid;
      n->reason_time = now;
    };
    if (state == "DRAIN" || state == "FAIL") {
      n->drain = true;
      set_reason();
    } else if (state == "DOWN") {
      n->down = true;
      n->not_responding = false;
      set_reason();
      fail_jobs_on(*n, now, fx);
    } else if (state == "RESUME" || state == "IDLE") {
      n->drain = false;
      n->down = false;
      n->reason.clear();
      n->reason_time = 0;
    } else if (state == "POWER_UP" || state == "POWER_DOWN") {
      nodes_.set_powering_up(nodes_.find(n->name), state == "POWER_UP");
    } else if (state == "UNDRAIN") {
      n->drain = false;
      if (!n->down) {
        n->reason.clear();
        n->reason_time = 0;
      }
    } else if (!reason.empty() && (n->drain || n->down)) {
      set_reason();  // a new reason for a node that is already out of service
    }
    if (avail) n->features = *avail;
    if (active)
      n->active_features = *active;
    else if (avail)
      n->active_features = *avail;
    if (avail || active) n->features_updated = true;
    fx.journal(journal::Node{n->name});
  }
  full_pass_needed_ = true;
  fx.notify(notice::Reschedule{});
  return proto::Ack{}.to_json();
}

void StateMachine::fail_jobs_on(const core::Node& node, int64_t now, Effects& fx) {
  for (uint64_t id : jobs_.active_ids()) {
    core::Job* found = jobs_.get(id);
    if (found == nullptr || !holds_resources(*found)) continue;
    core::Job& job = *found;
    bool on_node = false;
    for (const auto& a : job.alloc) on_node = on_node || a.node == node.name;
    if (!on_node) continue;
    if (job.completing) {
      processes_gone(job);
      fx.job_changed(id);
    } else if (job.spec.no_kill && job.state == core::JobState::Running &&
               job.batch_host != node.name && job.alloc.size() > 1) {
      // -k/--no-kill: as Slurm, the node leaves the allocation and the job goes on with the
      // rest (its steps there are lost; new steps use the nodes left).
      excise_node(job, node.name);
      fx.job_changed(id);
    } else if (requeue_allowed(job)) {
      // As Slurm with JobRequeue=1: the batch job runs again elsewhere, after a delay.
      requeue_job(job, now, 0, false, fx);
      jobs_.set_eligible_time(job, now + config_.requeue_delay_s);
      job.reason = "BeginTime";
    } else {
      end_job(job, core::JobState::NodeFail, "NodeDown", now, false, fx);
    }
    // Whatever still runs there is stopped (the agent may be alive: an operator downed it).
    fx.order(node.name, proto::Terminate{id, config_.kill_wait_s, std::nullopt, std::nullopt});
  }
}

void StateMachine::excise_node(core::Job& job, const std::string& node) {
  auto it = std::find_if(job.alloc.begin(), job.alloc.end(),
                         [&](const core::NodeAlloc& a) { return a.node == node; });
  if (it == job.alloc.end()) return;
  if (core::Node* n = nodes_.get(node)) n->discharge(*it);
  job.alloc.erase(it);
  full_pass_needed_ = true;
}

json StateMachine::node_admin_record(const std::string& name) const {
  const NodeId id = nodes_.find(name);
  if (id == kNoNode) return json::object();
  const core::Node& n = *nodes_.get(id);
  json r = {{"drain", n.drain},
            {"down", n.down && !n.not_responding},
            {"reason", n.reason},
            {"reason_uid", n.reason_uid},
            {"reason_time", n.reason_time}};
  if (n.features_updated) {
    r["features"] = n.features;
    r["active_features"] = n.active_features;
  }
  if (nodes_.dynamic(id)) {
    r["definition"] = nodes_.definition(id);
    r["id"] = id;
    r["future"] = nodes_.future(id);
  }
  return r;
}

void StateMachine::restore_node_admin(const std::string& name, const json& record) {
  core::Node* found = nodes_.get(name);
  if (found == nullptr) return;
  core::Node& n = *found;
  n.drain = record.value("drain", false);
  n.down = record.value("down", false);
  n.reason = record.value("reason", "");
  n.reason_uid = record.value("reason_uid", n.reason_uid);
  n.reason_time = record.value("reason_time", n.reason_time);
  if (record.contains("features")) {
    n.features = record.value("features", std::vector<std::string>{});
    n.active_features = record.value("active_features", n.features);
    n.features_updated = true;
  }
}

}  // namespace drover::ctld
