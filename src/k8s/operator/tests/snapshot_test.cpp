#include "k8s/operator/snapshot.hpp"

#include <gtest/gtest.h>

namespace drover::k8s::op {
namespace {

TEST(Snapshot, FromControllerNode) {
  core::Node n;
  n.name = "gpu-0";
  n.cpus = 4;
  n.registered = true;
  n.agent_start_time = 100;
  n.features = {"ib"};
  DroverNode d = to_drover_node(n, true, ReasonBy::Operator, {});
  EXPECT_EQ(d.state, NodeState::Idle);
  EXPECT_EQ(d.reason_by, ReasonBy::None) << "no reason, nobody set it";
  EXPECT_EQ(d.registered_since, 100);
  EXPECT_EQ(d.features, std::vector<std::string>{"ib"});

  n.alloc_cpus = 2;
  n.running_jobs = 1;
  n.drain = true;
  n.reason = "scale-in";
  n.reason_time = 200;
  d = to_drover_node(n, true, ReasonBy::Operator, {{7, 500, true}});
  EXPECT_EQ(d.state, NodeState::Mixed);
  EXPECT_TRUE(d.drain);
  EXPECT_EQ(d.reason_by, ReasonBy::Operator);
  EXPECT_EQ(d.reason_since, 200);
  EXPECT_TRUE(d.busy());

  n.alloc_cpus = 4;
  EXPECT_EQ(to_drover_node(n, true, ReasonBy::Admin, {}).state, NodeState::Allocated);
  n.down = true;
  EXPECT_EQ(to_drover_node(n, true, ReasonBy::Admin, {}).state, NodeState::Down);
  core::Node fresh;
  fresh.name = "gpu-1";
  EXPECT_EQ(to_drover_node(fresh, true, ReasonBy::None, {}).state, NodeState::Future);
  EXPECT_FALSE(to_drover_node(fresh, true, ReasonBy::None, {}).registered);
}

TEST(Snapshot, ExpectedEnd) {
  EXPECT_EQ(expected_end(1000, 10), 1600);
  EXPECT_EQ(expected_end(1000, -1), 0);
  EXPECT_EQ(expected_end(0, 10), 0);
}

}  // namespace
}  // namespace drover::k8s::op
