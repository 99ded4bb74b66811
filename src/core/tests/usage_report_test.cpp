// sreport's sums beyond the captured scenario (which src/cli/tests/sreport_golden_test.cpp
// replays against real Slurm's output).
#include "core/usage_report.hpp"

#include <gtest/gtest.h>

using namespace drover::core;

namespace {
constexpr int64_t H = 3600;
constexpr int64_t T = 1000 * H;  // times are Unix seconds; 0 means "not yet"

UsageJob job(const std::string& user, int64_t eligible, int64_t start, int64_t end, int64_t cpus) {
  UsageJob j;
  j.account = "physics";
  j.user = user;
  j.eligible = T + eligible;
  j.start = T + start;
  j.end = end ? T + end : 0;
  j.requested = j.allocated = {{"cpu", cpus}};
  return j;
}
}  // namespace

TEST(UsageReport, WaitingBeyondTheIdleTimeOfAnHourIsOverCommitted) {
  // 2 CPUs; a 2-CPU job runs the first hour while a 2-CPU job waits for it, then runs.
  const std::vector<TresPeriod> cluster = {{T, {{"cpu", 2}}}};
  const auto r = compute_usage({job("a", 0, 0, H, 2), job("b", 0, H, 2 * H, 2)}, cluster, {}, T,
                               T + 4 * H, T + 10 * H);
  EXPECT_EQ(r.cluster.reported.at("cpu"), 8 * H);
  EXPECT_EQ(r.cluster.allocated.at("cpu"), 4 * H);
  EXPECT_EQ(r.cluster.planned.at("cpu"), 0);  // nothing was idle while b waited
  EXPECT_EQ(r.cluster.over_committed.at("cpu"), 2 * H);
  EXPECT_EQ(r.cluster.idle.at("cpu"), 4 * H);
  ASSERT_EQ(r.assocs.size(), 2u);
  EXPECT_EQ(r.assocs[1].used.at("cpu"), 2 * H);
}

TEST(UsageReport, RunningJobsCountUpToNowAndTheClusterFromItsRegistration) {
  // Registered at 1h with 4 CPUs, 8 from 2h; a job running since 1h30 on 4 CPUs; now 3h.
  const std::vector<TresPeriod> cluster = {{T + 2 * H, {{"cpu", 8}}}, {T + H, {{"cpu", 4}}}};
  const auto r =
      compute_usage({job("a", H, H + H / 2, 0, 4)}, cluster, {}, T, T + 24 * H, T + 3 * H);
  EXPECT_EQ(r.cluster.reported.at("cpu"), 4 * H + 8 * H);
  EXPECT_EQ(r.cluster.allocated.at("cpu"), 4 * (3 * H / 2));
  EXPECT_EQ(r.cluster.planned.at("cpu"), 4 * (H / 2));
  EXPECT_EQ(r.cluster.count.at("cpu"), 8);
  EXPECT_EQ(r.assocs.at(0).used.at("cpu"), 4 * (3 * H / 2));
}

TEST(UsageReport, OnlyTheWindowCounts) {
  const std::vector<TresPeriod> cluster = {{T, {{"cpu", 1}}}};
  const auto r = compute_usage({job("a", 0, 0, 10 * H, 1), job("b", 0, 20 * H, 21 * H, 1)}, cluster,
                               {}, T + 2 * H, T + 4 * H, T + 100 * H);
  EXPECT_EQ(r.cluster.allocated.at("cpu"), 2 * H);
  ASSERT_EQ(r.assocs.size(), 1u);  // b ran outside the window
  EXPECT_EQ(r.assocs[0].user, "a");
}

TEST(UsageReport, NodesOutOfServiceAreDownOrPlannedDownNotIdle) {
  // 4 CPUs on 2 nodes; node2 (2 CPUs) down for the first hour, in a maintenance reservation
  // the second; a 2-CPU job on node1 the whole time.
  const std::vector<TresPeriod> cluster = {{T, {{"cpu", 4}}}};
  const std::vector<NodeDownPeriod> out = {{T, T + H, {{"cpu", 2}}, false},
                                           {T + H, T + 2 * H, {{"cpu", 2}}, true}};
  const auto r = compute_usage({job("a", 0, 0, 3 * H, 2)}, cluster, out, T, T + 3 * H, T + 9 * H);
  EXPECT_EQ(r.cluster.allocated.at("cpu"), 6 * H);
  EXPECT_EQ(r.cluster.down.at("cpu"), 2 * H);
  EXPECT_EQ(r.cluster.planned_down.at("cpu"), 2 * H);
  EXPECT_EQ(r.cluster.idle.at("cpu"), 2 * H);
  EXPECT_EQ(r.cluster.reported.at("cpu"), 12 * H);
}
