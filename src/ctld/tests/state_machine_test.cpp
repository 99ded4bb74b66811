#include "ctld/state_machine.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <functional>
#include <random>

#include "ctld/tests/harness.hpp"
#include "proto/job_list.hpp"
#include "proto/json.hpp"

using namespace drover;
using ctld::Effects;
using ctld::testing::exit_report;
using ctld::testing::Harness;
using ctld::testing::registration;
using ctld::testing::two_node_config;
using ctld::testing::wire;
namespace journal = ctld::journal;
using nlohmann::json;

TEST(StateMachine, SubmitAssignsMonotonicIdsAndStartsJobs) {
  Harness h;
  Effects fx;
  uint64_t a = h.submit(h.alice, h.spec(), fx);
  uint64_t b = h.submit(h.alice, h.spec(), fx);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_TRUE(fx.journals(journal::NextJobId{}));
  EXPECT_TRUE(fx.journals(journal::Job{a}));
  h.sm.schedule(h.now, fx);
  auto l = h.launches(fx);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0]["uid"], 1000);
  EXPECT_EQ(l[0]["env"]["SLURM_JOB_ID"], "1");
  EXPECT_EQ(l[0]["stdout"], "/tmp/slurm-1.out");
  EXPECT_EQ(h.sm.find_job(a)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_node("node1")->alloc_cpus, 2);
}

TEST(StateMachine, RejectsBadPartitionAndImpossibleMemory) {
  Harness h;
  Effects fx;
  json s = h.spec();
  s["partitions"] = {"nosuch"};
  json r = h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), h.alice, h.now, fx);
  EXPECT_FALSE(r["ok"]);
  EXPECT_EQ(r["error"], "Invalid partition name specified");
  s = h.spec();
  s["mem_per_node_mb"] = 5000;
  r = h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), h.alice, h.now, fx);
  EXPECT_EQ(r["error"], "Requested node configuration is not available");
  EXPECT_EQ(r["detail"], "Memory specification can not be satisfied");
  EXPECT_EQ(h.sm.job_count(), 0u);
  EXPECT_FALSE(fx.journals(journal::NextJobId{}));
}

TEST(StateMachine, TooManyTasksIsAcceptedButWaitsWithoutBlockingOthers) {
  Harness h;
  Effects fx;
  // As Slurm 22.05: more CPUs per task than any node has is refused outright ...
  json r =
      h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.spec(1, 64)}}), h.alice, h.now, fx);
  EXPECT_EQ(r.value("detail", ""), "CPU count per node can not be satisfied");
  // ... while more tasks than the partition can hold waits (PartitionConfig), planned on the
  // fewest nodes the tasks would need.
  uint64_t big = h.submit(h.alice, h.spec(64, 1), fx);
  uint64_t small = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(big)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(big)->reason, "PartitionConfig");
  EXPECT_EQ(h.sm.find_job(big)->spec.nodes_min, 32);
  EXPECT_EQ(h.sm.find_job(small)->state, core::JobState::Running);
}

TEST(StateMachine, ExitStatusDecidesFinalState) {
  Harness h;
  Effects fx;
  uint64_t ok = h.submit(h.alice, h.spec(), fx);
  uint64_t bad = h.submit(h.alice, h.spec(), fx);
  uint64_t sig = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  auto host = [&](uint64_t id) { return h.sm.find_job(id)->batch_host; };
  h.sm.agent_exited(host(ok), exit_report({{"job_id", ok}, {"status", 0}}), h.now + 5, fx);
  h.sm.agent_exited(host(bad), exit_report({{"job_id", bad}, {"status", 3 << 8}}), h.now + 5, fx);
  h.sm.agent_exited(host(sig), exit_report({{"job_id", sig}, {"status", SIGKILL}}), h.now + 5, fx);
  EXPECT_EQ(h.sm.find_job(ok)->state, core::JobState::Completed);
  EXPECT_EQ(h.sm.find_job(bad)->state, core::JobState::Failed);
  EXPECT_EQ(h.sm.find_job(bad)->exit_code, 3);
  EXPECT_EQ(h.sm.find_job(bad)->reason, "NonZeroExitCode");
  EXPECT_EQ(h.sm.find_job(sig)->exit_signal, 9);
  EXPECT_EQ(h.sm.find_node("node1")->alloc_cpus + h.sm.find_node("node2")->alloc_cpus, 0);
  int acks = 0;
  for (const auto& [n, m] : wire(fx)) acks += m["type"] == "exit_ack";
  EXPECT_EQ(acks, 3);
}

TEST(StateMachine, ExitFromWrongNodeIsIgnored) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  std::string other = h.sm.find_job(id)->batch_host == "node1" ? "node2" : "node1";
  h.sm.agent_exited(other, exit_report({{"job_id", id}, {"status", 0}}), h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
}

TEST(StateMachine, OnlyOwnerOrOperatorMayCancel) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  json r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.bob,
                       h.now, fx);
  ASSERT_EQ(r["errors"].size(), 1u);
  EXPECT_EQ(r["errors"][0]["error"], "Access/permission denied");
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.root, h.now,
                  fx);
  EXPECT_TRUE(r["errors"].empty());
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Cancelled);
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id), "999"}}}), h.alice,
                  h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Job/step already completing or completed");
  EXPECT_EQ(r["errors"][1]["error"], "Invalid job id specified");
}

TEST(StateMachine, CancelRunningJobTerminatesAndHoldsResourcesUntilExit) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  Effects fx2;
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.alice, h.now + 3,
              fx2);
  const core::Job* job = h.sm.find_job(id);
  EXPECT_EQ(job->state, core::JobState::Cancelled);
  EXPECT_TRUE(job->completing);
  EXPECT_EQ(job->cancelled_by, 1000u);
  ASSERT_EQ(wire(fx2).size(), 1u);
  EXPECT_EQ(wire(fx2)[0].second["type"], "terminate");
  EXPECT_EQ(wire(fx2)[0].second["kill_wait"], 5);
  EXPECT_EQ(h.sm.find_node(job->batch_host)->alloc_cpus, 2);
  h.sm.agent_exited(job->batch_host, exit_report({{"job_id", id}, {"status", SIGTERM}}), h.now + 4,
                    fx2);
  EXPECT_FALSE(job->completing);
  EXPECT_EQ(job->state, core::JobState::Cancelled);
  EXPECT_EQ(job->exit_signal, SIGTERM);
  EXPECT_EQ(job->end_time, h.now + 3);
  EXPECT_EQ(h.sm.find_node(job->batch_host)->alloc_cpus, 0);
}

TEST(StateMachine, CancelByUserFilter) {
  Harness h;
  Effects fx;
  h.submit(h.alice, h.spec(), fx);
  h.submit(h.bob, h.spec(), fx);
  json r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", json::array()}, {"uid", 1000}}),
                       h.alice, h.now, fx);
  EXPECT_EQ(r["matched"], 1);
  EXPECT_EQ(h.sm.find_job(1)->state, core::JobState::Cancelled);
  EXPECT_EQ(h.sm.find_job(2)->state, core::JobState::Pending);
  // Cancelling someone else's jobs by filter is refused per job.
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", json::array()}, {"uid", 1001}}),
                  h.alice, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Access/permission denied");
}

TEST(StateMachine, TimeLimitEndsJobWithTimeout) {
  Harness h;
  Effects fx;
  json s = h.spec();
  s["time_limit_min"] = 1;
  uint64_t id = h.submit(h.alice, s, fx);
  h.sm.schedule(h.now, fx);
  Effects fx2;
  h.sm.tick(h.now + 59, fx2);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  h.sm.tick(h.now + 60, fx2);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Timeout);
  EXPECT_EQ(h.sm.find_job(id)->reason, "TimeLimit");
  EXPECT_TRUE(h.sm.find_job(id)->completing);
  ASSERT_FALSE(wire(fx2).empty());
  EXPECT_EQ(wire(fx2).back().second["type"], "terminate");
}

TEST(StateMachine, PartitionTimeLimitKeepsJobPending) {
  Harness h(two_node_config(30));
  Effects fx;
  json s = h.spec();
  s["time_limit_min"] = 60;
  uint64_t id = h.submit(h.alice, s, fx);
  uint64_t dflt = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(id)->reason, "PartitionTimeLimit");
  EXPECT_EQ(h.sm.find_job(dflt)->time_limit_min, 30);  // partition MaxTime applies
  EXPECT_EQ(h.sm.find_job(dflt)->state, core::JobState::Running);
}

TEST(StateMachine, SilentNodeGoesDownAndFailsItsJobs) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  std::string host = h.sm.find_job(id)->batch_host;
  std::string other = host == "node1" ? "node2" : "node1";
  h.sm.agent_heartbeat(other, proto::Heartbeat{0.5, 900}, h.now + 50);
  EXPECT_EQ(h.sm.find_node(other)->free_mem_mb, 900);
  Effects fx2;
  h.sm.tick(h.now + 61, fx2);
  EXPECT_TRUE(h.sm.find_node(host)->down);
  EXPECT_EQ(h.sm.find_node(host)->state_short(), "down*");
  EXPECT_FALSE(h.sm.find_node(other)->down);
  // JobRequeue=1 (the default): the batch job waits to run again, after the credential delay.
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->reason, "BeginTime");
  EXPECT_EQ(h.sm.find_job(id)->restarts, 1u);
  EXPECT_EQ(h.sm.find_node(host)->alloc_cpus, 0);
  // The node comes back when its agent registers again.
  h.sm.agent_register(host, registration({{"running", json::array()}}), h.now + 70, fx2);
  EXPECT_FALSE(h.sm.find_node(host)->down);
}

TEST(StateMachine, ReregistrationRequeuesJobsTheAgentNeverGot) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  std::string host = h.sm.find_job(id)->batch_host;
  Effects fx2;
  h.sm.agent_register(host, registration({{"running", json::array()}, {"finished", json::array()}}),
                      h.now + 1, fx2);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->restarts, 1u);
  EXPECT_EQ(h.sm.find_node(host)->alloc_cpus, 0);
}

TEST(StateMachine, ReregistrationReportsFinishedJobsAndKillsUnknownOnes) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  std::string host = h.sm.find_job(id)->batch_host;
  Effects fx2;
  h.sm.agent_register(
      host, registration({{"running", {4242}}, {"finished", {{{"job_id", id}, {"status", 0}}}}}),
      h.now + 2, fx2);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Completed);
  bool killed_unknown = false;
  for (const auto& [n, m] : wire(fx2))
    killed_unknown |= m["type"] == "terminate" && m["job_id"] == 4242;
  EXPECT_TRUE(killed_unknown);
}

// A registration the agent wrote before a launch reached it (its connection dropped with the
// launch on the way, or the two crossed) does not requeue the job when the same agent process
// registers: the launch is sent again (the agent runs it once). A restarted agent that does
// not know the job has lost it: requeued.
TEST(StateMachine, LaunchCrossingARegistrationIsSentAgain) {
  Harness h;
  Effects fx;
  for (const char* n : {"node1", "node2"})
    h.sm.agent_register(n, registration({{"running", json::array()}, {"instance", "first"}}), h.now,
                        fx);
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  const std::string host = h.sm.find_job(id)->batch_host;
  Effects reg;
  h.sm.agent_register(host, registration({{"running", json::array()}, {"instance", "first"}}),
                      h.now + 1, reg);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(id)->restarts, 0u);
  json launch;
  for (const auto& [n, m] : wire(reg))
    if (m["type"] == "launch") launch = m;
  ASSERT_FALSE(launch.is_null());
  EXPECT_EQ(launch["run"], 1);
  EXPECT_EQ(launch["resent"], true);
  // It ran and its exit came: done, once.
  Effects exited;
  h.sm.agent_exited(host, exit_report({{"job_id", id}, {"status", 0}, {"run", 1}}), h.now + 2,
                    exited);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Completed);

  uint64_t other = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now + 3, fx);
  const std::string other_host = h.sm.find_job(other)->batch_host;
  Effects restarted;
  h.sm.agent_register(other_host,
                      registration({{"running", json::array()}, {"instance", "second"}}), h.now + 4,
                      restarted);
  EXPECT_EQ(h.sm.find_job(other)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(other)->restarts, 1u);
}

// A requeued job runs again under the same id: reports about its earlier run must not end
// the new one, and an agent still running the earlier run is told to stop it.
TEST(StateMachine, ReportsOfAnEarlierRunEndNothing) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  std::string host = h.sm.find_job(id)->batch_host;
  Effects lost;
  h.sm.agent_register(host, registration({{"running", json::array()}}), h.now + 1,
                      lost);  // launch lost
  ASSERT_EQ(h.sm.find_job(id)->restarts, 1u);
  Effects again;
  h.sm.schedule(h.now + 1, again);
  ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  json launch;
  for (const auto& [n, m] : wire(again))
    if (m["type"] == "launch") launch = m;
  EXPECT_EQ(launch["run"], 2);  // its second launch
  host = h.sm.find_job(id)->batch_host;

  Effects stale;
  h.sm.agent_exited(host, exit_report({{"job_id", id}, {"status", 0}, {"run", 1}}), h.now + 2,
                    stale);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  ASSERT_EQ(wire(stale).size(), 1u);
  EXPECT_EQ(wire(stale)[0].second["run"], 1);  // the agent may forget that report

  // An agent that registers running the earlier run: it is stopped, the job requeued again.
  Effects reg;
  h.sm.agent_register(host, registration({{"running", {{{"job_id", id}, {"run", 1}}}}}), h.now + 3,
                      reg);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(id)->restarts, 2u);
  EXPECT_EQ(h.sm.find_job(id)->reason, "BeginTime");  // after the earlier run is gone
  bool stopped = false;
  for (const auto& [n, m] : wire(reg)) stopped |= m["type"] == "terminate" && m["job_id"] == id;
  EXPECT_TRUE(stopped);

  // The current run's report ends the job.
  Effects third;
  h.sm.schedule(h.now + 200, third);
  ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  host = h.sm.find_job(id)->batch_host;
  Effects done;
  h.sm.agent_exited(host, exit_report({{"job_id", id}, {"status", 0}, {"run", 3}}), h.now + 4,
                    done);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Completed);
}

TEST(StateMachine, RestoreRechargesNodesAndKeepsIdCounter) {
  Harness h;
  Effects fx;
  h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  std::vector<core::Job> saved = {*h.sm.find_job(1)};
  ctld::StateMachine again(two_node_config(), sched::make_scheduler());
  again.restore(h.sm.next_job_id(), saved, h.now + 10);
  EXPECT_EQ(again.next_job_id(), 2u);
  EXPECT_EQ(again.find_node(saved[0].batch_host)->alloc_cpus, 2);
}

TEST(StateMachine, FinishedJobsArePurgedAfterMinJobAge) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.alice, h.now,
              fx);
  Effects fx2;
  h.sm.tick(h.now + 299, fx2);
  EXPECT_NE(h.sm.find_job(id), nullptr);
  h.sm.tick(h.now + 300, fx2);
  EXPECT_EQ(h.sm.find_job(id), nullptr);
  EXPECT_TRUE(fx2.journals(journal::JobGone{id}));
}

TEST(StateMachine, QueryJobsHidesScriptAndEnvironment) {
  Harness h;
  Effects fx;
  h.submit(h.alice, h.spec(), fx);
  json r = h.sm.query(proto::QueryRequest::from_json({{"what", "jobs"}}), h.now);
  ASSERT_EQ(r["jobs"].size(), 1u);
  EXPECT_FALSE(r["jobs"][0]["spec"].contains("script"));
  EXPECT_FALSE(r["jobs"][0]["spec"].contains("environment"));
  EXPECT_EQ(r["jobs"][0]["std_out_path"], "/tmp/slurm-1.out");
  r = h.sm.query(proto::QueryRequest::from_json({{"what", "jobs"}, {"job_id", 77}}), h.now);
  EXPECT_EQ(r["error"], "Invalid job id specified");
}

// The text sent to clients is query()'s reply: byte for byte, or where job lists are written
// job by job, the same document (keys of a job in another order): running (with a step),
// pending (an array, a dependency, names that need escaping), finished, with and without
// detail and active_only.
TEST(StateMachine, QueryTextIsTheReplyAsSent) {
  Harness h;
  Effects fx;
  EXPECT_EQ(h.sm.query_text(proto::QueryRequest::from_json({{"what", "jobs"}}), h.now),
            h.sm.query(proto::QueryRequest::from_json({{"what", "jobs"}}), h.now).dump());
  for (const char* n : {"node1", "node2"})  // where srun reaches them (for the step below)
    h.sm.agent_register(n,
                        registration({{"running", json::array()},
                                      {"address", "10.0.0.5:40000"},
                                      {"launch_addr", "0.0.0.0:7001"}}),
                        h.now, fx);
  json alloc = h.spec();
  alloc["interactive"] = true;
  alloc["script"] = "";
  const uint64_t with_step = h.submit(h.alice, alloc, fx);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(h.submit(i % 2 ? h.bob : h.alice, h.spec(1, 2), fx));
  json odd = h.spec();
  odd["name"] = "quote\" back\\slash\ttab \u00e9t\u00e9 \u0001";
  odd["comment"] = "a \"comment\"";
  odd["array"] = "0-3%2";
  odd["dependency"] = "afterok:" + std::to_string(ids[0]);
  ids.push_back(h.submit(h.alice, odd, fx));
  h.sm.schedule(h.now, fx);
  json step = h.sm.step_create(proto::StepCreateRequest::from_json(
                                   {{"job_id", with_step}, {"ntasks", 1}, {"name", "st\"ep"}}),
                               h.alice, h.now, fx);
  EXPECT_TRUE(step.value("ok", false)) << step;
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(ids[5])}}}), h.alice, h.now,
              fx);
  for (bool detail : {true, false})
    for (bool active_only : {true, false}) {
      const json req = {{"what", "jobs"}, {"detail", detail}, {"active_only", active_only}};
      const json sent =
          json::parse(h.sm.query_text(proto::QueryRequest::from_json(req), h.now + 5));
      EXPECT_EQ(sent, h.sm.query(proto::QueryRequest::from_json(req), h.now + 5)) << req;
      EXPECT_GE(sent["jobs"].size(), 6u);
    }
  for (const json& req :
       {json{{"what", "jobs"}, {"job_id", ids[0]}}, json{{"what", "jobs"}, {"job_id", 77}},
        json{{"what", "nodes"}}, json{{"what", "partitions"}}, json{{"what", "nothing"}}})
    EXPECT_EQ(h.sm.query_text(proto::QueryRequest::from_json(req), h.now),
              h.sm.query(proto::QueryRequest::from_json(req), h.now).dump())
        << req;
}

// The compact form (proto/job_list.hpp): the same jobs in the same order, each row the values
// the object form has under the columns' names (the spec's for its keys; the allocation's
// entries and CPUs for alloc_nodes and alloc_cpus), with the same filters.
TEST(StateMachine, QueryTextRowsHoldTheViewsValues) {
  Harness h;
  Effects fx;
  for (const char* n : {"node1", "node2"})
    h.sm.agent_register(n, registration({{"running", json::array()}}), h.now, fx);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(h.submit(i % 2 ? h.bob : h.alice, h.spec(1, 2), fx));
  json odd = h.spec();
  odd["name"] = "quote\" back\\slash\ttab \u00e9t\u00e9 \u0001";
  odd["array"] = "0-3%2";
  odd["dependency"] = "afterok:" + std::to_string(ids[0]);
  ids.push_back(h.submit(h.alice, odd, fx));
  h.sm.schedule(h.now, fx);
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(ids[4])}}}), h.alice, h.now,
              fx);
  for (const json& narrow : {json::object(), json{{"active_only", true}},
                             json{{"users", {"nobody-here"}}}, json{{"names", {odd["name"]}}}}) {
    json req = {{"what", "jobs"}, {"detail", false}};
    req.update(narrow);
    const json objects =
        json::parse(h.sm.query_text(proto::QueryRequest::from_json(req), h.now + 5));
    req["form"] = "rows";
    const json rows = json::parse(h.sm.query_text(proto::QueryRequest::from_json(req), h.now + 5));
    EXPECT_FALSE(rows.contains("jobs"));
    for (const char* key : {"ok", "now", "cluster_name", "control_host"})
      EXPECT_EQ(rows[key], objects[key]) << key;
    ASSERT_EQ(rows["rows"].size(), objects["jobs"].size()) << narrow;
    const json& columns = rows["columns"];
    ASSERT_EQ(columns.size(), proto::kJobColumnNames.size());
    for (size_t i = 0; i < objects["jobs"].size(); ++i) {
      const json& job = objects["jobs"][i];
      const json& row = rows["rows"][i];
      ASSERT_EQ(row.size(), columns.size());
      for (size_t c = 0; c < columns.size(); ++c) {
        const std::string name = columns[c];
        json expected;
        if (name == "alloc_nodes") {
          expected = job["alloc"].size();
        } else if (name == "alloc_cpus") {
          int cpus = 0;
          for (const auto& a : job["alloc"]) cpus += a["cpus"].get<int>();
          expected = cpus;
        } else {
          expected = job.contains(name) ? job[name] : job["spec"][name];
        }
        EXPECT_EQ(row[c], expected) << "job " << job["id"] << " column " << name;
      }
    }
  }
  // A running job's nodes and CPUs, and an escaped name, are among them.
  const json rows = json::parse(
      h.sm.query_text(proto::QueryRequest::from_json({{"what", "jobs"}, {"form", "rows"}}), h.now));
  bool running = false, named = false;
  for (const auto& row : rows["rows"]) {
    running = running || (row[5] == "RUNNING" && row[17].get<int>() > 0 && row[18].get<int>() > 0 &&
                          !row[10].get<std::string>().empty());
    named = named || row[19] == odd["name"];
  }
  EXPECT_TRUE(running);
  EXPECT_TRUE(named);
}

// A job list may ask for some keys only (squeue's common formats): exactly those come, plus
// "id" and "spec" (with only the spec keys asked for), with the values of the whole record.
TEST(StateMachine, QueryTextGivesOnlyTheKeysAskedFor) {
  Harness h;
  Effects fx;
  for (int i = 0; i < 3; ++i) h.submit(h.alice, h.spec(1, 2), fx);
  h.sm.schedule(h.now, fx);
  const json all =
      h.sm.query(proto::QueryRequest::from_json({{"what", "jobs"}, {"detail", false}}), h.now);
  const json some = json::parse(
      h.sm.query_text(proto::QueryRequest::from_json({{"what", "jobs"},
                                                      {"detail", false},
                                                      {"keys", {"state", "run_time", "nodelist"}},
                                                      {"spec_keys", {"name"}}}),
                      h.now));
  ASSERT_EQ(some["jobs"].size(), all["jobs"].size());
  for (size_t i = 0; i < all["jobs"].size(); ++i) {
    const json& full = all["jobs"][i];
    json expected = {{"id", full["id"]},
                     {"state", full["state"]},
                     {"run_time", full["run_time"]},
                     {"nodelist", full["nodelist"]},
                     {"spec", {{"name", full["spec"]["name"]}}}};
    EXPECT_EQ(some["jobs"][i], expected);
  }
  EXPECT_EQ(some["now"], all["now"]);
}

// A job list may name users, partitions, job names, accounts and QOS (squeue -u -p -n -A -q):
// only the jobs whose field is one of those come, each as the whole list writes it.
TEST(StateMachine, QueryTextLeavesOutJobsNotAskedFor) {
  Harness h;
  Effects fx;
  for (int i = 0; i < 6; ++i) {
    json spec = h.spec(1, 2);
    spec["name"] = i % 3 == 0 ? "three" : "other";
    h.submit(i % 2 ? h.bob : h.alice, spec, fx);
  }
  h.sm.schedule(h.now, fx);
  const json all =
      h.sm.query(proto::QueryRequest::from_json({{"what", "jobs"}, {"detail", false}}), h.now);
  auto only = [&](const json& narrow) {
    json req = {{"what", "jobs"}, {"detail", false}};
    req.update(narrow);
    return json::parse(h.sm.query_text(proto::QueryRequest::from_json(req), h.now))["jobs"];
  };
  auto expected = [&](const std::function<bool(const json&)>& keep) {
    json out = json::array();
    for (const auto& j : all["jobs"])
      if (keep(j)) out.push_back(j);
    return out;
  };
  const std::string bob = all["jobs"][1]["user"];
  EXPECT_EQ(only({{"users", {bob}}}), expected([&](const json& j) { return j["user"] == bob; }));
  EXPECT_EQ(only({{"users", {bob}}}).size(), 3u);
  EXPECT_EQ(only({{"names", {"three"}}, {"users", {bob}}}), expected([&](const json& j) {
              return j["user"] == bob && j["spec"]["name"] == "three";
            }));
  EXPECT_EQ(only({{"users", {"nobody-here"}}}), json::array());
  EXPECT_EQ(only({{"partitions", {"nowhere"}}}), json::array());
  EXPECT_EQ(only({{"partitions", {all["jobs"][0]["partition"]}}}), all["jobs"]);
}

TEST(StateMachine, PartitionStatesFollowSlurm) {
  ctld::Config c = two_node_config();
  for (const char* state : {"DOWN", "DRAIN", "INACTIVE"}) {
    core::PartitionConf p = c.conf.partitions[0];
    p.name = std::string("p") + state;
    p.is_default = false;
    p.state = state;
    c.conf.partitions.push_back(p);
  }
  Harness h(c);
  Effects fx;
  json s = h.spec();
  s["partitions"] = {"pDOWN"};
  uint64_t down = h.submit(h.alice, s, fx);
  for (const char* p : {"pDRAIN", "pINACTIVE"}) {
    s["partitions"] = {p};
    json r = h.sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), h.alice, h.now, fx);
    EXPECT_EQ(r["error"], "Required partition not available (inactive or drain)") << p;
  }
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(down)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(down)->reason, "PartitionDown");
}

// Under sched/builtin (FIFO), a pass over only the new jobs must decide what a pass over
// the whole queue would.
TEST(StateMachine, IncrementalPassesMatchFullPasses) {
  ctld::Config fifo = two_node_config();
  fifo.sched_params.policy = sched::Policy::Fifo;
  Harness inc(fifo), full(fifo);
  std::mt19937 rng(3);
  for (int round = 0; round < 60; ++round) {
    int cpus = 1 + static_cast<int>(rng() % 2);
    bool finish = rng() % 4 == 0;
    for (Harness* h : {&inc, &full}) {
      Effects fx;
      h->submit(h->alice, h->spec(1, cpus), fx);
      if (h == &full) {
        Effects tick;
        h->sm.tick(h->now, tick);  // forces a full pass
      }
      h->sm.schedule(h->now, fx);
    }
    if (finish) {
      // End the oldest running job on both.
      for (uint64_t id = 1; id <= static_cast<uint64_t>(round + 1); ++id) {
        const core::Job* j = inc.sm.find_job(id);
        if (!j || j->state != core::JobState::Running) continue;
        for (Harness* h : {&inc, &full}) {
          Effects fx;
          h->sm.agent_exited(h->sm.find_job(id)->batch_host,
                             exit_report({{"job_id", id}, {"status", 0}}), h->now, fx);
          h->sm.schedule(h->now, fx);
        }
        break;
      }
    }
    for (uint64_t id = 1; id <= static_cast<uint64_t>(round + 1); ++id) {
      ASSERT_EQ(inc.sm.find_job(id)->state, full.sm.find_job(id)->state) << "job " << id;
      ASSERT_EQ(inc.sm.find_job(id)->reason, full.sm.find_job(id)->reason) << "job " << id;
    }
  }
}

// --begin and --deadline act at their time through the job table's time indexes, not at the
// next full pass (tens of seconds apart with a million jobs pending).
TEST(StateMachine, BeginAndDeadlineActWithoutAFullPass) {
  Harness h;
  Effects fx;
  json later = h.spec();
  later["begin_time"] = h.now + 20;
  json doomed = h.spec();
  doomed["hold"] = true;
  doomed["deadline"] = h.now + 10;
  const uint64_t a = h.submit(h.alice, later, fx);
  const uint64_t b = h.submit(h.alice, doomed, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(a)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(b)->state, core::JobState::Pending);
  Effects fx2;
  h.sm.tick(h.now + 15, fx2, false);  // before any heartbeat is missed
  EXPECT_EQ(h.sm.find_job(b)->state, core::JobState::Deadline);
  Effects fx3;
  h.sm.schedule(h.now + 21, fx3);  // an incremental pass: only what is new or due
  EXPECT_EQ(h.sm.find_job(a)->state, core::JobState::Running) << h.sm.find_job(a)->reason;
}
