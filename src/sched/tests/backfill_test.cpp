// Hand-computed schedules for each policy, GPU ids, and properties over random workloads.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include "sched/scheduler.hpp"
#include "sched/tests/cluster_fixture.hpp"

using namespace drover;
using drover::sched::test_cluster::Cluster;
using drover::sched::test_cluster::planned;
using drover::sched::test_cluster::reasons;
using drover::sched::test_cluster::started;

namespace {

// Four 1-CPU nodes; job 1 holds two of them until t=600. Then, in priority order:
// A (2) needs all four for 5 min; B (3) one node for 10 min; C (4) one node for 11 min;
// D (5) two nodes for 5 min.
Cluster textbook(sched::Policy policy) {
  Cluster c;
  c.add_nodes(4, 1, 100);
  c.one_partition();
  c.params.policy = policy;
  core::Job& running = c.add_job(2, 10);
  c.run(running, 0, {{"n1", 1, 1, 1}, {"n2", 1, 1, 1}});
  c.add_job(4, 5);
  c.add_job(1, 10);
  c.add_job(1, 11);
  c.add_job(2, 5);
  return c;
}

}  // namespace

TEST(Backfill, ConservativeTextbookSchedule) {
  Cluster c = textbook(sched::Policy::Conservative);
  auto d = c.pass(0);
  // B ends exactly when A's reservation begins, so it backfills; C would overlap A.
  EXPECT_EQ(started(d), std::vector<uint64_t>{3});
  EXPECT_EQ(reasons(d),
            (std::map<uint64_t, std::string>{{2, "Resources"}, {4, "Priority"}, {5, "Priority"}}));
  // A at 600 (job 1 ends), C and D together after A at 900.
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 600}, {4, 900}, {5, 900}}));
}

TEST(Backfill, EasyReservesOnlyTheFirstBlockedJob) {
  Cluster c = textbook(sched::Policy::Easy);
  auto d = c.pass(0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{3});
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 600}}));
  EXPECT_EQ(reasons(d).at(4), "Priority");
}

TEST(Backfill, FifoStopsAtTheFirstBlockedJob) {
  Cluster c = textbook(sched::Policy::Fifo);
  auto d = c.pass(0);
  EXPECT_TRUE(started(d).empty());
  EXPECT_TRUE(d.planned.empty());
  EXPECT_EQ(reasons(d), (std::map<uint64_t, std::string>{
                            {2, "Resources"}, {3, "Priority"}, {4, "Priority"}, {5, "Priority"}}));
}

TEST(Backfill, ConservativeDiffersFromEasy) {
  // Under EASY a long low-priority job may take nodes a middle job was waiting for; under
  // conservative the middle job keeps its place. Two 1-CPU nodes, n1 busy until 600.
  for (auto policy : {sched::Policy::Easy, sched::Policy::Conservative}) {
    Cluster c;
    c.add_nodes(2, 1, 100);
    c.one_partition();
    c.params.policy = policy;
    c.run(c.add_job(1, 10), 0, {{"n1", 1, 1, 1}});
    c.add_job(2, 5);   // 2: both nodes, from 600 to 900
    c.add_job(1, 20);  // 3: n2 from 900 (conservative) — or ...
    c.add_job(1, 30);  // 4
    auto d = c.pass(0);
    EXPECT_TRUE(started(d).empty());
    if (policy == sched::Policy::Conservative)
      EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 600}, {3, 900}, {4, 900}}));
    else
      EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 600}}));
  }
}

TEST(Backfill, TimeIsRoundedUpToResolution) {
  Cluster c;
  c.add_nodes(1, 1, 100);
  c.one_partition();
  c.params.bf_resolution_s = 60;
  core::Job& r = c.add_job(1, 1);
  c.run(r, 10, {{"n1", 1, 1, 1}});  // expected end 70 -> planned from 120
  c.add_job(1, 1);
  auto d = c.pass(20);
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 120}}));
}

TEST(Backfill, WindowLimitsReservations) {
  Cluster c;
  c.add_nodes(1, 1, 100);
  c.one_partition();
  c.params.bf_window_s = 3600;
  c.run(c.add_job(1, 50), 0, {{"n1", 1, 1, 1}});
  c.add_job(1, 50);  // 2: from 3000
  c.add_job(1, 50);  // 3: from 6000, beyond the window
  auto d = c.pass(0);
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 3000}}));
  EXPECT_EQ(reasons(d).at(3), "Priority");
}

// bf_max_time: the pass asks before each job; once out of time it considers no more, and says
// which it left, in priority order, with their reasons unchanged.
TEST(Backfill, OutOfTimeStopsThePassAndSaysWhichJobsWereLeft) {
  Cluster c = textbook(sched::Policy::Conservative);
  auto v = c.view();
  int asked = 0;
  v.out_of_time = [&asked] { return ++asked > 2; };  // time for two jobs
  auto d = sched::make_scheduler()->schedule(v, 0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{3});
  EXPECT_EQ(planned(d), (std::map<uint64_t, int64_t>{{2, 600}}));
  EXPECT_EQ(d.not_considered, (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(reasons(d).at(4), "Priority");
  EXPECT_EQ(asked, 3);  // not asked again once it said so
  // With time enough, the same pass as without a deadline.
  v.out_of_time = [] { return false; };
  auto full = sched::make_scheduler()->schedule(v, 0);
  EXPECT_TRUE(full.not_considered.empty());
  EXPECT_EQ(planned(full), (std::map<uint64_t, int64_t>{{2, 600}, {4, 900}, {5, 900}}));
}

TEST(Backfill, UnlimitedJobsNeverEndInThePlan) {
  Cluster c;
  c.add_nodes(1, 1, 100);
  c.one_partition();
  c.run(c.add_job(1, -1), 0, {{"n1", 1, 1, 1}});
  c.add_job(1, 5);
  auto d = c.pass(0);
  EXPECT_TRUE(d.planned.empty());
  EXPECT_EQ(reasons(d).at(2), "Resources");
}

// What a pass learns about nodes keeps times as 32-bit offsets from now (NodeBounds): plans
// that reach further than that, some 68 years, are found by the plain search.
TEST(Backfill, PlansBeyondSixtyEightYears) {
  constexpr int64_t kYear = 365 * 24 * 3600;
  Cluster c;
  c.add_nodes(300, 1, 100);  // more than NodeBounds scans flat
  c.one_partition();
  for (int i = 1; i <= 300; ++i)
    c.run(c.add_job(1, i == 300 ? 10 : 70 * kYear / 60), 0, {{"n" + std::to_string(i), 1, 1, 1}});
  c.add_job(1, 100 * kYear / 60);  // 301: n300 after 10 minutes, for a century
  c.add_job(1, 5);                 // 302: the others are busy for 70 years
  c.add_job(1, 5, 1, 2, true);     // 303: two nodes
  auto d = c.pass(0);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(planned(d),
            (std::map<uint64_t, int64_t>{{301, 600}, {302, 70 * kYear}, {303, 70 * kYear}}));
}

TEST(Backfill, HigherPriorityTierGoesFirst) {
  Cluster c;
  c.add_nodes(1, 1, 100);
  sched::PartitionView low{"low", {0}, "", -1, -1, 1}, high{"high", {0}, "", -1, -1, 5};
  c.partitions = {low, high};
  c.add_job(1, 5).partition = "low";  // 1: older and higher priority, but lower tier
  c.add_job(1, 5).partition = "high";
  auto d = c.pass(0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{2});
}

TEST(Backfill, SeveralPartitionsEarliestStartWins) {
  Cluster c;
  c.add_nodes(2, 1, 100);
  sched::PartitionView a{"a", {0}, "", -1, -1, 1}, b{"b", {1}, "", -1, -1, 1};
  c.partitions = {a, b};
  c.run(c.add_job(1, 10), 0, {{"n1", 1, 1, 1}});
  c.jobs[0].partition = "a";
  c.run(c.add_job(1, 20), 0, {{"n2", 1, 1, 1}});
  c.jobs[1].partition = "b";
  core::Job& j = c.add_job(1, 5);
  j.spec.partitions = {"b", "a"};
  j.partition = "b";
  auto d = c.pass(0);
  ASSERT_EQ(d.planned.size(), 1u);
  EXPECT_EQ(d.planned[0].partition, "a");
  EXPECT_EQ(d.planned[0].start_time, 600);
}

TEST(Backfill, RequiredNodesAreWaitedFor) {
  Cluster c;
  c.add_nodes(3, 1, 100);
  c.one_partition();
  c.run(c.add_job(1, 10), 0, {{"n2", 1, 1, 1}});
  core::Job& j = c.add_job(2, 5);
  j.spec.nodelist = "n2";
  auto d = c.pass(0);
  EXPECT_TRUE(started(d).empty());
  ASSERT_EQ(d.planned.size(), 1u);
  EXPECT_EQ(d.planned[0].start_time, 600);
  EXPECT_EQ(d.planned[0].nodes.front(), "n2");
}

TEST(Backfill, GpuIdsAreDistinctAndTyped) {
  Cluster c;
  c.add_nodes(1, 8, 1000, "gpu:a100:2,gpu:1g.10gb:4");
  c.one_partition();
  core::Job& mig = c.add_job(1, 5);
  mig.spec.gres = "gpu:1g.10gb:2";
  core::Job& any = c.add_job(1, 5);
  any.spec.gpus_per_node = "3";
  core::Job& full = c.add_job(1, 5);
  full.spec.gres = "gpu:a100:1";
  auto d = c.pass(0);
  ASSERT_EQ(d.starts.size(), 2u);
  // MIG slices are GPUs 2-5 (after the two A100s, in Gres= order).
  EXPECT_EQ(d.starts[0].alloc[0].gpu_ids, (std::vector<uint16_t>{2, 3}));
  // An untyped request takes the lowest kinds first: both A100s and one slice.
  EXPECT_EQ(d.starts[1].alloc[0].gpu_ids, (std::vector<uint16_t>{0, 1, 4}));
  EXPECT_EQ(reasons(d).at(3), "Resources");
  // CPUs are distinct too.
  EXPECT_EQ(d.starts[0].alloc[0].cpu_ids, (std::vector<uint16_t>{0}));
  EXPECT_EQ(d.starts[1].alloc[0].cpu_ids, (std::vector<uint16_t>{1}));
}

// A request that takes its GPU from either of two kinds has no per-step floor: what is free
// throughout a window is worked out over its steps together. Here kind a is free until a
// planned job takes it at 600 and kind b is busy until 600: a 15-minute window from 0 meets
// no single kind free throughout, one from 600 does (b, then both). The search must move the
// start to the next step (600), not past the step where the window first failed (1200).
TEST(Backfill, AnyKindGpuStartsAtTheFirstStepThatHoldsIt) {
  Cluster c;
  c.add_nodes(1, 8, 1000, "gpu:a:1,gpu:b:1");
  c.one_partition();
  core::Job& running = c.add_job(1, 10);  // kind b and most of the memory until 600
  running.spec.gres = "gpu:b:1";
  core::NodeAlloc held("n1", 1, 900, 1, {{"gpu", "b", 1}});
  held.cpu_ids = {0};
  held.gpu_ids = {1};
  c.run(running, 0, {held});
  core::Job& first = c.add_job(1, 10);  // kind a from 600 (waits for memory)
  first.spec.gres = "gpu:a:1";
  first.spec.mem_per_cpu_mb = 500;
  core::Job& any = c.add_job(1, 15);
  any.spec.gres = "gpu:1";
  auto d = c.pass(0);
  EXPECT_TRUE(started(d).empty());
  EXPECT_EQ(planned(d).at(first.id), 600);
  EXPECT_EQ(planned(d).at(any.id), 600);
}

TEST(Backfill, GpusPerJobSpanNodes) {
  Cluster c;
  c.add_nodes(2, 4, 1000, "gpu:2");
  c.one_partition();
  core::Job& j = c.add_job(2, 5, 1, 2, true);
  j.spec.gpus = "3";
  auto d = c.pass(0);
  ASSERT_EQ(d.starts.size(), 1u);
  int total = 0;
  for (const auto& a : d.starts[0].alloc) total += static_cast<int>(a.gpu_ids.size());
  EXPECT_EQ(total, 3);
}

// GPUs per job (--gpus) over nodes as Slurm 22.05 (select/cons_tres) placed them on four idle
// nodes of 4 CPUs and two GPUs (each job alone, --mem-per-gpu=100): nodes in order until the
// tasks and the GPUs are held, a task on each node and the rest in order, a GPU on each node
// and the rest in order.
TEST(Backfill, GpusPerJobPlacedAsSlurmPlacesThem) {
  struct Case {
    int ntasks, gpus;
    std::string want;  // node:tasks:gpus ...
  };
  const std::vector<Case> cases = {
      {3, 5, "n1:1:2 n2:1:2 n3:1:1"},  // a single node holds the tasks, not the GPUs
      {2, 4, "n1:1:2 n2:1:2"},
      {4, 3, "n1:3:2 n2:1:1"},
      {5, 2, "n1:4:1 n2:1:1"},  // one GPU on each node, not two on the first
      {6, 3, "n1:4:2 n2:2:1"},
      {5, 1, "n1:4:0 n2:1:1"},  // fewer GPUs than nodes: the last nodes get them
  };
  for (const Case& k : cases) {
    Cluster c;
    c.add_nodes(4, 4, 4000, "gpu:2");
    c.one_partition();
    core::Job& j = c.add_job(k.ntasks, 5);
    j.spec.gpus = std::to_string(k.gpus);
    j.spec.mem_per_gpu_mb = 100;
    auto d = c.pass(0);
    ASSERT_EQ(d.starts.size(), 1u) << "-n" << k.ntasks << " --gpus=" << k.gpus;
    std::string got;
    for (const auto& a : d.starts[0].alloc)
      got += (got.empty() ? "" : " ") + a.node + ":" + std::to_string(a.tasks) + ":" +
             std::to_string(a.gpu_ids.size());
    EXPECT_EQ(got, k.want) << "-n" << k.ntasks << " --gpus=" << k.gpus;
  }
  // And where the nodes in order cannot all take part: the last node the job may have must
  // complete it.
  {
    Cluster c;
    c.add_nodes(1, 4, 4000, "gpu:2");
    c.add_nodes(1, 4, 4000, "gpu:4");
    c.one_partition();
    core::Job& j = c.add_job(1, 5);
    j.spec.gpus = "3";
    auto d = c.pass(0);
    ASSERT_EQ(d.starts.size(), 1u);
    ASSERT_EQ(d.starts[0].alloc.size(), 1u);
    EXPECT_EQ(d.starts[0].alloc[0].node, "n2");
    EXPECT_EQ(d.starts[0].alloc[0].gpu_ids.size(), 3u);
  }
}

// Where a job that starts at once goes, as Slurm 22.05 (select/cons_tres) placed it on four
// nodes of 4 CPUs and two GPUs with some of them busy: runs of nodes next to each other that
// can take part, the run that holds the job most tightly, in it the single node that holds it
// most tightly; for GPU jobs the nodes with more of their GPUs usable first.
TEST(Backfill, StartsWhereSlurmPlacesThem) {
  struct Case {
    std::string busy;  // node:cpus:gpus held by a running job, ...
    int ntasks;
    std::string gpus, gpus_per_task;
    std::string want;  // node:tasks:gpus ...
  };
  const std::vector<Case> cases = {
      {"n1:3:0", 2, "", "", "n2:2:0"},                       // not split over n1 and n2
      {"n1:2:0 n2:1:0", 3, "", "", "n2:3:0"},                // the tightest single node
      {"n1:2:0 n2:4:0", 2, "", "", "n1:2:0"},                // the tightest run (n1 alone)
      {"n1:2:0 n2:4:0", 3, "", "", "n3:3:0"},                // n1 is too small: the next run
      {"n2:4:0", 6, "", "", "n3:4:0 n4:2:0"},                // a run that holds it all
      {"n1:2:0 n2:3:0 n3:4:0", 3, "", "", "n1:2:0 n2:1:0"},  // the tightest run, split
      {"n1:1:1", 2, "", "1", "n2:2:2"},                      // more GPUs usable first
      {"n1:1:1", 3, "3", "", "n2:2:2 n3:1:1"},               // (n1 has one GPU left)
  };
  for (const Case& k : cases) {
    Cluster c;
    c.add_nodes(4, 4, 4000, "gpu:2");
    c.one_partition();
    std::istringstream busy(k.busy);
    for (std::string item; busy >> item;) {
      const std::string node = item.substr(0, item.find(':'));
      const int cpus = std::stoi(item.substr(item.find(':') + 1));
      const int gpus = std::stoi(item.substr(item.rfind(':') + 1));
      core::Job& r = c.add_job(cpus, 60);
      core::NodeAlloc a(node, cpus, cpus, cpus,
                        gpus > 0 ? std::vector<core::GresCount>{{"gpu", "", gpus}}
                                 : std::vector<core::GresCount>{});
      for (int i = 0; i < cpus; ++i) a.cpu_ids.push_back(static_cast<uint16_t>(i));
      for (int i = 0; i < gpus; ++i) a.gpu_ids.push_back(static_cast<uint16_t>(i));
      c.run(r, 0, {a});
    }
    core::Job& j = c.add_job(k.ntasks, 5);
    j.spec.gpus = k.gpus;
    j.spec.gpus_per_task = k.gpus_per_task;
    j.spec.mem_per_cpu_mb = 100;
    auto d = c.pass(0);
    ASSERT_EQ(d.starts.size(), 1u) << k.busy << " -n" << k.ntasks;
    std::string got;
    for (const auto& a : d.starts[0].alloc)
      got += (got.empty() ? "" : " ") + a.node + ":" + std::to_string(a.tasks) + ":" +
             std::to_string(a.gpu_ids.size());
    EXPECT_EQ(got, k.want) << k.busy << " -n" << k.ntasks << " --gpus=" << k.gpus;
  }
  // Weight: the lightest nodes first, whatever their order.
  Cluster c;
  c.add_nodes(4, 4, 4000);
  for (int i = 0; i < 2; ++i) c.nodes[i].weight = 10;
  c.one_partition();
  c.add_job(1, 5);
  auto d = c.pass(0);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].alloc[0].node, "n3");
}

// A node planned without any of a --gpus job's GPUs stays in its plan when a later job takes
// that node's GPUs meanwhile. The search (as Slurm) would take the node only with one of the
// job's GPUs free there, and would start the job later; the kept plan starts it on time.
TEST(Backfill, GpusPerJobKeepsANodePlannedWithoutItsGpus) {
  Cluster c;
  c.add_nodes(2, 4, 1000, "gpu:2");
  c.one_partition();
  core::Job& busy = c.add_job(4, 10);  // all of n2 until 600
  c.run(busy, 0, {{"n2", 4, 4, 4}});
  core::Job& j = c.add_job(3, 10);  // memory lets n1 hold two tasks: n1 two, n2 one and the GPU
  j.spec.gpus = "1";
  j.spec.mem_per_cpu_mb = 400;
  core::Job& later = c.add_job(1, 20);  // backfills on n1 with both its GPUs, beside j's plan
  later.spec.gpus_per_node = "2";
  auto d = c.pass(0);
  EXPECT_EQ(started(d), std::vector<uint64_t>{later.id});
  ASSERT_EQ(planned(d).at(j.id), 600);
  c.finish(busy);
  d = c.pass(600);
  ASSERT_EQ(started(d), std::vector<uint64_t>{j.id});
  ASSERT_EQ(d.starts[0].alloc.size(), 2u);
  EXPECT_EQ(d.starts[0].alloc[0].node, "n1");
  EXPECT_EQ(d.starts[0].alloc[0].tasks, 2);
  EXPECT_TRUE(d.starts[0].alloc[0].gpu_ids.empty());
  EXPECT_EQ(d.starts[0].alloc[1].gpu_ids.size(), 1u);
}

TEST(Backfill, Deterministic) {
  auto run = [] {
    Cluster c = textbook(sched::Policy::Conservative);
    auto d = c.pass(0);
    std::string s;
    for (const auto& p : d.planned)
      s += std::to_string(p.job_id) + "@" + std::to_string(p.start_time) + ";";
    for (const auto& r : d.reasons) s += r.reason + ";";
    return s;
  };
  EXPECT_EQ(run(), run());
}

// Properties over seeded random workloads, replayed with exact run times:
//  - no node is ever over-allocated, and CPU and GPU ids are never shared;
//  - every pending job not started has a reason;
//  - under conservative backfill no job starts later than the first start it was planned.
TEST(Backfill, RandomWorkloadProperties) {
  // Each seed twice: its values drawn in one order, then in the other (two workloads).
  for (int run = 0; run < 2000; ++run) {
    const int seed = run % 1000;
    const bool reversed = run >= 1000;
    std::mt19937 rng(seed);
    Cluster c;
    c.add_nodes(3, 4, 1000, "gpu:2");
    c.add_nodes(2, 2, 1000);
    c.one_partition();
    c.params.policy = seed % 3 == 0 ? sched::Policy::Easy : sched::Policy::Conservative;
    const int njobs = 10 + static_cast<int>(rng() % 20);
    for (int i = 0; i < njobs; ++i) {
      const int nodes = 1 + static_cast<int>(rng() % 2);
      // One draw per statement: the order of evaluation of function arguments differs between
      // compilers, and the workloads must not.
      uint32_t draws[4];
      for (auto& v : draws) v = static_cast<uint32_t>(rng());
      if (reversed) std::swap(draws[0], draws[3]), std::swap(draws[1], draws[2]);
      const bool nodes_set = draws[0] % 2 == 0;
      const int cpus = 1 + static_cast<int>(draws[1] % 2);
      const int64_t minutes = 1 + static_cast<int64_t>(draws[2] % 10);
      const int ntasks = nodes + static_cast<int>(draws[3] % 3);
      core::Job& j = c.add_job(ntasks, minutes, cpus, nodes, nodes_set);
      if (rng() % 4 == 0) {
        j.spec.gpus_per_node = std::to_string(1 + rng() % 2);
      } else if (rng() % 5 == 0) {  // GPUs per job, over several nodes
        j.spec.gpus = std::to_string(1 + rng() % 5);
        if (rng() % 2 == 0) j.spec.mem_per_gpu_mb = 100 + static_cast<int64_t>(rng() % 300);
      }
      // The controller refuses what can never fit at submission.
      auto v = c.view();
      if (!sched::can_ever_fit(j.spec, c.partitions[0], v)) j.state = core::JobState::Cancelled;
    }
    std::map<uint64_t, int64_t> first_plan;
    int64_t now = 0;
    for (int step = 0; step < 200; ++step) {
      auto v = c.view();
      if (v.pending.empty() && v.running.empty()) break;
      auto d = c.pass(now);
      for (const auto& s : d.starts) {
        // A job's GPUs (--gpus) are all there, over its nodes, one on each node first (on the
        // last nodes when there are fewer GPUs than nodes).
        if (const core::Job& j = c.jobs[s.job_id - 1]; !j.spec.gpus.empty()) {
          const size_t want = std::stoul(j.spec.gpus);
          size_t held = 0;
          for (size_t i = 0; i < s.alloc.size(); ++i) {
            const auto& a = s.alloc[i];
            if (want + i >= s.alloc.size()) {
              ASSERT_FALSE(a.gpu_ids.empty()) << "seed " << seed << " job " << s.job_id;
            }
            held += a.gpu_ids.size();
          }
          ASSERT_EQ(held, want) << "seed " << seed << " job " << s.job_id;
        }
        auto it = first_plan.find(s.job_id);
        if (it != first_plan.end() && c.params.policy == sched::Policy::Conservative) {
          ASSERT_LE(now, it->second)
              << "seed " << seed << (reversed ? " reversed" : "") << " job " << s.job_id;
        }
      }
      for (const auto& p : d.planned) first_plan.emplace(p.job_id, p.start_time);
      // Every pending job not started has exactly one reason.
      std::set<uint64_t> has_reason;
      for (const auto& r : d.reasons) {
        ASSERT_FALSE(r.reason.empty());
        ASSERT_TRUE(has_reason.insert(r.job_id).second);
      }
      for (const core::Job* j : v.pending)
        if (c.jobs[j->id - 1].state == core::JobState::Pending) {
          ASSERT_TRUE(has_reason.count(j->id)) << "seed " << seed;
        }
      // Never over-allocated; ids disjoint.
      for (const auto& n : c.nodes) {
        ASSERT_LE(n.alloc_cpus, n.cpus);
        ASSERT_LE(n.alloc_mem_mb, n.real_memory_mb);
        std::set<uint16_t> cpus, gpus;
        int gpu_total = 0;
        for (const auto& g : n.gres_total) gpu_total += static_cast<int>(g.count);
        for (const auto& j : c.jobs)
          if (j.state == core::JobState::Running)
            for (const auto& a : j.alloc)
              if (a.node == n.name) {
                for (auto id : a.cpu_ids) {
                  ASSERT_LT(id, n.cpus);
                  ASSERT_TRUE(cpus.insert(id).second) << "seed " << seed;
                }
                for (auto id : a.gpu_ids) {
                  ASSERT_LT(id, gpu_total);
                  ASSERT_TRUE(gpus.insert(id).second) << "seed " << seed;
                }
                ASSERT_EQ(static_cast<int>(a.cpu_ids.size()), a.cpus);
              }
      }
      // Advance to the next end (run time = time limit, on the 60 s grid).
      int64_t next = INT64_MAX;
      for (const auto& j : c.jobs)
        if (j.state == core::JobState::Running)
          next = std::min(next, j.start_time + j.time_limit_min * 60);
      if (next == INT64_MAX) break;
      now = next;
      for (auto& j : c.jobs)
        if (j.state == core::JobState::Running && j.start_time + j.time_limit_min * 60 <= now)
          c.finish(j);
    }
    for (const auto& j : c.jobs)
      ASSERT_NE(j.state, core::JobState::Pending)
          << "seed " << seed << " job " << j.id << " tasks " << j.spec.ntasks << " cpt "
          << j.spec.cpus_per_task << " nodes " << j.spec.nodes_min << (j.spec.nodes_set ? "!" : "")
          << " gpn " << j.spec.gpus_per_node << " now " << now;
  }
}
