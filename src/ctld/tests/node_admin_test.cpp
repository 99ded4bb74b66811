// scontrol update NodeName=... State=... / AvailableFeatures= ActiveFeatures=: operators drain,
// down and resume nodes and set their features.
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

json update(Harness& h, const Caller& who, const std::string& nodes, const std::string& state,
            const std::string& reason, Effects& fx) {
  json req = {{"op", "node_update"}, {"nodes", nodes}, {"state", state}};
  if (!reason.empty()) req["reason"] = reason;
  return h.sm.node_update(proto::NodeUpdateRequest::from_json(req), who, h.now, fx);
}

TEST(NodeAdmin, OnlyOperatorsAndKnownNodes) {
  Harness h;
  Effects fx;
  EXPECT_EQ(update(h, h.alice, "node1", "DRAIN", "x", fx)["error"], "Invalid user id");
  EXPECT_EQ(update(h, h.root, "node9", "DRAIN", "x", fx)["error"], "Invalid node name specified");
  // A list with one unknown node changes none of them.
  EXPECT_EQ(update(h, h.root, "node[1-9]", "DRAIN", "x", fx)["error"],
            "Invalid node name specified");
  EXPECT_FALSE(h.sm.find_node("node1")->drain);
  // Nothing to resume on a node in service.
  EXPECT_EQ(update(h, h.root, "node1", "RESUME", "", fx)["error"], "Invalid node state specified");
}

TEST(NodeAdmin, DrainedNodesTakeNoJobsAndRequiredOnesSayWhy) {
  Harness h;
  Effects fx;
  ASSERT_TRUE(update(h, h.root, "node2", "DRAIN", "disk", fx)["ok"]);
  const core::Node* n = h.sm.find_node("node2");
  EXPECT_TRUE(n->drain);
  EXPECT_EQ(n->reason, "disk");
  EXPECT_EQ(n->state_short(), "drain");
  json pinned = h.spec();
  pinned["nodelist"] = "node2";
  const uint64_t id = h.submit(h.alice, pinned, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->reason, "ReqNodeNotAvail, UnavailableNodes:node2");
  Effects resumed;
  ASSERT_TRUE(update(h, h.root, "node2", "RESUME", "", resumed)["ok"]);
  EXPECT_TRUE(h.sm.find_node("node2")->reason.empty());
  h.sm.schedule(h.now, resumed);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
}

TEST(NodeAdmin, DownRequeuesItsJobsAndStopsThem) {
  Harness h;
  Effects fx;
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  const std::string host = h.sm.find_job(id)->batch_host;
  Effects down;
  ASSERT_TRUE(update(h, h.root, host, "DOWN", "broken", down)["ok"]);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->restarts, 1u);
  bool stopped = false;
  for (const auto& [node, msg] : wire(down))
    stopped |= node == host && msg["type"] == "terminate" && msg["job_id"] == id;
  EXPECT_TRUE(stopped);
  // The agent registering again does not bring an operator's DOWN back.
  h.sm.agent_register(host, registration({{"running", json::array()}}), h.now + 1, down);
  EXPECT_TRUE(h.sm.find_node(host)->down);
  EXPECT_TRUE(down.journals(journal::Node{host}));
}

TEST(NodeAdmin, WhatOperatorsSetSurvivesARestart) {
  Harness h;
  Effects fx;
  ASSERT_TRUE(update(h, h.root, "node1", "DRAIN", "maint", fx)["ok"]);
  const json record = h.sm.node_admin_record("node1");
  Harness again;
  again.sm.restore_node_admin("node1", record);
  const core::Node* n = again.sm.find_node("node1");
  EXPECT_TRUE(n->drain);
  EXPECT_EQ(n->reason, "maint");
  EXPECT_EQ(n->reason_uid, 0u);
}

json set_features(Harness& h, const std::string& nodes, const char* avail, const char* active,
                  Effects& fx) {
  json req = {{"op", "node_update"}, {"nodes", nodes}};
  if (avail) req["features"] = avail;
  if (active) req["features_act"] = active;
  return h.sm.node_update(proto::NodeUpdateRequest::from_json(req), h.root, h.now, fx);
}

std::vector<std::string> list(std::initializer_list<const char*> l) { return {l.begin(), l.end()}; }

TEST(NodeAdmin, FeaturesAsSlurmWithoutANodeFeaturesPlugin) {
  Harness h;
  Effects fx;
  const core::Node* n = h.sm.find_node("node1");
  // New available features are all active.
  ASSERT_TRUE(set_features(h, "node1", "a,b", nullptr, fx)["ok"]);
  EXPECT_EQ(n->features, list({"a", "b"}));
  EXPECT_EQ(n->active_features, list({"a", "b"}));
  // Active ones must be among the available ones; a refused request changes nothing.
  EXPECT_EQ(set_features(h, "node1", nullptr, "c", fx)["error"],
            "Active features not subset of available features");
  EXPECT_EQ(set_features(h, "node1", "x,y", nullptr, fx)["error"],
            "Active features not subset of available features");
  EXPECT_EQ(set_features(h, "node[1-2]", "a", nullptr, fx)["errno"], 2031);
  EXPECT_TRUE(h.sm.find_node("node2")->features.empty());
  EXPECT_EQ(n->features, list({"a", "b"}));
  ASSERT_TRUE(set_features(h, "node1", nullptr, "b", fx)["ok"]);
  EXPECT_EQ(n->active_features, list({"b"}));
  ASSERT_TRUE(set_features(h, "node1", "b,c,c", "", fx)["ok"]);
  EXPECT_EQ(n->features, list({"b", "c"}));
  EXPECT_TRUE(n->active_features.empty());
  ASSERT_TRUE(set_features(h, "node1", "p,q", "p", fx)["ok"]);
  EXPECT_TRUE(fx.journals(journal::Node{"node1"}));

  // A constraint matches active features; an available one is known but not usable.
  json want_q = h.spec();
  want_q["constraint"] = "q";
  want_q["nodelist"] = "node1";
  const uint64_t id = h.submit(h.alice, want_q, fx);
  ASSERT_NE(id, 0u);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  ASSERT_TRUE(set_features(h, "node1", nullptr, "p,q", fx)["ok"]);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);

  // They are journaled with the node and survive a restart.
  const json record = h.sm.node_admin_record("node1");
  Harness again;
  again.sm.restore_node_admin("node1", record);
  EXPECT_EQ(again.sm.find_node("node1")->features, list({"p", "q"}));
  EXPECT_EQ(again.sm.find_node("node1")->active_features, list({"p", "q"}));
  // slurm.conf's features stay where nobody set any.
  EXPECT_FALSE(h.sm.node_admin_record("node2").contains("features"));
}

}  // namespace
