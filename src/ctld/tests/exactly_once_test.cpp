// Exactly once through crashes: a submission retried with its request id gets the job the
// first attempt created (across a journal reload too), and a node whose agent is gone gets no
// new work and has its jobs run again only once their processes are known gone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ctld/tests/harness.hpp"
#include "store/journal.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

json submit_req(const json& spec, const std::string& request_id) {
  return {{"spec", spec}, {"request_id", request_id}};
}

// What the server does after each batch: the batch's jobs and request ids in one commit.
void commit(store::Journal& j, const StateMachine& sm, const Effects& fx) {
  for (const JournalWrite& w : fx.journal_writes())
    std::visit(Overloaded{
                   [&](const journal::Job& r) {
                     if (const core::Job* job = sm.find_job(r.id)) j.put_job(*job);
                   },
                   [&](const journal::JobGone& r) { j.erase_job(r.id); },
                   [&](const journal::NextJobId&) { j.set_next_job_id(sm.next_job_id()); },
                   [&](const journal::SubmitId& r) { j.put_record("submit_id", r.key, r.record); },
                   [&](const journal::SubmitIdGone& r) { j.erase_record("submit_id", r.key); },
                   [](const auto&) {},
               },
               w);
  j.commit();
}

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("drover-once-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST(SubmitId, RetryWithTheSameIdGetsTheSameJob) {
  Harness h;
  Effects fx;
  json first =
      h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.alice, h.now, fx);
  ASSERT_TRUE(first.value("ok", false)) << first.dump();
  EXPECT_EQ(fx.writes<journal::SubmitId>().size(), 1u);
  Effects again;
  json second = h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.alice,
                            h.now + 5, again);
  ASSERT_TRUE(second.value("ok", false)) << second.dump();
  EXPECT_EQ(second["job_id"], first["job_id"]);
  EXPECT_EQ(h.sm.job_count(), 1u);
  EXPECT_TRUE(again.writes<journal::Job>().empty());
  EXPECT_FALSE(again.journals(journal::NextJobId{}));
  // Another id is another job; no id at all is always a new job.
  json third = h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-2")), h.alice,
                           h.now + 6, again);
  EXPECT_NE(third["job_id"], first["job_id"]);
  h.submit(h.alice, h.spec(), again);
  h.submit(h.alice, h.spec(), again);
  EXPECT_EQ(h.sm.job_count(), 4u);
}

// A request id belongs to its user: bob's "r-1" is not alice's.
TEST(SubmitId, AnotherUsersSameIdIsAnotherJob) {
  Harness h;
  Effects fx;
  json mine =
      h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.alice, h.now, fx);
  json theirs =
      h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.bob, h.now, fx);
  ASSERT_TRUE(theirs.value("ok", false)) << theirs.dump();
  EXPECT_NE(theirs["job_id"], mine["job_id"]);
  EXPECT_EQ(h.sm.find_job(theirs["job_id"].get<uint64_t>())->user, "bob");
  // And the root does not see alice's either.
  json roots =
      h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.root, h.now, fx);
  EXPECT_NE(roots["job_id"], mine["job_id"]);
  EXPECT_EQ(h.sm.job_count(), 3u);
}

TEST(SubmitId, BadIdsAreRefusedAndTestOnlyRemembersNothing) {
  Harness h;
  Effects fx;
  // Refused where the request is decoded, with the controller's wording.
  for (const json& bad : {json(""), json(42), json(std::string(129, 'x')), json::array()}) {
    try {
      proto::SubmitRequest::from_json({{"spec", h.spec()}, {"request_id", bad}});
      ADD_FAILURE() << bad.dump();
    } catch (const proto::BadRequest& e) {
      EXPECT_EQ(e.error.message, "Invalid job request");
    }
  }
  json t = h.sm.submit(proto::SubmitRequest::from_json(
                           {{"spec", h.spec()}, {"request_id", "t"}, {"test_only", true}}),
                       h.alice, h.now, fx);
  EXPECT_TRUE(t.value("test_only", false));
  EXPECT_EQ(h.sm.submit_id_count(), 0u);
  EXPECT_EQ(h.sm.job_count(), 0u);
}

// The id is journaled in the job's own commit: a controller restarted from the journal answers
// a retry with the job it had created before the crash.
TEST(SubmitId, RetryAfterAJournalReloadGetsTheSameJob) {
  TempDir dir;
  const std::string path = (dir.path / "ctld-state.db").string();
  uint64_t id = 0;
  {
    Harness h;
    store::Journal j(path);
    Effects fx;
    json r = h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "lost-reply")),
                         h.alice, h.now, fx);
    id = r.at("job_id").get<uint64_t>();
    commit(j, h.sm, fx);
  }
  store::Journal j(path);
  auto loaded = j.load();
  StateMachine again(two_node_config(), sched::make_scheduler());
  again.restore(loaded.next_job_id, std::move(loaded.jobs), 2000);
  again.restore_submit_ids(loaded.records["submit_id"]);
  Harness h;
  Effects fx;
  json retry = again.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "lost-reply")),
                            h.alice, 2000, fx);
  ASSERT_TRUE(retry.value("ok", false)) << retry.dump();
  EXPECT_EQ(retry["job_id"], id);
  EXPECT_EQ(again.job_count(), 1u);
  json other = again.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "lost-reply")),
                            h.bob, 2000, fx);
  EXPECT_NE(other["job_id"], id);
}

// Kept while the job is and for the window after submission; then forgotten, in the journal
// too, and the memory they take is bounded.
TEST(SubmitId, ForgottenAfterTheJobAndTheWindow) {
  Config c = two_node_config();
  c.min_job_age_s = 10;
  Harness h(c);
  Effects fx;
  json r =
      h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.alice, h.now, fx);
  const uint64_t id = r.at("job_id").get<uint64_t>();
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.alice, h.now,
              fx);
  auto keep_nodes_alive = [&](int64_t t) {
    for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, t);
  };
  keep_nodes_alive(h.now + 100);
  Effects purge;
  h.sm.tick(h.now + 100, purge);
  EXPECT_EQ(h.sm.find_job(id), nullptr);  // purged after MinJobAge
  EXPECT_EQ(h.sm.submit_id_count(), 1u);  // but still in the window
  Effects retry;
  EXPECT_EQ(h.sm.submit(proto::SubmitRequest::from_json(submit_req(h.spec(), "r-1")), h.alice,
                        h.now + 100, retry)["job_id"],
            id);

  const int64_t later = h.now + StateMachine::kSubmitIdWindow + 1;
  keep_nodes_alive(later);
  Effects forget;
  h.sm.tick(later, forget);
  EXPECT_EQ(h.sm.submit_id_count(), 0u);
  EXPECT_EQ(forget.writes<journal::SubmitIdGone>(),
            std::vector<journal::SubmitIdGone>{{"1000:r-1"}});
}

// A job still known keeps its id past the window.
TEST(SubmitId, KeptWhileTheJobIs) {
  Harness h;
  Effects fx;
  json held = h.spec();
  held["hold"] = true;  // pends till released
  h.sm.submit(proto::SubmitRequest::from_json(submit_req(held, "held")), h.alice, h.now, fx);
  const int64_t later = h.now + StateMachine::kSubmitIdWindow * 2;
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, later);
  Effects tick;
  h.sm.tick(later, tick);
  EXPECT_EQ(h.sm.submit_id_count(), 1u);
  EXPECT_TRUE(tick.writes<journal::SubmitIdGone>().empty());
}

// An agent whose connection drops (killed, its host gone) leaves its node not responding at
// once: nothing new starts there, sinfo marks it '*', and its job stays where it is.
TEST(AgentLoss, DroppedAgentGetsNoNewWork) {
  Harness h;
  Effects fx;
  const uint64_t first = h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  const std::string host = h.sm.find_job(first)->batch_host;
  const std::string other = host == "node1" ? "node2" : "node1";
  h.sm.agent_disconnected(other, h.now + 1);
  EXPECT_TRUE(h.sm.find_node(other)->not_responding);
  EXPECT_EQ(h.sm.find_node(other)->state_short(), "idle*");
  EXPECT_FALSE(h.sm.find_node(other)->down);
  Effects fx2;
  const uint64_t second = h.submit(h.alice, h.spec(1, 1), fx2);
  h.sm.schedule(h.now + 1, fx2);
  EXPECT_EQ(h.sm.find_job(second)->state, core::JobState::Pending);  // not on the absent node
  EXPECT_TRUE(h.launches(fx2).empty());
  // Its agent comes back: the node takes work again.
  Effects fx3;
  h.sm.agent_register(other, registration({{"running", json::array()}}), h.now + 2, fx3);
  EXPECT_FALSE(h.sm.find_node(other)->not_responding);
  h.sm.schedule(h.now + 2, fx3);
  EXPECT_EQ(h.sm.find_job(second)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(second)->batch_host, other);
}

// Heartbeats missed: not responding after two intervals, DOWN after SlurmdTimeout.
TEST(AgentLoss, SilenceIsNoticedBeforeSlurmdTimeout) {
  Harness h;  // SlurmdTimeout=60: heartbeats every 20 s
  Effects fx;
  h.sm.agent_heartbeat("node2", {}, h.now + 41);
  h.sm.tick(h.now + 40, fx);
  EXPECT_FALSE(h.sm.find_node("node1")->not_responding);
  h.sm.tick(h.now + 41, fx);
  EXPECT_TRUE(h.sm.find_node("node1")->not_responding);
  EXPECT_FALSE(h.sm.find_node("node1")->down);
  EXPECT_FALSE(h.sm.find_node("node2")->not_responding);
  h.sm.tick(h.now + 61, fx);
  EXPECT_TRUE(h.sm.find_node("node1")->down);
  EXPECT_EQ(h.sm.find_node("node1")->reason, "Not responding");
}

// scancel of a job whose agent is away: COMPLETING (CG) while its processes may run on, its
// CPUs still held; over once the node is declared DOWN (or its agent confirms).
TEST(AgentLoss, CancelOnAnAbsentNodeStaysCompletingUntilTheNodeIsDown) {
  Harness h;
  Effects fx;
  const uint64_t id = h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  const std::string host = h.sm.find_job(id)->batch_host;
  const std::string other = host == "node1" ? "node2" : "node1";
  h.sm.agent_disconnected(host, h.now + 1);
  Effects c;
  json r = h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.alice,
                       h.now + 1, c);
  EXPECT_TRUE(r.value("ok", false));
  const core::Job* job = h.sm.find_job(id);
  EXPECT_EQ(job->state, core::JobState::Cancelled);
  EXPECT_TRUE(job->completing);  // squeue: CG
  EXPECT_EQ(h.sm.find_node(host)->alloc_cpus, 2);
  h.sm.agent_heartbeat(other, {}, h.now + 61);
  Effects t;
  h.sm.tick(h.now + 30, t);
  EXPECT_TRUE(h.sm.find_job(id)->completing);
  h.sm.tick(h.now + 61, t);
  EXPECT_TRUE(h.sm.find_node(host)->down);
  EXPECT_FALSE(h.sm.find_job(id)->completing);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Cancelled);
  EXPECT_EQ(h.sm.find_node(host)->alloc_cpus, 0);
}

// The same agent process back before SlurmdTimeout with the job still running: the job runs
// on (it was never anywhere else); a cancelled one is stopped there and ends with its exit.
TEST(AgentLoss, TheSameAgentBackKeepsItsJobs) {
  Harness h;
  Effects fx;
  h.sm.agent_register("node1", registration({{"running", json::array()}, {"instance", "a1"}}),
                      h.now, fx);
  h.sm.agent_register("node2", registration({{"running", json::array()}, {"instance", "b1"}}),
                      h.now, fx);
  const uint64_t id = h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  const core::Job* job = h.sm.find_job(id);
  const std::string host = job->batch_host;
  const std::string inst = host == "node1" ? "a1" : "b1";
  h.sm.agent_disconnected(host, h.now + 1);
  Effects back;
  h.sm.agent_register(
      host,
      registration({{"running", {{{"job_id", id}, {"run", job->launches}}}}, {"instance", inst}}),
      h.now + 5, back);
  EXPECT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(id)->restarts, 0u);
  EXPECT_TRUE(h.launches(back).empty());
}

// A new agent process (a new instance: the old one died, and with it, or killed by the new
// one, its jobs' processes): the node's jobs are gone, never taken as still running. A
// requeueable job runs again once; one that may not be requeued ends NODE_FAIL.
TEST(AgentLoss, ANewAgentProcessEndsWhatTheOldOneRan) {
  Harness h;
  Effects fx;
  h.sm.agent_register("node1", registration({{"running", json::array()}, {"instance", "a1"}}),
                      h.now, fx);
  h.sm.agent_register("node2", registration({{"running", json::array()}, {"instance", "b1"}}),
                      h.now, fx);
  const uint64_t id = h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  const std::string host = h.sm.find_job(id)->batch_host;
  h.sm.agent_disconnected(host, h.now + 1);
  Effects back;
  h.sm.agent_register(host, registration({{"running", json::array()}, {"instance", "new"}}),
                      h.now + 5, back);
  const core::Job* job = h.sm.find_job(id);
  EXPECT_EQ(job->state, core::JobState::Pending);
  EXPECT_EQ(job->restarts, 1u);
  EXPECT_EQ(h.sm.find_node(host)->alloc_cpus, 0);

  // --no-requeue: the same loss ends it NODE_FAIL.
  Effects again;
  json once = h.spec(2, 1);
  once["requeue"] = 0;
  const uint64_t no_requeue = h.submit(h.alice, once, again);
  h.sm.schedule(h.now + 300, again);  // after the first one's requeue delay, both can run
  const core::Job* nr = h.sm.find_job(no_requeue);
  ASSERT_EQ(nr->state, core::JobState::Running);
  const std::string nr_host = nr->batch_host;
  h.sm.agent_disconnected(nr_host, h.now + 301);
  Effects back2;
  h.sm.agent_register(nr_host, registration({{"running", json::array()}, {"instance", "newer"}}),
                      h.now + 302, back2);
  EXPECT_EQ(h.sm.find_job(no_requeue)->state, core::JobState::NodeFail);
  EXPECT_EQ(h.sm.find_job(no_requeue)->restarts, 0u);
  EXPECT_EQ(h.sm.find_node(nr_host)->alloc_cpus, 0);
}

// A new agent process that reports, from its predecessor's records, how a run ended that the
// controller never heard of: the job ends as it ended (its exit code, its OOM kills), once,
// and is not requeued; a record of an earlier run ends nothing. Each is acknowledged.
TEST(AgentLoss, ANewAgentProcessReportsTheExitsItsPredecessorRecorded) {
  Harness h;
  Effects fx;
  h.sm.agent_register("node1", registration({{"running", json::array()}, {"instance", "a1"}}),
                      h.now, fx);
  h.sm.agent_register("node2", registration({{"running", json::array()}, {"instance", "b1"}}),
                      h.now, fx);
  const uint64_t ok = h.submit(h.alice, h.spec(1, 1), fx);
  const uint64_t bad = h.submit(h.alice, h.spec(1, 1), fx);
  const uint64_t oom = h.submit(h.alice, h.spec(1, 1), fx);
  const uint64_t stale = h.submit(h.alice, h.spec(1, 1), fx);
  h.sm.schedule(h.now, fx);
  for (uint64_t id : {ok, bad, oom, stale})
    ASSERT_EQ(h.sm.find_job(id)->state, core::JobState::Running);
  std::map<std::string, json> finished;
  for (uint64_t id : {ok, bad, oom, stale}) {
    const core::Job* job = h.sm.find_job(id);
    json f = {{"job_id", id}, {"run", job->launches}, {"status", 0}};
    if (id == bad) f["status"] = 3 << 8;
    if (id == oom) {
      f["status"] = 9;  // SIGKILL
      f["oom_kills"] = 1;
      f["max_rss"] = int64_t{64} << 20;
    }
    if (id == stale) f["run"] = job->launches - 1;
    finished[job->batch_host].push_back(f);
  }
  Effects back;
  for (const char* node : {"node1", "node2"}) {
    h.sm.agent_disconnected(node, h.now + 1);
    h.sm.agent_register(
        node,
        registration({{"running", json::array()},
                      {"finished", finished.count(node) ? finished[node] : json::array()},
                      {"instance", std::string("new-") + node}}),
        h.now + 5, back);
  }
  const core::Job* j = h.sm.find_job(ok);
  EXPECT_EQ(j->state, core::JobState::Completed);
  EXPECT_EQ(j->exit_code, 0);
  EXPECT_EQ(j->restarts, 0u);
  j = h.sm.find_job(bad);
  EXPECT_EQ(j->state, core::JobState::Failed);
  EXPECT_EQ(j->exit_code, 3);
  EXPECT_EQ(j->restarts, 0u);
  j = h.sm.find_job(oom);
  EXPECT_EQ(j->state, core::JobState::OutOfMemory);
  EXPECT_EQ(j->restarts, 0u);
  // An earlier run's record: the current run is unknown to the new agent, so it is requeued.
  j = h.sm.find_job(stale);
  EXPECT_EQ(j->state, core::JobState::Pending);
  EXPECT_EQ(j->restarts, 1u);
  EXPECT_TRUE(h.launches(back).empty());
  size_t acks = 0;
  for (const auto& m : wire(back))
    if (m.second.value("type", "") == "exit_ack") ++acks;
  EXPECT_EQ(acks, 4u);
}

// Ids of purged jobs are bounded in number: beyond kMaxSubmitIds the oldest go first.
TEST(SubmitId, MemoryIsBounded) {
  Harness h;
  std::map<std::string, json> records;
  const size_t n = StateMachine::kMaxSubmitIds + 10;
  for (size_t i = 0; i < n; ++i)  // jobs long purged, ids still in their window
    records["1000:r" + std::to_string(i)] = {{"job_id", 100000 + i},
                                             {"at", h.now + static_cast<int64_t>(i % 1000)}};
  records["1000:oldest"] = {{"job_id", 99}, {"at", h.now - 10}};
  h.sm.restore_submit_ids(records);
  for (const char* node : {"node1", "node2"}) h.sm.agent_heartbeat(node, {}, h.now);
  Effects fx;
  h.sm.tick(h.now + 60, fx);
  EXPECT_EQ(h.sm.submit_id_count(), StateMachine::kMaxSubmitIds);
  EXPECT_EQ(fx.writes<journal::SubmitIdGone>().size(), 11u);
  EXPECT_TRUE(fx.journals(journal::SubmitIdGone{"1000:oldest"}));
}
