#include "ctld/k8s_operator.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <set>

#include "core/gres.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/events.hpp"
#include "k8s/client/informer.hpp"
#include "k8s/operator/decision_log.hpp"
#include "k8s/operator/reconcile.hpp"
#include "net/keys.hpp"

namespace drover::ctld {

using nlohmann::json;
namespace op = k8s::op;

namespace {

const k8s::Resource kNodeSets{"drover.io", "v1alpha1", "nodesets", true};
const k8s::Resource kSecrets{"", "v1", "secrets", true};

// The NodeSet a pod belongs to (its label; "" for none).
std::string nodeset_of(const json& pod) {
  return pod["metadata"].value("labels", json::object()).value(op::kNodeSetLabel, "");
}

// Actions are retried by the next pass (the reconciler sees what did not happen), so a failed
// one is logged, not retried here.
void log_failure(const op::Action& a, const std::exception& e) {
  spdlog::warn("k8s operator: {} failed: {}", op::describe(a), e.what());
}

}  // namespace

std::optional<K8sOperatorConfig> k8s_operator_config(const core::SlurmConf& conf,
                                                     const std::string& master_key) {
  K8sOperatorConfig c;
  c.ns = conf.get("DroverK8sNamespace", "");
  if (c.ns.empty()) return std::nullopt;
  c.kubeconfig = conf.get("DroverK8sKubeconfig", "");
  c.master_key = master_key;
  return c;
}

std::optional<proto::Request> drover_command(const op::Action& a) {
  return std::visit(
      [](const auto& x) -> std::optional<proto::Request> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, op::DrainNode>)
          return proto::NodeUpdateRequest{.nodes = x.node, .state = "DRAIN", .reason = x.reason};
        else if constexpr (std::is_same_v<T, op::ResumeNode>)
          return proto::NodeUpdateRequest{.nodes = x.node, .state = "RESUME"};
        else if constexpr (std::is_same_v<T, op::DownNode>)
          return proto::NodeUpdateRequest{.nodes = x.node, .state = "DOWN", .reason = x.reason};
        else if constexpr (std::is_same_v<T, op::DeleteDroverNode>)
          return proto::NodeDeleteRequest{.nodes = x.node};
        else if constexpr (std::is_same_v<T, op::SetNodeFeatures>) {
          std::string list;
          for (const auto& f : x.features) list += (list.empty() ? "" : ",") + f;
          // scontrol update AvailableFeatures= ActiveFeatures=: all of them active.
          return proto::NodeUpdateRequest{.nodes = x.node, .features = list, .features_act = list};
        } else if constexpr (std::is_same_v<T, op::RequeueJob>)
          return proto::ControlRequest{.action = "requeue", .jobs = {std::to_string(x.job)}};
        else if constexpr (std::is_same_v<T, op::CancelJob>) {
          proto::CancelRequest c;
          c.jobs = std::vector<std::string>{std::to_string(x.job)};
          return c;
        } else
          return std::nullopt;
      },
      a);
}

sched::NodeSetView nodeset_view(const op::NodeSetSpec& spec) {
  sched::NodeSetView v;
  v.name = spec.name;
  const op::NodeShape shape =
      op::shape_from_pod_spec(spec.pod_template.value("spec", json::object()));
  // As the agent registers it (node_conf_line): one socket of `cpus` cores.
  v.shape.name = spec.name;
  v.shape.cpus = shape.cpus;
  v.shape.cores_per_socket = shape.cpus;
  v.shape.real_memory_mb = std::max<int64_t>(1, shape.real_memory_mb);
  if (shape.gpus > 0) v.shape.gres = "gpu:" + std::to_string(shape.gpus);
  v.shape.features = spec.features;
  v.shape.active_features = spec.features;
  v.partitions = spec.partitions;
  v.cost = spec.cost;
  if (spec.autoscaling) {
    v.min_replicas = spec.autoscaling->min_replicas;
    v.max_replicas = spec.autoscaling->max_replicas;
    v.start_delay_s = spec.autoscaling->startup_time;
    v.idle_timeout_s = spec.autoscaling->idle_timeout;
  }
  return v;
}

std::optional<proto::Request> job_note_command(const op::Action& a) {
  auto note = [](uint32_t job, const std::string& why) {
    return proto::JobUpdateRequest{.jobs = {std::to_string(job)}, .set = {{"SystemComment", why}}};
  };
  if (const auto* x = std::get_if<op::RequeueJob>(&a)) return note(x->job, x->reason);
  if (const auto* x = std::get_if<op::CancelJob>(&a)) return note(x->job, x->reason);
  return std::nullopt;
}

std::string node_key_secret_name(const std::string& pod) { return pod + "-key"; }

json node_key_secret(const op::NodeSetSpec& spec, const std::string& pod, const std::string& key) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata",
           {{"name", node_key_secret_name(pod)},
            {"namespace", spec.ns},
            {"labels", {{op::kNodeSetLabel, spec.name}}},
            {"ownerReferences", json::array({{{"apiVersion", op::kApiVersion},
                                              {"kind", op::kKind},
                                              {"name", spec.name},
                                              {"uid", spec.uid}}})}}},
          {"type", "Opaque"},
          {"stringData", {{"key", key}}}};
}

void add_node_key_env(json& pod) {
  auto& containers = pod["spec"]["containers"];
  if (!containers.is_array() || containers.empty()) return;
  json& c = containers[0];
  if (!c.contains("env") || !c["env"].is_array()) c["env"] = json::array();
  const std::string name = pod["metadata"].value("name", "");
  c["env"].push_back(
      {{"name", "DROVER_NODE_KEY"},
       {"valueFrom", {{"secretKeyRef", {{"name", node_key_secret_name(name)}, {"key", "key"}}}}}});
}

struct K8sOperator::Impl {
  std::unique_ptr<k8s::Client> client;
  std::unique_ptr<k8s::EventRecorder> events;
  std::unique_ptr<k8s::Informer> nodesets, pods, nodes, pdbs;
};

K8sOperator::K8sOperator(K8sOperatorConfig cfg, K8sOperatorHost& host)
    : cfg_(std::move(cfg)), host_(host), impl_(std::make_unique<Impl>()) {}

K8sOperator::~K8sOperator() { stop(); }

void K8sOperator::start() {
  k8s::Config kc = k8s::default_config(cfg_.kubeconfig);
  // A pass writes a condition per pod whose node changed: client-go's 5 qps would make a
  // node's state reach its pod seconds late in a NodeSet of a few dozen (controller-runtime's
  // defaults instead).
  kc.qps = 20;
  kc.burst = 30;
  impl_->client = std::make_unique<k8s::Client>(std::move(kc));
  impl_->events = std::make_unique<k8s::EventRecorder>(*impl_->client);
  k8s::InformerHandlers h;
  h.on_add = [this](const json&) { poke(); };
  h.on_update = [this](const json&, const json&) { poke(); };
  h.on_delete = [this](const json&) { poke(); };
  h.on_synced = [this] { poke(); };
  h.on_error = [](const k8s::ApiError& e) { spdlog::warn("k8s operator: watch: {}", e.what()); };
  auto informer = [&](const k8s::Resource& r, const std::string& ns, const std::string& sel) {
    k8s::InformerOptions o;
    o.resource = r;
    o.ns = ns;
    o.label_selector = sel;
    return std::make_unique<k8s::Informer>(*impl_->client, o, h);
  };
  impl_->nodesets = informer(kNodeSets, cfg_.ns, "");
  impl_->pods = informer(k8s::resources::kPods, cfg_.ns, op::kNodeSetLabel);
  impl_->nodes = informer(k8s::resources::kNodes, "", "");
  impl_->pdbs = informer(k8s::resources::kPodDisruptionBudgets, cfg_.ns, "");
  for (auto* i : {&impl_->nodesets, &impl_->pods, &impl_->nodes, &impl_->pdbs}) (*i)->start();
  thread_ = std::thread([this] { run(); });
  spdlog::info("k8s operator: NodeSets in namespace {} on {}", cfg_.ns,
               impl_->client->config().server);
}

void K8sOperator::stop() {
  if (stop_.exchange(true)) return;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto* i : {&impl_->nodesets, &impl_->pods, &impl_->nodes, &impl_->pdbs})
    if (*i) (*i)->stop();
}

void K8sOperator::poke() {
  {
    std::lock_guard lock(mu_);
    dirty_ = true;
    demand_changed_ = true;
  }
  cv_.notify_one();
}

void K8sOperator::run() {
  // Time-driven decisions (registration timeouts, maxDrainTime) need a pass now and then even
  // when nothing changes.
  constexpr auto kResync = std::chrono::seconds(1);
  // Events come in bursts (a pod's status, then its node's state): one pass for the burst.
  constexpr auto kCoalesce = std::chrono::milliseconds(50);
  while (!stop_) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, kResync, [this] { return stop_ || dirty_; });
      if (stop_) break;
    }
    std::this_thread::sleep_for(kCoalesce);
    {
      std::lock_guard lock(mu_);
      dirty_ = false;
    }
    if (!impl_->nodesets->synced() || !impl_->pods->synced() || !impl_->nodes->synced() ||
        !impl_->pdbs->synced())
      continue;
    try {
      pass();
    } catch (const std::exception& e) {
      spdlog::warn("k8s operator: {}", e.what());
    }
  }
}

void K8sOperator::pass() {
  bool changed;
  {
    std::lock_guard lock(mu_);
    changed = std::exchange(demand_changed_, false);
  }
  const auto nodesets = impl_->nodesets->items();
  if (nodesets.empty()) {
    keep_view(nodesets, {}, {});
    return;
  }
  op::Observed base;
  base.drover = host_.snapshot();
  for (const json& n : impl_->nodes->items())
    base.k8s_nodes.emplace(n["metadata"].value("name", ""), n);
  const auto pods = impl_->pods->items();
  keep_view(nodesets, pods, base.drover);
  const auto pdbs = impl_->pdbs->items();
  const int64_t now = std::time(nullptr);
  // Autoscaling first, so that this pass's reconcile already acts on its replicas and on the
  // nodes it drained or created (in a fresh snapshot).
  try {
    if (autoscale(nodesets, pods, base.drover, now, changed)) base.drover = host_.snapshot();
  } catch (const std::exception& e) {
    spdlog::warn("k8s operator: autoscaling: {}", e.what());
  }
  // Pod conditions only report; a NodeSet of a thousand new pods has a thousand to write, at
  // the client's rate. They go last and for at most kConditionBudget a pass, so that a pod
  // deleted meanwhile has its node down at the next pass, not after all of them; the next pass
  // asks again for those not written.
  constexpr auto kConditionBudget = std::chrono::seconds(1);
  const auto deadline = std::chrono::steady_clock::now() + kConditionBudget;
  bool conditions_left = false;
  for (const json& obj : nodesets) {
    op::NodeSetSpec spec;
    try {
      spec = op::parse_nodeset(obj);
    } catch (const std::exception& e) {
      spdlog::warn("k8s operator: NodeSet {}: {}", obj["metadata"].value("name", ""), e.what());
      continue;
    }
    spec.replicas = effective_replicas(spec);
    op::Observed o;
    o.k8s_nodes = base.k8s_nodes;
    o.drover = base.drover;
    for (const json& p : pods)
      if (nodeset_of(p) == spec.name) o.pods.push_back(p);
    for (const json& p : pdbs)
      if (p["metadata"].value("name", "") == spec.name + "-busy") o.pdb = p;
    const auto actions = op::reconcile(spec, o, now);
    auto run = [&](const op::Action& a) {
      spdlog::info("k8s operator: NodeSet {}: {}", spec.name, op::describe(a));
      try {
        execute(spec, obj, a);
      } catch (const std::exception& e) {
        log_failure(a, e);
      }
    };
    for (const op::Action& a : actions)
      if (!std::holds_alternative<op::PatchPodConditions>(a)) run(a);
    for (const op::Action& a : actions) {
      if (!std::holds_alternative<op::PatchPodConditions>(a)) continue;
      if (std::chrono::steady_clock::now() >= deadline) {
        conditions_left = true;
        break;
      }
      run(a);
    }
  }
  if (conditions_left) poke();
}

int K8sOperator::effective_replicas(const op::NodeSetSpec& spec) {
  auto it = written_.find(spec.name);
  if (it == written_.end()) return spec.replicas;
  if (spec.generation >= it->second.generation) {
    written_.erase(it);
    return spec.replicas;
  }
  return it->second.replicas;
}

namespace {

std::string job_list(const std::vector<uint64_t>& jobs) {
  std::string s = jobs.size() == 1 ? "job " : "jobs ";
  for (size_t i = 0; i < jobs.size() && i < 10; ++i) s += (i ? "," : "") + std::to_string(jobs[i]);
  if (jobs.size() > 10) s += ",...";
  return s;
}

bool is_victim(const op::DroverNode& dn) {
  return dn.drain && dn.reason_by == op::ReasonBy::Operator &&
         (dn.reason == op::kReasonScaleIn || dn.reason == op::kReasonNodeSetDeleted);
}

}  // namespace

bool K8sOperator::power_slots(const op::NodeSetSpec& spec, const std::vector<json>& pods,
                              const op::ControllerSnapshot& snap) {
  std::set<std::string> with_pod;
  for (const json& p : pods) {
    if (nodeset_of(p) == spec.name) with_pod.insert(p["metadata"].value("name", ""));
  }
  const std::string line = op::node_conf_line(
      op::shape_from_pod_spec(spec.pod_template.value("spec", json::object())), spec.features);
  bool changed = false;
  auto command = [&](const proto::Request& req, const std::string& what) {
    const json reply = host_.command(req);
    if (!reply.value("ok", false)) {
      spdlog::warn("k8s operator: NodeSet {}: {}: {}", spec.name, what, reply.dump());
      return false;
    }
    changed = true;
    return true;
  };
  for (int i = 0; i < spec.autoscaling->max_replicas; ++i) {
    const std::string name = op::pod_name(spec.name, i);
    auto it = snap.nodes.find(name);
    if (it == snap.nodes.end()) {
      if (with_pod.count(name)) continue;  // its agent registers it
      command(proto::NodeCreateRequest{.line = "NodeName=" + name + " " + line + " State=CLOUD"},
              "create " + name);
      powered_up_.erase(name);
      continue;
    }
    const op::DroverNode& dn = it->second;
    if (dn.registered || !dn.dynamic) {
      powered_up_.erase(name);
      continue;
    }
    const bool want_up = with_pod.count(name) > 0;
    if (want_up == (powered_up_.count(name) > 0)) continue;
    if (command(
            proto::NodeUpdateRequest{.nodes = name, .state = want_up ? "POWER_UP" : "POWER_DOWN"},
            name + (want_up ? " power up" : " power down"))) {
      if (want_up)
        powered_up_.insert(name);
      else
        powered_up_.erase(name);
    }
  }
  return changed;
}

bool K8sOperator::autoscale(const std::vector<json>& nodesets, const std::vector<json>& pods,
                            const op::ControllerSnapshot& snap, int64_t now, bool changed) {
  // Idle since: from the first pass that saw the node registered and running nothing.
  for (auto it = idle_since_.begin(); it != idle_since_.end();) {
    auto n = snap.nodes.find(it->first);
    if (n == snap.nodes.end() || !n->second.registered || n->second.busy() ||
        n->second.state != op::NodeState::Idle)
      it = idle_since_.erase(it);
    else
      ++it;
  }
  for (const auto& [name, dn] : snap.nodes)
    if (dn.dynamic && dn.registered && !dn.busy() && dn.state == op::NodeState::Idle)
      idle_since_.emplace(name, now);
  if (!changed && now < next_check_) return false;

  struct Entry {
    op::NodeSetSpec spec;
    const json* obj = nullptr;
    int replicas = 0;
  };
  std::vector<Entry> entries;
  std::vector<AutoscaleSet> sets;
  bool slots_changed = false;
  for (const json& obj : nodesets) {
    Entry e;
    try {
      e.spec = op::parse_nodeset(obj);
    } catch (const std::exception&) {
      continue;  // reported by the reconcile loop
    }
    if (!e.spec.autoscaling || e.spec.deleting) continue;
    try {
      slots_changed = power_slots(e.spec, pods, snap) || slots_changed;
    } catch (const std::exception& ex) {
      spdlog::warn("k8s operator: NodeSet {}: powered-down nodes: {}", e.spec.name, ex.what());
    }
    e.obj = &obj;
    e.replicas = effective_replicas(e.spec);
    AutoscaleSet a;
    a.set = nodeset_view(e.spec);
    for (const json& p : pods) {
      const json& meta = p["metadata"];
      const std::string name = meta.value("name", "");
      if (nodeset_of(p) != e.spec.name || op::pod_ordinal(e.spec.name, name) < 0 ||
          (meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null()))
        continue;
      const std::string phase = p.value("status", json::object()).value("phase", "Pending");
      if (phase == "Failed" || phase == "Succeeded") continue;
      auto dn = snap.nodes.find(name);
      if (dn != snap.nodes.end() && is_victim(dn->second)) continue;  // on its way out
      sched::NodeSetMember m;
      if (dn != snap.nodes.end() && dn->second.registered) {
        m.ready_at = now;
        auto idle = idle_since_.find(name);
        m.idle_since = idle == idle_since_.end() ? -1 : idle->second;
      } else {
        const int64_t created = op::parse_rfc3339(meta.value("creationTimestamp", ""));
        m.ready_at = (created > 0 ? created : now) + e.spec.autoscaling->startup_time;
      }
      a.set.members.push_back(m);
      a.member_nodes.push_back(name);
    }
    // Replicas the spec has and the watch shows no pod for yet: starting, so that a decision
    // made before the reconcile's pods are seen does not ask for them again.
    while (static_cast<int>(a.set.members.size()) < e.replicas) {
      a.set.members.push_back({-1, now + e.spec.autoscaling->startup_time, -1});
      a.member_nodes.emplace_back();
    }
    entries.push_back(std::move(e));
    sets.push_back(std::move(a));
  }
  if (entries.empty()) {
    next_check_ = sched::AutoscaleDecision::kNoCheck;
    std::lock_guard lock(demand_mu_);
    demand_.clear();
    return slots_changed;
  }
  const std::vector<AutoscaleSet> asked = sets;
  const sched::AutoscaleDecision d = host_.autoscale(std::move(sets), now);
  next_check_ = d.next_check;

  {
    std::vector<Demand> demand;
    for (size_t k = 0; k < entries.size() && k < d.sets.size(); ++k) {
      const auto& as = *entries[k].spec.autoscaling;
      Demand m;
      m.nodeset = entries[k].spec.name;
      if (!asked[k].set.shape.gres.empty())
        for (const auto& g : core::parse_gres_list(asked[k].set.shape.gres))
          if (g.name == "gpu") m.gpu_type = g.type.empty() ? "gpu" : g.type;
      m.nodes_wanted = std::clamp(
          entries[k].replicas + d.sets[k].wanted - static_cast<int>(d.sets[k].remove.size()),
          as.min_replicas, as.max_replicas);
      m.pending_jobs = static_cast<int>(d.sets[k].planned_for.size());
      demand.push_back(std::move(m));
    }
    std::lock_guard lock(demand_mu_);
    demand_ = std::move(demand);
  }

  bool drained = false;
  for (size_t k = 0; k < entries.size() && k < d.sets.size(); ++k) {
    const Entry& e = entries[k];
    const auto& ds = d.sets[k];
    const auto& as = *e.spec.autoscaling;
    std::vector<std::string> removed;
    for (int m : ds.remove) {
      const std::string& node = asked[k].member_nodes[static_cast<size_t>(m)];
      if (node.empty()) continue;
      const op::Action drain = op::DrainNode{node, op::kReasonScaleIn};
      try {
        execute(e.spec, *e.obj, drain);
        execute(e.spec, *e.obj,
                op::EmitEvent{{"Pod", node, ""},
                              "Normal",
                              "Draining",
                              "draining for scale-in: idle " +
                                  std::to_string(now - asked[k].set.members[m].idle_since) + "s"});
      } catch (const std::exception& ex) {
        log_failure(drain, ex);
        continue;
      }
      removed.push_back(node);
      drained = true;
    }
    const int target = std::clamp(e.replicas + ds.add - static_cast<int>(removed.size()),
                                  as.min_replicas, as.max_replicas);
    if (target == e.replicas) continue;
    std::string why;
    if (target > e.replicas) {
      why = "+" + std::to_string(target - e.replicas) + " node" +
            (target - e.replicas == 1 ? "" : "s");
      if (!ds.scaled_for.empty()) why += " for " + job_list(ds.scaled_for);
      if (e.replicas < as.min_replicas)
        why += " (minReplicas " + std::to_string(as.min_replicas) + ")";
    } else if (!removed.empty()) {
      why = "-" + std::to_string(e.replicas - target) + ": idle " +
            std::to_string(as.idle_timeout) + "s, node";
      if (removed.size() > 1) why += "s";
      for (size_t i = 0; i < removed.size(); ++i) why += (i ? ", " : " ") + removed[i];
      why += " drained for scale-in";
    } else {
      why = "replicas within [" + std::to_string(as.min_replicas) + ", " +
            std::to_string(as.max_replicas) + "]";
    }
    json out = impl_->client->patch(kNodeSets, e.spec.ns, e.spec.name, k8s::PatchType::kMerge,
                                    {{"spec", {{"replicas", target}}}});
    written_[e.spec.name] = {target,
                             out.value("metadata", json::object()).value("generation", int64_t{0})};
    spdlog::info("k8s operator: NodeSet {}: replicas {} -> {}: {}", e.spec.name, e.replicas, target,
                 why);
    decisions_.add({now, e.spec.name, e.replicas, target, why, ds.scaled_for});
    try {
      execute(e.spec, *e.obj,
              op::EmitEvent{{op::kKind, e.spec.name, e.spec.uid},
                            "Normal",
                            target > e.replicas ? "ScaleUp" : "ScaleDown",
                            "replicas " + std::to_string(e.replicas) + " -> " +
                                std::to_string(target) + ": " + why});
    } catch (const std::exception& ex) {
      spdlog::warn("k8s operator: event: {}", ex.what());
    }
  }

  // Jobs no set could ever run: said once, on every autoscaled set, while they stay so.
  std::vector<uint64_t> now_unrunnable;
  for (const auto& r : d.unrunnable) {
    now_unrunnable.push_back(r.job_id);
    if (std::find(unrunnable_.begin(), unrunnable_.end(), r.job_id) != unrunnable_.end()) continue;
    for (const Entry& e : entries) {
      const std::string why = "job " + std::to_string(r.job_id) + " not scaled for: " + r.reason;
      decisions_.add({now, e.spec.name, e.replicas, e.replicas, why, {r.job_id}});
      try {
        execute(e.spec, *e.obj,
                op::EmitEvent{{op::kKind, e.spec.name, e.spec.uid}, "Warning", "NotScaled", why});
      } catch (const std::exception& ex) {
        spdlog::warn("k8s operator: event: {}", ex.what());
      }
    }
  }
  unrunnable_ = std::move(now_unrunnable);
  return drained || slots_changed;
}

std::vector<K8sOperator::Demand> K8sOperator::demand() const {
  std::lock_guard lock(demand_mu_);
  return demand_;
}

std::string K8sOperator::demand_metrics() const {
  const auto all = demand();
  if (all.empty()) return "";
  std::string out;
  auto family = [&](const char* name, const char* help, auto value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
    for (const Demand& d : all)
      out += std::string(name) + "{nodeset=\"" + d.nodeset + "\",gpu_type=\"" + d.gpu_type +
             "\"} " + std::to_string(value(d)) + "\n";
  };
  family("drover_nodeset_nodes_wanted",
         "Nodes an autoscaled NodeSet should have for the pending jobs, within its limits",
         [](const Demand& d) { return d.nodes_wanted; });
  family("drover_nodeset_pending_jobs",
         "Pending jobs the scheduler's plan puts on nodes this NodeSet would start",
         [](const Demand& d) { return d.pending_jobs; });
  return out;
}

op::ObservedView K8sOperator::observed() const {
  std::lock_guard lock(view_mu_);
  return view_;
}

void K8sOperator::keep_view(const std::vector<json>& nodesets, const std::vector<json>& pods,
                            const op::ControllerSnapshot& dn) {
  op::ObservedView v;
  v.time = std::time(nullptr);
  v.ns = cfg_.ns;
  v.nodesets = nodesets;
  v.pods.reserve(pods.size());
  for (const json& p : pods) v.pods.push_back(op::pod_for_view(p));
  v.drover = dn;
  // The version moves only when something shown changed, so an idle cluster's dashboards
  // are not told to refetch every second.
  auto mix = [](uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; };
  auto text = [](const std::string& s) { return std::hash<std::string>{}(s); };
  uint64_t d = 14695981039346656037ull;
  for (const json& n : v.nodesets) d = mix(d, text(n.dump()));
  for (const json& p : v.pods) d = mix(d, text(p.dump()));
  for (const auto& [name, n] : dn.nodes) {
    d = mix(d, text(name));
    d = mix(d, static_cast<uint64_t>(n.state) | (n.drain ? 16u : 0u) |
                   (n.not_responding ? 32u : 0u) | (n.registered ? 64u : 0u));
    d = mix(d, text(n.reason));
    d = mix(d, n.jobs.size());
  }
  const auto last = decisions_.recent(1);
  if (!last.empty()) {
    d = mix(d, static_cast<uint64_t>(last[0].time));
    d = mix(d, text(last[0].nodeset + "/" + std::to_string(last[0].from) + "/" +
                    std::to_string(last[0].to) + "/" + last[0].reason));
  }
  std::lock_guard lock(view_mu_);
  if (d != view_digest_ || view_.time == 0) {
    view_digest_ = d;
    view_version_.fetch_add(1);
  }
  v.version = view_version_.load();
  view_ = std::move(v);
}

void K8sOperator::execute(const op::NodeSetSpec& spec, const json& nodeset, const op::Action& a) {
  if (auto note = job_note_command(a)) {
    // Before the job ends: a finished job takes no update.
    const json reply = host_.command(*note);
    if (!reply.value("ok", false))
      spdlog::warn("k8s operator: {}: note: {}", op::describe(a), reply.dump());
  }
  if (auto req = drover_command(a)) {
    const json reply = host_.command(*req);
    if (!reply.value("ok", false))
      spdlog::warn("k8s operator: {}: {}", op::describe(a), reply.dump());
    return;
  }
  k8s::Client& c = *impl_->client;
  const std::string& ns = spec.ns;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, op::CreatePod>) {
          json pod = x.pod;
          const std::string name = pod["metadata"].value("name", "");
          try {
            c.create(kSecrets, ns,
                     node_key_secret(spec, name, net::node_key(cfg_.master_key, name)));
          } catch (const k8s::ApiError& e) {
            if (!k8s::is_already_exists(e)) throw;
          }
          add_node_key_env(pod);
          c.create(k8s::resources::kPods, ns, pod);
        } else if constexpr (std::is_same_v<T, op::DeletePod>) {
          k8s::DeleteOptions d;
          d.precondition_uid = x.uid;
          try {
            c.remove(k8s::resources::kPods, ns, x.name, d);
          } catch (const k8s::ApiError& e) {
            if (!k8s::is_not_found(e)) throw;
          }
        } else if constexpr (std::is_same_v<T, op::PatchPodLabels>) {
          json meta = {{"labels", x.labels}};
          if (!x.annotations.empty()) meta["annotations"] = x.annotations;
          c.patch(k8s::resources::kPods, ns, x.pod, k8s::PatchType::kMerge, {{"metadata", meta}});
        } else if constexpr (std::is_same_v<T, op::PatchPodConditions>) {
          // Strategic merge: a pod's conditions merge by type.
          c.patch(k8s::resources::kPods, ns, x.pod, k8s::PatchType::kStrategicMerge,
                  {{"status", {{"conditions", x.conditions}}}}, "status");
        } else if constexpr (std::is_same_v<T, op::UpdateStatus>) {
          c.patch(kNodeSets, ns, spec.name, k8s::PatchType::kMerge, {{"status", x.status}},
                  "status");
        } else if constexpr (std::is_same_v<T, op::SetFinalizer>) {
          json fins = json::array();
          for (const auto& f : nodeset["metadata"].value("finalizers", json::array()))
            if (f != op::kFinalizer) fins.push_back(f);
          if (x.present) fins.push_back(op::kFinalizer);
          // The resourceVersion makes it a compare-and-swap on the list as read.
          c.patch(kNodeSets, ns, spec.name, k8s::PatchType::kMerge,
                  {{"metadata",
                    {{"finalizers", fins},
                     {"resourceVersion", nodeset["metadata"].value("resourceVersion", "")}}}});
        } else if constexpr (std::is_same_v<T, op::ApplyPDB>) {
          k8s::ApplyOptions o;
          o.force = true;
          c.apply(k8s::resources::kPodDisruptionBudgets, ns, x.pdb, o);
        } else if constexpr (std::is_same_v<T, op::DeletePDB>) {
          try {
            c.remove(k8s::resources::kPodDisruptionBudgets, ns, x.name);
          } catch (const k8s::ApiError& e) {
            if (!k8s::is_not_found(e)) throw;
          }
        } else if constexpr (std::is_same_v<T, op::EmitEvent>) {
          const bool pod = x.object.kind == "Pod";
          json regarding = {{"apiVersion", x.object.kind == "NodeSet" ? op::kApiVersion : "v1"},
                            {"kind", x.object.kind},
                            {"metadata", {{"name", x.object.name}, {"uid", x.object.uid}}}};
          if (pod || x.object.kind == "NodeSet") regarding["metadata"]["namespace"] = ns;
          impl_->events->record(
              regarding, x.type == "Warning" ? k8s::EventType::kWarning : k8s::EventType::kNormal,
              x.reason, x.reason, x.message);
        }
      },
      a);
}

}  // namespace drover::ctld
