#pragma once
// The Kubernetes operator inside droverctld: a thread of its own that watches NodeSets, their
// pods, the Kubernetes Nodes and the NodeSets' PDBs, runs the pure reconciler
// (k8s/operator/reconcile.hpp) on every change, and carries out its actions: Kubernetes writes
// through the client, drover commands through the controller's own request path as the
// operator's caller (k8s_operator_caller), so they are journaled and shown as scontrol's are.
// The controller is reached only through K8sOperatorHost, which the server implements with
// state-thread tasks, as the REST API and metrics are.
//
// Off unless slurm.conf has DroverK8sNamespace= (see k8s_operator_config).
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/slurm_conf.hpp"
#include "k8s/operator/actions.hpp"
#include "k8s/operator/decision_log.hpp"
#include "k8s/operator/nodeset.hpp"
#include "k8s/operator/observed.hpp"
#include "k8s/operator/view.hpp"
#include "proto/request.hpp"
#include "sched/autoscale.hpp"

namespace drover::ctld {

struct K8sOperatorConfig {
  std::string ns;          // DroverK8sNamespace: where the NodeSets and their pods live
  std::string kubeconfig;  // DroverK8sKubeconfig; "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::string master_key;  // the controller's master secret: each agent pod's node key from it
};

// From slurm.conf; nullopt when DroverK8sNamespace is not set (the operator is off).
std::optional<K8sOperatorConfig> k8s_operator_config(const core::SlurmConf& conf,
                                                     const std::string& master_key);

// One autoscaled NodeSet as the operator asks the planner about it: the set with its members
// as the operator sees them (pods; `slot` not yet known), and each member's drover node name
// ("" for a pod the spec wants that does not exist yet).
struct AutoscaleSet {
  sched::NodeSetView set;
  std::vector<std::string> member_nodes;  // by member
};

// What the operator needs of the controller. The calls block the operator's thread until the
// state thread has answered.
class K8sOperatorHost {
 public:
  virtual ~K8sOperatorHost() = default;
  virtual k8s::op::ControllerSnapshot snapshot() = 0;
  // One of the controller's requests (as scontrol sends it) run as the operator, committed to
  // the journal before the reply comes back.
  virtual nlohmann::json command(const proto::Request& req) = 0;
  // The autoscaler's decision on the controller's own view at `now` (ctld/k8s_snapshot.hpp's
  // autoscale_decide). A host without one decides nothing.
  virtual sched::AutoscaleDecision autoscale(std::vector<AutoscaleSet> sets, int64_t now) {
    (void)now;
    sched::AutoscaleDecision d;
    d.sets.resize(sets.size());
    return d;
  }
};

// An autoscaled NodeSet's shape, partitions, cost and limits from its spec (no members yet).
sched::NodeSetView nodeset_view(const k8s::op::NodeSetSpec& spec);

// The controller request that carries out a drover action (a node_update, ...); nullopt for a
// Kubernetes action.
std::optional<proto::Request> drover_command(const k8s::op::Action& a);
// For a job the operator requeues or cancels, the request that first records why on the job
// itself (its SystemComment, which scontrol show job and sacct show, as Slurm's controller notes
// its own actions there); nullopt for other actions.
std::optional<proto::Request> job_note_command(const k8s::op::Action& a);

// The Secret holding an agent pod's node key ("<pod>-key", key "key"), owned by the NodeSet so
// it goes with it; and the pod with DROVER_NODE_KEY taken from it (secretKeyRef) in its first
// container. The key itself is never in the pod's spec.
std::string node_key_secret_name(const std::string& pod);
nlohmann::json node_key_secret(const k8s::op::NodeSetSpec& spec, const std::string& pod,
                               const std::string& key);
void add_node_key_env(nlohmann::json& pod);

class K8sOperator {
 public:
  K8sOperator(K8sOperatorConfig cfg, K8sOperatorHost& host);
  ~K8sOperator();  // stop()
  K8sOperator(const K8sOperator&) = delete;
  K8sOperator& operator=(const K8sOperator&) = delete;

  // Connects (throws k8s::ConfigError for a bad kubeconfig) and starts the thread.
  void start();
  void stop();
  // Something changed (a watch event, a node's state in drover): reconcile soon. Cheap, from
  // any thread.
  void poke();
  // The NodeSet size decisions made so far (autoscaling, scale-in), for the dashboard.
  const k8s::op::DecisionLog& decisions() const { return decisions_; }
  // The demand on each autoscaled NodeSet at the last decision, for HPA/KEDA users (/metrics).
  struct Demand {
    std::string nodeset;
    std::string gpu_type;  // "" without GPUs; "gpu" for GPUs of no type
    int nodes_wanted = 0;  // the replicas the plan wants, now and later, within [min, max]
    int pending_jobs = 0;  // pending jobs the plan puts on nodes it would start
  };
  std::vector<Demand> demand() const;
  // The demand as Prometheus text lines (drover_nodeset_*), without a trailer.
  std::string demand_metrics() const;
  // What the last pass saw (a copy), for the dashboard. Any thread.
  k8s::op::ObservedView observed() const;
  // Its version alone, without the copy: what the dashboard's change feed polls. Any thread.
  uint64_t observed_version() const { return view_version_.load(); }

 private:
  struct Impl;
  void run();
  void pass();
  void keep_view(const std::vector<nlohmann::json>& nodesets,
                 const std::vector<nlohmann::json>& pods, const k8s::op::ControllerSnapshot& dn);
  void execute(const k8s::op::NodeSetSpec& spec, const nlohmann::json& nodeset,
               const k8s::op::Action& a);
  // Autoscaled NodeSets: asks the planner (through the host) and carries out its answer:
  // spec.replicas, and scale-in drains of the members it chose. Returns whether it drained any.
  bool autoscale(const std::vector<nlohmann::json>& nodesets,
                 const std::vector<nlohmann::json>& pods, const k8s::op::ControllerSnapshot& snap,
                 int64_t now, bool changed);
  // spec.replicas, or what this operator wrote last while the watch has not shown it yet.
  int effective_replicas(const k8s::op::NodeSetSpec& spec);
  // An autoscaled set's nodes not started yet as powered-down drover nodes (State=CLOUD), one
  // per ordinal below maxReplicas, told POWER_UP while their pod exists and has not registered.
  // Returns whether it changed any.
  bool power_slots(const k8s::op::NodeSetSpec& spec, const std::vector<nlohmann::json>& pods,
                   const k8s::op::ControllerSnapshot& snap);

  K8sOperatorConfig cfg_;
  K8sOperatorHost& host_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = true;
  bool demand_changed_ = true;  // by mu_: a poke since the last autoscaling decision
  // The rest is the operator thread's own.
  int64_t next_check_ = 0;                     // the planner's next_check
  std::map<std::string, int64_t> idle_since_;  // drover nodes seen idle, since when
  struct Written {
    int replicas = 0;
    int64_t generation = 0;  // the NodeSet's generation after the write
  };
  std::map<std::string, Written> written_;  // by NodeSet
  std::vector<uint64_t> unrunnable_;        // jobs reported as no NodeSet could run them
  std::set<std::string> powered_up_;        // powered-down slots told POWER_UP (a pod exists)
  mutable std::mutex demand_mu_;
  std::vector<Demand> demand_;  // by demand_mu_
  std::atomic<bool> stop_{false};
  std::thread thread_;
  k8s::op::DecisionLog decisions_;
  mutable std::mutex view_mu_;
  k8s::op::ObservedView view_;  // guarded by view_mu_
  std::atomic<uint64_t> view_version_{0};
  uint64_t view_digest_ = 0;  // the operator's thread only
};

}  // namespace drover::ctld
