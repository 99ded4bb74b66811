// The engine keeps compiled requests, the node index and its buffers from pass to pass: one
// engine used for a whole workload must decide exactly as a fresh engine per pass, also when
// nodes, GRES kinds and default memory change between passes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "sched/scheduler.hpp"
#include "sched/tests/cluster_fixture.hpp"

using namespace drover;
using drover::sched::test_cluster::Cluster;

namespace {

std::string text(const sched::Decisions& d) {
  std::string s;
  for (const auto& st : d.starts) {
    s += "S" + std::to_string(st.job_id) + " " + st.partition;
    for (const auto& a : st.alloc) {
      s += " [" + a.node + " " + std::to_string(a.cpus) + " " + std::to_string(a.mem_mb) + " " +
           std::to_string(a.tasks);
      for (auto c : a.cpu_ids) s += " c" + std::to_string(c);
      for (auto g : a.gpu_ids) s += " g" + std::to_string(g);
      for (const auto& g : a.gres) s += " " + g.name + ":" + g.type + ":" + std::to_string(g.count);
      s += "]";
    }
    s += "\n";
  }
  for (const auto& p : d.planned) {
    s += "P" + std::to_string(p.job_id) + "@" + std::to_string(p.start_time) + " " + p.partition;
    for (const auto& n : p.nodes) s += " " + n;
    s += "\n";
  }
  for (const auto& r : d.reasons) s += "R" + std::to_string(r.job_id) + " " + r.reason + "\n";
  for (const auto& b : d.blocked_partitions) s += "B" + b + "\n";
  s += "W" + std::to_string(d.work) + "\n";
  return s;
}

}  // namespace

TEST(EngineMemo, KeptEngineDecidesAsAFreshOne) {
  for (int seed = 0; seed < 120; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
    Cluster c;
    c.nodes.reserve(64);  // views point into it
    c.add_nodes(3, 4, 4000, "gpu:a100:2");
    c.add_nodes(2, 8, 8000, "gpu:a100:1,gpu:v100:2");
    c.add_nodes(3, 4, 2000);
    c.nodes[5].features = c.nodes[5].active_features = {"fast"};
    c.one_partition();
    c.params.policy = static_cast<sched::Policy>(seed % 3);
    int64_t def_mem_per_cpu = 0;
    auto kept = sched::make_scheduler();
    const int njobs = 15 + pick(0, 25);
    for (int i = 0; i < njobs; ++i) {
      const int nodes = pick(1, 2);
      // One draw per statement, in gcc's order of the arguments when the seeds were chosen
      // (compilers evaluate arguments in different orders).
      const bool nodes_set = pick(0, 1) == 1;
      const int cpus = pick(1, 2);
      const int64_t minutes = pick(1, 12);
      const int ntasks = nodes + pick(0, 3);
      core::Job& j = c.add_job(ntasks, minutes, cpus, nodes, nodes_set);
      switch (pick(0, 7)) {
        case 0:
          j.spec.gpus_per_node = std::to_string(pick(1, 2));
          break;
        case 1:
          j.spec.gres = "gpu:v100:1";
          break;
        case 2:
          j.spec.gpus = std::to_string(pick(1, 3));
          j.spec.mem_per_gpu_mb = 100;
          break;
        case 3:
          j.spec.exclusive = true;
          break;
        case 4:
          j.spec.constraint = "fast";
          break;
        case 5:
          j.spec.mem_per_cpu_mb = -1;  // DefMemPerCPU, or the whole node
          break;
        default:
          break;
      }
      auto v = c.view();
      if (!sched::can_ever_fit(j.spec, c.partitions[0], v)) j.state = core::JobState::Cancelled;
    }
    int64_t now = 0;
    for (int step = 0; step < 60; ++step) {
      // Between passes: a node with a GRES kind not seen before, another default memory.
      if (step == 7) {
        c.add_nodes(1, 4, 4000, "gpu:h100:4");
        c.partitions[0].nodes.push_back(static_cast<int>(c.nodes.size() - 1));
      }
      if (step == 13) def_mem_per_cpu = 500;
      auto v = c.view();
      v.def_mem_per_cpu_mb = def_mem_per_cpu;
      if (v.pending.empty() && v.running.empty()) break;
      // A fresh engine given the kept one's plans.
      auto first = sched::make_scheduler();
      first->plans() = kept->plans();
      const sched::Decisions fresh = first->schedule(v, now);
      const sched::Decisions same = kept->schedule(v, now);
      ASSERT_EQ(text(same), text(fresh)) << "seed " << seed << " step " << step;
      for (const auto& s : fresh.starts) {
        c.run(c.jobs[s.job_id - 1], now, s.alloc);
        kept->plans().forget(s.job_id);
      }
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
  }
}

// What a pass knows of nodes is a plain list up to 256 candidate nodes and a tree over them
// beyond (NodeBounds): a workload on a few nodes decides the same when 300 nodes that can hold
// none of its jobs (one CPU, every job asks for two per task) are added after them, which
// puts the search on the tree.
TEST(EngineMemo, BoundsListAndTreeAgree) {
  auto decisions_text = [](const sched::Decisions& d) {
    std::string s;
    for (const auto& st : d.starts) {
      s += "S" + std::to_string(st.job_id);
      for (const auto& a : st.alloc) {
        s += " " + a.node;
        for (auto c : a.cpu_ids) s += " c" + std::to_string(c);
        for (auto g : a.gpu_ids) s += " g" + std::to_string(g);
      }
      s += "\n";
    }
    for (const auto& p : d.planned) {
      s += "P" + std::to_string(p.job_id) + "@" + std::to_string(p.start_time);
      for (const auto& n : p.nodes) s += " " + n;
      s += "\n";
    }
    for (const auto& r : d.reasons) s += "R" + std::to_string(r.job_id) + " " + r.reason + "\n";
    return s;
  };
  for (int seed = 0; seed < 100; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
    Cluster small, large;
    for (Cluster* c : {&small, &large}) {
      c->nodes.reserve(400);
      c->add_nodes(4, 8, 4000, "gpu:2");
      c->add_nodes(3, 4, 4000);
    }
    large.add_nodes(300, 1, 4000, "", "x");
    const sched::Policy policy = static_cast<sched::Policy>(seed % 3);
    for (Cluster* c : {&small, &large}) {
      c->one_partition();
      c->params.policy = policy;
    }
    const int njobs = 10 + pick(0, 30);
    for (int i = 0; i < njobs; ++i) {
      const int nodes = pick(1, 3);
      const int ntasks = nodes + pick(0, 4);
      const int64_t minutes = pick(1, 20);
      const bool nodes_set = pick(0, 1) == 1;
      const int gpus = pick(0, 3) == 0 ? pick(1, 2) : 0;
      for (Cluster* c : {&small, &large}) {
        core::Job& j = c->add_job(ntasks, minutes, 2, nodes, nodes_set);
        if (gpus > 0) j.spec.gpus_per_node = std::to_string(gpus);
      }
      auto v = small.view();
      if (!sched::can_ever_fit(small.jobs.back().spec, small.partitions[0], v)) {
        small.jobs.back().state = core::JobState::Cancelled;
        large.jobs.back().state = core::JobState::Cancelled;
      }
    }
    int64_t now = 0;
    for (int step = 0; step < 60; ++step) {
      if (small.view().pending.empty() && small.view().running.empty()) break;
      const sched::Decisions a = small.pass(now);
      const sched::Decisions b = large.pass(now);
      ASSERT_EQ(decisions_text(b), decisions_text(a)) << "seed " << seed << " step " << step;
      int64_t next = INT64_MAX;
      for (const auto& j : small.jobs)
        if (j.state == core::JobState::Running)
          next = std::min(next, j.start_time + j.time_limit_min * 60);
      if (next == INT64_MAX) break;
      now = next;
      for (Cluster* c : {&small, &large})
        for (auto& j : c->jobs)
          if (j.state == core::JobState::Running && j.start_time + j.time_limit_min * 60 <= now)
            c->finish(j);
    }
  }
}

// The view's nodes are by id, with no node (null) where one left: a kept engine follows nodes
// leaving, joining in a freed id and a name coming back under another id, deciding as a fresh
// engine does and never placing work where no node is.
TEST(EngineMemo, NodesJoiningAndLeavingDecideAsAFreshOne) {
  for (int seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
    Cluster c;
    c.nodes.reserve(64);  // views point into it
    c.add_nodes(6, 4, 4000, "gpu:2");
    c.one_partition();
    c.params.policy = static_cast<sched::Policy>(seed % 3);
    std::vector<const core::Node*> by_id;
    for (const auto& n : c.nodes) by_id.push_back(&n);
    for (int i = 0; i < 30; ++i) {
      const int nodes = pick(1, 2);
      core::Job& j = c.add_job(nodes + pick(0, 2), pick(1, 10), pick(1, 2), nodes, pick(0, 1));
      if (pick(0, 3) == 0) j.spec.gpus_per_node = "1";
    }
    auto idle = [&](int id) {
      return by_id[static_cast<size_t>(id)] != nullptr &&
             by_id[static_cast<size_t>(id)]->running_jobs == 0;
    };
    auto join = [&](size_t id, const std::string& name) {
      c.add_nodes(1, 4, 4000, "gpu:2");
      c.nodes.back().name = name;
      if (id >= by_id.size()) by_id.resize(id + 1, nullptr);
      by_id[id] = &c.nodes.back();
    };
    auto kept = sched::make_scheduler();
    int64_t now = 0;
    for (int step = 0; step < 40; ++step) {
      if (step == 2 && idle(2)) by_id[2] = nullptr;
      if (step == 4 && by_id[2] == nullptr) join(2, "d1");
      if (step == 5) join(8, "d2");  // past a hole (id 6 and 7)
      if (step == 6 && idle(3)) {    // n4 leaves and comes back as another id
        by_id[3] = nullptr;
        join(7, "n4");
      }
      auto v = c.view();
      v.nodes = by_id;
      v.partitions[0].nodes.clear();
      for (size_t i = 0; i < by_id.size(); ++i)
        if (by_id[i] != nullptr) v.partitions[0].nodes.push_back(static_cast<int>(i));
      // Plans made on a node that left are dropped, as the controller does.
      for (uint32_t slot = 0; slot < 64; ++slot)
        if (slot >= by_id.size() || by_id[slot] == nullptr) kept->plans().forget_node(slot);
      if (v.pending.empty() && v.running.empty()) break;
      // A fresh engine given the kept one's plans.
      auto first = sched::make_scheduler();
      first->plans() = kept->plans();
      const sched::Decisions fresh = first->schedule(v, now);
      const sched::Decisions same = kept->schedule(v, now);
      ASSERT_EQ(text(same), text(fresh)) << "seed " << seed << " step " << step;
      for (const auto& s : fresh.starts) {
        for (const auto& a : s.alloc) {
          bool live = false;
          for (const core::Node* n : by_id) live = live || (n != nullptr && n->name == a.node);
          ASSERT_TRUE(live) << a.node << " seed " << seed;
        }
        c.run(c.jobs[s.job_id - 1], now, s.alloc);
        kept->plans().forget(s.job_id);
      }
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
  }
}
