// scontrol update PartitionName=...: operators change a partition's state and limits; the
// change rules scheduling and submission and survives a restart. Also the submit and update
// bounds Slurm enforces (script size, NUL bytes, 32-bit priorities).
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

json update(Harness& h, const Caller& who, const std::string& name, json set, Effects& fx) {
  return h.sm.partition_update(proto::PartitionUpdateRequest::from_json(
                                   {{"op", "partition_update"}, {"name", name}, {"set", set}}),
                               who, fx);
}

json partition(Harness& h, const std::string& name) {
  const json all = h.sm.query(proto::QueryRequest::from_json({{"what", "partitions"}}), h.now);
  for (const auto& p : all["partitions"])
    if (p["name"] == name) return p;
  return nullptr;
}

Config two_partitions() {
  Config c = two_node_config();
  core::PartitionConf p = c.conf.partitions.front();
  p.name = "other";
  p.is_default = false;
  c.conf.partitions.push_back(p);
  return c;
}

TEST(PartitionAdmin, OnlyOperatorsAndKnownPartitionsAndNodes) {
  Harness h;
  Effects fx;
  EXPECT_EQ(update(h, h.alice, "debug", {{"state", "DOWN"}}, fx)["error"], "Invalid user id");
  EXPECT_EQ(update(h, h.root, "nosuch", {{"state", "DOWN"}}, fx)["error"],
            "Invalid partition name specified");
  // One unknown node refuses the whole request: the state is not changed either.
  EXPECT_EQ(
      update(h, h.root, "debug", {{"state", "DOWN"}, {"nodes", {"node1", "node9"}}}, fx)["error"],
      "Invalid node name specified");
  EXPECT_EQ(partition(h, "debug")["state"], "UP");
  // An unknown state (not from scontrol) is refused; values of the wrong type do not decode.
  EXPECT_EQ(update(h, h.root, "debug", {{"state", "BOGUS"}}, fx)["error"], "Invalid request");
  for (const json& bad : {json{{"state", 5}}, json{{"max_nodes", "x"}},
                          json{{"max_time_min", "x"}, {"default_time_min", 5}}, json("x")})
    EXPECT_THROW(update(h, h.root, "debug", bad, fx), proto::BadMessage) << bad.dump();
  EXPECT_THROW(proto::PartitionUpdateRequest::from_json({{"name", 5}}), proto::BadMessage);
  EXPECT_EQ(partition(h, "debug")["state"], "UP");
  EXPECT_TRUE(fx.writes<journal::Partition>().empty());
}

TEST(PartitionAdmin, DownStartsNothingUntilUp) {
  Harness h;
  Effects fx;
  ASSERT_TRUE(update(h, h.root, "debug", {{"state", "DOWN"}}, fx)["ok"]);
  EXPECT_TRUE(fx.journals(journal::Partition{"debug"}));
  EXPECT_EQ(partition(h, "debug")["state"], "DOWN");
  // Slurm queues jobs in a DOWN partition and says why they wait.
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->reason, "PartitionDown");
  Effects up;
  ASSERT_TRUE(update(h, h.root, "debug", {{"state", "UP"}}, up)["ok"]);
  h.sm.schedule(h.now, up);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
}

TEST(PartitionAdmin, DrainAndInactiveRefuseSubmissions) {
  for (const char* state : {"DRAIN", "INACTIVE"}) {
    Harness h;
    Effects fx;
    const uint64_t queued = h.submit(h.alice, h.spec(2, 2), fx);  // fills node1... and waits
    ASSERT_TRUE(update(h, h.root, "debug", {{"state", state}}, fx)["ok"]);
    json r = h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.spec()}}), h.alice, h.now, fx);
    EXPECT_EQ(r["error"], "Required partition not available (inactive or drain)") << state;
    h.sm.schedule(h.now, fx);
    // DRAIN still runs what was queued; INACTIVE runs nothing.
    EXPECT_EQ(h.sm.find_job(queued)->state,
              std::string(state) == "DRAIN" ? core::JobState::Running : core::JobState::Pending)
        << state;
  }
}

TEST(PartitionAdmin, LimitsAndPrioritiesShowAndApply) {
  Harness h;
  Effects fx;
  ASSERT_TRUE(update(h, h.root, "debug",
                     {{"max_time_min", 10},
                      {"default_time_min", 5},
                      {"max_nodes", 1},
                      {"min_nodes", 1},
                      {"priority_tier", 7},
                      {"priority_job_factor", 3},
                      {"hidden", true}},
                     fx)["ok"]);
  const json p = partition(h, "debug");
  EXPECT_EQ(p["max_time_min"], 10);
  EXPECT_EQ(p["default_time_min"], 5);
  EXPECT_EQ(p["max_nodes"], 1);
  EXPECT_EQ(p["min_nodes"], 1);
  EXPECT_EQ(p["priority_tier"], 7);
  EXPECT_EQ(p["priority_job_factor"], 3);
  EXPECT_EQ(p["hidden"], true);
  // A job asking more than MaxTime waits with Slurm's reason.
  json s = h.spec();
  s["time_limit_min"] = 60;
  const uint64_t id = h.submit(h.alice, s, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->reason, "PartitionTimeLimit");
}

TEST(PartitionAdmin, DefaultTimeBeyondMaxTimeIsIgnored) {
  Harness h;
  Effects fx;
  ASSERT_TRUE(
      update(h, h.root, "debug", {{"max_time_min", 10}, {"default_time_min", 5}}, fx)["ok"]);
  // Slurm 22.05 leaves DefaultTime as it was (exit status 0) and applies the rest.
  ASSERT_TRUE(update(h, h.root, "debug", {{"default_time_min", -1}, {"max_nodes", 1}}, fx)["ok"]);
  EXPECT_EQ(partition(h, "debug")["default_time_min"], 5);
  EXPECT_EQ(partition(h, "debug")["max_nodes"], 1);
  ASSERT_TRUE(update(h, h.root, "debug", {{"default_time_min", 20}}, fx)["ok"]);
  EXPECT_EQ(partition(h, "debug")["default_time_min"], 5);
}

TEST(PartitionAdmin, OneDefaultAndNodesReplaced) {
  Harness h(two_partitions());
  Effects fx;
  ASSERT_TRUE(update(h, h.root, "other", {{"is_default", true}, {"nodes", {"node2"}}}, fx)["ok"]);
  EXPECT_EQ(partition(h, "other")["is_default"], true);
  EXPECT_EQ(partition(h, "debug")["is_default"], false);
  EXPECT_EQ(partition(h, "other")["nodelist"], "node2");
  EXPECT_TRUE(fx.journals(journal::Partition{"debug"}));  // its record says it is no longer default
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  EXPECT_EQ(h.sm.find_job(id)->partition, "other");
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->batch_host, "node2");
}

TEST(PartitionAdmin, WhatOperatorsSetSurvivesARestart) {
  Harness h(two_partitions());
  Effects fx;
  ASSERT_TRUE(update(h, h.root, "debug", {{"state", "DOWN"}, {"max_time_min", 30}}, fx)["ok"]);
  ASSERT_TRUE(update(h, h.root, "debug", {{"priority_tier", 4}}, fx)["ok"]);
  ASSERT_TRUE(update(h, h.root, "other", {{"is_default", true}}, fx)["ok"]);
  Harness again(two_partitions());
  for (const char* name : {"debug", "other"})
    again.sm.restore_partition_admin(name, h.sm.partition_admin_record(name));
  const json p = partition(again, "debug");
  EXPECT_EQ(p["state"], "DOWN");
  EXPECT_EQ(p["max_time_min"], 30);
  EXPECT_EQ(p["priority_tier"], 4);
  EXPECT_EQ(p["is_default"], false);
  EXPECT_EQ(partition(again, "other")["is_default"], true);
  const uint64_t id = again.submit(again.alice, again.spec(), fx);
  again.sm.schedule(again.now, fx);
  EXPECT_EQ(again.sm.find_job(id)->state, core::JobState::Running);  // in "other", up
}

TEST(SubmitBounds, ScriptSizeAndNulBytes) {
  Config c = two_node_config();
  c.max_script_size = 100;
  Harness h(c);
  Effects fx;
  json s = h.spec();
  s["script"] = "#!/bin/sh\n" + std::string(90, '#');  // exactly 100 bytes: taken
  h.submit(h.alice, s, fx);
  s["script"] = "#!/bin/sh\n" + std::string(91, '#');
  EXPECT_EQ(
      h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), h.alice, h.now, fx)["error"],
      "Pathname of a file, directory or other parameter too long");
  s["script"] = std::string("#!/bin/sh\necho a\0b\n", 19);
  EXPECT_EQ(
      h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), h.alice, h.now, fx)["error"],
      "Batch script contains a NULL character");
  // Free-text fields stop at 1024 bytes, at submit and in scontrol update.
  for (const char* key : {"name", "comment", "mail_user"}) {
    json t = h.spec();
    t[key] = std::string(1025, 'a');
    EXPECT_EQ(
        h.sm.submit(proto::SubmitRequest::from_json({{"spec", t}}), h.alice, h.now, fx)["error"],
        "Pathname of a file, directory or other parameter too long")
        << key;
    t[key] = std::string(1024, 'a');
    h.submit(h.alice, t, fx);
  }
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  json r = h.sm.update(
      proto::JobUpdateRequest::from_json(
          {{"jobs", {std::to_string(id)}}, {"set", {{"JobName", std::string(1025, 'a')}}}}),
      h.alice, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Pathname of a file, directory or other parameter too long");
  // Slurm's default limit is 4 MB.
  EXPECT_EQ(Config{}.max_script_size, 4194304);
}

TEST(SubmitBounds, EnforcePartLimitsRefusesWhatThePartitionCannotHold) {
  // Without it (Slurm's default NO), such a job is taken and waits (PartitionConfig).
  {
    Harness h;
    Effects fx;
    const uint64_t id = h.submit(h.alice, h.spec(999999999), fx);
    h.sm.schedule(h.now, fx);
    EXPECT_EQ(h.sm.find_job(id)->reason, "PartitionConfig");
  }
  Config c = two_node_config();
  c.conf.options["EnforcePartLimits"] = "ALL";
  c.conf.partitions.front().max_time_min = 10;
  Harness h(c);
  Effects fx;
  auto error = [&](json s) {
    return h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), h.alice, h.now, fx)["error"];
  };
  EXPECT_EQ(error(h.spec(999999999)), "More processors requested than permitted");
  EXPECT_EQ(error(h.spec(5)), "More processors requested than permitted");  // 4 CPUs in all
  json s = h.spec();
  s["nodes_min"] = 3;
  s["nodes_set"] = true;
  EXPECT_EQ(error(s), "Node count specification invalid");
  s = h.spec();
  s["time_limit_min"] = 20;
  EXPECT_EQ(error(s), "Requested time limit is invalid (missing or exceeds some limit)");
  h.submit(h.alice, h.spec(4), fx);
}

TEST(UpdateBounds, PriorityDoesNotWrap) {
  Harness h;
  Effects fx;
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  json r =
      h.sm.update(proto::JobUpdateRequest::from_json(
                      {{"jobs", {std::to_string(id)}}, {"set", {{"Priority", "99999999999999"}}}}),
                  h.root, h.now, fx);
  ASSERT_FALSE(r["ok"]);
  EXPECT_EQ(r["errors"][0]["error"], "Invalid Priority value: 99999999999999");
  const uint32_t before = h.sm.find_job(id)->priority;
  EXPECT_NE(before, 276447231u);
  r = h.sm.update(proto::JobUpdateRequest::from_json(
                      {{"jobs", {std::to_string(id)}}, {"set", {{"Priority", "4294967293"}}}}),
                  h.root, h.now, fx);
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(h.sm.find_job(id)->priority, 4294967293u);
  r = h.sm.update(
      proto::JobUpdateRequest::from_json(
          {{"jobs", {std::to_string(id)}}, {"set", {{"ArrayTaskThrottle", "99999999999"}}}}),
      h.root, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Invalid ArrayTaskThrottle specification");
}

}  // namespace
