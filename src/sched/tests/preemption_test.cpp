// Preemption in the engine: preempt/partition_prio and preempt/qos, who is chosen, modes,
// GraceTime and PreemptExemptTime.
#include <gtest/gtest.h>

#include "sched/scheduler.hpp"
#include "sched/tests/cluster_fixture.hpp"

using namespace drover;
using drover::sched::test_cluster::Cluster;
using drover::sched::test_cluster::planned;
using drover::sched::test_cluster::reasons;
using drover::sched::test_cluster::started;

namespace {

std::vector<uint64_t> victims(const sched::Decisions& d) {
  std::vector<uint64_t> out;
  for (const auto& p : d.preempted) out.push_back(p.job_id);
  return out;
}

// Two 2-CPU nodes in two partitions over the same nodes: "low" (tier 1) and "high" (tier 2).
Cluster two_tiers(sched::PreemptMode mode) {
  Cluster c;
  c.add_nodes(2, 2, 1000);
  sched::PartitionView low{"low", {0, 1}, "", -1, -1, 1};
  sched::PartitionView high{"high", {0, 1}, "", -1, -1, 2};
  low.grace_time_s = 30;
  c.partitions = {low, high};
  c.params.policy = sched::Policy::Conservative;
  c.preemption.type = sched::PreemptionView::Type::PartitionPrio;
  c.preemption.mode = mode;
  return c;
}

core::Job& job_in(Cluster& c, const std::string& part, int tasks, int64_t minutes) {
  core::Job& j = c.add_job(tasks, minutes);
  j.partition = part;
  return j;
}

}  // namespace

TEST(Preemption, HigherTierPreemptsTheFewestYoungestLowJobs) {
  Cluster c = two_tiers(sched::PreemptMode::Requeue);
  // Four 1-CPU low jobs fill the cluster; they started at 0, 10, 20, 30.
  for (int i = 0; i < 4; ++i) {
    core::Job& j = job_in(c, "low", 1, 600);
    j.priority = 100;
    c.run(j, i * 10, {{i < 2 ? "n1" : "n2", 1, 1, 1}});
  }
  job_in(c, "high", 2, 60);  // 5: needs two CPUs on one node
  auto d = c.pass(100);
  EXPECT_TRUE(started(d).empty());
  // The youngest two on one node make room: jobs 3 and 4 (n2).
  EXPECT_EQ(victims(d), (std::vector<uint64_t>{4, 3}));
  for (const auto& p : d.preempted) {
    EXPECT_EQ(p.for_job, 5u);
    EXPECT_EQ(p.mode, sched::PreemptMode::Requeue);
    EXPECT_EQ(p.grace_time_s, 30);
  }
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{5, 100}}));
  EXPECT_EQ(reasons(d).at(5), "Resources");

  // While they end (completing), nothing more is preempted; once gone, job 5 starts.
  c.jobs[2].completing = c.jobs[3].completing = true;
  d = c.pass(101);
  EXPECT_TRUE(victims(d).empty());
  c.finish(c.jobs[2]);
  c.finish(c.jobs[3]);
  d = c.pass(102);
  EXPECT_EQ(started(d), std::vector<uint64_t>{5});
}

TEST(Preemption, LowerJobsBehindDoNotTakeTheFreedRoom) {
  Cluster c = two_tiers(sched::PreemptMode::Cancel);
  for (int i = 0; i < 2; ++i)
    c.run(job_in(c, "low", 2, 600), 0, {{"n" + std::to_string(i + 1), 2, 2, 2}});
  job_in(c, "high", 2, 60);  // 3
  job_in(c, "low", 2, 5);    // 4: would fit where 3 is going
  auto d = c.pass(100);
  EXPECT_EQ(victims(d).size(), 1u);
  EXPECT_TRUE(started(d).empty());
  EXPECT_FALSE(planned(d).count(4) && planned(d).at(4) == 100);
}

TEST(Preemption, SameTierOffModeAndExemptTime) {
  {
    Cluster c = two_tiers(sched::PreemptMode::Cancel);
    c.run(job_in(c, "high", 4, 600), 0, {{"n1", 2, 2, 2}, {"n2", 2, 2, 2}});
    job_in(c, "high", 1, 10);  // same tier: waits
    EXPECT_TRUE(victims(c.pass(100)).empty());
  }
  {
    Cluster c = two_tiers(sched::PreemptMode::Cancel);
    c.partitions[0].preempt_mode = sched::PreemptMode::Off;  // low's jobs are not preemptable
    c.run(job_in(c, "low", 4, 600), 0, {{"n1", 2, 2, 2}, {"n2", 2, 2, 2}});
    job_in(c, "high", 1, 10);
    EXPECT_TRUE(victims(c.pass(100)).empty());
  }
  {
    Cluster c = two_tiers(sched::PreemptMode::Cancel);
    c.preemption.exempt_time_s = 300;
    c.run(job_in(c, "low", 4, 600), 0, {{"n1", 2, 2, 2}, {"n2", 2, 2, 2}});
    job_in(c, "high", 1, 10);
    EXPECT_TRUE(victims(c.pass(100)).empty());   // ran 100 s < 300 s
    EXPECT_EQ(victims(c.pass(300)).size(), 1u);  // exempt no longer
  }
  {
    Cluster c = two_tiers(sched::PreemptMode::Off);  // cluster-wide off
    c.run(job_in(c, "low", 4, 600), 0, {{"n1", 2, 2, 2}, {"n2", 2, 2, 2}});
    job_in(c, "high", 1, 10);
    EXPECT_TRUE(victims(c.pass(100)).empty());
  }
}

TEST(Preemption, NoVictimsWhenEvenAllWouldNotDo) {
  Cluster c = two_tiers(sched::PreemptMode::Cancel);
  c.run(job_in(c, "high", 2, 600), 0, {{"n1", 2, 2, 2}});  // not preemptable (same tier)
  c.run(job_in(c, "low", 2, 600), 0, {{"n2", 2, 2, 2}});
  job_in(c, "high", 4, 10);  // needs both nodes: freeing n2 is not enough
  auto d = c.pass(100);
  EXPECT_TRUE(victims(d).empty());
}

TEST(Preemption, QosPreemptList) {
  Cluster c;
  c.add_nodes(1, 2, 1000);
  c.one_partition();
  c.preemption.type = sched::PreemptionView::Type::Qos;
  c.preemption.mode = sched::PreemptMode::Cancel;
  c.preemption.qos["high"].preempts = {"scavenger"};
  c.preemption.qos["scavenger"].mode = sched::PreemptMode::Requeue;
  c.preemption.qos["scavenger"].grace_time_s = 5;
  core::Job& normal = c.add_job(1, 600);
  normal.spec.qos = "normal";
  c.run(normal, 0, {{"n1", 1, 1, 1}});
  core::Job& scav = c.add_job(1, 600);
  scav.spec.qos = "scavenger";
  c.run(scav, 0, {{"n1", 1, 1, 1}});
  core::Job& mid = c.add_job(1, 10);  // 3: normal QOS preempts nobody
  mid.spec.qos = "normal";
  core::Job& hi = c.add_job(1, 10);  // 4
  hi.spec.qos = "high";
  auto d = c.pass(100);
  ASSERT_EQ(victims(d), std::vector<uint64_t>{2});
  EXPECT_EQ(d.preempted[0].for_job, 4u);
  EXPECT_EQ(d.preempted[0].mode, sched::PreemptMode::Requeue);
  EXPECT_EQ(d.preempted[0].grace_time_s, 5);
}
