// The engine's plan memory: what a pass planned stays for the next one, until the caller says
// the job left the queue; a whole-queue pass forgets the jobs it could not plan.
#include "sched/plan_memory.hpp"

#include <gtest/gtest.h>

#include "sched/tests/cluster_fixture.hpp"

using namespace drover;
using namespace drover::sched;
using test_cluster::Cluster;

namespace {

TEST(PlanMemory, SetFindForgetInherit) {
  PlanMemory m;
  EXPECT_EQ(m.find(1), nullptr);
  m.set(1, 600, {{0, 2, 0}, {3, 1, 1}});
  m.set(2, 900, {{3, 4, 0}});
  ASSERT_NE(m.find(1), nullptr);
  EXPECT_EQ(m.find(1)->start, 600);
  EXPECT_EQ(m.find(1)->shares, (std::vector<PlannedShare>{{0, 2, 0}, {3, 1, 1}}));
  m.set(1, 1200, {{5, 2, 0}});  // a later pass planned it elsewhere
  EXPECT_EQ(m.find(1)->start, 1200);
  EXPECT_EQ(m.find(1)->shares.size(), 1u);
  m.inherit(1, 7);  // an array task split off its remainder
  ASSERT_NE(m.find(7), nullptr);
  EXPECT_EQ(m.find(7)->start, 1200);
  m.inherit(42, 7);  // from a job with no plan: none
  EXPECT_EQ(m.find(7), nullptr);
  m.forget(1);
  EXPECT_EQ(m.find(1), nullptr);
  EXPECT_EQ(m.size(), 1u);
}

TEST(PlanMemory, ANodeGoingTakesThePlansOnIt) {
  PlanMemory m;
  m.set(1, 600, {{0, 2, 0}, {3, 1, 0}});
  m.set(2, 600, {{1, 1, 0}});
  m.forget_node(3);
  EXPECT_EQ(m.find(1), nullptr);
  EXPECT_NE(m.find(2), nullptr);
}

// Two nodes of 4 CPUs: the first job takes both for an hour, the second is planned after it
// and remembered where; a job that can never fit gets only a reason, and a plan it had is
// forgotten by a whole-queue pass, not by another.
TEST(PlanMemory, TheEngineRemembersWhatItPlanned) {
  Cluster c;
  c.add_nodes(2, 4, 4000);
  c.one_partition();
  c.add_job(8, 60, 1, 2);
  c.add_job(8, 60, 1, 2);
  c.add_job(100, 60);
  Decisions d = c.pass(0);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(c.engine->plans().find(1), nullptr);  // started: forgotten by the caller
  const Plan* p = c.engine->plans().find(2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->start, 3600);
  EXPECT_EQ(p->shares.size(), 2u);
  EXPECT_EQ(c.engine->plans().find(3), nullptr);

  c.engine->plans().set(3, 7200, {{0, 4, 0}});
  c.engine->schedule(c.view(), 60);
  EXPECT_NE(c.engine->plans().find(3), nullptr);
  ClusterView whole = c.view();
  whole.whole_queue = true;
  c.engine->schedule(whole, 120);
  EXPECT_EQ(c.engine->plans().find(3), nullptr);
  EXPECT_NE(c.engine->plans().find(2), nullptr);
}

}  // namespace
