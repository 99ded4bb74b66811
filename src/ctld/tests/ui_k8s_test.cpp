#include "ctld/ui_k8s.hpp"

#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"
#include "k8s/operator/nodeset.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;
namespace op = drover::k8s::op;

namespace {

json nodeset(const std::string& name, int replicas, json extra = json::object()) {
  json ns = {
      {"apiVersion", "drover.io/v1alpha1"},
      {"kind", "NodeSet"},
      {"metadata", {{"name", name}, {"namespace", "hpc"}, {"uid", name + "-uid"}}},
      {"spec",
       {{"replicas", replicas},
        {"partitions", {"batch"}},
        {"template",
         {{"spec",
           {{"containers",
             {{{"name", "droverd"},
               {"image", "drover/agent:1"},
               {"env", {{{"name", "SECRET"}, {"value", "hunter2"}}}}}}}}}}}}},
      {"status",
       {{"replicas", replicas},
        {"readyReplicas", 1},
        {"conditions",
         {{{"type", "Available"}, {"status", "True"}, {"reason", "MinimumNodesAvailable"}}}}}}};
  ns["spec"].update(extra);
  return ns;
}

json pod(const std::string& name, const std::string& set, bool busy_label) {
  json labels = {{op::kNodeSetLabel, set}};
  if (busy_label) labels[op::kBusyLabel] = "true";
  return {{"metadata",
           {{"name", name},
            {"labels", labels},
            {"creationTimestamp", "1970-01-01T00:10:00Z"},
            {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{secret}"}}}}},
          {"spec",
           {{"nodeName", "kind-worker"},
            {"containers", {{{"env", {{{"name", "SECRET"}, {"value", "hunter2"}}}}}}}}},
          {"status",
           {{"phase", "Running"}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

op::ObservedView view() {
  op::ObservedView v;
  v.time = 900;
  v.version = 3;
  v.ns = "hpc";
  v.nodesets = {nodeset("gpu", 2,
                        {{"cost", 2.5},
                         {"autoscaling", {{"minReplicas", 1}, {"maxReplicas", 8}}},
                         {"updateStrategy", {{"type", "OnDelete"}}}}),
                nodeset("bad", 1, {{"autoscaling", {{"minReplicas", 3}, {"maxReplicas", 1}}}})};
  for (const json& p : {pod("gpu-1", "gpu", false), pod("gpu-0", "gpu", true)})
    v.pods.push_back(op::pod_for_view(p));
  op::DroverNode busy;
  busy.name = "gpu-0";
  busy.state = op::NodeState::Allocated;
  busy.registered = true;
  busy.jobs = {{7, 0, true}};
  op::DroverNode drained;
  drained.name = "gpu-1";
  drained.registered = true;
  drained.drain = true;
  drained.reason = "NodeSet scale-in";
  v.drover.nodes = {{"gpu-0", busy}, {"gpu-1", drained}};
  return v;
}

}  // namespace

TEST(UiK8s, OffWithoutTheOperator) {
  Harness h;
  EXPECT_EQ(ui_k8s(std::nullopt, {}, h.sm, ui_viewer(h.sm, h.alice), h.now),
            json({{"enabled", false}}));
}

TEST(UiK8s, NodeSetsAndTheirPodsWithDroverNodeStates) {
  Harness h;
  const json k = ui_k8s(view(), {}, h.sm, ui_viewer(h.sm, h.alice), 1000);
  EXPECT_TRUE(k["enabled"]);
  EXPECT_EQ(k["namespace"], "hpc");
  EXPECT_EQ(k["version"], 3);
  ASSERT_EQ(k["nodesets"].size(), 2u);
  const json& gpu = k["nodesets"][0];
  EXPECT_EQ(gpu["name"], "gpu");
  EXPECT_EQ(gpu["replicas"], 2);
  EXPECT_EQ(gpu["ready_replicas"], 1);
  EXPECT_EQ(gpu["cost"], 2.5);
  EXPECT_EQ(gpu["update_strategy"], "OnDelete");
  EXPECT_EQ(gpu["autoscaling"]["min_replicas"], 1);
  EXPECT_EQ(gpu["autoscaling"]["max_replicas"], 8);
  EXPECT_EQ(gpu["node_states"], json({{"allocated", 1}, {"drained", 1}}));
  EXPECT_EQ(gpu["conditions"][0]["type"], "Available");
  EXPECT_EQ(gpu["error"], "");
  // A NodeSet the operator cannot parse is shown with why.
  EXPECT_NE(k["nodesets"][1]["error"].get<std::string>().find("minReplicas"), std::string::npos);

  ASSERT_EQ(k["pods"].size(), 2u);
  const json& p0 = k["pods"][0];  // in ordinal order
  EXPECT_EQ(p0["name"], "gpu-0");
  EXPECT_EQ(p0["phase"], "Running");
  EXPECT_EQ(p0["ready"], true);
  EXPECT_EQ(p0["k8s_node"], "kind-worker");
  EXPECT_EQ(p0["node_state"], "allocated");
  EXPECT_EQ(p0["busy"], true);
  EXPECT_EQ(p0["protected"], true);
  EXPECT_EQ(p0["age_s"], 400);
  const json& p1 = k["pods"][1];
  EXPECT_EQ(p1["node_state"], "drained");
  EXPECT_EQ(p1["reason"], "NodeSet scale-in");
  EXPECT_EQ(p1["busy"], false);
  EXPECT_EQ(p1["protected"], false);
  // Nothing of the pods' or NodeSets' specs (their environment) goes out.
  EXPECT_EQ(k.dump().find("hunter2"), std::string::npos);
  EXPECT_EQ(k.dump().find("{secret}"), std::string::npos);
}

TEST(UiK8s, NodeStatesAsSinfoWordsThem) {
  op::DroverNode n;
  EXPECT_EQ(ui_k8s_node_state(n), "unregistered");
  n.registered = true;
  EXPECT_EQ(ui_k8s_node_state(n), "idle");
  n.state = op::NodeState::Mixed;
  n.drain = true;
  EXPECT_EQ(ui_k8s_node_state(n), "draining");
  n.state = op::NodeState::Down;
  n.not_responding = true;
  EXPECT_EQ(ui_k8s_node_state(n), "down*");
}

TEST(UiK8s, DecisionsHideOtherUsersJobsUnderPrivateDataJobs) {
  Config c = two_node_config();
  c.conf.options["PrivateData"] = "jobs";
  Harness h(std::move(c));
  Effects fx;
  const uint64_t alices = h.submit(h.alice, h.spec(), fx);
  const uint64_t bobs = h.submit(h.bob, h.spec(), fx);
  const std::vector<op::ScaleDecision> ds = {
      {950, "gpu", 1, 2, "1 node for job " + std::to_string(alices), {alices}},
      {960,
       "gpu",
       2,
       4,
       "2 nodes for jobs " + std::to_string(alices) + ", " + std::to_string(bobs),
       {alices, bobs}}};
  const json a = ui_k8s(view(), ds, h.sm, ui_viewer(h.sm, h.alice), 1000)["decisions"];
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0]["jobs"], json::array({alices}));
  EXPECT_EQ(a[0]["reason"], ds[0].reason);
  EXPECT_EQ(a[1]["jobs"], json::array({alices}));
  EXPECT_EQ(a[1]["reason"].get<std::string>().find(std::to_string(bobs)), std::string::npos);
  EXPECT_EQ(a[1]["from"], 2);
  EXPECT_EQ(a[1]["to"], 4);
  // Operators see all of it.
  const json r = ui_k8s(view(), ds, h.sm, ui_viewer(h.sm, h.root), 1000)["decisions"];
  EXPECT_EQ(r[1]["jobs"], json::array({alices, bobs}));
  EXPECT_EQ(r[1]["reason"], ds[1].reason);
  // Without PrivateData everyone sees every decision whole.
  Harness open;
  const json o = ui_k8s(view(), ds, open.sm, ui_viewer(open.sm, open.bob), 1000)["decisions"];
  EXPECT_EQ(o[1]["reason"], ds[1].reason);
}
