// The operator adapter's seams: drover actions as the controller's own requests (run here
// against a state machine as the operator's caller), the node-key Secret and the pod's
// reference to it, the slurm.conf keys, and the controller's snapshot for the reconciler.
#include "ctld/k8s_operator.hpp"

#include <gtest/gtest.h>

#include "ctld/acct_record.hpp"
#include "ctld/client_request.hpp"
#include "ctld/k8s_snapshot.hpp"
#include "ctld/tests/harness.hpp"
#include "k8s/operator/reconcile.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;
namespace op = drover::k8s::op;

namespace {

json run(Harness& h, const op::Action& a, Effects& fx) {
  auto req = drover_command(a);
  EXPECT_TRUE(req.has_value()) << op::describe(a);
  std::string text;
  return *apply_client_request(h.sm, *req, k8s_operator_caller(), h.now, fx, text);
}

TEST(K8sOperator, KubernetesActionsAreNoDroverCommand) {
  EXPECT_FALSE(drover_command(op::CreatePod{json::object()}));
  EXPECT_FALSE(drover_command(op::DeletePod{"a-0", "u"}));
  EXPECT_FALSE(drover_command(op::UpdateStatus{json::object()}));
  EXPECT_FALSE(drover_command(op::EmitEvent{{"Pod", "a-0", "u"}, "Normal", "R", "m"}));
}

TEST(K8sOperator, DrainResumeDownAreTheOperatorsAndJournaled) {
  Harness h;
  Effects fx;
  json r = run(h, op::DrainNode{"node1", "scale-in"}, fx);
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_TRUE(fx.journals(journal::Node{"node1"}));
  auto snap = k8s_snapshot(h.sm, 500);
  EXPECT_EQ(snap.controller_start, 500);
  const op::DroverNode& n1 = snap.nodes.at("node1");
  EXPECT_TRUE(n1.drain);
  EXPECT_EQ(n1.reason, "scale-in");
  EXPECT_EQ(n1.reason_by, op::ReasonBy::Operator);
  EXPECT_FALSE(n1.dynamic);  // slurm.conf's node

  // The same reason set by an administrator is not the operator's to lift.
  Effects fx2;
  const auto req =
      std::get<proto::NodeUpdateRequest>(*drover_command(op::DrainNode{"node2", "scale-in"}));
  EXPECT_TRUE(h.sm.node_update(req, h.root, h.now, fx2).value("ok", false));
  EXPECT_EQ(k8s_snapshot(h.sm, 0).nodes.at("node2").reason_by, op::ReasonBy::Admin);

  ASSERT_TRUE(run(h, op::ResumeNode{"node1"}, fx).value("ok", false));
  EXPECT_FALSE(k8s_snapshot(h.sm, 0).nodes.at("node1").drain);

  ASSERT_TRUE(run(h, op::DownNode{"node1", "pod deleted"}, fx).value("ok", false));
  const auto down = k8s_snapshot(h.sm, 0).nodes.at("node1");
  EXPECT_EQ(down.state, op::NodeState::Down);
  EXPECT_EQ(down.reason_by, op::ReasonBy::Operator);

  // The operator's mark survives a restart: it is in the node's journal record.
  EXPECT_EQ(h.sm.node_admin_record("node1").value("reason_uid", 0u), kK8sOperatorUid);
}

TEST(K8sOperator, NoUserIsTheOperator) {
  Harness h;
  EXPECT_FALSE(h.sm.is_operator(h.alice));
  EXPECT_TRUE(h.sm.is_operator(k8s_operator_caller()));
}

TEST(K8sOperator, SnapshotListsJobsAndDynamicNodes) {
  Config c = two_node_config();
  c.conf.options["MaxNodeCount"] = "4";
  Harness h(c);
  Effects fx;
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.launches(fx).size(), 1u);
  json r = h.sm.node_create(
      proto::NodeCreateRequest::from_json({{"line", "NodeName=ns-0 CPUs=2 State=FUTURE"}}),
      k8s_operator_caller(), fx);
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  const auto snap = k8s_snapshot(h.sm, 0);
  ASSERT_TRUE(snap.nodes.contains("ns-0"));
  EXPECT_TRUE(snap.nodes.at("ns-0").dynamic);
  EXPECT_FALSE(snap.nodes.at("ns-0").registered);
  size_t busy = 0;
  for (const auto& [name, n] : snap.nodes)
    for (const auto& j : n.jobs) {
      EXPECT_EQ(j.id, id);
      ++busy;
    }
  EXPECT_EQ(busy, 1u);
  // A finished job keeps its allocation on record; the node is free again.
  const std::string host(h.sm.find_job(id)->batch_host);
  h.sm.agent_exited(host, exit_report({{"job_id", id}, {"status", 0}}), h.now + 5, fx);
  ASSERT_TRUE(core::is_finished(h.sm.find_job(id)->state));
  EXPECT_TRUE(k8s_snapshot(h.sm, 0).nodes.at(host).jobs.empty());

  ASSERT_TRUE(run(h, op::DeleteDroverNode{"ns-0"}, fx).value("ok", false));
  EXPECT_FALSE(k8s_snapshot(h.sm, 0).nodes.contains("ns-0"));
}

TEST(K8sOperator, RequeueAndCancelReachTheJob) {
  Harness h;
  Effects fx;
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_TRUE(
      run(h, op::CancelJob{static_cast<uint32_t>(id), "drain timeout"}, fx).value("ok", false));
  EXPECT_TRUE(core::is_finished(h.sm.find_job(id)->state) || h.sm.find_job(id)->completing);
  const json req = proto::to_json(*drover_command(op::RequeueJob{7, "x"}));
  EXPECT_EQ(req["op"], "control");
  EXPECT_EQ(req["action"], "requeue");
  EXPECT_EQ(req["jobs"], json::array({"7"}));
}

TEST(K8sOperator, AJobTheOperatorEndsSaysWhyInItsSystemComment) {
  Harness h;
  Effects fx;
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  const std::string why = "node node1 drained for scale-in: maxDrainTime 1h reached";
  const op::CancelJob cancel{static_cast<uint32_t>(id), why};
  const auto note = job_note_command(cancel);
  ASSERT_TRUE(note.has_value());
  std::string text;
  ASSERT_TRUE(apply_client_request(h.sm, *note, k8s_operator_caller(), h.now, fx, text)
                  ->value("ok", false));
  ASSERT_TRUE(run(h, cancel, fx).value("ok", false));
  const core::Job& job = *h.sm.find_job(id);
  EXPECT_EQ(std::string(job.system_comment), why);
  EXPECT_EQ(acct_record(job).system_comment, why);  // sacct's SystemComment
  // Its processes are still being stopped: the snapshot says it is on its way out, so the
  // operator does not ask again.
  ASSERT_TRUE(job.completing);
  int seen = 0;
  for (const auto& [name, n] : k8s_snapshot(h.sm, 0).nodes)
    for (const auto& j : n.jobs)
      if (j.id == id) seen += j.ending ? 1 : 100;
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(job_note_command(op::RequeueJob{7, "x"}).has_value(), true);
  EXPECT_FALSE(job_note_command(op::DrainNode{"node1", "x"}).has_value());

  // Only an administrator (or the controller itself) writes it, as in Slurm.
  const uint64_t other = h.submit(h.alice, h.spec(), fx);
  const json r = h.sm.update(
      proto::JobUpdateRequest{.jobs = {std::to_string(other)}, .set = {{"SystemComment", "mine"}}},
      h.alice, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Access/permission denied") << r.dump();
  EXPECT_TRUE(h.sm.update(proto::JobUpdateRequest{.jobs = {std::to_string(other)},
                                                  .set = {{"SystemComment", "checked"}}},
                          h.root, h.now, fx)
                  .value("ok", false));
  EXPECT_EQ(std::string(h.sm.find_job(other)->system_comment), "checked");
}

TEST(K8sOperator, NodeKeyComesFromASecretNeverThePodSpec) {
  op::NodeSetSpec spec;
  spec.name = "cpu";
  spec.ns = "hpc";
  spec.uid = "u-1";
  spec.pod_template = {{"spec", {{"containers", json::array({{{"name", "agent"}}})}}}};
  json pod = op::make_pod(spec, 0);
  add_node_key_env(pod);
  const json secret = node_key_secret(spec, "cpu-0", "abc123");
  EXPECT_EQ(secret["metadata"]["name"], "cpu-0-key");
  EXPECT_EQ(secret["metadata"]["namespace"], "hpc");
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], "u-1");
  EXPECT_EQ(secret["stringData"]["key"], "abc123");
  EXPECT_EQ(pod.dump().find("abc123"), std::string::npos);
  bool found = false;
  for (const auto& e : pod["spec"]["containers"][0]["env"])
    if (e["name"] == "DROVER_NODE_KEY") {
      found = true;
      EXPECT_EQ(e["valueFrom"]["secretKeyRef"]["name"], "cpu-0-key");
      EXPECT_EQ(e["valueFrom"]["secretKeyRef"]["key"], "key");
    }
  EXPECT_TRUE(found);
}

TEST(K8sOperator, OffUnlessANamespaceIsConfigured) {
  core::SlurmConf conf;
  EXPECT_FALSE(k8s_operator_config(conf, "k"));
  conf.options["DroverK8sNamespace"] = "hpc";
  conf.options["DroverK8sKubeconfig"] = "/etc/drover/kubeconfig";
  auto c = k8s_operator_config(conf, "k");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ns, "hpc");
  EXPECT_EQ(c->kubeconfig, "/etc/drover/kubeconfig");
  EXPECT_EQ(c->master_key, "k");
}

}  // namespace

namespace {

// Two busy 2-CPU nodes in a partition that takes dynamic nodes (Nodes=ALL).
Config elastic_config() {
  Config c = two_node_config();
  c.conf.partitions[0].all_nodes = true;
  c.conf.options["MaxNodeCount"] = "8";
  return c;
}

json wide_spec(Harness& h, int nodes, int cpus_per_task = 1) {
  core::JobSpec s = h.spec(nodes, cpus_per_task).get<core::JobSpec>();
  s.nodes_min = nodes;
  s.nodes_set = true;
  return s;
}

AutoscaleSet cpu_set(int max, int min = 0) {
  AutoscaleSet a;
  a.set.name = "ns";
  a.set.shape.cpus = 2;
  a.set.shape.cores_per_socket = 2;
  a.set.shape.real_memory_mb = 1000;
  a.set.min_replicas = min;
  a.set.max_replicas = max;
  a.set.start_delay_s = 30;
  return a;
}

}  // namespace

TEST(K8sAutoscale, AWideJobGetsAllItsNodesInOneDecision) {
  Harness h(elastic_config());
  Effects fx;
  h.submit(h.alice, h.spec(2), fx);
  h.submit(h.alice, h.spec(2), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.launches(fx).size(), 2u);  // both nodes busy
  const uint64_t wide = h.submit(h.alice, wide_spec(h, 3), fx);
  sched::Autoscaler planner;
  const auto d = autoscale_decide(h.sm, planner, {cpu_set(4)}, h.now);
  ASSERT_EQ(d.sets.size(), 1u);
  EXPECT_EQ(d.sets[0].add, 3);
  EXPECT_EQ(d.sets[0].scaled_for, std::vector<uint64_t>{wide});
  EXPECT_TRUE(d.unrunnable.empty());
}

TEST(K8sAutoscale, AStartingMemberCountsAndTooWideAJobIsNotScaledFor) {
  Harness h(elastic_config());
  Effects fx;
  h.submit(h.alice, h.spec(2), fx);
  h.submit(h.alice, h.spec(2), fx);
  h.sm.schedule(h.now, fx);
  const uint64_t wide = h.submit(h.alice, wide_spec(h, 3), fx);
  // ns-0's pod exists and its node is a powered-down slot that has not registered yet.
  ASSERT_TRUE(h.sm.node_create(proto::NodeCreateRequest::from_json(
                                   {{"line", "NodeName=ns-0 CPUs=2 RealMemory=1000 State=CLOUD"}}),
                               k8s_operator_caller(), fx)
                  .value("ok", false));
  AutoscaleSet a = cpu_set(4);
  a.set.members.push_back({-1, h.now, -1});  // "up" by its pod's age, yet not registered
  a.member_nodes.push_back("ns-0");
  sched::Autoscaler planner;
  auto d = autoscale_decide(h.sm, planner, {a}, h.now);
  EXPECT_EQ(d.sets[0].add, 2);  // the starting one is not started again
  EXPECT_EQ(d.sets[0].scaled_for, std::vector<uint64_t>{wide});

  // More nodes than the partition's and the set's at its maximum together.
  const uint64_t too_wide = h.submit(h.alice, wide_spec(h, 9), fx);
  d = autoscale_decide(h.sm, planner, {cpu_set(4)}, h.now);
  ASSERT_EQ(d.unrunnable.size(), 1u);
  EXPECT_EQ(d.unrunnable[0].job_id, too_wide);
  EXPECT_NE(d.unrunnable[0].reason.find("maxReplicas"), std::string::npos);
}

TEST(K8sAutoscale, HeldJobsAreNotScaledFor) {
  Harness h(elastic_config());
  Effects fx;
  h.submit(h.alice, h.spec(2), fx);
  h.submit(h.alice, h.spec(2), fx);
  h.sm.schedule(h.now, fx);
  json s = wide_spec(h, 2);
  s["hold"] = true;
  h.submit(h.alice, s, fx);
  sched::Autoscaler planner;
  const auto d = autoscale_decide(h.sm, planner, {cpu_set(4)}, h.now);
  EXPECT_EQ(d.sets[0].add, 0);
}

TEST(K8sAutoscale, NodeSetViewFromTheSpec) {
  op::NodeSetSpec spec;
  spec.name = "gpu";
  spec.cost = 3;
  spec.features = {"a100"};
  spec.pod_template = {
      {"spec",
       {{"containers",
         json::array(
             {{{"name", "agent"},
               {"resources",
                {{"requests", {{"cpu", "4"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "2"}}}}}}})}}}};
  spec.autoscaling = op::NodeSetSpec::Autoscaling{1, 5, 120, 20};
  const sched::NodeSetView v = nodeset_view(spec);
  EXPECT_EQ(v.shape.cpus, 4);
  EXPECT_EQ(v.shape.real_memory_mb, 8192);
  EXPECT_EQ(v.shape.gres, "gpu:2");
  EXPECT_EQ(v.shape.features, std::vector<std::string>{"a100"});
  EXPECT_EQ(v.cost, 3);
  EXPECT_EQ(v.min_replicas, 1);
  EXPECT_EQ(v.max_replicas, 5);
  EXPECT_EQ(v.idle_timeout_s, 120);
  EXPECT_EQ(v.start_delay_s, 20);
}
