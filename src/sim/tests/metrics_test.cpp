#include "sim/metrics.hpp"

#include <gtest/gtest.h>

using namespace drover::sim;

TEST(Metrics, BoundedSlowdownWithTau10) {
  EXPECT_DOUBLE_EQ(bounded_slowdown(0, 100), 1.0);
  EXPECT_DOUBLE_EQ(bounded_slowdown(0, 5), 1.0);     // (0 + 5) / 10 < 1
  EXPECT_DOUBLE_EQ(bounded_slowdown(90, 10), 10.0);  // 100 / 10
  EXPECT_DOUBLE_EQ(bounded_slowdown(50, 100), 1.5);  // 150 / 100
  EXPECT_DOUBLE_EQ(bounded_slowdown(20, 0), 2.0);    // 20 / 10
  EXPECT_DOUBLE_EQ(bounded_slowdown(30, 2), 3.2);    // 32 / 10
  EXPECT_DOUBLE_EQ(bounded_slowdown(30, 2, 1), 16.0);
}

TEST(Metrics, MeanInOrder) {
  EXPECT_DOUBLE_EQ(mean({}), 0.0);
  EXPECT_DOUBLE_EQ(mean({4}), 4.0);
  EXPECT_DOUBLE_EQ(mean({1, 2, 3, 4}), 2.5);
}

TEST(Metrics, NearestRankPercentile) {
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({}, 95), 0.0);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({7}, 95), 7.0);
  // n = 10: rank ceil(9.5) = 10, the largest.
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 95), 10.0);
  // n = 20: rank ceil(19.0) = 19 exactly (no floating-point creep to 20).
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(i);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(twenty, 95), 19.0);
  // n = 4: p50 is rank 2, p100 the largest, a tiny p the smallest.
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({3, 1, 2, 4}, 50), 2.0);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({3, 1, 2, 4}, 100), 4.0);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank({3, 1, 2, 4}, 0.1), 1.0);
  // n = 100: rank 95.
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i * 10);
  EXPECT_DOUBLE_EQ(percentile_nearest_rank(hundred, 95), 950.0);
}

TEST(Metrics, HandComputedSchedule) {
  // id, submit, start, end, procs on a 4-CPU machine.
  std::vector<JobOutcome> jobs = {
      {1, 100, 100, 200, 4},  // wait 0, run 100, bsld 1
      {2, 110, 200, 250, 2},  // wait 90, run 50, bsld 140/50 = 2.8
      {3, 120, 250, 255, 1},  // wait 130, run 5, bsld 135/10 = 13.5
      {4, 130, 200, 300, 2},  // wait 70, run 100, bsld 1.7
  };
  Metrics m = compute_metrics(jobs, 4);
  EXPECT_EQ(m.jobs, 4u);
  EXPECT_DOUBLE_EQ(m.wait.mean, (0 + 90 + 130 + 70) / 4.0);
  EXPECT_DOUBLE_EQ(m.wait.p95, 130.0);  // rank ceil(3.8) = 4
  EXPECT_DOUBLE_EQ(m.bsld.mean, (1 + 2.8 + 13.5 + 1.7) / 4.0);
  EXPECT_DOUBLE_EQ(m.bsld.p95, 13.5);
  EXPECT_EQ(m.first_submit, 100);
  EXPECT_EQ(m.last_end, 300);
  EXPECT_EQ(m.makespan, 200);
  EXPECT_DOUBLE_EQ(m.cpu_seconds, 400 + 100 + 5 + 200);
  EXPECT_DOUBLE_EQ(m.utilization, 705.0 / (4 * 200));

  Metrics none = compute_metrics({}, 4);
  EXPECT_EQ(none.jobs, 0u);
  EXPECT_DOUBLE_EQ(none.utilization, 0.0);
  EXPECT_EQ(none.makespan, 0);
}
