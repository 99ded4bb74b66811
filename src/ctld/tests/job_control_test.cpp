// Arrays, dependencies, holds, requeue and updates in the controller's state machine.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include "ctld/acct_record.hpp"
#include "ctld/tests/harness.hpp"

using namespace drover;
using ctld::Effects;
using ctld::testing::exit_report;
using ctld::testing::Harness;
using nlohmann::json;

namespace {

json with(json spec, const std::string& key, json value) {
  spec[key] = std::move(value);
  return spec;
}

void finish(Harness& h, uint64_t id, int status, Effects& fx) {
  const core::Job* job = h.sm.find_job(id);
  ASSERT_NE(job, nullptr);
  h.sm.agent_exited(job->batch_host, exit_report({{"job_id", id}, {"status", status}}), h.now, fx);
}

// Time passes with both agents heartbeating (else they would be declared down).
void advance(Harness& h, int64_t to, Effects& fx) {
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, to);
  h.sm.tick(to, fx);
  h.sm.schedule(to, fx);
}

const core::Job& job(Harness& h, uint64_t id) {
  const core::Job* j = h.sm.find_job(id);
  EXPECT_NE(j, nullptr) << id;
  static core::Job none;
  return j ? *j : none;
}

}  // namespace

TEST(JobArrays, RemainderSplitsAsTasksStartAndTheLastTaskTakesTheArrayId) {
  Harness h;
  Effects fx;
  uint64_t a = h.submit(h.alice, with(h.spec(), "array", "1-5"), fx);
  h.sm.schedule(h.now, fx);
  // 4 CPUs: tasks 1-4 run under new ids 2-5; the array's record keeps task 5.
  for (uint64_t id = 2; id <= 5; ++id) {
    EXPECT_EQ(job(h, id).state, core::JobState::Running);
    EXPECT_EQ(job(h, id).array_job_id, a);
    EXPECT_EQ(job(h, id).array_task_id, id - 1);
  }
  EXPECT_EQ(job(h, a).state, core::JobState::Pending);
  EXPECT_EQ(job(h, a).array_pending.format(), "5");
  EXPECT_EQ(h.launches(fx).size(), 4u);
  Effects fx2;
  finish(h, 2, 0, fx2);
  h.sm.schedule(h.now, fx2);
  EXPECT_EQ(job(h, a).state, core::JobState::Running);
  EXPECT_EQ(job(h, a).array_task_id, 5u);
  EXPECT_TRUE(job(h, a).array_pending.empty());
  EXPECT_EQ(h.sm.next_job_id(), 6u);
  // Task launches name the task in their environment and output file.
  auto launch = h.launches(fx2).at(0);
  EXPECT_EQ(launch["env"]["SLURM_ARRAY_JOB_ID"], "1");
  EXPECT_EQ(launch["env"]["SLURM_ARRAY_TASK_ID"], "5");
  EXPECT_EQ(launch["stdout"], "/tmp/slurm-1_5.out");
}

TEST(JobArrays, RunningLimitHoldsTheRestWithJobArrayTaskLimit) {
  Harness h;
  Effects fx;
  uint64_t a = h.submit(h.alice, with(h.spec(), "array", "0-9%2"), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.launches(fx).size(), 2u);
  h.sm.tick(h.now, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, a).reason, "JobArrayTaskLimit");
  EXPECT_EQ(job(h, a).array_pending.size(), 8u);
}

TEST(JobArrays, OversizeArrayIsRefused) {
  Harness h;
  Effects fx;
  json r =
      h.sm.submit(proto::SubmitRequest::from_json({{"spec", with(h.spec(), "array", "0-1001")}}),
                  h.alice, h.now, fx);
  EXPECT_FALSE(r.value("ok", true));
  EXPECT_EQ(h.sm.next_job_id(), 1u);
}

TEST(JobArrays, MillionTaskArrayIsOneRecord) {
  auto c = ctld::testing::two_node_config();
  c.max_array_size = 1000001;
  Harness h(c);
  Effects fx;
  uint64_t a = h.submit(h.alice, with(with(h.spec(), "array", "0-999999"), "hold", true), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.job_count(), 1u);
  EXPECT_EQ(job(h, a).array_pending.size(), 1000000u);
  EXPECT_EQ(job(h, a).reason, "JobHeldUser");
}

TEST(JobArrays, CancelOneTaskTasksAndTheWholeArray) {
  Harness h;
  Effects fx;
  uint64_t a = h.submit(h.alice, with(with(h.spec(), "array", "0-9"), "hold", true), fx);
  // A pending task cancelled alone just leaves the array: Slurm keeps no record of it.
  json r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {"1_3"}}}), h.alice, h.now, fx);
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(h.sm.job_count(), 1u);
  EXPECT_EQ(job(h, a).array_pending.format(), "0-2,4-9");
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {"1_[5-6]"}}}), h.alice, h.now, fx);
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(job(h, a).array_pending.format(), "0-2,4,7-9");
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {"1_77"}}}), h.alice, h.now, fx);
  EXPECT_FALSE(r["ok"]);
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {"1"}}}), h.bob, h.now, fx);
  EXPECT_FALSE(r["ok"]);
  EXPECT_EQ(job(h, a).state, core::JobState::Pending);
  r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {"1"}}}), h.alice, h.now, fx);
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(job(h, a).state, core::JobState::Cancelled);
  EXPECT_EQ(job(h, a).array_pending.format(), "0-2,4,7-9");
}

TEST(Dependencies, AfterOkWaitsThenRunsOrNeverRuns) {
  Harness h;
  Effects fx;
  uint64_t first = h.submit(h.alice, h.spec(), fx);
  uint64_t ok = h.submit(h.alice, with(h.spec(), "dependency", "afterok:1"), fx);
  uint64_t notok = h.submit(h.alice, with(h.spec(), "dependency", "afternotok:1"), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, first).state, core::JobState::Running);
  EXPECT_EQ(job(h, ok).reason, "Dependency");
  EXPECT_EQ(core::format_dependency(job(h, ok).dependency), "afterok:1(unfulfilled)");
  finish(h, first, 0, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, ok).state, core::JobState::Running);
  EXPECT_TRUE(job(h, ok).dependency.empty());
  EXPECT_EQ(job(h, notok).state, core::JobState::Pending);
  EXPECT_EQ(job(h, notok).reason, "DependencyNeverSatisfied");
  EXPECT_EQ(core::format_dependency(job(h, notok).dependency), "afternotok:1(failed)");
}

TEST(Dependencies, UnknownJobCountsAsMetAndKillOnInvalidDepCancels) {
  Harness h;
  Effects fx;
  // As Slurm 22.05: accepted, and the entry is met when next evaluated.
  uint64_t unknown = h.submit(h.alice, with(h.spec(), "dependency", "afterok:42"), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, unknown).state, core::JobState::Running);
  json r = h.sm.submit(
      proto::SubmitRequest::from_json({{"spec", with(h.spec(), "dependency", "afterok:x")}}),
      h.alice, h.now, fx);
  EXPECT_EQ(r.value("error", ""), "Job dependency problem");
  uint64_t first = h.submit(h.alice, h.spec(), fx);
  uint64_t dep = h.submit(h.alice,
                          with(with(h.spec(), "dependency", "afterok:" + std::to_string(first)),
                               "kill_on_invalid_dep", 1),
                          fx);
  h.sm.schedule(h.now, fx);
  finish(h, first, 3 << 8, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, dep).state, core::JobState::Cancelled);
  EXPECT_EQ(job(h, dep).reason, "DependencyNeverSatisfied");
}

TEST(Dependencies, AfterAnyOnAWholeArrayWaitsForEveryTask) {
  Harness h;
  Effects fx;
  uint64_t a = h.submit(h.alice, with(h.spec(), "array", "1-5"), fx);
  uint64_t dep = h.submit(h.alice, with(h.spec(), "dependency", "afterany:1"), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, dep).reason, "Dependency");
  // Tasks 1-4 were split off after the dependent job took id 2: ids 3-6.
  for (uint64_t id = 3; id <= 6; ++id) finish(h, id, 0, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, dep).state, core::JobState::Pending);  // task 5 only just started
  EXPECT_EQ(job(h, a).state, core::JobState::Running);
  finish(h, a, 1 << 8, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, dep).state, core::JobState::Running);
}

TEST(Dependencies, SingletonRunsOneJobOfANameAtATime) {
  Harness h;
  Effects fx;
  json s = with(h.spec(), "dependency", "singleton");
  uint64_t a = h.submit(h.alice, s, fx);
  uint64_t b = h.submit(h.alice, s, fx);
  uint64_t other_user = h.submit(h.bob, s, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, a).state, core::JobState::Running);
  EXPECT_EQ(job(h, b).reason, "Dependency");
  EXPECT_EQ(job(h, other_user).state, core::JobState::Running);
  finish(h, a, 0, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, b).state, core::JobState::Running);
}

TEST(Holds, UserHoldReleaseAndAdminHoldRules) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, with(h.spec(), "hold", true), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, id).priority, 0u);
  EXPECT_EQ(job(h, id).reason, "JobHeldUser");
  json r = h.sm.control(proto::ControlRequest::from_json({{"action", "release"}, {"jobs", {"1"}}}),
                        h.bob, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Invalid user id");
  r = h.sm.control(proto::ControlRequest::from_json({{"action", "hold"}, {"jobs", {"1"}}}), h.root,
                   h.now, fx);
  EXPECT_EQ(job(h, id).reason, "JobHeldAdmin");
  r = h.sm.control(proto::ControlRequest::from_json({{"action", "release"}, {"jobs", {"1"}}}),
                   h.alice, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Access/permission denied");
  r = h.sm.control(proto::ControlRequest::from_json({{"action", "release"}, {"jobs", {"1"}}}),
                   h.root, h.now, fx);
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_GT(job(h, id).priority, 0u);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, id).state, core::JobState::Running);
  r = h.sm.control(proto::ControlRequest::from_json({{"action", "requeue"}, {"jobs", {"77"}}}),
                   h.root, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Invalid job id specified");
}

TEST(Requeue, RunningJobCompletesThenWaitsOutTheCredentialDelay) {
  Harness h;
  Effects fx;
  uint64_t id = h.submit(h.alice, h.spec(), fx);
  uint64_t waiting = h.submit(h.alice, with(h.spec(), "hold", true), fx);
  h.sm.schedule(h.now, fx);
  json r = h.sm.control(proto::ControlRequest::from_json({{"action", "requeue"}, {"jobs", {"2"}}}),
                        h.alice, h.now, fx);
  EXPECT_EQ(r["errors"][0]["error"], "Job is pending execution");
  Effects fx2;
  const int64_t started = job(h, id).start_time;
  r = h.sm.control(proto::ControlRequest::from_json({{"action", "requeue"}, {"jobs", {"1"}}}),
                   h.alice, h.now, fx2);
  EXPECT_TRUE(r["ok"]) << r.dump();
  // The run that ended stays in accounting (sacct -D): REQUEUED, its batch step CANCELLED 0:15.
  std::vector<store::JobRecord> runs;
  for (const auto& r : fx2.acct_records())
    if (const auto* rr = std::get_if<ctld::acct::RequeuedRun>(&r)) runs.push_back(rr->run);
  ASSERT_EQ(runs.size(), 1u);
  const store::JobRecord run = runs[0];
  EXPECT_EQ(run.job_id, id);
  EXPECT_EQ(run.state, "REQUEUED");
  EXPECT_EQ(run.start_time, started);
  EXPECT_EQ(run.end_time, h.now);
  ASSERT_EQ(run.steps.size(), 1u);
  EXPECT_EQ(run.steps[0].state, "CANCELLED");
  EXPECT_EQ(run.steps[0].exit_signal, SIGTERM);
  EXPECT_EQ(run.steps[0].end_time, h.now);
  EXPECT_TRUE(job(h, id).completing);
  EXPECT_EQ(job(h, id).state, core::JobState::Pending);
  EXPECT_EQ(job(h, id).restarts, 1u);
  finish(h, id, SIGTERM, fx2);
  // Pending again: no exit code in accounting until the next run ends (scontrol keeps 0:15).
  EXPECT_EQ(ctld::acct_record(job(h, id)).exit_signal, 0);
  EXPECT_FALSE(job(h, id).completing);
  EXPECT_TRUE(job(h, id).alloc.empty());
  h.sm.schedule(h.now + 10, fx2);
  EXPECT_EQ(job(h, id).reason, "BeginTime");
  advance(h, h.now + 130, fx2);
  EXPECT_EQ(job(h, id).state, core::JobState::Running);
  EXPECT_EQ(job(h, waiting).state, core::JobState::Pending);
  // --no-requeue jobs refuse it.
  uint64_t noreq = h.submit(h.alice, with(h.spec(), "requeue", 0), fx2);
  h.sm.schedule(h.now + 130, fx2);
  r = h.sm.control(
      proto::ControlRequest::from_json({{"action", "requeue"}, {"jobs", {std::to_string(noreq)}}}),
      h.alice, h.now + 130, fx2);
  EXPECT_EQ(r["errors"][0]["error"], "Requested operation is presently disabled");
}

TEST(Update, PermissionRulesFollowSlurm) {
  Harness h;
  Effects fx;
  json spec = with(h.spec(), "time_limit_min", 10);
  uint64_t pending = h.submit(h.alice, with(spec, "hold", true), fx);
  uint64_t running = h.submit(h.alice, spec, fx);
  h.sm.schedule(h.now, fx);
  auto update = [&](uint64_t id, const ctld::Caller& who, json set) {
    return h.sm.update(
        proto::JobUpdateRequest::from_json({{"jobs", {std::to_string(id)}}, {"set", set}}), who,
        h.now, fx);
  };
  EXPECT_TRUE(update(pending, h.alice, {{"TimeLimit", "20"}})["ok"]);
  EXPECT_EQ(job(h, pending).time_limit_min, 20);
  EXPECT_EQ(update(running, h.alice, {{"TimeLimit", "30"}})["errors"][0]["error"],
            "Access/permission denied");
  EXPECT_TRUE(update(running, h.alice, {{"TimeLimit", "5"}})["ok"]);
  EXPECT_TRUE(update(running, h.root, {{"TimeLimit", "30"}})["ok"]);
  EXPECT_EQ(update(pending, h.alice, {{"Nice", "-5"}})["errors"][0]["error"],
            "Access/permission denied");
  EXPECT_TRUE(update(pending, h.alice, {{"Nice", "50"}})["ok"]);
  EXPECT_EQ(update(pending, h.bob, {{"Nice", "50"}})["errors"][0]["error"], "Invalid user id");
  EXPECT_EQ(update(pending, h.alice, {{"Partition", "nope"}})["errors"][0]["error"],
            "Invalid partition name specified");
  EXPECT_EQ(update(pending, h.alice, {{"Foo", "bar"}})["errors"][0]["error"],
            "Update of this parameter is not supported: Foo=bar");
  EXPECT_TRUE(update(pending, h.alice, {{"JobName", "renamed"}, {"NumNodes", "2"}})["ok"]);
  EXPECT_EQ(job(h, pending).spec.name, "renamed");
  EXPECT_EQ(job(h, pending).spec.nodes_min, 2);
}

TEST(Eligibility, BeginTimeAndNodeListsAreHonoured) {
  Harness h;
  Effects fx;
  uint64_t later = h.submit(h.alice, with(h.spec(), "begin_time", h.now + 100), fx);
  uint64_t on2 = h.submit(h.alice, with(h.spec(), "nodelist", "node2"), fx);
  uint64_t not1 = h.submit(h.alice, with(h.spec(), "exclude", "node1"), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, later).reason, "BeginTime");
  EXPECT_EQ(job(h, on2).batch_host, "node2");
  EXPECT_EQ(job(h, not1).batch_host, "node2");
  advance(h, h.now + 100, fx);
  EXPECT_EQ(job(h, later).state, core::JobState::Running);
  json r =
      h.sm.submit(proto::SubmitRequest::from_json({{"spec", with(h.spec(), "nodelist", "node9")}}),
                  h.alice, h.now, fx);
  EXPECT_EQ(r.value("error", ""), "Invalid node name specified");
}

TEST(Gres, GpusArePlacedCountedAndRefusedAsSlurmDoes) {
  auto c = ctld::testing::two_node_config();
  c.gres_types = {"gpu"};
  for (auto& n : c.conf.nodes) n.gres = "gpu:2";
  Harness h(c);
  Effects fx;
  json r = h.sm.submit(proto::SubmitRequest::from_json({{"spec", with(h.spec(), "gres", "mps:1")}}),
                       h.alice, h.now, fx);
  EXPECT_EQ(r.value("error", ""), "Invalid generic resource (gres) specification");
  r = h.sm.submit(proto::SubmitRequest::from_json({{"spec", with(h.spec(), "gres", "gpu:3")}}),
                  h.alice, h.now, fx);
  EXPECT_EQ(r.value("error", ""), "Requested node configuration is not available");
  r = h.sm.submit(
      proto::SubmitRequest::from_json({{"spec", with(h.spec(), "mem_per_gpu_mb", 100)}}), h.alice,
      h.now, fx);
  EXPECT_EQ(r.value("detail", ""),
            "Requested mem_per_tres=gres:gpu:100 but did not request any GPU.");
  r = h.sm.submit(
      proto::SubmitRequest::from_json(
          {{"spec", with(with(with(h.spec(), "gpus", "1"), "nodes_min", 2), "nodes_set", true)}}),
      h.alice, h.now, fx);
  EXPECT_EQ(r.value("error", ""), "Invalid generic resource (gres) specification");
  EXPECT_EQ(r.value("detail", ""), "Failed to validate job spec, --gpus < -N");
  // -N1-2 with one GPU: at most one node, which cannot hold three tasks.
  r = h.sm.submit(
      proto::SubmitRequest::from_json(
          {{"spec", with(with(with(with(h.spec(), "gpus", "1"), "nodes_max", 2), "ntasks", 3),
                         "nodes_set", true)}}),
      h.alice, h.now, fx);
  EXPECT_EQ(r.value("error", ""), "Requested node configuration is not available");
  uint64_t three = h.submit(h.alice, with(h.spec(), "gpus", "3"), fx);
  uint64_t one = h.submit(h.alice, with(h.spec(), "gres", "gpu:1"), fx);
  h.sm.schedule(h.now, fx);
  // --gpus=3 needs both nodes (2 + 1); the last free GPU goes to the next job.
  EXPECT_EQ(job(h, three).alloc.size(), 2u);
  EXPECT_EQ(job(h, one).state, core::JobState::Running);
  uint64_t waits = h.submit(h.alice, with(h.spec(), "gpus_per_node", "1"), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, waits).reason, "Resources");
  int64_t used = 0;
  for (const char* n : {"node1", "node2"})
    for (const auto& g : h.sm.find_node(n)->gres_used) used += g.count;
  EXPECT_EQ(used, 4);
  finish(h, one, 0, fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(job(h, waits).state, core::JobState::Running);
  auto launch = h.launches(fx).back();
  EXPECT_EQ(launch["env"]["SLURM_GPUS_ON_NODE"], "1");
}

// The agent's cgroup saw an OOM kill: OUT_OF_MEMORY (0:125, OutOfMemory) as Slurm 22.05 ends
// it, even when the batch shell itself exited 0; the peak memory goes to the batch step's
// accounting record. A job that asked for memory is launched with that limit.
TEST(JobEnd, OomKillEndsTheJobOutOfMemoryWithItsMaxRss) {
  Harness h;
  Effects fx;
  uint64_t limited = h.submit(h.alice, with(h.spec(), "mem_per_node_mb", 100), fx);
  uint64_t plain = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  auto launches = h.launches(fx);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0]["mem_mb"], 100);
  EXPECT_EQ(launches[1]["mem_mb"], 0);  // no --mem: no limit
  Effects fx2;
  h.sm.agent_exited(
      job(h, limited).batch_host,
      exit_report({{"job_id", limited}, {"status", 0}, {"oom_kills", 1}, {"max_rss", 104857600}}),
      h.now, fx2);
  const core::Job& j = job(h, limited);
  EXPECT_EQ(j.state, core::JobState::OutOfMemory);
  EXPECT_EQ(j.reason, "OutOfMemory");
  EXPECT_EQ(j.exit_code, 0);
  EXPECT_EQ(j.exit_signal, 125);
  store::JobRecord r = ctld::acct_record(j);
  EXPECT_EQ(r.state, "OUT_OF_MEMORY");
  ASSERT_FALSE(r.steps.empty());
  EXPECT_EQ(r.steps[0].name, "batch");
  EXPECT_EQ(r.steps[0].state, "OUT_OF_MEMORY");
  EXPECT_EQ(r.steps[0].max_rss_kb, 102400);
  h.sm.agent_exited(job(h, plain).batch_host, exit_report({{"job_id", plain}, {"status", 0}}),
                    h.now, fx2);
  EXPECT_EQ(job(h, plain).state, core::JobState::Completed);
  EXPECT_EQ(ctld::acct_record(job(h, plain)).steps.at(0).max_rss_kb, -1);  // not measured
}

namespace {
std::vector<uint64_t> ids(const std::set<uint64_t>& s) { return {s.begin(), s.end()}; }
}  // namespace

// The job table's index of running and completing jobs (what each scheduling view and tick
// visits instead of every job) follows requeues, array splits, purges and a restart.
TEST(JobIndex, FollowsRequeueArraySplitsPurgeAndRestart) {
  ctld::Config c = ctld::testing::two_node_config();
  c.min_job_age_s = 10;
  Harness h(c);
  Effects fx;
  const uint64_t plain = h.submit(h.alice, h.spec(), fx);                      // 1
  const uint64_t arr = h.submit(h.alice, with(h.spec(), "array", "0-4"), fx);  // 2
  h.sm.schedule(h.now, fx);
  // Four CPUs: the plain job and array tasks 0-2 split off as 3, 4, 5; task 3 and 4 wait.
  EXPECT_EQ(ids(h.sm.jobs().active()), (std::vector<uint64_t>{plain, 3, 4, 5}));
  EXPECT_EQ(h.sm.jobs().check_indexes(), "");

  // Requeued: completing while its processes go, then pending and out of the index.
  Effects fx2;
  json r = h.sm.control(proto::ControlRequest{.action = "requeue", .jobs = {std::to_string(plain)}},
                        h.alice, h.now, fx2);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(job(h, plain).state, core::JobState::Pending);
  EXPECT_EQ(ids(h.sm.jobs().active()), (std::vector<uint64_t>{plain, 3, 4, 5}));
  finish(h, plain, SIGTERM, fx2);
  EXPECT_EQ(ids(h.sm.jobs().active()), (std::vector<uint64_t>{3, 4, 5}));
  EXPECT_TRUE(h.sm.jobs().finished().empty());

  // A task ends and two CPUs are free (the requeued job waits): task 3 splits off as 6 and the
  // array's own record runs the last one, 4.
  finish(h, 3, 0, fx2);
  EXPECT_EQ(ids(h.sm.jobs().finished()), (std::vector<uint64_t>{3}));
  h.sm.schedule(h.now, fx2);
  EXPECT_EQ(job(h, arr).state, core::JobState::Running);
  EXPECT_EQ(ids(h.sm.jobs().active()), (std::vector<uint64_t>{arr, 4, 5, 6}));
  finish(h, 4, 0, fx2);
  EXPECT_EQ(ids(h.sm.jobs().active()), (std::vector<uint64_t>{arr, 5, 6}));
  EXPECT_EQ(ids(h.sm.jobs().finished()), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(h.sm.jobs().check_indexes(), "");

  // Restart: the records read back give the same indexes.
  std::vector<core::Job> saved;
  for (const auto& [id, j] : h.sm.jobs()) saved.push_back(j);
  ctld::StateMachine again(c, sched::make_scheduler());
  again.restore(h.sm.next_job_id(), saved, h.now);
  EXPECT_EQ(again.jobs().active(), h.sm.jobs().active());
  EXPECT_EQ(again.jobs().finished(), h.sm.jobs().finished());
  EXPECT_EQ(again.jobs().check_indexes(), "");

  // Past MinJobAge the finished tasks are purged, from the index too; the time limit walk
  // still sees the running ones.
  advance(h, h.now + 100, fx2);
  EXPECT_EQ(h.sm.find_job(3), nullptr);
  EXPECT_EQ(h.sm.find_job(4), nullptr);
  EXPECT_TRUE(h.sm.jobs().finished().empty());
  EXPECT_EQ(h.sm.jobs().check_indexes(), "");
}
