// Nodes that join and leave: scontrol create/delete NodeName=..., droverd -Z registrations,
// MaxNodeCount, partitions that take them (Nodes=ALL, NodeSet Feature=) and their journal
// records.
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

// two_node_config plus MaxNodeCount=4, a Nodes=ALL partition and one for NodeSet Feature=big.
Config dynamic_config() {
  Config c = two_node_config();
  c.conf.options["MaxNodeCount"] = "4";
  core::PartitionConf all;
  all.name = "all";
  all.nodes = {"node1", "node2"};
  all.all_nodes = true;
  c.conf.partitions.push_back(all);
  core::PartitionConf big;
  big.name = "big";
  big.node_set_features = {"big"};
  c.conf.partitions.push_back(big);
  return c;
}

json create(Harness& h, const std::string& line, Effects& fx, const Caller* who = nullptr) {
  return h.sm.node_create(proto::NodeCreateRequest::from_json({{"line", line}}),
                          who ? *who : h.root, fx);
}

std::vector<std::string> listed(Harness& h, bool future) {
  std::vector<std::string> out;
  json q = {{"what", "nodes"}};
  if (future) q["future"] = true;
  const json reply = h.sm.query(proto::QueryRequest::from_json(q), h.now);
  for (const auto& n : reply["nodes"]) out.push_back(n["name"]);
  return out;
}

std::vector<std::string> partition_nodes(Harness& h, const std::string& name) {
  const json reply = h.sm.query(proto::QueryRequest::from_json({{"what", "partitions"}}), h.now);
  for (const auto& p : reply["partitions"])
    if (p["name"] == name) return p["nodes"].get<std::vector<std::string>>();
  return {};
}

json agent(const std::string& conf, bool dynamic = true) {
  return {{"running", json::array()},
          {"cpus", 8},
          {"real_memory", 4000},
          {"dynamic", dynamic},
          {"conf", conf}};
}

TEST(DynamicNodes, CreateChecksStateAndParsesAsSlurmDoes) {
  Harness h(dynamic_config());
  Effects fx;
  json r = create(h, "NodeName=d1 CPUs=2 State=IDLE", fx);
  EXPECT_EQ(r["error"], "Invalid node state specified");
  EXPECT_EQ(r["detail"], "Only State=FUTURE and State=CLOUD allowed for nodes created by scontrol");
  r = create(h, "NodeName=d1 CPUs=2", fx);  // no State: not FUTURE either
  EXPECT_EQ(r["error"], "Invalid node state specified");
  r = create(h, "NodeName=d1 CPUs=abc State=FUTURE", fx);
  EXPECT_EQ(r["error"], "Unspecified error");
  EXPECT_EQ(r["detail"], "Failed to parse nodeline 'NodeName=d1 CPUs=abc State=FUTURE'");
  r = create(h, "NodeName=d1 Bogus=1 State=FUTURE", fx);
  EXPECT_EQ(r["error"], "Unspecified error");
  EXPECT_EQ(create(h, "NodeName=d1 CPUs=2 State=FUTURE", fx, &h.alice)["error"], "Invalid user id");
  EXPECT_EQ(create(h, "NodeName=node1 CPUs=2 State=FUTURE", fx)["detail"],
            "Node 'node1' already exists in the node table");
  EXPECT_EQ(h.sm.find_node("d1"), nullptr);
  EXPECT_TRUE(fx.writes<journal::Node>().empty());
}

TEST(DynamicNodes, FutureNodesAreListedOnlyWhenAskedAndJoinTheirPartitions) {
  Harness h(dynamic_config());
  Effects fx;
  ASSERT_TRUE(create(h, "NodeName=d1 CPUs=4 RealMemory=2000 Feature=big State=FUTURE", fx)["ok"]);
  EXPECT_EQ(fx.writes<journal::Node>(), std::vector<journal::Node>{{"d1"}});
  EXPECT_EQ(listed(h, false), (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(listed(h, true), (std::vector<std::string>{"node1", "node2", "d1"}));
  const json view = h.sm.query(
      proto::QueryRequest::from_json({{"what", "nodes"}, {"future", true}}), h.now)["nodes"][2];
  EXPECT_EQ(view["state_long"], "FUTURE");
  EXPECT_EQ(view["dynamic"], true);
  EXPECT_EQ(view["cpus"], 4);
  EXPECT_EQ(partition_nodes(h, "all"), (std::vector<std::string>{"node1", "node2", "d1"}));
  EXPECT_EQ(partition_nodes(h, "big"), (std::vector<std::string>{"d1"}));
  EXPECT_EQ(partition_nodes(h, "debug"), (std::vector<std::string>{"node1", "node2"}));
  // Silence is no failure while no agent is expected yet.
  Effects later;
  h.sm.tick(h.now + 10 * 3600, later);
  EXPECT_FALSE(h.sm.find_node("d1")->down);
  // Its agent registers (a plain droverd --node d1): it is in service.
  Effects reg;
  ASSERT_TRUE(h.sm.agent_register("d1", registration(agent("", false)), h.now, reg)["ok"]);
  EXPECT_EQ(listed(h, false), (std::vector<std::string>{"node1", "node2", "d1"}));
  EXPECT_EQ(reg.writes<journal::Node>(), std::vector<journal::Node>{{"d1"}});
  EXPECT_EQ(h.sm.find_node("d1")->state_short(), "idle");
}

TEST(DynamicNodes, CloudNodesArePoweredDownUntilTheirAgentRegisters) {
  Harness h(dynamic_config());
  Effects fx;
  ASSERT_TRUE(create(h, "NodeName=c1 CPUs=4 RealMemory=2000 Feature=big State=CLOUD", fx)["ok"]);
  // Listed (unlike FUTURE), as Slurm's power saving shows them.
  EXPECT_EQ(listed(h, false), (std::vector<std::string>{"node1", "node2", "c1"}));
  auto view = [&] {
    return h.sm.query(proto::QueryRequest::from_json({{"what", "nodes"}}), h.now)["nodes"][2];
  };
  EXPECT_EQ(view()["state_short"], "idle~");
  EXPECT_EQ(view()["state_long"], "IDLE+CLOUD+POWERED_DOWN");
  EXPECT_EQ(partition_nodes(h, "big"), std::vector<std::string>{"c1"});
  // A job for its partition is accepted (it could run there) and does not start there.
  json s = h.spec(4);
  s["partitions"] = json::array({"big"});
  const uint64_t id = h.submit(h.alice, s, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_TRUE(h.launches(fx).empty());
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);

  // Its start is asked for, then given up, then asked for again; only CLOUD nodes take these.
  auto update = [&](const std::string& node, const std::string& state) {
    proto::NodeUpdateRequest r;
    r.nodes = node;
    r.state = state;
    return h.sm.node_update(r, h.root, h.now, fx);
  };
  ASSERT_TRUE(update("c1", "POWER_UP")["ok"]);
  EXPECT_EQ(view()["state_short"], "idle#");
  EXPECT_EQ(view()["state_long"], "IDLE+CLOUD+POWERING_UP");
  ASSERT_TRUE(update("c1", "POWER_DOWN")["ok"]);
  EXPECT_EQ(view()["state_short"], "idle~");
  EXPECT_FALSE(update("node1", "POWER_UP").value("ok", false));
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->reason, "Resources");
  ASSERT_TRUE(update("c1", "POWER_UP")["ok"]);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->reason, "NodesPoweringUp");  // what squeue shows meanwhile

  // Its agent registers: in service, and the job runs there.
  Effects reg;
  ASSERT_TRUE(h.sm.agent_register("c1", registration(agent("", false)), h.now, reg)["ok"]);
  EXPECT_EQ(view()["state_short"], "idle");
  h.sm.schedule(h.now, reg);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);

  // A restart keeps it a CLOUD node: powered down again until its agent comes back.
  const json record = h.sm.node_admin_record("c1");
  StateMachine fresh(dynamic_config(), sched::make_scheduler());
  fresh.restore_dynamic_nodes({{"c1", record}});
  fresh.restore(1, {}, h.now);
  EXPECT_EQ(fresh.query(proto::QueryRequest::from_json({{"what", "nodes"}}),
                        h.now)["nodes"][2]["state_short"],
            "idle~");
}

TEST(DynamicNodes, MaxNodeCountBoundsTheTable) {
  Harness h(dynamic_config());
  Effects fx;
  // scontrol show config shows the bound as set (two nodes so far).
  const json config = h.sm.query(proto::QueryRequest::from_json({{"what", "config"}}), h.now);
  bool shown = false;
  for (const auto& kv : config["config"]["main"])
    shown = shown || (kv[0] == "MaxNodeCount" && kv[1] == "4");
  EXPECT_TRUE(shown) << config["config"]["main"].dump();
  // Two fit (4 in all); a request that would pass the bound adds none of its nodes.
  EXPECT_EQ(create(h, "NodeName=d[1-3] CPUs=1 State=CLOUD", fx)["error"],
            "Unable to add node 'd3', node table is full");
  EXPECT_EQ(h.sm.find_node("d1"), nullptr);
  ASSERT_TRUE(create(h, "NodeName=d[1-2] CPUs=1 State=CLOUD", fx)["ok"]);
  EXPECT_EQ(h.sm.agent_register("x1", registration(agent("CPUs=2")), h.now, fx)["error"],
            "Unable to add node 'x1', node table is full");
  // Without MaxNodeCount there is no room beyond slurm.conf's nodes.
  Harness plain;
  EXPECT_EQ(create(plain, "NodeName=d1 CPUs=1 State=FUTURE", fx)["error"],
            "Unable to add node 'd1', node table is full");
}

TEST(DynamicNodes, AnUnlistedAgentJoinsOnlyAsADynamicNodeAndRunsJobs) {
  Harness h(dynamic_config());
  Effects fx;
  EXPECT_EQ(h.sm.agent_register("x1", registration(agent("", false)), h.now, fx)["error"],
            "Invalid node name specified");
  EXPECT_EQ(
      h.sm.agent_register("x1", registration(agent("NodeName=y Gres=gpu:1")), h.now, fx)["error"],
      "Failed to parse nodeline 'NodeName=x1 NodeName=y Gres=gpu:1'");
  EXPECT_EQ(h.sm.find_node("x1"), nullptr);
  // --conf over what the agent found: its RealMemory stays, CPUs come from --conf.
  ASSERT_TRUE(
      h.sm.agent_register("x1", registration(agent("CPUs=6 Feature=big")), h.now, fx)["ok"]);
  const core::Node* n = h.sm.find_node("x1");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->cpus, 6);
  EXPECT_EQ(n->real_memory_mb, 4000);
  EXPECT_TRUE(n->registered);
  EXPECT_EQ(partition_nodes(h, "big"), (std::vector<std::string>{"x1"}));
  // A job only x1 can hold runs there.
  json s = h.spec(6);
  s["partitions"] = {"all"};
  Effects run;
  const uint64_t id = h.submit(h.alice, s, run);
  h.sm.schedule(h.now, run);
  ASSERT_EQ(h.launches(run).size(), 1u);
  EXPECT_EQ(h.sm.find_job(id)->alloc.at(0).node, "x1");
  // The same agent (or a replacement) registering again is the same node.
  Effects again;
  ASSERT_TRUE(
      h.sm.agent_register("x1", registration(agent("CPUs=6 Feature=big")), h.now, again)["ok"]);
  EXPECT_EQ(h.sm.find_node("x1"), n);
  EXPECT_EQ(listed(h, false).size(), 3u);
}

TEST(DynamicNodes, DeleteIsRefusedWhileBusyOrReservedAndTakesTheNodeEverywhere) {
  Harness h(dynamic_config());
  Effects fx;
  ASSERT_TRUE(h.sm.agent_register("x1", registration(agent("CPUs=6")), h.now, fx)["ok"]);
  EXPECT_EQ(h.sm.node_delete(proto::NodeDeleteRequest::from_json({{"nodes", "nope"}}), h.root,
                             fx)["error"],
            "Invalid node name specified");
  EXPECT_EQ(h.sm.node_delete(proto::NodeDeleteRequest::from_json({{"nodes", "x1"}}), h.alice,
                             fx)["error"],
            "Invalid user id");
  json s = h.spec(6);
  s["partitions"] = {"all"};
  const uint64_t id = h.submit(h.alice, s, fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  EXPECT_EQ(
      h.sm.node_delete(proto::NodeDeleteRequest::from_json({{"nodes", "x1"}}), h.root, fx)["error"],
      "Requested nodes are busy");
  Effects end;
  h.sm.agent_exited("x1", exit_report({{"job_id", id}, {"status", 0}}), h.now, end);
  ASSERT_EQ(h.sm.find_node("x1")->running_jobs, 0);
  // In a reservation: refused too.
  core::ResvRequest rr;
  rr.name = "r1";
  rr.nodes = "x1";
  rr.start = h.now;
  rr.duration_min = 10;
  rr.users = "root";
  Effects rfx;
  h.sm.user_exists = [](const std::string&) { return true; };
  ASSERT_TRUE(h.sm.reservation(
      proto::ReservationRequest::from_json({{"action", "create"}, {"request", rr}}), h.root, h.now,
      rfx)["ok"]);
  EXPECT_EQ(
      h.sm.node_delete(proto::NodeDeleteRequest::from_json({{"nodes", "x1"}}), h.root, fx)["error"],
      "Requested nodes are busy");
  ASSERT_TRUE(
      h.sm.reservation(proto::ReservationRequest::from_json({{"action", "delete"}, {"name", "r1"}}),
                       h.root, h.now, rfx)["ok"]);
  Effects del;
  ASSERT_TRUE(
      h.sm.node_delete(proto::NodeDeleteRequest::from_json({{"nodes", "x1"}}), h.root, del)["ok"]);
  EXPECT_EQ(del.writes<journal::NodeGone>(), std::vector<journal::NodeGone>{{"x1"}});
  EXPECT_EQ(h.sm.find_node("x1"), nullptr);
  EXPECT_EQ(listed(h, true), (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(partition_nodes(h, "all"), (std::vector<std::string>{"node1", "node2"}));
  // Jobs keep running on the other nodes and the engine takes the change.
  json small = h.spec(1);
  small["partitions"] = {"all"};
  const uint64_t other = h.submit(h.alice, small, del);
  h.sm.schedule(h.now, del);
  EXPECT_EQ(h.sm.find_job(other)->state, core::JobState::Running);
}

TEST(DynamicNodes, JournalRecordsBringThemBackInOrder) {
  Config config = dynamic_config();
  config.conf.options["MaxNodeCount"] = "8";
  Harness h(config);
  Effects fx;
  ASSERT_TRUE(create(h, "NodeName=zz CPUs=3 RealMemory=300 Feature=big State=FUTURE", fx)["ok"]);
  ASSERT_TRUE(h.sm.agent_register("aa", registration(agent("CPUs=5")), h.now, fx)["ok"]);
  // A shape over boards comes back the same from its definition.
  ASSERT_TRUE(
      create(h, "NodeName=bb Boards=2 SocketsPerBoard=2 CoresPerSocket=2 State=FUTURE", fx)["ok"]);
  std::map<std::string, json> records;
  for (const auto& [name] : fx.writes<journal::Node>())
    records[name] = h.sm.node_admin_record(name);
  EXPECT_EQ(records["zz"]["future"], true);
  EXPECT_EQ(records["aa"]["future"], false);
  EXPECT_EQ(h.sm.node_admin_record("node1").count("definition"), 0u);

  StateMachine fresh(config, sched::make_scheduler());
  fresh.restore_dynamic_nodes(records);
  fresh.restore(1, {}, h.now);
  for (const auto& [name, r] : records) fresh.restore_node_admin(name, r);
  std::vector<std::string> names;
  const json reply =
      fresh.query(proto::QueryRequest::from_json({{"what", "nodes"}, {"future", true}}), h.now);
  for (const auto& n : reply["nodes"]) names.push_back(n["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"node1", "node2", "zz", "aa", "bb"}));  // as they joined
  EXPECT_EQ(fresh.find_node("zz")->cpus, 3);
  EXPECT_EQ(fresh.find_node("zz")->real_memory_mb, 300);
  EXPECT_EQ(fresh.find_node("aa")->cpus, 5);
  EXPECT_EQ(fresh.find_node("bb")->sockets, 4);
  EXPECT_EQ(fresh.find_node("bb")->cpus, 8);
  EXPECT_EQ(fresh.query(proto::QueryRequest::from_json({{"what", "nodes"}}), h.now)["nodes"].size(),
            3u);  // zz, bb still FUTURE
  EXPECT_TRUE(fresh.knows_node("aa"));
}

}  // namespace
