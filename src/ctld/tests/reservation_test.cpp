// Advance reservations in the controller: create/update/delete rules, who may use them,
// how their members and other jobs are scheduled around them, and their end.
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

struct ResvHarness : Harness {
  ResvHarness() {
    sm.user_exists = [](const std::string& u) { return u == "alice" || u == "bob"; };
  }
  json create(const std::vector<std::string>& words, Effects& fx, const Caller* who = nullptr) {
    core::ResvRequest req = core::parse_resv_words(words, now);
    return sm.reservation(
        proto::ReservationRequest::from_json({{"action", "create"}, {"request", req}}),
        who ? *who : root, now, fx);
  }
  json update(const std::vector<std::string>& words, Effects& fx) {
    core::ResvRequest req = core::parse_resv_words(words, now);
    return sm.reservation(
        proto::ReservationRequest::from_json({{"action", "update"}, {"request", req}}), root, now,
        fx);
  }
  json remove(const std::string& name, Effects& fx) {
    return sm.reservation(
        proto::ReservationRequest::from_json({{"action", "delete"}, {"name", name}}), root, now,
        fx);
  }
  json job_in(const std::string& resv, int64_t minutes) {
    json s = spec(1, 1);
    s["reservation"] = resv;
    s["time_limit_min"] = minutes;
    return s;
  }
  // Time passes; the nodes keep reporting.
  void advance(int64_t seconds) {
    now += seconds;
    for (const char* n : {"node1", "node2"}) sm.agent_heartbeat(n, {}, now);
  }
  void pass() {
    Effects fx;
    sm.tick(now, fx);
    sm.schedule(now, fx);
  }
};

std::string error_of(const json& r) { return r.value("error", ""); }

}  // namespace

TEST(Reservations, OnlyOperatorsManageThem) {
  ResvHarness h;
  Effects fx;
  EXPECT_EQ(error_of(h.create({"StartTime=now", "Duration=60", "Nodes=node1", "Users=alice"}, fx,
                              &h.alice)),
            "Invalid user id");
  EXPECT_TRUE(h.create({"StartTime=now", "Duration=60", "Nodes=node1", "Users=alice"}, fx)
                  .value("ok", false));
}

TEST(Reservations, CreationRules) {
  ResvHarness h;
  Effects fx;
  json r = h.create({"StartTime=now+1hour", "Duration=60", "Nodes=node1", "Users=alice"}, fx);
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  EXPECT_EQ(r["name"], "alice_1");  // first user and the reservation counter
  EXPECT_TRUE(fx.journals(journal::Reservation{"alice_1"}));
  EXPECT_TRUE(fx.journals(journal::NextResvId{}));
  const core::Reservation* resv = h.sm.find_reservation("alice_1");
  ASSERT_NE(resv, nullptr);
  EXPECT_EQ(resv->start, h.now + 3600);
  EXPECT_EQ(resv->end, h.now + 7200);
  EXPECT_EQ(core::format_resv_flags(resv->flags), "SPEC_NODES");

  // The same node at an overlapping time: refused unless OVERLAP (or MAINT).
  EXPECT_EQ(error_of(h.create(
                {"StartTime=now+90minutes", "Duration=60", "Nodes=node1", "Users=bob"}, fx)),
            "Requested reservation overlaps with another reservation");
  EXPECT_TRUE(h.create({"StartTime=now+90minutes", "Duration=60", "Nodes=node1", "Users=bob",
                        "Flags=overlap", "ReservationName=ov"},
                       fx)
                  .value("ok", false));
  EXPECT_EQ(
      error_of(h.create(
          {"StartTime=now", "Duration=10", "Nodes=node1", "Users=bob", "ReservationName=ov"}, fx)),
      "Duplicate reservation name");
  EXPECT_EQ(error_of(h.create({"StartTime=now", "Duration=10", "Nodes=node9", "Users=bob"}, fx)),
            "Invalid node name specified");
  EXPECT_EQ(error_of(h.create({"StartTime=now", "Duration=10", "Nodes=node2", "Users=carol"}, fx)),
            "Invalid user id");
  // Accounts alone are enough; the name comes from the first account.
  r = h.create({"StartTime=now", "Duration=10", "Nodes=node2", "Accounts=physics"}, fx);
  EXPECT_EQ(r["name"], "physics_3");
}

TEST(Reservations, BusyNodesAndNodeCount) {
  ResvHarness h;
  Effects fx;
  json s = h.spec(2, 1);
  s["time_limit_min"] = 30;
  const uint64_t job = h.submit(h.alice, s, fx);
  h.sm.schedule(h.now, fx);
  const core::Job* j = h.sm.find_job(job);
  ASSERT_EQ(j->state, core::JobState::Running);
  const std::string busy_node = j->alloc[0].node;
  const std::string free_node = busy_node == "node1" ? "node2" : "node1";

  // A job there may run until now+30min: a reservation from now+10min is refused...
  EXPECT_EQ(error_of(h.create(
                {"StartTime=now+10minutes", "Duration=60", "Nodes=" + busy_node, "Users=bob"}, fx)),
            "Requested nodes are busy");
  // ... but one from its end on is fine, and IGNORE_JOBS overrides.
  EXPECT_TRUE(h.create({"StartTime=now+30minutes", "Duration=60", "Nodes=" + busy_node, "Users=bob",
                        "ReservationName=later"},
                       fx)
                  .value("ok", false));
  EXPECT_TRUE(h.create({"StartTime=now", "Duration=10", "Nodes=" + busy_node, "Users=bob",
                        "Flags=IGNORE_JOBS,OVERLAP", "ReservationName=ign"},
                       fx)
                  .value("ok", false));
  // NodeCnt picks nodes nobody needs then, from the default partition.
  json r = h.create({"StartTime=now", "Duration=10", "NodeCnt=1", "Users=bob"}, fx);
  ASSERT_TRUE(r.value("ok", false)) << r.dump();
  const core::Reservation* resv = h.sm.find_reservation(r["name"]);
  EXPECT_EQ(resv->nodes, std::vector<std::string>{free_node});
  EXPECT_EQ(resv->partition, "debug");
  EXPECT_EQ(error_of(h.create({"StartTime=now", "Duration=10", "NodeCnt=2", "Users=bob"}, fx)),
            "Requested nodes are busy");
  // A new NodeCnt picks again from the partition the nodes came from.
  ASSERT_TRUE(h.remove("ign", fx).value("ok", false));
  ASSERT_TRUE(h.remove("later", fx).value("ok", false));
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(job)}}}), h.root, h.now,
              fx);
  h.sm.agent_exited(busy_node, exit_report({{"job_id", job}, {"status", 15}}), h.now, fx);
  ASSERT_TRUE(h.update({"ReservationName=" + r["name"].get<std::string>(), "NodeCnt=2"}, fx)
                  .value("ok", false));
  EXPECT_EQ(resv->nodes.size(), 2u);
  EXPECT_EQ(resv->partition, "debug");
}

TEST(Reservations, WhoMayUseOne) {
  ResvHarness h;
  Effects fx;
  ASSERT_TRUE(
      h.create({"StartTime=now", "Duration=60", "Nodes=node1", "Users=alice", "ReservationName=r"},
               fx)
          .value("ok", false));
  EXPECT_EQ(error_of(h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.job_in("nosuch", 5)}}),
                                 h.alice, h.now, fx)),
            "Requested reservation is invalid");
  EXPECT_EQ(error_of(h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.job_in("r", 5)}}),
                                 h.bob, h.now, fx)),
            "Access denied to requested reservation");
  h.submit(h.alice, h.job_in("r", 5), fx);
  // Users=-alice: everyone but alice.
  ASSERT_TRUE(h.update({"ReservationName=r", "Users=-alice"}, fx).value("ok", false));
  EXPECT_EQ(error_of(h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.job_in("r", 5)}}),
                                 h.alice, h.now, fx)),
            "Access denied to requested reservation");
  h.submit(h.bob, h.job_in("r", 5), fx);
}

TEST(Reservations, MembersWaitForTheStartOthersAvoidTheWindow) {
  ResvHarness h;
  Effects fx;
  ASSERT_TRUE(h.create({"StartTime=now+1hour", "Duration=60", "Nodes=node1", "Users=alice",
                        "ReservationName=r"},
                       fx)
                  .value("ok", false));
  const uint64_t member = h.submit(h.alice, h.job_in("r", 30), fx);
  json longer = h.spec(2, 1);  // a whole node for two hours: not on node1 before the window
  longer["time_limit_min"] = 120;
  const uint64_t other = h.submit(h.bob, longer, fx);
  h.pass();
  EXPECT_EQ(h.sm.find_job(member)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(member)->reason, "Reservation");
  EXPECT_EQ(h.sm.find_job(member)->start_time, h.now + 3600);
  const core::Job* o = h.sm.find_job(other);
  ASSERT_EQ(o->state, core::JobState::Running);
  EXPECT_EQ(o->alloc[0].node, "node2");
  EXPECT_EQ(h.sm.find_node("node1")->state_long(true), "IDLE");

  h.advance(3600);
  h.pass();
  const core::Job* m = h.sm.find_job(member);
  ASSERT_EQ(m->state, core::JobState::Running);
  EXPECT_EQ(m->alloc[0].node, "node1");
  EXPECT_EQ(h.sm.find_node("node1")->state_long(true), "MIXED+RESERVED");

  // Cannot be deleted while a member runs.
  EXPECT_EQ(error_of(h.remove("r", fx)), "Requested reservation is in use");
  EXPECT_EQ(error_of(h.remove("nosuch", fx)), "Requested reservation is invalid");
}

TEST(Reservations, EndStopsMembersAndRepeatingOnesMoveOn) {
  ResvHarness h;
  Effects fx;
  ASSERT_TRUE(h.create({"StartTime=now", "Duration=10", "Nodes=node1", "Users=alice",
                        "ReservationName=once"},
                       fx)
                  .value("ok", false));
  ASSERT_TRUE(h.create({"StartTime=now", "Duration=10", "Nodes=node2", "Users=alice", "Flags=DAILY",
                        "ReservationName=daily"},
                       fx)
                  .value("ok", false));
  const uint64_t member = h.submit(h.alice, h.job_in("once", 60), fx);  // longer than it
  h.pass();
  ASSERT_EQ(h.sm.find_job(member)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_node("node1")->state_short(), "mix");
  EXPECT_EQ(h.sm.find_node("node2")->state_short(), "resv");
  ASSERT_TRUE(h.update({"ReservationName=once", "Flags=MAINT"}, fx).value("ok", false));
  EXPECT_EQ(h.sm.find_node("node1")->state_short(), "mix$");
  EXPECT_EQ(h.sm.find_node("node1")->state_long(true), "MIXED+MAINTENANCE+RESERVED");

  h.advance(600);
  Effects end;
  h.sm.tick(h.now, end);
  EXPECT_EQ(h.sm.find_job(member)->state, core::JobState::Timeout);
  EXPECT_EQ(h.sm.find_reservation("once"), nullptr);
  EXPECT_TRUE(end.journals(journal::ReservationGone{"once"}));
  const core::Reservation* d = h.sm.find_reservation("daily");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->start, 1000 + 86400);
  EXPECT_EQ(d->end, 1000 + 86400 + 600);
  EXPECT_TRUE(end.journals(journal::Reservation{"daily"}));
  EXPECT_EQ(h.sm.find_node("node2")->state_short(), "idle");
}

TEST(Reservations, UpdateKeepsDurationAndChecksAgain) {
  ResvHarness h;
  Effects fx;
  ASSERT_TRUE(h.create({"StartTime=now+1hour", "Duration=45", "Nodes=node1", "Users=alice",
                        "Flags=MAINT,FLEX", "ReservationName=m"},
                       fx)
                  .value("ok", false));
  ASSERT_TRUE(
      h.update({"ReservationName=m", "StartTime=now+2hours", "Users+=bob", "Flags-=FLEX"}, fx)
          .value("ok", false));
  const core::Reservation* m = h.sm.find_reservation("m");
  EXPECT_EQ(m->start, h.now + 7200);
  EXPECT_EQ(m->end, h.now + 7200 + 45 * 60);
  EXPECT_EQ(m->users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(core::format_resv_flags(m->flags), "MAINT,SPEC_NODES");
  EXPECT_EQ(error_of(h.update({"ReservationName=nosuch", "Duration=5"}, fx)),
            "Requested reservation is invalid");
  EXPECT_EQ(error_of(h.update({"ReservationName=m", "Nodes=node7"}, fx)),
            "Invalid node name specified");
  EXPECT_EQ(h.sm.find_reservation("m")->nodes, std::vector<std::string>{"node1"});  // unchanged
  ASSERT_TRUE(h.remove("m", fx).value("ok", false));
  EXPECT_TRUE(fx.journals(journal::ReservationGone{"m"}));
}

TEST(Reservations, ParsingMatchesScontrol) {
  const int64_t now = 1000;
  auto req = core::parse_resv_words({"reservation=x", "starttime=now", "duration=1-2:03:04",
                                     "nodes=ALL", "users=-a,b", "flags=maint,ignore_jobs"},
                                    now);
  EXPECT_EQ(req.name, "x");
  EXPECT_EQ(*req.start, now);
  EXPECT_EQ(*req.duration_min, 24 * 60 + 2 * 60 + 4);  // seconds round up to a minute
  EXPECT_EQ(*req.flags, core::kResvMaint | core::kResvIgnoreJobs);
  try {
    core::parse_resv_words({"duration=bogus"}, now);
    FAIL();
  } catch (const core::ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid duration duration=bogus.");
  }
  try {
    core::parse_resv_words({"flags=bogus"}, now);
    FAIL();
  } catch (const core::ParseError& e) {
    EXPECT_STREQ(e.what(), "Error parsing flags bogus.");
  }
  EXPECT_EQ(
      core::format_resv_flags(core::kResvMaint | core::kResvFlex | core::kResvOverlap |
                              core::kResvIgnoreJobs | core::kResvWeekly | core::kResvSpecNodes),
      "MAINT,FLEX,OVERLAP,IGNORE_JOBS,WEEKLY,SPEC_NODES");
}
