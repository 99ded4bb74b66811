// Advance reservations in the engine: hand-computed cases, and properties over random
// workloads with random reservations.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "sched/scheduler.hpp"
#include "sched/tests/cluster_fixture.hpp"

using namespace drover;
using drover::sched::test_cluster::Cluster;
using drover::sched::test_cluster::planned;
using drover::sched::test_cluster::reasons;
using drover::sched::test_cluster::started;

namespace {

// Two 1-CPU nodes; reservation "r" holds n1 over [3600, 7200).
Cluster two_nodes_one_reservation(sched::Policy policy = sched::Policy::Conservative) {
  Cluster c;
  c.add_nodes(2, 1, 100);
  c.one_partition();
  c.params.policy = policy;
  c.reservations.push_back({"r", 3600, 7200, {0}, false});
  return c;
}

std::vector<std::string> nodes_of(const sched::Decisions& d, uint64_t id) {
  for (const auto& s : d.starts)
    if (s.job_id == id) {
      std::vector<std::string> out;
      for (const auto& a : s.alloc) out.push_back(a.node);
      return out;
    }
  return {};
}

}  // namespace

TEST(Reservation, OthersRunOnReservedNodesOnlyIfTheyEndBeforeIt) {
  Cluster c = two_nodes_one_reservation();
  c.add_job(1, 60);   // 1: ends at 3600, exactly when the reservation begins: runs on n1
  c.add_job(1, 61);   // 2: would run into it: takes n2
  c.add_job(1, 120);  // 3: neither: n1 is reserved from 3600 to 7200, n2 busy until 3660
  auto d = c.pass(0);
  EXPECT_EQ(started(d), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(nodes_of(d, 1), std::vector<std::string>{"n1"});
  EXPECT_EQ(nodes_of(d, 2), std::vector<std::string>{"n2"});
  // n2 frees at 3660; n1 only after the reservation at 7200.
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{3, 3660}}));
}

TEST(Reservation, MembersWaitForTheWindowAndUseOnlyItsNodes) {
  Cluster c = two_nodes_one_reservation();
  core::Job& m = c.add_job(1, 30);  // 1: member
  m.spec.reservation = "r";
  auto d = c.pass(0);
  EXPECT_TRUE(started(d).empty());
  EXPECT_EQ(reasons(d).at(1), "Reservation");
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{1, 3600}}));
  // A job behind it is not held up by a member waiting for its reservation.
  c.add_job(1, 30);  // 2
  d = c.pass(0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{2});
  c.finish(c.jobs[1]);
  // Once the window opens the member starts on n1 (n2 is free too, but not its).
  d = c.pass(3600);
  EXPECT_EQ(started(d), std::vector<uint64_t>{1});
  EXPECT_EQ(nodes_of(d, 1), std::vector<std::string>{"n1"});
}

TEST(Reservation, MemberLimitIsCutAtTheReservationEnd) {
  // A 3-hour member job inside a 1-hour reservation is expected to end with it, so a
  // non-member behind can be planned on n1 right after.
  Cluster c = two_nodes_one_reservation();
  core::Job& m = c.add_job(1, 180);
  m.spec.reservation = "r";
  c.run(c.add_job(1, 600), 0, {{"n2", 1, 1, 1}});  // 2: n2 busy for 10 hours
  c.add_job(1, 60);                                // 3
  auto d = c.pass(3600);
  EXPECT_EQ(started(d), std::vector<uint64_t>{1});
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{3, 7200}}));
}

TEST(Reservation, MemberCannotStartAfterTheWindow) {
  Cluster c = two_nodes_one_reservation();
  c.run(c.add_job(1, 300), 0, {{"n1", 1, 1, 1}});  // 1: holds n1 past the reservation
  core::Job& m = c.add_job(1, 10);                 // 2: member
  m.spec.reservation = "r";
  auto d = c.pass(3600);
  EXPECT_TRUE(started(d).empty());
  EXPECT_TRUE(planned(d).empty());
  EXPECT_EQ(reasons(d).at(2), "Resources");
}

TEST(Reservation, FlexMembersMayRunAnywhere) {
  Cluster c = two_nodes_one_reservation();
  c.reservations[0].flex = true;
  core::Job& m = c.add_job(2, 600);  // 1: both nodes for 10 hours, from now
  m.spec.reservation = "r";
  auto d = c.pass(0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{1});
}

TEST(Reservation, ActiveReservationGivesSlurmsReasons) {
  Cluster c = two_nodes_one_reservation();
  c.add_job(2, 10, 1, 2, true);  // 1: needs both nodes; n1 is reserved now
  core::Job& w = c.add_job(1, 10);
  w.spec.nodelist = "n1";  // 2: asks for the reserved node by name
  auto d = c.pass(4000);
  EXPECT_EQ(reasons(d).at(1),
            "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
            "partitions");
  EXPECT_EQ(reasons(d).at(2), "Priority");
  c.jobs[0].state = core::JobState::Cancelled;
  d = c.pass(4000);
  EXPECT_EQ(reasons(d).at(2), "ReqNodeNotAvail, May be reserved for other job");
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 7200}}));
}

TEST(Reservation, UnknownOrEndedReservation) {
  Cluster c = two_nodes_one_reservation();
  core::Job& m = c.add_job(1, 10);
  m.spec.reservation = "gone";
  core::Job& late = c.add_job(1, 10);
  late.spec.reservation = "r";
  auto d = c.pass(7200);
  EXPECT_EQ(reasons(d).at(1), "ReservationDeleted");
  EXPECT_EQ(reasons(d).at(2), "ReservationDeleted");
}

TEST(Reservation, FifoDoesNotLetAMemberBlockThePartition) {
  Cluster c = two_nodes_one_reservation(sched::Policy::Fifo);
  core::Job& m = c.add_job(1, 10);
  m.spec.reservation = "r";
  c.add_job(1, 10);
  auto d = c.pass(0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{2});
  EXPECT_EQ(reasons(d).at(1), "Reservation");
}

// Random workloads around random reservations, replayed with exact run times:
//  - a job never holds a reserved node during the window unless it is a member (FLEX aside);
//  - a (non-FLEX) member only runs on its reservation's nodes, starting within its window;
//  - nothing is over-allocated; every pending job has a reason; every job eventually runs.
TEST(Reservation, RandomWorkloadProperties) {
  for (int seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    Cluster c;
    c.add_nodes(4, 2, 1000);
    c.one_partition();
    c.params.policy = seed % 3 == 0 ? sched::Policy::Easy : sched::Policy::Conservative;
    if (seed % 5 == 0) c.params.policy = sched::Policy::Fifo;
    const int nresv = 1 + static_cast<int>(rng() % 2);
    for (int r = 0; r < nresv; ++r) {
      const int64_t start = 60 * static_cast<int64_t>(rng() % 30);
      const int64_t len = 60 * (5 + static_cast<int64_t>(rng() % 30));
      // Disjoint node sets: n(2r+1), and maybe n(2r+2).
      std::vector<int> nodes{2 * r};
      if (rng() % 2) nodes.push_back(2 * r + 1);
      c.reservations.push_back({"r" + std::to_string(r), start, start + len, nodes, false});
    }
    const int njobs = 8 + static_cast<int>(rng() % 16);
    for (int i = 0; i < njobs; ++i) {
      // One draw per statement, in gcc's order of the arguments when the seeds were chosen
      // (compilers evaluate arguments in different orders).
      const int64_t minutes = 1 + static_cast<int64_t>(rng() % 20);
      const int ntasks = 1 + static_cast<int>(rng() % 3);
      core::Job& j = c.add_job(ntasks, minutes);
      if (rng() % 3 == 0) {
        const auto& r = c.reservations[rng() % c.reservations.size()];
        // Members fit the reservation's nodes and window.
        j.spec.reservation = r.name;
        j.spec.ntasks = 1 + static_cast<int>(rng() % (2 * r.nodes.size()));
        j.time_limit_min = std::min<int64_t>(j.time_limit_min, (r.end - r.start) / 60);
      }
    }
    std::map<std::string, const sched::ReservationView*> by_name;
    for (const auto& r : c.reservations) by_name[r.name] = &r;
    int64_t now = 0;
    for (int step = 0; step < 400; ++step) {
      auto v = c.view();
      if (v.pending.empty() && v.running.empty()) break;
      auto d = c.pass(now);
      std::set<uint64_t> has_reason;
      for (const auto& r : d.reasons) ASSERT_TRUE(has_reason.insert(r.job_id).second);
      for (const core::Job* j : v.pending)
        if (c.jobs[j->id - 1].state == core::JobState::Pending) {
          ASSERT_TRUE(has_reason.count(j->id)) << "seed " << seed;
        }
      for (const auto& s : d.starts) {
        const core::Job& j = c.jobs[s.job_id - 1];
        const int64_t end = now + j.time_limit_min * 60;
        for (const auto& a : s.alloc) {
          const int idx = c.index_of(a.node);
          for (const auto& r : c.reservations) {
            const bool on = std::count(r.nodes.begin(), r.nodes.end(), idx) > 0;
            if (j.spec.reservation == r.name) {
              ASSERT_TRUE(on) << "seed " << seed << " member off its nodes";
              ASSERT_GE(now, r.start) << "seed " << seed;
              ASSERT_LT(now, r.end) << "seed " << seed;
            } else if (on) {
              ASSERT_FALSE(now < r.end && r.start < end)
                  << "seed " << seed << " job " << j.id << " runs into " << r.name;
            }
          }
        }
      }
      for (const auto& n : c.nodes) {
        ASSERT_LE(n.alloc_cpus, n.cpus);
        ASSERT_LE(n.alloc_mem_mb, n.real_memory_mb);
      }
      // Next event: a job's end, or a reservation's start or end.
      int64_t next = INT64_MAX;
      for (const auto& j : c.jobs)
        if (j.state == core::JobState::Running)
          next = std::min(next, j.start_time + j.time_limit_min * 60);
      for (const auto& r : c.reservations)
        for (int64_t t : {r.start, r.end})
          if (t > now) next = std::min(next, t);
      if (next == INT64_MAX) break;
      now = next;
      for (auto& j : c.jobs)
        if (j.state == core::JobState::Running && j.start_time + j.time_limit_min * 60 <= now)
          c.finish(j);
    }
    // Members may miss their window when other members fill it; everyone else runs.
    for (const auto& j : c.jobs)
      if (j.spec.reservation.empty()) {
        ASSERT_NE(j.state, core::JobState::Pending) << "seed " << seed << " job " << j.id;
      }
  }
}
