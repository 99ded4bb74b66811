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
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "core/slurm_conf.hpp"
#include "k8s/operator/actions.hpp"
#include "k8s/operator/decision_log.hpp"
#include "k8s/operator/nodeset.hpp"
#include "k8s/operator/observed.hpp"
#include "k8s/operator/view.hpp"
#include "proto/request.hpp"

namespace drover::ctld {

struct K8sOperatorConfig {
  std::string ns;          // DroverK8sNamespace: where the NodeSets and their pods live
  std::string kubeconfig;  // DroverK8sKubeconfig; "" = $KUBECONFIG, in-cluster, ~/.kube/config
  std::string master_key;  // the controller's master secret: each agent pod's node key from it
};

// From slurm.conf; nullopt when DroverK8sNamespace is not set (the operator is off).
std::optional<K8sOperatorConfig> k8s_operator_config(const core::SlurmConf& conf,
                                                     const std::string& master_key);

// What the operator needs of the controller. Both calls block the operator's thread until the
// state thread has answered.
class K8sOperatorHost {
 public:
  virtual ~K8sOperatorHost() = default;
  virtual k8s::op::ControllerSnapshot snapshot() = 0;
  // One of the controller's requests (as scontrol sends it) run as the operator, committed to
  // the journal before the reply comes back.
  virtual nlohmann::json command(const proto::Request& req) = 0;
};

// The controller request that carries out a drover action (a node_update, ...); nullopt for a
// Kubernetes action.
std::optional<proto::Request> drover_command(const k8s::op::Action& a);

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

  K8sOperatorConfig cfg_;
  K8sOperatorHost& host_;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool dirty_ = true;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  k8s::op::DecisionLog decisions_;
  mutable std::mutex view_mu_;
  k8s::op::ObservedView view_;  // guarded by view_mu_
  std::atomic<uint64_t> view_version_{0};
  uint64_t view_digest_ = 0;  // the operator's thread only
};

}  // namespace drover::ctld
