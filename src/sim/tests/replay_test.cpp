#include "sim/replay.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

using namespace drover;
using namespace drover::sim;

namespace {

// One SWF job line: the fields the replay reads, the rest unknown.
std::string job_line(int64_t id, int64_t submit, int64_t run, int64_t req_procs, int64_t req_time,
                     int64_t alloc_procs = -1) {
  return std::to_string(id) + " " + std::to_string(submit) + " -1 " + std::to_string(run) + " " +
         std::to_string(alloc_procs) + " -1 -1 " + std::to_string(req_procs) + " " +
         std::to_string(req_time) + " -1 1 3 3 -1 -1 -1 -1 -1\n";
}

// Two nodes of two CPUs.
const std::string kSmallHeader = "; MaxNodes: 2\n; MaxProcs: 4\n";

// Hand-computed under FIFO on 4 CPUs:
//   job 1 (4 cpus, 100 s)           0 - 100
//   job 2 (2 cpus, 50 s)            100 - 150
//   job 3 (4 cpus, 30 s)            150 - 180  (does not fit beside job 2)
//   job 4 (1 cpu, 10 s)             180 - 190  (FIFO: held behind job 3)
//   job 5 (1 cpu, 200 s, limit 1m)  180 - 240  (cut at its 60 s limit)
const std::string kSynthetic = kSmallHeader + job_line(1, 0, 100, 4, 120) +
                               job_line(2, 10, 50, 2, 60) + job_line(3, 20, 30, 4, 60) +
                               job_line(4, 30, 10, 1, 60) + job_line(5, 40, 200, 1, 60);

std::map<int64_t, JobOutcome> by_id(const ReplayResult& r) {
  std::map<int64_t, JobOutcome> m;
  for (const auto& o : r.outcomes) m[o.id] = o;
  return m;
}

SwfTrace fixture() {
  return read_swf_file(DROVER_SIM_TEST_DATA "/easy_mediumWL_smallPF_head40.swf");
}

// The most CPUs in use at any moment.
int64_t peak_cpus(const std::vector<JobOutcome>& jobs) {
  std::vector<std::pair<int64_t, int64_t>> ev;  // (time, +/- procs); ends sort first
  for (const auto& j : jobs) {
    ev.push_back({j.start, j.procs});
    ev.push_back({j.end, -j.procs});
  }
  std::sort(ev.begin(), ev.end());
  int64_t cur = 0, peak = 0;
  for (const auto& [t, d] : ev) peak = std::max(peak, cur += d);
  return peak;
}

}  // namespace

TEST(Replay, FifoGivesTheHandComputedSchedule) {
  ReplayOptions opts;
  opts.policy = SimPolicy::Fcfs;
  ReplayResult r = replay(parse_swf(kSynthetic), opts);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.cpus_per_node, 2);
  EXPECT_EQ(r.nodes_from, "MaxNodes");
  EXPECT_EQ(r.cpus_from, "MaxProcs/MaxNodes");
  EXPECT_EQ(r.jobs_read, 5u);
  EXPECT_EQ(r.skipped_total(), 0u);
  EXPECT_EQ(r.cut_at_limit, 1u);
  EXPECT_EQ(r.no_requested_time, 0u);
  EXPECT_EQ(r.never_started, 0u);
  ASSERT_EQ(r.outcomes.size(), 5u);
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {0, 100}, {100, 150}, {150, 180}, {180, 190}, {180, 240}};
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(i + 1));
    EXPECT_EQ(r.outcomes[i].id, static_cast<int64_t>(i + 1));
    EXPECT_EQ(r.outcomes[i].start, want[i].first);
    EXPECT_EQ(r.outcomes[i].end, want[i].second);
  }
  // Passes at 0, 100, 150, 180; the submissions at 10..40 find no free CPU and are skipped;
  // the ends at 190 and 240 leave nothing pending.
  EXPECT_EQ(r.passes, 4u);
  EXPECT_EQ(r.passes_skipped, 4u);
  EXPECT_EQ(r.epoch, kDefaultEpoch);

  Metrics m = compute_metrics(r.outcomes, r.cpus());
  EXPECT_DOUBLE_EQ(m.wait.mean, (0 + 90 + 130 + 150 + 140) / 5.0);
  EXPECT_DOUBLE_EQ(m.wait.p95, 150.0);
  EXPECT_DOUBLE_EQ(m.bsld.mean, (1 + 140.0 / 50 + 160.0 / 30 + 16 + 200.0 / 60) / 5);
  EXPECT_DOUBLE_EQ(m.bsld.p95, 16.0);
  EXPECT_EQ(m.makespan, 240);
  EXPECT_DOUBLE_EQ(m.utilization, (400 + 100 + 120 + 10 + 60) / (4.0 * 240));

  EXPECT_EQ(format_jobs_csv(r),
            "id,submit,start,end,wait,run,procs,bsld\n"
            "1,0,0,100,0,100,4,1.0000\n"
            "2,10,100,150,90,50,2,2.8000\n"
            "3,20,150,180,130,30,4,5.3333\n"
            "4,30,180,190,150,10,1,16.0000\n"
            "5,40,180,240,140,60,1,3.3333\n");
}

TEST(Replay, TimeLimitsRoundUpToMinutesAndCutRuns) {
  ReplayResult r = replay(parse_swf(kSmallHeader + job_line(1, 0, 200, 1, 61) +  // 2 min
                                    job_line(2, 0, 60, 1, 60) +                  // 1 min, fits
                                    job_line(3, 0, 61, 1, 60) +                  // cut to 60
                                    job_line(4, 0, 5, 1, 1)),                    // 1 min
                          {});
  auto o = by_id(r);
  EXPECT_EQ(o[1].run(), 120);
  EXPECT_EQ(o[2].run(), 60);
  EXPECT_EQ(o[3].run(), 60);
  EXPECT_EQ(o[4].run(), 5);
  EXPECT_EQ(r.cut_at_limit, 2u);
}

TEST(Replay, WithoutRequestedTimeTheRunTimeIsTheLimit) {
  // Job 1 has no requested time; job 2 runs 0 s and ends where it starts.
  ReplayResult r = replay(parse_swf(kSmallHeader + job_line(1, 0, 150, 4, -1) +
                                    job_line(2, 5, 0, 4, 0) + job_line(3, 6, 10, 1, -1)),
                          {});
  EXPECT_EQ(r.no_requested_time, 3u);
  EXPECT_EQ(r.cut_at_limit, 0u);
  auto o = by_id(r);
  EXPECT_EQ(o[1].start, 0);
  EXPECT_EQ(o[1].end, 150);
  EXPECT_EQ(o[2].start, 150);
  EXPECT_EQ(o[2].end, 150);
  EXPECT_EQ(o[3].start, 150);
  EXPECT_EQ(o[3].end, 160);
}

TEST(Replay, SkippedJobsAreCountedByReason) {
  ReplayResult r = replay(parse_swf(kSmallHeader + job_line(1, -1, 10, 1, 60) +  // submit
                                    job_line(2, 0, -1, 1, 60) +                  // run time
                                    job_line(3, 0, 10, -1, 60) +                 // no procs
                                    job_line(4, 0, 10, 0, 60, 0) +               // no procs
                                    job_line(5, 0, 10, 5, 60) +                  // > 4 CPUs
                                    job_line(6, 0, 10, -1, 60, 3) +              // allocated procs
                                    job_line(7, 0, 10, 4, 60)),
                          {});
  EXPECT_EQ(r.jobs_read, 7u);
  EXPECT_EQ(r.skipped[static_cast<size_t>(SkipReason::UnknownSubmit)], 1u);
  EXPECT_EQ(r.skipped[static_cast<size_t>(SkipReason::UnknownRunTime)], 1u);
  EXPECT_EQ(r.skipped[static_cast<size_t>(SkipReason::NoProcessors)], 2u);
  EXPECT_EQ(r.skipped[static_cast<size_t>(SkipReason::TooLarge)], 1u);
  EXPECT_EQ(r.skipped_total(), 5u);
  ASSERT_EQ(r.outcomes.size(), 2u);
  EXPECT_EQ(r.outcomes[0].id, 6);
  EXPECT_EQ(r.outcomes[0].procs, 3);
  EXPECT_EQ(r.outcomes[1].id, 7);
  EXPECT_EQ(r.outcomes[1].start, 10);
  Metrics m = compute_metrics(r.outcomes, r.cpus());
  std::string report = format_report("t.swf", r, m);
  EXPECT_NE(report.find("jobs: 7 in trace, 2 replayed, 5 skipped\n"
                        "  skipped 1: unknown submit time\n"
                        "  skipped 1: unknown run time\n"
                        "  skipped 2: no processor count\n"
                        "  skipped 1: more processors than the cluster has\n"),
            std::string::npos)
      << report;
}

TEST(Replay, ClusterSize) {
  const std::string jobs = job_line(1, 0, 10, 8, 60) + job_line(2, 0, 10, 3, 60);
  ReplayResult r = replay(parse_swf(jobs), {});
  EXPECT_EQ(r.nodes, 8);
  EXPECT_EQ(r.cpus_per_node, 1);
  EXPECT_EQ(r.nodes_from, "the largest job");
  EXPECT_EQ(r.cpus_from, "default");

  ReplayOptions o;
  o.nodes = 3;
  o.cpus_per_node = 2;
  r = replay(parse_swf(jobs), o);
  EXPECT_EQ(r.cpus(), 6);
  EXPECT_EQ(r.skipped[static_cast<size_t>(SkipReason::TooLarge)], 1u);
  EXPECT_EQ(r.nodes_from, "--nodes");
  EXPECT_EQ(r.cpus_from, "--cpus-per-node");

  r = replay(parse_swf("; MaxProcs: 16\n; UnixStartTime: 1000\n" + jobs), {});
  EXPECT_EQ(r.nodes, 16);
  EXPECT_EQ(r.nodes_from, "MaxProcs");
  EXPECT_EQ(r.cpus_per_node, 1);
  EXPECT_EQ(r.epoch, 1000);

  r = replay(parse_swf("; MaxNodes: 10\n; MaxProcs: 5\n" + jobs), {});
  EXPECT_EQ(r.cpus_per_node, 1);  // at least 1

  o = {};
  o.cpus_per_node = 4;  // nodes still from the header
  r = replay(parse_swf("; MaxNodes: 10\n; MaxProcs: 20\n" + jobs), o);
  EXPECT_EQ(r.nodes, 10);
  EXPECT_EQ(r.cpus_per_node, 4);

  o = {};
  o.nodes = kMaxNodes + 1;
  EXPECT_THROW(replay(parse_swf(jobs), o), std::invalid_argument);
}

TEST(Replay, MultifactorUsesThePriorityHook) {
  // One CPU; while job 1 runs, 2 and 3 queue. The hook ranks 3 above 2, so 3 runs next.
  const std::string trace = "; MaxNodes: 1\n; MaxProcs: 1\n" + job_line(1, 0, 10, 1, 60) +
                            job_line(2, 1, 10, 1, 60) + job_line(3, 2, 10, 1, 60);
  ReplayOptions o;
  o.policy = SimPolicy::Multifactor;
  int calls = 0;
  o.priority = [&](const core::Job& job, int64_t) -> uint32_t {
    ++calls;
    return job.id == 3 ? 100 : 10;
  };
  ReplayResult r = replay(parse_swf(trace), o);
  EXPECT_GT(calls, 0);
  auto out = by_id(r);
  EXPECT_EQ(out[1].start, 0);
  EXPECT_EQ(out[3].start, 10);
  EXPECT_EQ(out[2].start, 20);
  EXPECT_EQ(r.priority, "callback");
}

// Without a hook, multifactor is the controller's: the user who has used the cluster waits
// behind one who has not, although they submitted first.
TEST(Replay, MultifactorFairShareOrdersUsers) {
  auto as_user = [](std::string line, int user) {
    return line.replace(line.find(" -1 1 3 3 "), 10, " -1 1 " + std::to_string(user) + " 3 ");
  };
  const std::string trace =
      "; MaxNodes: 1\n; MaxProcs: 1\n" + as_user(job_line(1, 0, 1000, 1, 1000), 7) +
      as_user(job_line(2, 1, 10, 1, 60), 7) + as_user(job_line(3, 2, 10, 1, 60), 8);
  ReplayOptions o;
  o.policy = SimPolicy::Multifactor;
  ReplayResult r = replay(parse_swf(trace), o);
  auto out = by_id(r);
  EXPECT_EQ(out[3].start, 1000);
  EXPECT_EQ(out[2].start, 1010);
  EXPECT_NE(r.priority.find("fair share"), std::string::npos);
  // Submission order under the age-only hook.
  o.priority = age_priority;
  r = replay(parse_swf(trace), o);
  out = by_id(r);
  EXPECT_EQ(out[2].start, 1000);
  EXPECT_EQ(out[3].start, 1010);
}

TEST(Replay, AgePriority) {
  core::Job j;
  j.submit_time = 1000;
  EXPECT_EQ(age_priority(j, 1000), 1u);
  EXPECT_EQ(age_priority(j, 900), 1u);
  EXPECT_EQ(age_priority(j, 1000 + 7 * 86400), 10001u);
  EXPECT_EQ(age_priority(j, 1000 + 70 * 86400), 10001u);
  EXPECT_EQ(age_priority(j, 1000 + 7 * 43200), 5001u);
}

TEST(Replay, FixtureRunsUnderEveryPolicyWithinCapacity) {
  SwfTrace t = fixture();
  for (SimPolicy p :
       {SimPolicy::Fcfs, SimPolicy::Easy, SimPolicy::Conservative, SimPolicy::Multifactor}) {
    SCOPED_TRACE(std::string(sim_policy_name(p)));
    ReplayOptions o;
    o.policy = p;
    ReplayResult r = replay(t, o);
    EXPECT_EQ(r.nodes, 8);  // no header: the largest job
    EXPECT_EQ(r.outcomes.size(), 40u);
    EXPECT_EQ(r.never_started, 0u);
    EXPECT_EQ(r.rounded_values, 79u);
    EXPECT_LE(peak_cpus(r.outcomes), r.cpus());
    for (const auto& j : r.outcomes) {
      EXPECT_GE(j.start, j.submit);
      EXPECT_GE(j.run(), 0);
    }
    // Submit order, ties in file order: the first job submitted is job 0 at 0 s.
    EXPECT_EQ(r.outcomes.front().id, 0);
    for (size_t i = 1; i < r.outcomes.size(); ++i)
      EXPECT_LE(r.outcomes[i - 1].submit, r.outcomes[i].submit);
  }
}

TEST(Replay, Deterministic) {
  SwfTrace t = fixture();
  for (SimPolicy p :
       {SimPolicy::Fcfs, SimPolicy::Easy, SimPolicy::Conservative, SimPolicy::Multifactor}) {
    ReplayOptions o;
    o.policy = p;
    ReplayResult a = replay(t, o), b = replay(t, o);
    EXPECT_EQ(format_report("x", a, compute_metrics(a.outcomes, a.cpus())),
              format_report("x", b, compute_metrics(b.outcomes, b.cpus())));
    EXPECT_EQ(format_jobs_csv(a), format_jobs_csv(b));
  }
}

TEST(Replay, SkippedPassesChangeNothing) {
  SwfTrace t = fixture();
  for (SimPolicy p :
       {SimPolicy::Fcfs, SimPolicy::Easy, SimPolicy::Conservative, SimPolicy::Multifactor}) {
    SCOPED_TRACE(std::string(sim_policy_name(p)));
    ReplayOptions o;
    o.policy = p;
    ReplayResult skipping = replay(t, o);
    o.skip_passes = false;
    ReplayResult every = replay(t, o);
    EXPECT_EQ(every.passes_skipped, 0u);
    EXPECT_EQ(every.passes, skipping.passes + skipping.passes_skipped);
    EXPECT_EQ(format_jobs_csv(skipping), format_jobs_csv(every));
  }
  ReplayOptions o;
  o.skip_passes = false;
  ReplayResult r = replay(parse_swf(kSynthetic), o);
  EXPECT_EQ(r.passes, 8u);
  EXPECT_EQ(r.outcomes[4].start, 180);
}

TEST(Replay, PolicyNames) {
  EXPECT_EQ(parse_sim_policy("fcfs"), SimPolicy::Fcfs);
  EXPECT_EQ(parse_sim_policy("easy"), SimPolicy::Easy);
  EXPECT_EQ(parse_sim_policy("conservative"), SimPolicy::Conservative);
  EXPECT_EQ(parse_sim_policy("multifactor"), SimPolicy::Multifactor);
  EXPECT_FALSE(parse_sim_policy("FIFO").has_value());
  EXPECT_EQ(engine_policy(SimPolicy::Fcfs), sched::Policy::Fifo);
  EXPECT_EQ(engine_policy(SimPolicy::Easy), sched::Policy::Easy);
  EXPECT_EQ(engine_policy(SimPolicy::Conservative), sched::Policy::Conservative);
  EXPECT_EQ(engine_policy(SimPolicy::Multifactor), sched::Policy::Conservative);
}

namespace {

ReplayOptions scaled(ScalePolicy p) {
  ReplayOptions o;
  o.policy = SimPolicy::Conservative;
  o.scale.policy = p;
  o.scale.start_delay_s = 60;
  o.scale.idle_timeout_s = 300;
  return o;
}

// One node of one CPU; two short jobs far apart.
const std::string kTwoBursts = "; MaxNodes: 1\n; MaxProcs: 1\n" + job_line(1, 0, 100, 1, 120) +
                               job_line(2, 10000, 100, 1, 120);

}  // namespace

TEST(ReplayScaling, DroverStartsEveryNodeOfAWideJobAtOnce) {
  ReplayResult r = replay(parse_swf(kSynthetic), scaled(ScalePolicy::Drover));
  EXPECT_EQ(r.never_started, 0u);
  ASSERT_EQ(r.outcomes.size(), 5u);
  // Job 1 wants both nodes: both start at its submission and it runs once they are up.
  EXPECT_EQ(r.outcomes[0].start, 60);
  EXPECT_EQ(r.nodes_started, 2u);
  EXPECT_EQ(r.peak_nodes, 2);
}

TEST(ReplayScaling, DroverScalesToZeroAfterTheIdleTimeoutAndBack) {
  ReplayResult r = replay(parse_swf(kTwoBursts), scaled(ScalePolicy::Drover));
  auto m = by_id(r);
  EXPECT_EQ(m[1].start, 60);
  EXPECT_EQ(m[2].start, 10060);
  EXPECT_EQ(r.nodes_started, 2u);
  // Up from 0 until idle 300 s after job 1 ends at 160, then from 10000 to the end.
  EXPECT_DOUBLE_EQ(r.node_seconds, 460.0 + 160.0);
  ReplayOptions o = scaled(ScalePolicy::Static);
  EXPECT_DOUBLE_EQ(replay(parse_swf(kTwoBursts), o).node_seconds, 10100.0);
}

TEST(ReplayScaling, KedaPollsAndCoolsDown) {
  ReplayResult r = replay(parse_swf(kTwoBursts), scaled(ScalePolicy::Keda));
  auto m = by_id(r);
  EXPECT_EQ(m[1].start, 60);     // polled at 0
  EXPECT_EQ(m[2].start, 10080);  // polled at 10020
  // Kept until every wish of the last 300 s is zero (the poll at 480), then from 10020.
  EXPECT_DOUBLE_EQ(r.node_seconds, 480.0 + 160.0);
  EXPECT_EQ(r.nodes_started, 2u);
}

TEST(ReplayScaling, MinimumNodesAreUpFromTheStart) {
  ReplayOptions o = scaled(ScalePolicy::Drover);
  o.scale.min_nodes = 1;
  ReplayResult r = replay(parse_swf(kTwoBursts), o);
  auto m = by_id(r);
  EXPECT_EQ(m[1].start, 0);
  EXPECT_EQ(m[2].start, 10000);
  EXPECT_EQ(r.nodes_started, 0u);
  EXPECT_DOUBLE_EQ(r.node_seconds, 10100.0);
}

TEST(ReplayScaling, EveryPolicyRunsTheFixtureToTheEnd) {
  for (ScalePolicy p : {ScalePolicy::Static, ScalePolicy::Keda, ScalePolicy::Drover}) {
    SCOPED_TRACE(std::string(scale_policy_name(p)));
    ReplayResult r = replay(fixture(), scaled(p));
    EXPECT_EQ(r.never_started, 0u);
    EXPECT_EQ(r.outcomes.size(), 40u);
    EXPECT_GT(r.node_seconds, 0);
  }
  EXPECT_EQ(parse_scale_policy("keda"), ScalePolicy::Keda);
  EXPECT_FALSE(parse_scale_policy("hpa").has_value());
}
