#include "ctld/k8s_operator.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <functional>

#include "k8s/client/client.hpp"
#include "k8s/client/events.hpp"
#include "k8s/client/informer.hpp"
#include "k8s/operator/reconcile.hpp"
#include "net/keys.hpp"

namespace drover::ctld {

using nlohmann::json;
namespace op = k8s::op;

namespace {

const k8s::Resource kNodeSets{"drover.io", "v1alpha1", "nodesets", true};
const k8s::Resource kSecrets{"", "v1", "secrets", true};

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
          return proto::NodeDeleteRequest{x.node};
        else if constexpr (std::is_same_v<T, op::SetNodeFeatures>) {
          std::string list;
          for (const auto& f : x.features) list += (list.empty() ? "" : ",") + f;
          // scontrol update AvailableFeatures= ActiveFeatures=: all of them active.
          return proto::NodeUpdateRequest{.nodes = x.node, .features = list, .features_act = list};
        } else if constexpr (std::is_same_v<T, op::RequeueJob>)
          return proto::ControlRequest{"requeue", {std::to_string(x.job)}};
        else if constexpr (std::is_same_v<T, op::CancelJob>) {
          proto::CancelRequest c;
          c.jobs = std::vector<std::string>{std::to_string(x.job)};
          return c;
        } else
          return std::nullopt;
      },
      a);
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
    op::Observed o;
    o.k8s_nodes = base.k8s_nodes;
    o.drover = base.drover;
    for (const json& p : pods)
      if (p["metadata"].value("labels", json::object()).value(op::kNodeSetLabel, "") == spec.name)
        o.pods.push_back(p);
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
          c.patch(k8s::resources::kPods, ns, x.pod, k8s::PatchType::kMerge,
                  {{"metadata", {{"labels", x.labels}}}});
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
