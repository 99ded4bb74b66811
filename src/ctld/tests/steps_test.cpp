// srun's steps: layout on the allocation, credentials, ends; allocations without a batch shell.
#include <gtest/gtest.h>

#include "ctld/step_layout.hpp"
#include "ctld/tests/harness.hpp"
#include "net/auth.hpp"
#include "net/keys.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

std::vector<core::NodeAlloc> two_nodes(int cpus) {
  std::vector<core::NodeAlloc> alloc;
  for (const char* n : {"node1", "node2"}) {
    core::NodeAlloc a(n, cpus, 0, cpus);
    for (int i = 0; i < cpus; ++i) a.cpu_ids.push_back(static_cast<uint16_t>(i));
    alloc.push_back(a);
  }
  return alloc;
}

std::vector<std::vector<uint32_t>> tasks_of(const StepLayout& l) { return l.tasks; }

TEST(StepLayout, BlockAndCyclicPlacement) {
  StepRequest r;
  r.ntasks = 3;
  r.nodes_min = 2;
  StepLayout l = layout_step(two_nodes(4), {}, r);
  ASSERT_EQ(l.error, "");
  EXPECT_EQ(tasks_of(l), (std::vector<std::vector<uint32_t>>{{0, 1}, {2}}));
  r.cyclic = true;
  r.ntasks = 4;
  r.exact = true;
  l = layout_step(two_nodes(4), {}, r);
  EXPECT_EQ(tasks_of(l), (std::vector<std::vector<uint32_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(l.alloc[0].cpu_ids, (std::vector<uint16_t>{0, 1}));
}

TEST(StepLayout, DefaultsAndNodeCounts) {
  StepRequest r;  // neither -n nor -N: one task on every node
  StepLayout l = layout_step(two_nodes(2), {}, r);
  EXPECT_EQ(l.ntasks, 2);
  EXPECT_EQ(l.alloc.size(), 2u);
  r.ntasks = 1;  // one task needs one node
  l = layout_step(two_nodes(2), {}, r);
  EXPECT_EQ(l.alloc.size(), 1u);
  r = {};
  r.ntasks_per_node = 2;
  l = layout_step(two_nodes(2), {}, r);
  EXPECT_EQ(l.ntasks, 4);
  EXPECT_EQ(tasks_of(l), (std::vector<std::vector<uint32_t>>{{0, 1}, {2, 3}}));
  r = {};
  r.nodelist = "node2";
  r.ntasks = 1;
  l = layout_step(two_nodes(2), {}, r);
  ASSERT_EQ(l.alloc.size(), 1u);
  EXPECT_EQ(l.alloc[0].node, "node2");
}

TEST(StepLayout, RefusesWhatTheAllocationCannotHold) {
  StepRequest r;
  r.ntasks = 5;
  EXPECT_EQ(layout_step(two_nodes(2), {}, r).error, "More processors requested than permitted");
  r = {};
  r.nodes_min = 3;
  EXPECT_EQ(layout_step(two_nodes(2), {}, r).error, "Only allocated 2 nodes asked for 3");
  r = {};
  r.nodelist = "node7";
  EXPECT_EQ(layout_step(two_nodes(2), {}, r).error,
            "Requested node configuration is not available");
  r = {};
  r.ntasks = 1;
  r.cpus_per_task = 3;
  EXPECT_EQ(layout_step(two_nodes(2), {}, r).error, "More processors requested than permitted");
}

TEST(StepLayout, WithoutExactAStepTakesEveryFreeCpuOfItsNodes) {
  StepRequest r;
  r.ntasks = 1;
  StepLayout l = layout_step(two_nodes(4), {}, r);
  ASSERT_EQ(l.alloc.size(), 1u);
  EXPECT_EQ(l.alloc[0].cpus, 4);
  EXPECT_EQ(l.alloc[0].tasks, 1);
  r.exact = true;
  EXPECT_EQ(layout_step(two_nodes(4), {}, r).alloc[0].cpus, 1);
}

TEST(StepLayout, BusyCpusMakeAStepWaitUnlessItOverlaps) {
  StepRequest r;
  r.ntasks = 4;
  StepLayout first = layout_step(two_nodes(2), {}, r);
  ASSERT_EQ(first.error, "");
  core::Step running;
  running.alloc = first.alloc;
  StepRequest one;
  one.ntasks = 1;
  StepLayout second = layout_step(two_nodes(2), {running}, one);
  EXPECT_TRUE(second.busy);
  EXPECT_EQ(second.error, "Requested nodes are busy");
  one.overlap = true;
  EXPECT_EQ(layout_step(two_nodes(2), {running}, one).error, "");
  running.state = core::JobState::Completed;
  one.overlap = false;
  second = layout_step(two_nodes(2), {running}, one);
  EXPECT_EQ(second.error, "");
  // Half the CPUs busy: the next step gets the others.
  StepRequest two;
  two.ntasks = 2;
  two.nodes_min = 2;
  two.exact = true;
  StepLayout half = layout_step(two_nodes(2), {}, two);
  core::Step s;
  s.alloc = half.alloc;
  StepLayout rest = layout_step(two_nodes(2), {s}, two);
  ASSERT_EQ(rest.error, "");
  EXPECT_EQ(rest.alloc[0].cpu_ids, (std::vector<uint16_t>{1}));
}

struct StepHarness : Harness {
  StepHarness() {
    sm.set_cluster_key("k3y");
    Effects fx;
    for (const char* n : {"node1", "node2"})
      sm.agent_register(n,
                        registration({{"running", json::array()},
                                      {"address", "10.0.0.5:40000"},
                                      {"launch_addr",
                                       std::string("0.0.0.0:") + (n[4] == '1' ? "7001" : "7002")}}),
                        now, fx);
  }
  uint64_t allocation(const Caller& who, int ntasks, int nodes, int64_t mem_mb = -1) {
    json s = spec(ntasks);
    if (mem_mb >= 0) s["mem_per_node_mb"] = mem_mb;
    s["interactive"] = true;
    s["nodes_min"] = nodes;
    s["nodes_set"] = true;
    s["script"] = "";
    Effects fx;
    uint64_t id = submit(who, s, fx);
    sm.schedule(now, fx);
    EXPECT_TRUE(launches(fx).empty()) << "an allocation launches nothing";
    return id;
  }
};

TEST(Steps, CreateSignsACredentialForTheAgents) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 4, 2);
  ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  Effects fx;
  json r =
      h.sm.step_create(proto::StepCreateRequest::from_json(
                           {{"job_id", id}, {"ntasks", 3}, {"nodes_min", 2}, {"name", "hostname"}}),
                       h.alice, h.now, fx);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["step_id"], 0);
  EXPECT_EQ(r["nodelist"], "node[1-2]");
  EXPECT_EQ(r["tasks_per_node"], "2,1");
  EXPECT_EQ(r["nodes"][0]["addr"], "10.0.0.5:7001");
  const std::string cred = r["cred"];
  // Signed with the controller's key pair: the agents' public key checks it; each node gets
  // its own step key, derived from that node's key.
  const std::string sig = r["sig"];
  EXPECT_TRUE(net::step_verify(net::step_public_key("k3y"), "step-cred|" + cred, sig));
  EXPECT_FALSE(net::step_verify(net::step_public_key("k3y"), "step-cred|" + cred + " ", sig));
  EXPECT_EQ(r["step_keys"]["node1"], net::step_key(net::node_key("k3y", "node1"), sig));
  EXPECT_EQ(r["step_keys"]["node2"], net::step_key(net::node_key("k3y", "node2"), sig));
  EXPECT_NE(r["step_keys"]["node1"], r["step_keys"]["node2"]);
  json c = json::parse(cred);
  EXPECT_EQ(c["uid"], 1000);
  EXPECT_EQ(c["nodes"]["node2"]["tasks"], json::array({2}));
  EXPECT_EQ(h.sm.find_job(id)->steps.size(), 1u);
  // Others may not start steps in alice's allocation.
  EXPECT_EQ(h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}}), h.bob, h.now,
                             fx)["error"],
            "Access/permission denied");
  // The next step waits for CPUs (3 of 4 busy, 2 asked for) until the first ends.
  json busy = h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}, {"ntasks", 2}}),
                               h.alice, h.now, fx);
  EXPECT_FALSE(busy["ok"]);
  EXPECT_TRUE(busy["busy"]);
  ASSERT_TRUE(h.sm.step_complete(
      proto::StepCompleteRequest::from_json({{"job_id", id}, {"step_id", 0}, {"exit_code", 3}}),
      h.alice, h.now + 5, fx)["ok"]);
  EXPECT_EQ(h.sm.find_job(id)->steps[0].state, core::JobState::Failed);
  json next = h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}, {"ntasks", 2}}),
                               h.alice, h.now, fx);
  ASSERT_TRUE(next["ok"]) << next.dump();
  EXPECT_EQ(next["step_id"], 1);
}

TEST(Steps, AStepEndsWhenEveryNodeReportsItsTasksGoneEvenWithoutSrun) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 4, 2);
  Effects fx;
  ASSERT_TRUE(h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}, {"ntasks", 4}}),
                               h.alice, h.now, fx)["ok"]);
  h.sm.agent_step_exited("node1", step_exit_report({{"job_id", id}, {"step_id", 0}, {"status", 0}}),
                         h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->steps[0].state, core::JobState::Running);
  h.sm.agent_step_exited("node2", step_exit_report({{"job_id", id}, {"step_id", 0}, {"status", 9}}),
                         h.now + 1, fx);
  const core::Step& s = h.sm.find_job(id)->steps[0];
  EXPECT_EQ(s.state, core::JobState::Cancelled);  // killed by a signal (Slurm's sacct goldens)
  EXPECT_EQ(s.exit_signal, 9);
  // Its CPUs are free for the next step.
  EXPECT_TRUE(h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}, {"ntasks", 4}}),
                               h.alice, h.now, fx)["ok"]);
}

TEST(Steps, AStepPastItsOwnTimeLimitEndsWithoutItsJob) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 2, 1);
  Effects fx;
  ASSERT_TRUE(h.sm.step_create(
      proto::StepCreateRequest::from_json({{"job_id", id}, {"ntasks", 1}, {"time_limit_min", 1}}),
      h.alice, h.now, fx)["ok"]);
  Effects early;
  h.sm.tick(h.now + 59, early);
  EXPECT_EQ(h.sm.find_job(id)->steps[0].state, core::JobState::Running);
  Effects late;
  h.sm.tick(h.now + 60, late);
  EXPECT_EQ(h.sm.find_job(id)->steps[0].state, core::JobState::Timeout);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  bool told = false;
  for (const auto& [node, msg] : wire(late))
    if (msg["type"] == "step_signal") {
      told = true;
      EXPECT_TRUE(msg["graceful"]);
      EXPECT_NE(msg["step_notice"].get<std::string>().find("DUE TO TIME LIMIT"), std::string::npos);
    }
  EXPECT_TRUE(told);
}

TEST(Steps, ScancelSignalsTheStepsTheBatchShellOrBothAsAsked) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 4, 2);
  Effects fx;
  ASSERT_TRUE(h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}, {"ntasks", 4}}),
                               h.alice, h.now, fx)["ok"]);
  auto sent = [&](const json& extra) {
    json req = {{"op", "cancel"}, {"jobs", json::array({std::to_string(id)})}, {"signal", 10}};
    req.update(extra);
    Effects out;
    EXPECT_TRUE(h.sm.cancel(proto::CancelRequest::from_json(req), h.alice, h.now, out)["ok"]);
    std::vector<std::string> types;
    for (const auto& [node, msg] : wire(out)) {
      types.push_back(msg["type"].get<std::string>());
      if (msg["type"] == "step_signal") {
        EXPECT_EQ(msg["signal"], 10);
        EXPECT_FALSE(msg["terminate"]);
      }
    }
    return types;
  };
  // Steps only (one message per node of the step); an allocation has no batch shell to signal.
  EXPECT_EQ(sent(json::object()), (std::vector<std::string>{"step_signal", "step_signal"}));
  EXPECT_EQ(sent({{"batch", true}}), std::vector<std::string>{});
  EXPECT_EQ(sent({{"full", true}}), (std::vector<std::string>{"step_signal", "step_signal"}));
  EXPECT_EQ(h.sm.find_job(id)->steps[0].state, core::JobState::Running);
}

TEST(Steps, AllocationEndsWhenItsHolderSaysSoAndEndsItsSteps) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 2, 1);
  Effects fx;
  ASSERT_TRUE(h.sm.step_create(proto::StepCreateRequest::from_json({{"job_id", id}}), h.alice,
                               h.now, fx)["ok"]);
  json r = h.sm.allocation_complete(
      proto::AllocationCompleteRequest::from_json({{"job_id", id}, {"status", 0}}), h.alice,
      h.now + 10, fx);
  ASSERT_TRUE(r["ok"]) << r.dump();
  const core::Job* job = h.sm.find_job(id);
  EXPECT_EQ(job->state, core::JobState::Completed);
  EXPECT_FALSE(job->completing);
  EXPECT_EQ(job->steps[0].state, core::JobState::Cancelled);
  EXPECT_EQ(h.sm.find_node("node1")->alloc_cpus, 0);
  // Every node of the allocation is told to end what the job left behind.
  int terminates = 0;
  for (const auto& [node, msg] : wire(fx)) terminates += msg["type"] == "terminate";
  EXPECT_EQ(terminates, 1);
}

TEST(Steps, CancelledOrTimedOutAllocationsFreeTheirNodesAtOnce) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 2, 1);
  Effects fx;
  json r =
      h.sm.cancel(proto::CancelRequest::from_json({{"jobs", json::array({std::to_string(id)})}}),
                  h.alice, h.now, fx);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_FALSE(h.sm.find_job(id)->completing);
  EXPECT_EQ(h.sm.find_node("node1")->alloc_cpus, 0);
}

TEST(Steps, AgentRegistrationDoesNotRequeueAnAllocation) {
  StepHarness h;
  const uint64_t id = h.allocation(h.alice, 2, 1);
  Effects fx;
  h.sm.agent_register("node1", registration({{"running", json::array()}}), h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
}

}  // namespace

// Each node's agent limits the job's memory there when the job asked for memory.
TEST(Steps, TheCredentialCarriesTheJobsMemoryOnEachNode) {
  StepHarness h;
  const uint64_t limited = h.allocation(h.alice, 2, 2, 300);
  Effects fx;
  json r = h.sm.step_create(
      proto::StepCreateRequest::from_json({{"job_id", limited}, {"ntasks", 2}, {"nodes_min", 2}}),
      h.alice, h.now, fx);
  ASSERT_TRUE(r["ok"]) << r.dump();
  json c = json::parse(r["cred"].get<std::string>());
  EXPECT_EQ(c["nodes"]["node1"]["job_mem_mb"], 300);
  EXPECT_EQ(c["nodes"]["node2"]["job_mem_mb"], 300);
  const uint64_t plain = h.allocation(h.alice, 2, 2);
  r = h.sm.step_create(
      proto::StepCreateRequest::from_json({{"job_id", plain}, {"ntasks", 2}, {"nodes_min", 2}}),
      h.alice, h.now, fx);
  ASSERT_TRUE(r["ok"]) << r.dump();
  c = json::parse(r["cred"].get<std::string>());
  EXPECT_FALSE(c["nodes"]["node1"].contains("job_mem_mb"));  // no --mem: no limit
}
