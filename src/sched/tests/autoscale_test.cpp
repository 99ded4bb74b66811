#include "sched/autoscale.hpp"

#include <gtest/gtest.h>

#include "sched/tests/cluster_fixture.hpp"

namespace drover::sched {
namespace {

using test_cluster::Cluster;

constexpr int64_t kNow = 1'700'000'040;  // on the minute grid

NodeSetView node_set(const std::string& name, int cpus, int max, double cost = 1,
                     const std::string& gres = "", const std::string& partition = "batch") {
  NodeSetView s;
  s.name = name;
  s.shape.cpus = cpus;
  s.shape.cores_per_socket = cpus;
  s.shape.real_memory_mb = 64000;
  s.shape.gres = gres;
  s.partitions = {partition};
  s.cost = cost;
  s.max_replicas = max;
  s.start_delay_s = 60;
  s.idle_timeout_s = 600;
  return s;
}

// A cluster with one (empty) partition "batch" and no nodes yet.
Cluster empty_cluster() {
  Cluster c;
  c.partitions = {PartitionView{"batch", {}, "", -1, -1, 1}};
  return c;
}

TEST(Autoscale, MultiNodeJobGetsAllItsNodesInOneDecision) {
  Cluster c = empty_cluster();
  c.add_job(12, 60, 1, 3, true);  // sbatch -N3 -n12
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  ASSERT_EQ(d.sets.size(), 1u);
  EXPECT_EQ(d.sets[0].add, 3);
  EXPECT_EQ(d.sets[0].wanted, 3);
  EXPECT_EQ(d.sets[0].scaled_for, std::vector<uint64_t>{1});
  EXPECT_TRUE(d.unrunnable.empty());
}

TEST(Autoscale, EveryPendingJobCountsInTheSameDecision) {
  Cluster c = empty_cluster();
  for (int i = 0; i < 5; ++i) c.add_job(4, 60);  // each fills a node
  c.add_job(8, 60, 1, 2, true);
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 100)}, kNow);
  EXPECT_EQ(d.sets[0].add, 7);
  EXPECT_EQ(d.sets[0].scaled_for.size(), 6u);
}

TEST(Autoscale, AnArraysTasksAreScaledForInOneDecision) {
  Cluster c = empty_cluster();
  core::Job& array = c.add_job(4, 60);  // each task fills a node
  array.array_job_id = array.id;
  array.array_pending.insert(0, 5);
  ClusterView v = c.view();
  v.start_limit[array.id] = 6;
  Autoscaler a;
  auto d = a.decide(v, {node_set("cpu", 4, 10)}, kNow);
  EXPECT_EQ(d.sets[0].add, 6);
  EXPECT_EQ(d.sets[0].scaled_for, std::vector<uint64_t>{array.id});
  // Within its running limit only.
  v.start_limit[array.id] = 2;
  d = a.decide(v, {node_set("cpu", 4, 10)}, kNow);
  EXPECT_EQ(d.sets[0].add, 2);
}

TEST(Autoscale, SmallJobsShareANewNode) {
  Cluster c = empty_cluster();
  for (int i = 0; i < 4; ++i) c.add_job(1, 60);
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 10)}, kNow);
  EXPECT_EQ(d.sets[0].add, 1);
}

TEST(Autoscale, ExclusiveJobsTakeANodeEach) {
  Cluster c = empty_cluster();
  for (int i = 0; i < 3; ++i) c.add_job(1, 60).spec.exclusive = true;
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 10)}, kNow);
  EXPECT_EQ(d.sets[0].add, 3);
}

TEST(Autoscale, TooLargeAJobIsNotScaledForAndSaysWhy) {
  Cluster c = empty_cluster();
  c.add_job(5, 60, 1, 5, true);  // -N5, the set has at most 4
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  ASSERT_EQ(d.unrunnable.size(), 1u);
  EXPECT_EQ(d.unrunnable[0].job_id, 1u);
  EXPECT_NE(d.unrunnable[0].reason.find("maxReplicas"), std::string::npos)
      << d.unrunnable[0].reason;
}

TEST(Autoscale, TooLargeAJobBehindAWaitingOneIsNotScaledForEither) {
  Cluster c = empty_cluster();
  c.add_job(3, 60, 1, 3, true);  // -N3: scaled for
  c.add_job(5, 60, 1, 5, true);  // -N5 behind it ("Priority"), the set has at most 4
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  EXPECT_EQ(d.sets[0].add, 3);
  ASSERT_EQ(d.unrunnable.size(), 1u);
  EXPECT_EQ(d.unrunnable[0].job_id, 2u);
}

TEST(Autoscale, AShapeNoSetHasIsNotScaledFor) {
  Cluster c = empty_cluster();
  c.add_job(1, 60).spec.gpus_per_node = "1";
  c.add_job(1, 60).spec.constraint = "fast";
  c.add_job(8, 60, 1, 1, true);  // 8 CPUs on one node; nodes have 4
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 8)}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  ASSERT_EQ(d.unrunnable.size(), 3u);
  for (const auto& u : d.unrunnable)
    EXPECT_NE(u.reason.find("no node shape"), std::string::npos) << u.reason;
}

TEST(Autoscale, CheaperSetFirstAndGpuJobsOnlyOnGpus) {
  Cluster c = empty_cluster();
  c.add_job(2, 60);                                // CPU job
  c.add_job(1, 60).spec.gpus_per_node = "a100:2";  // GPU job
  Autoscaler a;
  // The dear CPU set comes first: cost, not order, decides.
  auto d = a.decide(c.view(),
                    {node_set("dear", 4, 4, 5), node_set("gpu", 8, 2, 20, "gpu:a100:4"),
                     node_set("cheap", 4, 4, 1)},
                    kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_EQ(d.sets[1].add, 1);
  EXPECT_EQ(d.sets[1].scaled_for, std::vector<uint64_t>{2});
  EXPECT_EQ(d.sets[2].add, 1);
  EXPECT_EQ(d.sets[2].scaled_for, std::vector<uint64_t>{1});
}

TEST(Autoscale, GpuTypeDecidesTheSet) {
  Cluster c = empty_cluster();
  c.add_job(1, 60).spec.gpus_per_node = "h100:1";
  Autoscaler a;
  auto d = a.decide(
      c.view(), {node_set("a100", 8, 2, 1, "gpu:a100:4"), node_set("h100", 8, 2, 9, "gpu:h100:8")},
      kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_EQ(d.sets[1].add, 1);
}

TEST(Autoscale, FeaturesDecideTheSet) {
  Cluster c = empty_cluster();
  c.add_job(1, 60).spec.constraint = "ib";
  NodeSetView ib = node_set("ib", 4, 2, 3);
  ib.shape.features = {"ib"};
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("plain", 4, 2, 1), ib}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_EQ(d.sets[1].add, 1);
}

TEST(Autoscale, ASetServesOnlyItsPartitions) {
  Cluster c = empty_cluster();
  c.partitions.push_back(PartitionView{"gpu", {}, "", -1, -1, 1});
  c.add_job(1, 60);  // batch
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("g", 4, 2, 1, "", "gpu"), node_set("b", 4, 2, 9)}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_EQ(d.sets[1].add, 1);
}

TEST(Autoscale, AnIdleNodeThatExistsIsUsedFirst) {
  Cluster c;
  c.add_nodes(1, 4, 64000);
  c.one_partition();
  c.add_job(2, 60);
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
}

TEST(Autoscale, ANodeFreeingAsSoonAsANewOneWouldBeUpIsWaitedFor) {
  Cluster c;
  c.add_nodes(1, 4, 64000);
  c.one_partition();
  auto& running = c.add_job(4, 1);  // ends within a minute
  c.run(running, kNow - 30, {core::NodeAlloc("n1", 4, 4, 4)});
  c.add_job(4, 60);
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
}

TEST(Autoscale, ALongWaitIsCutShortByANewNode) {
  Cluster c;
  c.add_nodes(1, 4, 64000);
  c.one_partition();
  auto& running = c.add_job(4, 120);
  c.run(running, kNow - 30, {core::NodeAlloc("n1", 4, 4, 4)});
  c.add_job(4, 60);
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  EXPECT_EQ(d.sets[0].add, 1);
  EXPECT_EQ(d.sets[0].scaled_for, std::vector<uint64_t>{2});
}

TEST(Autoscale, NodesStartingAlreadyAreCountedOn) {
  Cluster c = empty_cluster();
  c.add_job(4, 60);
  c.add_job(4, 60);
  NodeSetView s = node_set("cpu", 4, 4);
  s.members.push_back({-1, kNow + 30, -1});  // a pod not registered yet
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].add, 1);  // one job on the starting node, one new node
  // Full: nothing more to add, nothing to report.
  s.max_replicas = 1;
  d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_TRUE(d.unrunnable.empty());
}

TEST(Autoscale, AStartingNodeInTheViewIsKeptFromJobsUntilUp) {
  Cluster c;
  c.add_nodes(1, 4, 64000);
  c.one_partition();
  c.nodes[0].registered = false;  // its pod is starting
  c.add_job(4, 60);
  NodeSetView s = node_set("cpu", 4, 4);
  s.members.push_back({0, kNow + 30, -1});
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
}

TEST(Autoscale, MinimumReplicasAreKept) {
  Cluster c = empty_cluster();
  NodeSetView s = node_set("cpu", 4, 4);
  s.min_replicas = 2;
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].add, 2);
}

// Two nodes of a set, idle since the given times.
Cluster two_idle_members(NodeSetView& s) {
  Cluster c;
  c.add_nodes(2, 4, 64000);
  c.one_partition();
  s = node_set("cpu", 4, 2);
  s.members = {{0, 0, kNow - 700}, {1, 0, kNow - 100}};
  return c;
}

TEST(Autoscale, IdlePastTheTimeoutIsRemoved) {
  NodeSetView s;
  Cluster c = two_idle_members(s);
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_EQ(d.sets[0].remove, std::vector<int>{0});
  EXPECT_EQ(d.next_check, kNow - 100 + 600);  // when the other one's time runs out
  s.min_replicas = 2;
  d = a.decide(c.view(), {s}, kNow);
  EXPECT_TRUE(d.sets[0].remove.empty());
}

TEST(Autoscale, ScaleToZero) {
  NodeSetView s;
  Cluster c = two_idle_members(s);
  s.members[1].idle_since = kNow - 600;
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].remove, (std::vector<int>{0, 1}));
  EXPECT_EQ(d.next_check, AutoscaleDecision::kNoCheck);
}

TEST(Autoscale, AnIdleNodeThePlanWantsSoonStays) {
  Cluster c;
  c.add_nodes(2, 4, 64000);
  c.one_partition();
  auto& running = c.add_job(4, 5);  // n2 frees in 5 minutes
  c.run(running, kNow - 30, {core::NodeAlloc("n2", 4, 4, 4)});
  c.add_job(8, 60, 1, 2, true);  // wants n1 and n2 together
  NodeSetView s = node_set("cpu", 4, 2);
  s.members = {{0, 0, kNow - 3600}, {1, 0, -1}};
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_TRUE(d.sets[0].remove.empty());
  EXPECT_EQ(d.sets[0].add, 0);
  // Were the job planned beyond the timeout, and beyond when a new node could be up, n1
  // would go.
  s.idle_timeout_s = 120;
  d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].remove, std::vector<int>{0});
  // A short timeout does not let go of a node wanted before a new one could be up.
  s.idle_timeout_s = 0;
  s.start_delay_s = 600;
  d = a.decide(c.view(), {s}, kNow);
  EXPECT_TRUE(d.sets[0].remove.empty());
}

TEST(Autoscale, LimitsHoldBackWhatTheEngineHoldsBack) {
  Cluster c = empty_cluster();
  c.add_job(4, 60);
  c.partitions[0].max_time_min = 30;  // the job asks for an hour
  Autoscaler a;
  auto d = a.decide(c.view(), {node_set("cpu", 4, 4)}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_TRUE(d.unrunnable.empty());  // a limit, not a matter of nodes
}

TEST(Autoscale, ANodeWantedOnlyLaterIsLeftForLater) {
  // One set, two nodes at most, one up and busy for two hours; a two-node job must wait
  // for it, so a new node now would idle for two hours.
  Cluster c;
  c.add_nodes(1, 4, 64000);
  c.one_partition();
  auto& running = c.add_job(4, 120);
  c.run(running, kNow - 30, {core::NodeAlloc("n1", 4, 4, 4)});
  c.add_job(8, 60, 1, 2, true);
  NodeSetView s = node_set("cpu", 4, 2);
  s.members = {{0, 0, -1}};
  Autoscaler a;
  auto d = a.decide(c.view(), {s}, kNow);
  EXPECT_EQ(d.sets[0].add, 0);
  EXPECT_EQ(d.sets[0].wanted, 1);
  EXPECT_GT(d.next_check, kNow + 3600);
  EXPECT_LE(d.next_check, kNow + 120 * 60);
}

}  // namespace
}  // namespace drover::sched

namespace drover::sched {
namespace {

TEST(StartingNodeWindows, JobsPlanOnAStartingNodeAndNothingStartsThereBefore) {
  Cluster c;
  c.add_nodes(2, 4, 64000);
  c.one_partition();
  c.add_job(8, 60, 1, 2, true);  // both nodes: n1 is up, n2 starting
  c.add_job(1, 5);               // would fit on n1 now, but it holds the first job up
  ClusterView v = c.view();
  v.reservations = starting_node_windows({{1, kNow + 60}, {0, kNow - 5}}, kNow);
  ASSERT_EQ(v.reservations.size(), 1u);  // n1 is up already
  auto d = make_scheduler()->schedule(v, kNow);
  EXPECT_TRUE(d.starts.empty());
  auto plans = test_cluster::planned(d);
  ASSERT_EQ(plans.count(1), 1u);
  EXPECT_GE(plans[1], kNow + 60);
  EXPECT_LE(plans[1], kNow + 120);
  // Without the window both nodes are free now and the wide job starts at once.
  v.reservations.clear();
  d = make_scheduler()->schedule(v, kNow);
  EXPECT_FALSE(d.starts.empty());
}

}  // namespace
}  // namespace drover::sched
