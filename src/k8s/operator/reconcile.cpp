#include "k8s/operator/reconcile.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <ctime>
#include <set>
#include <tuple>

namespace drover::k8s::op {

using nlohmann::json;

std::string format_rfc3339(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int64_t parse_rfc3339(const std::string& s) {
  std::tm tm{};
  int y, mo, d, h, mi, sec;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6) return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm));
}

namespace {

// j[key] when it is an object, else an empty object; no copies (a pass reads every pod).
const json& child(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

// Drains the operator sets because of the Kubernetes node ("kubernetes node N cordoned",
// "kubernetes node N condition T", "kubernetes node N spot interruption (taint K)") or of the
// pod's DisruptionTarget condition: lifted when the node or pod is fine again.
constexpr const char* kPodDisruptionPrefix = "pod DisruptionTarget: ";
bool is_k8s_node_reason(const std::string& r) {
  return r.rfind("kubernetes node ", 0) == 0 || r.rfind(kPodDisruptionPrefix, 0) == 0;
}

// What a disruption taint means, in the words of a drain reason.
std::string taint_meaning(const std::string& key) {
  static const std::pair<const char*, const char*> known[] = {
      {"ToBeDeletedByClusterAutoscaler", "removed by the cluster autoscaler"},
      {"karpenter.sh/disrupted", "disrupted by Karpenter"},
      {"cloud.google.com/impending-node-termination", "terminating"},
      {"aws-node-termination-handler/spot-itn", "spot interruption"},
      {"aws-node-termination-handler/asg-lifecycle-termination", "ASG termination"},
      {"aws-node-termination-handler/scheduled-maintenance", "scheduled maintenance"},
      {"aws-node-termination-handler/rebalance-recommendation", "rebalance recommendation"},
  };
  for (const auto& [k, meaning] : known)
    if (key == k) return meaning;
  return "going away";
}

bool operator_drained(const DroverNode* dn, const char* reason) {
  return dn && dn->drain && dn->reason_by == ReasonBy::Operator && dn->reason == reason;
}

// A drover node that is up and taking work.
bool usable(const DroverNode* dn) {
  return dn && dn->registered && !dn->drain && !dn->not_responding &&
         dn->state != NodeState::Down && dn->state != NodeState::Future;
}

// The latest expected end of the node's jobs; unknown ends count as never.
int64_t latest_end(const DroverNode& dn) {
  int64_t end = 0;
  for (const JobOnNode& j : dn.jobs)
    end = std::max(end, j.expected_end > 0 ? j.expected_end : INT64_MAX);
  return end;
}

std::string fmt_duration(int64_t s) {
  if (s % 3600 == 0 && s >= 3600) return std::to_string(s / 3600) + "h";
  if (s % 60 == 0 && s >= 60) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

struct PodView {
  const json* pod = nullptr;
  std::string name, uid, phase, node_name, hash;
  int ordinal = -1;
  bool terminating = false;
  bool ready = false;
  bool failing = false;    // a container cannot start (crash loop, image pull)
  std::string disruption;  // the reason of a True DisruptionTarget condition ("" when none)
  int64_t started = -1;
  const DroverNode* dn = nullptr;
  bool gone = false;     // deleted (or marked lost) in this pass
  bool handled = false;  // drained or deleted in this pass: later steps leave it alone
};

class Pass {
 public:
  Pass(const NodeSetSpec& spec, const Observed& obs, int64_t now)
      : spec_(spec), obs_(obs), now_(now), hash_(template_hash(spec.pod_template)) {
    if (spec.status.value("templateHash", "") == hash_)
      prev_failures_ = spec.status.value("rolloutFailures", 0);
  }

  std::vector<Action> run();

 private:
  const NodeSetSpec& spec_;
  const Observed& obs_;
  int64_t now_;
  std::string hash_;
  std::vector<PodView> pods_;
  std::vector<Action> out_;
  std::set<std::string> nodes_deleted_;  // drover nodes deleted in this pass
  std::vector<std::string> degraded_;    // pods of the current template that fail now
  std::set<std::string> foreign_;        // pods with one of our names but not our label
  std::set<uint32_t> jobs_ended_;        // jobs requeued or cancelled in this pass
  // Pods of the current template that failed and were replaced during this rollout (kept in
  // status.rolloutFailures, as the pods themselves are gone).
  int prev_failures_ = 0, new_failures_ = 0;

  ObjectRef nodeset_ref() const { return {kKind, spec_.name, spec_.uid}; }
  ObjectRef pod_ref(const PodView& p) const { return {"Pod", p.name, p.uid}; }
  void event(ObjectRef ref, const char* type, std::string reason, std::string msg) {
    out_.push_back(EmitEvent{std::move(ref), type, std::move(reason), std::move(msg)});
  }
  const DroverNode* drover_node(const std::string& name) const {
    auto it = obs_.drover.nodes.find(name);
    if (it == obs_.drover.nodes.end() || !it->second.dynamic) return nullptr;
    return &it->second;
  }
  // Why the Kubernetes node should not run work ("" when it may): cordoned, or one of the
  // spec's drainOnNodeConditions is True.
  std::string k8s_drain_cause(const std::string& node) const {
    auto it = obs_.k8s_nodes.find(node);
    if (it == obs_.k8s_nodes.end()) return "";
    const json& n = it->second;
    if (n.contains("spec") && n["spec"].is_object() && n["spec"].value("unschedulable", false))
      return "kubernetes node " + node + " cordoned";
    const json& st = child(n, "status");
    if (st.is_object() && st.contains("conditions") && st["conditions"].is_array())
      for (const std::string& type : spec_.drain_on_node_conditions)
        for (const json& c : st["conditions"])
          if (c.value("type", "") == type && c.value("status", "") == "True")
            return "kubernetes node " + node + " condition " + type;
    return "";
  }
  // Why the pod's machine is about to go away ("" when it is not): a disruption taint on its
  // Kubernetes node, or the pod's own DisruptionTarget condition.
  std::string disruption_cause(const PodView& p) const {
    if (!p.disruption.empty()) return kPodDisruptionPrefix + p.disruption;
    auto it = obs_.k8s_nodes.find(p.node_name);
    if (p.node_name.empty() || it == obs_.k8s_nodes.end()) return "";
    const json& spec = child(it->second, "spec");
    if (!spec.contains("taints") || !spec["taints"].is_array()) return "";
    for (const std::string& key : spec_.disruption_taints)
      for (const json& t : spec["taints"])
        if (t.is_object() && t.value("key", "") == key)
          return "kubernetes node " + p.node_name + " " + taint_meaning(key) + " (taint " + key +
                 ")";
    return "";
  }
  bool active(const PodView& p) const {
    return !p.gone && !p.terminating && p.phase != "Failed" && p.phase != "Succeeded";
  }
  const char* victim_reason() const {
    return spec_.deleting ? kReasonNodeSetDeleted : kReasonScaleIn;
  }
  // A powered-down slot of an autoscaled set: a drover node the operator created State=CLOUD
  // for an ordinal below maxReplicas, that no agent has registered as and that runs nothing.
  // It stays while the set autoscales; its name is free for a pod.
  bool is_slot(const std::string& name, const DroverNode& dn) const {
    if (!spec_.autoscaling || spec_.deleting || dn.registered || dn.busy()) return false;
    const int o = pod_ordinal(spec_.name, name);
    return o >= 0 && o < spec_.autoscaling->max_replicas;
  }
  bool is_victim(const PodView& p) const {
    return operator_drained(p.dn, kReasonScaleIn) || operator_drained(p.dn, kReasonNodeSetDeleted);
  }
  void delete_pod(PodView& p) {
    out_.push_back(DeletePod{p.name, p.uid});
    p.gone = p.handled = true;
  }

  void build_views();
  void lost_nodes_and_pods();
  void scale();
  void drain_timeouts(PodView& p);
  // Requeues the node's jobs that allow it (when `requeue`) and cancels the others, each once
  // a pass; `why` goes to the job, `short_why` to the pod's events.
  void end_jobs(const PodView& p, const std::string& why, const char* event_reason, bool requeue,
                const std::string& short_why);
  void disruptions();
  void rolling_update();
  void cordon();
  void features();
  void pod_conditions_and_labels();
  void pdb();
  void status();
  // Ordering key for victims: cheapest to remove first.
  std::tuple<int, int64_t, int, int> victim_key(const PodView& p) const;
};

void Pass::build_views() {
  for (const json& pod : obs_.pods) {
    PodView v;
    v.pod = &pod;
    const json& meta = child(pod, "metadata");
    v.name = meta.value("name", "");
    v.ordinal = pod_ordinal(spec_.name, v.name);
    if (v.ordinal < 0) continue;  // not one of this NodeSet's names
    const json& labels = child(meta, "labels");
    if (!labels.is_object() || labels.value(kNodeSetLabel, "") != spec_.name) {
      foreign_.insert(v.name);
      continue;
    }
    v.uid = meta.value("uid", "");
    v.terminating = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
    v.hash = labels.value(kHashLabel, "");
    const json& spec = child(pod, "spec");
    v.node_name = spec.value("nodeName", "");
    const json& st = child(pod, "status");
    v.phase = st.value("phase", "Pending");
    if (st.contains("startTime") && st["startTime"].is_string())
      v.started = parse_rfc3339(st["startTime"].get<std::string>());
    if (st.contains("conditions") && st["conditions"].is_array())
      for (const json& c : st["conditions"]) {
        const std::string type = c.value("type", "");
        if (type == "Ready") v.ready = c.value("status", "") == "True";
        if (type == "DisruptionTarget" && c.value("status", "") == "True")
          v.disruption = c.value("reason", "Unknown");
      }
    if (st.contains("containerStatuses") && st["containerStatuses"].is_array())
      for (const json& cs : st["containerStatuses"])
        if (cs.contains("state") && cs["state"].contains("waiting")) {
          const std::string why = cs["state"]["waiting"].value("reason", "");
          if (why == "CrashLoopBackOff" || why == "ImagePullBackOff" || why == "ErrImagePull" ||
              why == "InvalidImageName" || why == "CreateContainerConfigError")
            v.failing = true;
        }
    v.dn = drover_node(v.name);
    pods_.push_back(std::move(v));
  }
  std::sort(pods_.begin(), pods_.end(),
            [](const PodView& a, const PodView& b) { return a.ordinal < b.ordinal; });
}

// A pod that is gone, going, failed or on a vanished machine: its drover node goes DOWN now (its
// jobs are requeued or fail as for a failed node) rather than after SlurmdTimeout.
void Pass::lost_nodes_and_pods() {
  std::set<std::string> pod_names;
  for (const PodView& p : pods_) pod_names.insert(p.name);
  for (const auto& [name, dn] : obs_.drover.nodes) {
    if (!dn.dynamic || pod_ordinal(spec_.name, name) < 0 || pod_names.count(name)) continue;
    if (is_slot(name, dn)) continue;
    if (dn.busy()) {
      if (dn.state != NodeState::Down) {
        out_.push_back(DownNode{name, "pod " + name + " deleted"});
        event(nodeset_ref(), "Warning", "NodeDown",
              "drover node " + name + " marked down: its pod was deleted");
      }
    } else {
      out_.push_back(DeleteDroverNode{name});
      event(nodeset_ref(), "Normal", "NodeRemoved",
            "drover node " + name + " deleted: its pod is gone");
      nodes_deleted_.insert(name);
    }
  }
  for (PodView& p : pods_) {
    const bool current = p.hash == hash_;
    const bool machine_gone = !p.node_name.empty() && !obs_.k8s_nodes.count(p.node_name);
    // Down unless already down, or drained and empty: no job may start on an agent that is
    // going away.
    const bool take_down = p.dn && p.dn->state != NodeState::Down && (p.dn->busy() || !p.dn->drain);
    if (p.terminating) {
      if (take_down) {
        out_.push_back(DownNode{p.name, "pod " + p.name + " deleted"});
        event(pod_ref(p), "Warning", "NodeDown", "drover node marked down: pod deleted");
      }
      continue;
    }
    if (machine_gone) {
      if (p.dn && p.dn->state != NodeState::Down) {
        out_.push_back(DownNode{p.name, "kubernetes node " + p.node_name + " gone"});
      }
      event(pod_ref(p), "Warning", "NodeGone",
            "replaced: kubernetes node " + p.node_name + " is gone");
      delete_pod(p);
      continue;
    }
    if (p.phase == "Failed" || p.phase == "Succeeded") {
      if (take_down) out_.push_back(DownNode{p.name, "pod " + p.name + " " + p.phase});
      if (current) {
        degraded_.push_back(p.name);
        ++new_failures_;
      }
      event(pod_ref(p), "Warning", "Recreate",
            "replaced: pod " + std::string(p.phase == "Failed" ? "failed" : "exited"));
      delete_pod(p);
      continue;
    }
    if (p.phase == "Running" && !(p.dn && p.dn->registered) && p.started >= 0 &&
        now_ - std::max(p.started, obs_.drover.controller_start) >= spec_.registration_timeout) {
      if (current) {
        degraded_.push_back(p.name);
        ++new_failures_;
      }
      event(pod_ref(p), "Warning", "RegistrationTimeout",
            "replaced: never registered within " + fmt_duration(spec_.registration_timeout));
      delete_pod(p);
      continue;
    }
    if (current && p.failing) degraded_.push_back(p.name);
  }
}

std::tuple<int, int64_t, int, int> Pass::victim_key(const PodView& p) const {
  int cls;
  int64_t end = 0;
  if (!p.dn || !p.dn->registered)
    cls = 0;
  else if (p.dn->state == NodeState::Down || p.dn->not_responding)
    cls = 1;
  else if (!p.dn->busy())
    cls = p.dn->drain ? 2 : 3;
  else {
    cls = 4;
    end = latest_end(*p.dn);
  }
  return {cls, end, p.hash == hash_ ? 1 : 0, -p.ordinal};
}

void Pass::scale() {
  const int desired = spec_.deleting ? 0 : spec_.replicas;
  std::vector<PodView*> kept, victims;
  for (PodView& p : pods_) {
    if (!active(p)) continue;
    (is_victim(p) ? victims : kept).push_back(&p);
  }
  int have = static_cast<int>(kept.size());
  if (have < desired) {
    // A victim still draining is cheaper to keep than a new pod: busy ones first, as resuming
    // them spares their jobs the drain timeout.
    std::vector<PodView*> resumable;
    for (PodView* v : victims)
      if (k8s_drain_cause(v->node_name).empty() && disruption_cause(*v).empty())
        resumable.push_back(v);
    std::stable_sort(resumable.begin(), resumable.end(),
                     [](PodView* a, PodView* b) { return a->dn->busy() > b->dn->busy(); });
    for (PodView* v : resumable) {
      if (have >= desired) break;
      out_.push_back(ResumeNode{v->name});
      event(pod_ref(*v), "Normal", "ScaleInCancelled", "resumed: needed again");
      v->handled = true;
      ++have;
    }
    std::set<int> used;
    for (const PodView& p : pods_) used.insert(p.ordinal);
    for (const std::string& name : foreign_) used.insert(pod_ordinal(spec_.name, name));
    for (const auto& [name, dn] : obs_.drover.nodes) {
      int o = pod_ordinal(spec_.name, name);
      if (o >= 0 && !nodes_deleted_.count(name) && !is_slot(name, dn)) used.insert(o);
    }
    int ordinal = 0;
    std::string created;
    for (; have < desired; ++have) {
      while (used.count(ordinal)) ++ordinal;
      out_.push_back(CreatePod{make_pod(spec_, ordinal)});
      created += (created.empty() ? "" : ", ") + pod_name(spec_.name, ordinal);
      used.insert(ordinal);
    }
    if (!created.empty()) event(nodeset_ref(), "Normal", "Created", "created pods " + created);
  } else if (have > desired) {
    std::sort(kept.begin(), kept.end(),
              [&](PodView* a, PodView* b) { return victim_key(*a) < victim_key(*b); });
    const char* reason = victim_reason();
    for (int i = 0; i < have - desired; ++i) {
      PodView& p = *kept[i];
      // A pod whose powered-down node never registered holds nothing to drain.
      if (!p.dn || (spec_.autoscaling && !p.dn->registered && !p.dn->busy())) {
        event(pod_ref(p), "Normal", "ScaleIn",
              std::string("deleting: ") + reason + " (not registered)");
        delete_pod(p);
      } else {
        std::string msg = std::string("draining for ") + reason;
        if (p.dn->drain && !p.dn->reason.empty()) msg += " (was drained: " + p.dn->reason + ")";
        out_.push_back(DrainNode{p.name, reason});
        event(pod_ref(p), "Normal", "Draining", msg);
        p.handled = true;
      }
    }
  }

  // Victims that are empty go; busy ones wait for their jobs, up to maxDrainTime.
  for (PodView* v : victims) {
    if (v->handled) continue;
    if (!v->dn->busy()) {
      event(pod_ref(*v), "Normal", "Deleting", "deleting: drained for " + v->dn->reason);
      delete_pod(*v);
    } else {
      drain_timeouts(*v);
    }
  }
}

void Pass::drain_timeouts(PodView& p) {
  if (spec_.max_drain_time < 0 || spec_.drain_timeout_policy == DrainTimeoutPolicy::Wait) return;
  if (now_ - p.dn->reason_since < spec_.max_drain_time) return;
  const std::string why = "node " + p.name + " drained for " + p.dn->reason + ": maxDrainTime " +
                          fmt_duration(spec_.max_drain_time) + " reached";
  end_jobs(p, why, "DrainTimeout", spec_.drain_timeout_policy == DrainTimeoutPolicy::Requeue,
           "maxDrainTime reached");
  p.handled = true;
}

void Pass::end_jobs(const PodView& p, const std::string& why, const char* event_reason,
                    bool requeue, const std::string& short_why) {
  for (const JobOnNode& j : p.dn->jobs) {
    if (j.ending || !jobs_ended_.insert(j.id).second) continue;
    if (requeue && j.requeueable) {
      out_.push_back(RequeueJob{j.id, why});
      event(pod_ref(p), "Warning", event_reason,
            "requeued job " + std::to_string(j.id) + ": " + short_why);
    } else {
      out_.push_back(CancelJob{j.id, why});
      event(pod_ref(p), "Warning", event_reason,
            "cancelled job " + std::to_string(j.id) + ": " + short_why);
    }
  }
}

// A pod whose machine is about to go away (a spot notice, an autoscaler's scale-down, the pod's
// DisruptionTarget condition) takes no new work and its jobs go back to the queue now, while
// they can still be stopped cleanly, rather than fail with the node. The drain says why; it
// replaces a cordon's (it says more) but not a drain of anyone else's or for another purpose
// (an administrator's, scale-in, a rolling update), whose jobs end all the same.
void Pass::disruptions() {
  for (PodView& p : pods_) {
    if (!active(p) || !p.dn || !p.dn->registered || p.dn->state == NodeState::Down) continue;
    const std::string cause = disruption_cause(p);
    if (cause.empty()) continue;
    const bool ours_to_set =
        !p.dn->drain || (p.dn->reason_by == ReasonBy::Operator && is_k8s_node_reason(p.dn->reason));
    if (!p.handled && ours_to_set && p.dn->reason != cause) {
      out_.push_back(DrainNode{p.name, cause});
      event(pod_ref(p), "Warning", "Disruption", "draining: " + cause);
      p.handled = true;
    }
    end_jobs(p, "node " + p.name + " drained: " + cause, "Disruption", true, cause);
  }
}

void Pass::rolling_update() {
  if (spec_.deleting) return;
  std::vector<PodView*> outdated;
  int available = 0;
  for (PodView& p : pods_) {
    if (!active(p) || is_victim(p)) continue;
    const bool current = p.hash == hash_;
    if (operator_drained(p.dn, kReasonRollingUpdate)) {
      if (p.handled) continue;
      if (current) {
        // The template went back to this pod's: it no longer needs replacing.
        out_.push_back(ResumeNode{p.name});
        p.handled = true;
      } else if (!p.dn->busy()) {
        event(pod_ref(p), "Normal", "Replacing", "replacing: pod template changed");
        delete_pod(p);
      }
      continue;
    }
    if (p.handled) continue;
    if (usable(p.dn)) ++available;
    if (!current && spec_.update_type == UpdateType::RollingUpdate) outdated.push_back(&p);
  }
  if (outdated.empty()) return;
  // Pods that never registered hold no work and are unavailable already: replace them now.
  std::vector<PodView*> registered;
  for (PodView* p : outdated) {
    if (p->dn && p->dn->registered) {
      registered.push_back(p);
    } else {
      event(pod_ref(*p), "Normal", "Replacing", "replacing: pod template changed");
      delete_pod(*p);
    }
  }
  // A failing pod of the new template stops the rollout: draining more would only take
  // working nodes away.
  if (!degraded_.empty() || prev_failures_ + new_failures_ > 0) return;
  int unavailable = std::max(0, spec_.replicas - available);
  int budget = spec_.max_unavailable_for(spec_.replicas) - unavailable;
  std::sort(registered.begin(), registered.end(),
            [&](PodView* a, PodView* b) { return victim_key(*a) < victim_key(*b); });
  for (PodView* p : registered) {
    if (budget <= 0) break;
    out_.push_back(DrainNode{p->name, kReasonRollingUpdate});
    event(pod_ref(*p), "Normal", "Draining", "draining for rolling update");
    p->handled = true;
    if (usable(p->dn)) --budget;
  }
}

// `kubectl cordon` (or a watched node condition) drains the drover nodes on that machine;
// uncordon resumes only what this did (an administrator's drain stays).
void Pass::cordon() {
  for (PodView& p : pods_) {
    if (!active(p) || p.handled || !p.dn || p.node_name.empty()) continue;
    const std::string cause = k8s_drain_cause(p.node_name);
    if (!cause.empty() && !p.dn->drain && p.dn->state != NodeState::Down) {
      out_.push_back(DrainNode{p.name, cause});
      event(pod_ref(p), "Normal", "Draining", "draining: " + cause);
      p.handled = true;
    } else if (cause.empty() && p.dn->drain && p.dn->reason_by == ReasonBy::Operator &&
               is_k8s_node_reason(p.dn->reason) && disruption_cause(p).empty()) {
      out_.push_back(ResumeNode{p.name});
      const std::string& r = p.dn->reason;
      event(pod_ref(p), "Normal", "Resumed",
            r.ends_with(" cordoned") ? "resumed: kubernetes node " + p.node_name + " uncordoned"
            : r.ends_with(")") || r.starts_with(kPodDisruptionPrefix)
                ? "resumed: no longer going away (was: " + r + ")"
                : "resumed: kubernetes node " + p.node_name + " healthy again");
      p.handled = true;
    }
  }
}

void Pass::features() {
  for (PodView& p : pods_) {
    if (!active(p) || !p.dn || !p.dn->registered || p.node_name.empty()) continue;
    auto it = obs_.k8s_nodes.find(p.node_name);
    if (it == obs_.k8s_nodes.end()) continue;
    std::vector<std::string> want = spec_.features;
    const json& labels = child(child(it->second, "metadata"), "labels");
    for (const std::string& key : spec_.features_from_node_labels)
      if (labels.contains(key) && labels[key].is_string() &&
          !labels[key].get<std::string>().empty())
        want.push_back(labels[key].get<std::string>());
    std::vector<std::string> a = want, b = p.dn->features;
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    if (a != b) out_.push_back(SetNodeFeatures{p.name, a});
  }
}

void Pass::pod_conditions_and_labels() {
  for (PodView& p : pods_) {
    if (p.gone || p.terminating) continue;
    std::string status = "False", reason, message;
    const DroverNode* dn = p.dn;
    if (!dn || !dn->registered || dn->state == NodeState::Future) {
      reason = "Unregistered";
      message = "waiting for droverd to register";
    } else if (dn->state == NodeState::Down) {
      reason = "Down";
      message = dn->reason;
    } else if (dn->not_responding) {
      reason = "NotResponding";
    } else if (dn->drain) {
      reason = "Drain";
      message = dn->reason;
    } else {
      status = "True";
      reason = dn->state == NodeState::Idle    ? "Idle"
               : dn->state == NodeState::Mixed ? "Mixed"
                                               : "Allocated";
    }
    const json* old = nullptr;
    const json& st = child(*p.pod, "status");
    if (st.contains("conditions") && st["conditions"].is_array())
      for (const json& c : st["conditions"])
        if (c.value("type", "") == kNodeStateCondition) old = &c;
    if (!old || old->value("status", "") != status || old->value("reason", "") != reason ||
        old->value("message", "") != message) {
      std::string since = old && old->value("status", "") == status
                              ? old->value("lastTransitionTime", format_rfc3339(now_))
                              : format_rfc3339(now_);
      json c = {{"type", kNodeStateCondition},
                {"status", status},
                {"reason", reason},
                {"message", message},
                {"lastTransitionTime", since}};
      out_.push_back(PatchPodConditions{p.name, json::array({c})});
    }

    // Busy pods carry the label the PDB selects and the annotations the cluster autoscalers
    // read; written only when they change (a pod turns busy or idle), in one patch.
    const json& meta = child(*p.pod, "metadata");
    const json& labels = child(meta, "labels");
    const json& annotations = child(meta, "annotations");
    const bool want = spec_.workload_protection && dn && dn->busy();
    json label_patch = json::object(), annotation_patch = json::object();
    if (want && labels.value(kBusyLabel, "") != "true") label_patch[kBusyLabel] = "true";
    if (!want && labels.contains(kBusyLabel)) label_patch[kBusyLabel] = nullptr;
    // An annotation the template sets is the user's: left as it is.
    const json& own = child(child(spec_.pod_template, "metadata"), "annotations");
    for (const auto& [key, busy_value] :
         {std::pair{kSafeToEvictAnnotation, "false"}, std::pair{kDoNotDisruptAnnotation, "true"}}) {
      if (own.contains(key)) continue;
      if (want && annotations.value(key, "") != busy_value) annotation_patch[key] = busy_value;
      if (!want && annotations.contains(key)) annotation_patch[key] = nullptr;
    }
    if (!label_patch.empty() || !annotation_patch.empty())
      out_.push_back(PatchPodLabels{p.name, label_patch, annotation_patch});
  }
}

// Busy pods are covered by a budget that allows no disruption, so the eviction API (kubectl
// drain, the cluster autoscaler) refuses them; idle pods match no budget and are evicted.
void Pass::pdb() {
  const std::string name = spec_.name + "-busy";
  if (!spec_.workload_protection || spec_.deleting) {
    if (obs_.pdb) out_.push_back(DeletePDB{name});
    return;
  }
  json want_spec = {
      {"maxUnavailable", 0},
      {"selector", {{"matchLabels", {{kNodeSetLabel, spec_.name}, {kBusyLabel, "true"}}}}},
      // Busy pods that are not Ready (a draining node) stay protected too.
      {"unhealthyPodEvictionPolicy", "IfHealthyBudget"}};
  if (obs_.pdb && obs_.pdb->contains("spec")) {
    const json& have = (*obs_.pdb)["spec"];
    if (have.value("maxUnavailable", json()) == want_spec["maxUnavailable"] &&
        have.value("selector", json()) == want_spec["selector"] &&
        have.value("unhealthyPodEvictionPolicy", json()) == want_spec["unhealthyPodEvictionPolicy"])
      return;
  }
  json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata",
               {{"name", name},
                {"namespace", spec_.ns},
                {"labels", {{kNodeSetLabel, spec_.name}}},
                {"ownerReferences", json::array({{{"apiVersion", kApiVersion},
                                                  {"kind", kKind},
                                                  {"name", spec_.name},
                                                  {"uid", spec_.uid},
                                                  {"controller", true}}})}}},
              {"spec", want_spec}};
  out_.push_back(ApplyPDB{pdb});
}

void Pass::status() {
  const int desired = spec_.deleting ? 0 : spec_.replicas;
  int replicas = 0, ready = 0, updated = 0;
  for (const PodView& p : pods_) {
    if (p.terminating) continue;
    ++replicas;
    if (p.ready) ++ready;
    if (p.hash == hash_) ++updated;
  }
  int idle = 0, allocated = 0, mixed = 0, drained = 0, down = 0;
  bool draining = false;
  for (const auto& [name, dn] : obs_.drover.nodes) {
    if (!dn.dynamic || pod_ordinal(spec_.name, name) < 0) continue;
    if (dn.state == NodeState::Down || dn.not_responding)
      ++down;
    else if (dn.drain) {
      ++drained;
      if (dn.reason_by == ReasonBy::Operator && !is_k8s_node_reason(dn.reason)) draining = true;
    } else if (!dn.registered || dn.state == NodeState::Future)
      continue;
    else if (dn.state == NodeState::Idle)
      ++idle;
    else if (dn.state == NodeState::Mixed)
      ++mixed;
    else
      ++allocated;
  }
  const int available = idle + mixed + allocated;
  const json old = spec_.status.value("conditions", json::array());
  auto cond = [&](const char* type, bool on, const std::string& reason, const std::string& msg) {
    std::string st = on ? "True" : "False";
    std::string since = format_rfc3339(now_);
    for (const json& c : old)
      if (c.value("type", "") == type && c.value("status", "") == st)
        since = c.value("lastTransitionTime", since);
    return json{{"type", type},
                {"status", st},
                {"reason", reason},
                {"message", msg},
                {"lastTransitionTime", since},
                {"observedGeneration", spec_.generation}};
  };
  const int min_available = std::max(0, desired - spec_.max_unavailable_for(desired));
  const bool is_available = available >= min_available && (desired == 0 || available > 0);
  std::string progress_reason = "Complete";
  if (spec_.deleting)
    progress_reason = "Deleting";
  else if (updated < replicas)
    progress_reason = "RollingUpdate";
  else if (replicas < desired)
    progress_reason = "ScalingUp";
  else if (replicas > desired || draining)
    progress_reason = "ScalingDown";
  // Failures count while pods of an older template remain; a finished rollout forgets them.
  const int failures = updated < replicas ? prev_failures_ + new_failures_ : 0;
  const bool degraded = !degraded_.empty() || failures > 0;
  std::string degraded_msg;
  for (const std::string& n : degraded_) degraded_msg += (degraded_msg.empty() ? "" : ", ") + n;
  if (!degraded_msg.empty()) degraded_msg = "pods of the current template failing: " + degraded_msg;
  if (failures > 0)
    degraded_msg += (degraded_msg.empty() ? "" : "; ") + std::to_string(failures) +
                    " pod(s) of the current template failed during this rollout";

  json st = {
      {"replicas", replicas},
      {"readyReplicas", ready},
      {"updatedReplicas", updated},
      {"idle", idle},
      {"allocated", allocated},
      {"mixed", mixed},
      {"drained", drained},
      {"down", down},
      {"observedGeneration", spec_.generation},
      {"selector", spec_.selector()},
      {"templateHash", hash_},
      {"rolloutFailures", failures},
      {"conditions",
       json::array(
           {cond("Available", is_available,
                 is_available ? "MinimumNodesAvailable" : "NotEnoughNodes",
                 std::to_string(available) + " of " + std::to_string(desired) + " nodes available"),
            cond("Progressing", progress_reason != "Complete", progress_reason, ""),
            cond("Degraded", degraded, degraded ? "PodsFailing" : "AsExpected", degraded_msg)})}};
  if (st == spec_.status) return;
  bool was_degraded = false;
  for (const json& c : old)
    if (c.value("type", "") == "Degraded" && c.value("status", "") == "True") was_degraded = true;
  if (degraded && !was_degraded)
    event(nodeset_ref(), "Warning", "Degraded",
          degraded_msg + (updated < replicas ? "; rolling update stopped" : ""));
  out_.push_back(UpdateStatus{st});
}

std::vector<Action> Pass::run() {
  if (!spec_.deleting && !spec_.has_finalizer) out_.push_back(SetFinalizer{true});
  build_views();
  lost_nodes_and_pods();
  scale();
  rolling_update();
  disruptions();
  cordon();
  features();
  pod_conditions_and_labels();
  pdb();
  status();
  if (spec_.deleting && spec_.has_finalizer) {
    bool any = !pods_.empty();
    for (const auto& [name, dn] : obs_.drover.nodes)
      if (dn.dynamic && pod_ordinal(spec_.name, name) >= 0 && !nodes_deleted_.count(name))
        any = true;
    if (!any) {
      out_.push_back(SetFinalizer{false});
      event(nodeset_ref(), "Normal", "Deleted", "all nodes drained and their pods deleted");
    }
  }
  return std::move(out_);
}

// The template already says where droverd serves its vouching socket (--auth-socket, or the
// variable that stands for it).
bool names_auth_socket(const json& c, const json& env) {
  for (const char* k : {"command", "args"})
    if (c.contains(k) && c[k].is_array())
      for (const json& a : c[k])
        if (a.is_string() && a.get<std::string>().rfind("--auth-socket", 0) == 0) return true;
  for (const json& e : env)
    if (e.is_object() && e.value("name", "") == "DROVER_AUTH_SOCKET") return true;
  return false;
}

// srun inside a job gets its credential from the agent's vouching socket: droverd serves it in
// an emptyDir (writable whatever the image, reachable by the jobs' users) and its jobs are told
// where (agent/launch.hpp NodeConnection). No privilege is added.
void add_auth_socket(json& ps, json& c, json& env) {
  env.push_back(
      {{"name", "DROVER_AUTH_SOCKET"}, {"value", std::string(kAuthSocketDir) + "/auth.sock"}});
  json mounts = c.contains("volumeMounts") && c["volumeMounts"].is_array() ? c["volumeMounts"]
                                                                           : json::array();
  for (const json& m : mounts)
    if (m.is_object() && m.value("mountPath", "") == kAuthSocketDir) return;
  mounts.push_back({{"name", kAuthSocketVolume}, {"mountPath", kAuthSocketDir}});
  c["volumeMounts"] = mounts;
  json volumes = ps.contains("volumes") && ps["volumes"].is_array() ? ps["volumes"] : json::array();
  for (const json& v : volumes)
    if (v.is_object() && v.value("name", "") == kAuthSocketVolume) return;
  volumes.push_back({{"name", kAuthSocketVolume}, {"emptyDir", json::object()}});
  ps["volumes"] = volumes;
}

}  // namespace

json make_pod(const NodeSetSpec& spec, int ordinal) {
  const std::string name = pod_name(spec.name, ordinal);
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
  json meta = spec.pod_template.value("metadata", json::object());
  meta.erase("name");
  meta.erase("generateName");
  meta["name"] = name;
  meta["namespace"] = spec.ns;
  if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
  meta["labels"][kNodeSetLabel] = spec.name;
  meta["labels"][kHashLabel] = template_hash(spec.pod_template);
  meta["ownerReferences"] = json::array({{{"apiVersion", kApiVersion},
                                          {"kind", kKind},
                                          {"name", spec.name},
                                          {"uid", spec.uid},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  pod["metadata"] = meta;
  json ps = spec.pod_template.value("spec", json::object());
  ps["hostname"] = name;
  json gates = ps.contains("readinessGates") && ps["readinessGates"].is_array()
                   ? ps["readinessGates"]
                   : json::array();
  gates.push_back({{"conditionType", kNodeStateCondition}});
  ps["readinessGates"] = gates;
  std::string partitions;
  for (size_t i = 0; i < spec.partitions.size(); ++i)
    partitions += (i ? "," : "") + spec.partitions[i];
  json& c = ps["containers"][0];
  json env = c.contains("env") && c["env"].is_array() ? c["env"] : json::array();
  env.push_back({{"name", "DROVER_NODE_NAME"},
                 {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}});
  env.push_back({{"name", "DROVER_NODE_CONF"},
                 {"value", node_conf_line(shape_from_pod_spec(ps), spec.features)}});
  env.push_back({{"name", "DROVER_NODESET"}, {"value", spec.name}});
  env.push_back({{"name", "DROVER_PARTITIONS"}, {"value", partitions}});
  if (!names_auth_socket(c, env)) add_auth_socket(ps, c, env);
  c["env"] = env;
  pod["spec"] = ps;
  return pod;
}

std::vector<Action> reconcile(const NodeSetSpec& spec, const Observed& observed, int64_t now) {
  return Pass(spec, observed, now).run();
}

}  // namespace drover::k8s::op
