#include <gtest/gtest.h>

#include <map>
#include <random>

#include "sched/scheduler.hpp"

using namespace drover;

namespace {

struct Fixture {
  std::vector<core::Node> nodes;
  std::vector<core::Job> jobs;
  sched::ClusterView view() {
    sched::ClusterView v;
    sched::PartitionView p{"debug", {}, "", -1, -1};
    for (size_t i = 0; i < nodes.size(); ++i) {
      v.nodes.push_back(&nodes[i]);
      p.nodes.push_back(static_cast<int>(i));
    }
    v.partitions.push_back(p);
    for (auto& j : jobs)
      if (j.state == core::JobState::Pending) v.pending.push_back(&j);
    return v;
  }
  void add_nodes(int n, int cpus, int64_t mem) {
    for (int i = 1; i <= n; ++i) {
      core::Node node;
      node.name = "node" + std::to_string(i);
      node.cpus = cpus;
      node.real_memory_mb = mem;
      node.registered = true;
      nodes.push_back(node);
    }
  }
  core::Job& add_job(int ntasks, int cpt, int64_t mem, int nodes_min = 1, bool nodes_set = false) {
    core::Job j;
    j.id = jobs.size() + 1;
    j.partition = "debug";
    j.submit_time = 100 + static_cast<int64_t>(j.id);
    j.spec.ntasks = ntasks;
    j.spec.cpus_per_task = cpt;
    j.spec.mem_per_node_mb = mem;
    j.spec.nodes_min = nodes_min;
    j.spec.nodes_set = nodes_set;
    jobs.push_back(j);
    return jobs.back();
  }
};

}  // namespace

TEST(Fifo, StartsInOrderAndBlocksBehindFirstThatDoesNotFit) {
  Fixture f;
  f.add_nodes(1, 4, 1000);
  f.add_job(2, 1, 100);
  f.add_job(4, 1, 100);  // does not fit after job 1
  f.add_job(1, 1, 100);  // would fit, but FIFO holds it back
  auto d = sched::make_fifo_scheduler()->schedule(f.view(), 0);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job_id, 1u);
  ASSERT_EQ(d.reasons.size(), 2u);
  EXPECT_EQ(d.reasons[0].reason, "Resources");
  EXPECT_EQ(d.reasons[1].reason, "Priority");
}

TEST(Fifo, SpreadsTasksOverRequestedNodes) {
  Fixture f;
  f.add_nodes(3, 2, 1000);
  f.add_job(3, 1, 100, 2, true);
  auto d = sched::make_fifo_scheduler()->schedule(f.view(), 0);
  ASSERT_EQ(d.starts.size(), 1u);
  ASSERT_EQ(d.starts[0].alloc.size(), 2u);
  EXPECT_EQ(d.starts[0].alloc[0].tasks, 2);
  EXPECT_EQ(d.starts[0].alloc[1].tasks, 1);
  EXPECT_EQ(d.starts[0].alloc[0].mem_mb, 100);
}

TEST(Fifo, MemoryLimitsPacking) {
  Fixture f;
  f.add_nodes(1, 8, 1000);
  f.add_job(1, 1, 600);
  f.add_job(1, 1, 600);
  auto d = sched::make_fifo_scheduler()->schedule(f.view(), 0);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.reasons[0].reason, "Resources");
}

TEST(Fifo, NoMemoryRequestTakesWholeNodeUnlessDefMemPerCpu) {
  Fixture f;
  f.add_nodes(1, 4, 1000);
  f.add_job(1, 1, -1);
  f.add_job(1, 1, -1);
  auto v = f.view();
  EXPECT_EQ(sched::make_fifo_scheduler()->schedule(v, 0).starts.size(), 1u);
  v.def_mem_per_cpu_mb = 250;
  EXPECT_EQ(sched::make_fifo_scheduler()->schedule(v, 0).starts.size(), 2u);
}

TEST(Fifo, SkipsDownAndDrainedNodes) {
  Fixture f;
  f.add_nodes(2, 1, 100);
  f.nodes[0].down = true;
  f.nodes[1].drain = true;
  f.add_job(1, 1, 10);
  auto d = sched::make_fifo_scheduler()->schedule(f.view(), 0);
  EXPECT_TRUE(d.starts.empty());
  auto v = f.view();
  EXPECT_TRUE(sched::can_ever_fit(f.jobs[0].spec, v.partitions[0], v));
}

TEST(Fifo, CanEverFitRejectsOversizedRequests) {
  Fixture f;
  f.add_nodes(2, 2, 100);
  auto v = f.view();
  core::JobSpec s;
  s.cpus_per_task = 3;
  EXPECT_FALSE(sched::can_ever_fit(s, v.partitions[0], v));
  s.cpus_per_task = 1;
  s.ntasks = 4;
  EXPECT_TRUE(sched::can_ever_fit(s, v.partitions[0], v));
  s.ntasks = 5;
  EXPECT_FALSE(sched::can_ever_fit(s, v.partitions[0], v));
  s.ntasks = 1;
  s.mem_per_node_mb = 101;
  EXPECT_FALSE(sched::can_ever_fit(s, v.partitions[0], v));
}

// Invariant: whatever the mix, applying a pass never exceeds any node's CPUs or memory.
TEST(Fifo, NeverOverAllocatesRandomMix) {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    Fixture f;
    f.add_nodes(3, 4, 1000);
    for (int i = 0; i < 40; ++i) {
      int nodes = 1 + static_cast<int>(rng() % 2);
      // One draw per statement, in gcc's order of the arguments when the seed was chosen
      // (compilers evaluate arguments in different orders).
      const bool nodes_set = rng() % 2 == 0;
      const int64_t mem = 50 + static_cast<int64_t>(rng() % 400);
      const int cpus = 1 + static_cast<int>(rng() % 2);
      const int ntasks = nodes + static_cast<int>(rng() % 3);
      f.add_job(ntasks, cpus, mem, nodes, nodes_set);
    }
    auto sched = sched::make_fifo_scheduler();
    std::map<uint64_t, std::vector<core::NodeAlloc>> running;
    // Node usage is always derived from the running set, as the controller does.
    auto recompute = [&] {
      for (auto& n : f.nodes) n.alloc_cpus = n.alloc_mem_mb = n.running_jobs = 0;
      for (const auto& [id, alloc] : running)
        for (const auto& a : alloc)
          for (auto& n : f.nodes)
            if (n.name == a.node) {
              n.alloc_cpus += a.cpus;
              n.alloc_mem_mb += a.mem_mb;
              n.running_jobs++;
            }
    };
    for (int pass = 0; pass < 5; ++pass) {
      auto d = sched->schedule(f.view(), pass);
      for (const auto& s : d.starts) {
        f.jobs[s.job_id - 1].state = core::JobState::Running;
        running[s.job_id] = s.alloc;
      }
      recompute();
      for (const auto& n : f.nodes) {
        ASSERT_LE(n.alloc_cpus, n.cpus);
        ASSERT_LE(n.alloc_mem_mb, n.real_memory_mb);
      }
      // Finish some running jobs so the next pass has room; their resources are freed on
      // the next recomputation.
      for (auto it = running.begin(); it != running.end();) {
        if (rng() % 2) {
          f.jobs[it->first - 1].state = core::JobState::Completed;
          it = running.erase(it);
        } else {
          ++it;
        }
      }
      recompute();
    }
  }
}
