// The controller with the backfill engine and priority/multifactor.
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

// Two 2-CPU nodes. A running 1-CPU job holds node1 for 10 minutes; a job needing both nodes
// waits for it (Resources) with an expected start and nodes; a short 1-CPU job behind it
// backfills now because it ends before that start.
TEST(Scheduling, BackfillStartsShortJobAndPlansTheBlockedOne) {
  Harness h;
  Effects fx;
  json first = h.spec(1, 1);
  first["time_limit_min"] = 10;
  const uint64_t running = h.submit(h.alice, first, fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(running)->state, core::JobState::Running);

  json big = h.spec(4, 1);
  big["time_limit_min"] = 5;
  const uint64_t blocked = h.submit(h.alice, big, fx);
  json small = h.spec(1, 1);
  small["time_limit_min"] = 5;
  const uint64_t backfilled = h.submit(h.alice, small, fx);
  json too_long = h.spec(1, 1);
  too_long["time_limit_min"] = 60;
  const uint64_t waits = h.submit(h.alice, too_long, fx);
  Effects tick;
  h.sm.tick(h.now, tick);  // a full pass plans the queue
  h.sm.schedule(h.now, fx);

  const core::Job* b = h.sm.find_job(blocked);
  EXPECT_EQ(b->state, core::JobState::Pending);
  EXPECT_EQ(b->reason, "Resources");
  // The running job ends at now + 600, rounded up to bf_resolution (60 s).
  EXPECT_EQ(b->start_time, (h.now + 600 + 59) / 60 * 60);
  EXPECT_EQ(b->sched_nodes, "node[1-2]");
  EXPECT_EQ(h.sm.find_job(backfilled)->state, core::JobState::Running);
  const core::Job* w = h.sm.find_job(waits);
  EXPECT_EQ(w->state, core::JobState::Pending);
  EXPECT_EQ(w->reason, "Priority");
  EXPECT_GT(w->start_time, b->start_time);
}

// A full pass bf_max_time cut short leaves the jobs it did not reach as the last pass planned
// them (expected start and nodes), and says how many it left.
TEST(Scheduling, APassOutOfTimeKeepsThePlansOfTheJobsItDidNotReach) {
  Harness h;
  Effects fx;
  json first = h.spec(4, 1);
  first["time_limit_min"] = 10;
  const uint64_t running = h.submit(h.alice, first, fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(running)->state, core::JobState::Running);
  std::vector<uint64_t> waiting;
  for (int i = 0; i < 3; ++i) {
    json j = h.spec(4, 1);
    j["time_limit_min"] = 10;
    waiting.push_back(h.submit(h.alice, j, fx));
  }
  Effects tick;
  h.sm.tick(h.now, tick);
  h.sm.schedule(h.now, fx);
  const int64_t last_start = h.sm.find_job(waiting[2])->start_time;
  ASSERT_NE(last_start, core::kNoTime);
  EXPECT_EQ(h.sm.last_pass_not_considered(), 0u);

  h.sm.tick(h.now, tick);
  int asked = 0;
  h.sm.schedule(h.now, fx, [&asked] { return ++asked > 1; });  // time for one job
  EXPECT_EQ(h.sm.last_pass_not_considered(), 2u);
  EXPECT_EQ(h.sm.find_job(waiting[2])->start_time, last_start);
  EXPECT_EQ(h.sm.find_job(waiting[2])->sched_nodes, "node[1-2]");
}

TEST(Scheduling, BuiltinSchedulerDoesNotBackfill) {
  Config c = two_node_config();
  c.sched_params.policy = sched::Policy::Fifo;
  Harness h(c);
  Effects fx;
  json first = h.spec(1, 1);
  first["time_limit_min"] = 10;
  h.submit(h.alice, first, fx);
  h.sm.schedule(h.now, fx);
  h.submit(h.alice, h.spec(4, 1), fx);
  const uint64_t small = h.submit(h.alice, h.spec(1, 1), fx);
  Effects tick;
  h.sm.tick(h.now, tick);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(small)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(small)->reason, "Priority");
  EXPECT_EQ(h.sm.find_job(small)->start_time, core::kNoTime);
}

// priority/multifactor with only the fair-share weight: a user who has used the cluster
// gets a lower priority than one who has not, and the order of the queue follows.
TEST(Scheduling, FairShareOrdersUsersByUsage) {
  Config c = two_node_config();
  c.priority.type = sched::PriorityType::Multifactor;
  c.priority.weight_fairshare = 10000;
  Harness h(c);
  Effects fx;
  // Alice runs both nodes for an hour.
  const uint64_t heavy = h.submit(h.alice, h.spec(4, 1), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(heavy)->state, core::JobState::Running);
  h.now += 3600;
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, h.now);
  h.sm.agent_exited(h.sm.find_job(heavy)->batch_host,
                    exit_report({{"job_id", heavy}, {"status", 0}}), h.now, fx);
  // Fill the cluster, then both users queue one job each, Alice first.
  json fill = h.spec(4, 1);
  fill["time_limit_min"] = 10;
  const uint64_t filler = h.submit(h.bob, fill, fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(filler)->state, core::JobState::Running);
  json job = h.spec(4, 1);
  job["time_limit_min"] = 5;
  const uint64_t a = h.submit(h.alice, job, fx);
  const Caller carol{1002, 1002, "carol", "carol"};
  const uint64_t b = h.submit(carol, job, fx);
  Effects tick;
  h.sm.tick(h.now, tick);
  h.sm.schedule(h.now, fx);
  EXPECT_LT(h.sm.find_job(a)->priority, h.sm.find_job(b)->priority);
  EXPECT_EQ(h.sm.find_job(a)->reason, "Priority");
  EXPECT_EQ(h.sm.find_job(b)->reason, "Resources");
  // Carol (no usage) is planned first although Alice submitted first.
  EXPECT_LT(h.sm.find_job(b)->start_time, h.sm.find_job(a)->start_time);
}

// Fair-share usage is journaled when it changes and restored after a restart, decayed to the
// new controller's time.
TEST(Scheduling, FairShareUsageSurvivesRestart) {
  Config c = two_node_config();
  c.priority.type = sched::PriorityType::Multifactor;
  c.priority.weight_fairshare = 10000;
  c.priority.decay_half_life_s = 3600;
  Harness h(c);
  Effects fx;
  const uint64_t job = h.submit(h.alice, h.spec(4, 1), fx);
  h.sm.schedule(h.now, fx);
  h.now += 3600;
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, h.now);
  Effects end;
  h.sm.agent_exited(h.sm.find_job(job)->batch_host, exit_report({{"job_id", job}, {"status", 0}}),
                    h.now, end);
  ASSERT_TRUE(end.journals(journal::Usage{}));
  const json record = h.sm.usage_record();
  ASSERT_EQ(record["users"].size(), 1u);
  EXPECT_EQ(record["users"][0][0], "alice");
  const double used = record["users"][0][2];
  EXPECT_GT(used, 4 * 3600 * 0.5);  // four CPUs for an hour, decaying with a one-hour half-life
  EXPECT_LT(used, 4 * 3600);

  // A new controller gets it back valued at the same time; decay goes on from there.
  Harness again(c);
  again.sm.restore_usage(record);
  const json later = again.sm.usage_record();
  ASSERT_EQ(later["users"].size(), 1u);
  EXPECT_DOUBLE_EQ(later["users"][0][2].get<double>(), used);
  EXPECT_EQ(later["time"], record["time"]);
}

namespace {
json test_only(Harness& h, json spec, Effects& fx) {
  return h.sm.submit(proto::SubmitRequest::from_json({{"spec", spec}, {"test_only", true}}),
                     h.alice, h.now, fx);
}
}  // namespace

// --test-only asks the engine: now on idle nodes; behind a running job, when it ends; behind
// a job queued before it, after that one's planned run. No job is made, an id is used up.
TEST(Scheduling, TestOnlyAnswersWhatTheEnginePlans) {
  Harness h;
  Effects fx;
  json idle = test_only(h, h.spec(3, 1), fx);
  ASSERT_TRUE(idle.value("ok", false)) << idle.dump();
  EXPECT_EQ(idle["start"], h.now);
  EXPECT_EQ(idle["cpus"], 3);
  EXPECT_EQ(idle["nodes"], "node[1-2]");
  EXPECT_EQ(idle["partition"], "debug");
  EXPECT_EQ(h.sm.job_count(), 0u);
  EXPECT_TRUE(fx.any<journal::NextJobId>());

  json whole = h.spec(4, 1);
  whole["time_limit_min"] = 10;
  const uint64_t running = h.submit(h.alice, whole, fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(running)->state, core::JobState::Running);
  EXPECT_GT(h.sm.find_job(running)->id, idle["job_id"].get<uint64_t>());
  json one = h.spec(1, 1);
  one["time_limit_min"] = 5;
  json behind_running = test_only(h, one, fx);
  ASSERT_TRUE(behind_running.value("ok", false)) << behind_running.dump();
  const int64_t ends = (h.now + 600 + 59) / 60 * 60;
  EXPECT_EQ(behind_running["start"], ends);

  // A job queued first that needs both nodes for 20 minutes goes first: the answer is after it.
  json queued = h.spec(4, 1);
  queued["time_limit_min"] = 20;
  const uint64_t first = h.submit(h.alice, queued, fx);
  h.sm.schedule(h.now, fx);
  const size_t planned = h.sm.planned_jobs();
  json behind_queued = test_only(h, one, fx);
  // The question left the engine's plans as they were: no plan for the answer's job id.
  EXPECT_EQ(h.sm.planned_jobs(), planned);
  ASSERT_TRUE(behind_queued.value("ok", false)) << behind_queued.dump();
  EXPECT_EQ(behind_queued["start"], ends + 20 * 60);
  EXPECT_EQ(h.sm.find_job(first)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.job_count(), 2u);

  // --begin later than the plan: the begin time.
  json later = one;
  later["begin_time"] = h.now + 86400;
  json begins = test_only(h, later, fx);
  ASSERT_TRUE(begins.value("ok", false)) << begins.dump();
  EXPECT_EQ(begins["start"], h.now + 86400);
}

// What can never fit is refused as Slurm refuses it; a partition that is down still answers
// (the job would wait there, not be refused).
TEST(Scheduling, TestOnlyRefusalsAndADownPartition) {
  Harness h;
  Effects fx;
  json too_big = test_only(h, h.spec(5, 1), fx);
  EXPECT_FALSE(too_big.value("ok", true));
  EXPECT_EQ(too_big["error"], "Requested node configuration is not available");
  json down = h.sm.partition_update(
      proto::PartitionUpdateRequest::from_json({{"name", "debug"}, {"set", {{"state", "DOWN"}}}}),
      h.root, fx);
  ASSERT_TRUE(down.value("ok", false)) << down.dump();
  json answer = test_only(h, h.spec(1, 1), fx);
  ASSERT_TRUE(answer.value("ok", false)) << answer.dump();
  EXPECT_EQ(answer["start"], h.now);
  EXPECT_EQ(answer["nodes"], "node1");
}
