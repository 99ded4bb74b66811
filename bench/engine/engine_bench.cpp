// Engine benchmark: one scheduling pass over a large, busy cluster.
//
//   engine_bench [--nodes N] [--pending P] [--policy fifo|easy|conservative] [--repeat R]
//                [--seed S]
//
// The cluster: N nodes, a fifth of them GPU nodes (8 GPUs each), all 64 CPUs. It starts
// about full: running jobs of mixed sizes with staggered ends. P pending jobs follow a mix
// of shapes seen on shared GPU/HPC clusters: small single-node jobs, whole nodes, multi-node
// jobs, GPU jobs (a GPU or a whole GPU node, some across several nodes), limits from ten
// minutes to two days. Prints the pass time (best and median of R), the decisions, and the
// engine's memory per pending job. Figures only: nothing here fails on a slow machine.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sched/scheduler.hpp"

using namespace drover;

namespace {

struct Options {
  int nodes = 10000;
  int pending = 100000;
  sched::Policy policy = sched::Policy::Conservative;
  int repeat = 3;
  unsigned seed = 1;
};

long rss_kb() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages = 0, resident = 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return resident * 4;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--nodes") o.nodes = std::stoi(v);
    else if (a == "--pending") o.pending = std::stoi(v);
    else if (a == "--repeat") o.repeat = std::stoi(v);
    else if (a == "--seed") o.seed = static_cast<unsigned>(std::stoul(v));
    else if (a == "--policy")
      o.policy = v == "fifo" ? sched::Policy::Fifo
                 : v == "easy" ? sched::Policy::Easy
                               : sched::Policy::Conservative;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::mt19937_64 rng(o.seed);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  const int64_t now = 1'000'000;

  std::vector<core::Node> nodes(o.nodes);
  const int gpu_nodes = o.nodes / 5;
  for (int i = 0; i < o.nodes; ++i) {
    core::Node& n = nodes[i];
    n.name = "node" + std::to_string(i + 1);
    n.cpus = 64;
    n.sockets = 2;
    n.cores_per_socket = 32;
    n.real_memory_mb = i < gpu_nodes ? 1024 * 1024 : 256 * 1024;
    n.registered = true;
    if (i < gpu_nodes) {
      n.gres = "gpu:h100:8";
      n.gres_total = core::parse_gres_list(n.gres);
      n.features = {"gpu", "h100"};
    } else {
      n.features = {"cpu"};
    }
  }
  sched::PartitionView part{"batch", {}, "", -1, -1, 1};
  for (int i = 0; i < o.nodes; ++i) part.nodes.push_back(i);

  // Running work: fill each node with a few jobs (remaining times from minutes to a day).
  std::vector<core::Job> running;
  running.reserve(static_cast<size_t>(o.nodes) * 4);
  uint64_t next_id = 1;
  for (int i = 0; i < o.nodes; ++i) {
    core::Node& n = nodes[i];
    while (n.alloc_cpus < n.cpus - 4) {
      core::Job j;
      j.id = next_id++;
      j.state = core::JobState::Running;
      j.partition = "batch";
      const int cpus = std::min(n.cpus - n.alloc_cpus, 1 << pick(2, 6));
      const int64_t mem = int64_t(cpus) * 2048;
      j.time_limit_min = pick(30, 1440);
      j.start_time = now - pick(0, static_cast<int>(j.time_limit_min) * 60 - 60);
      core::NodeAlloc a(n.name, cpus, mem, cpus);
      if (i < gpu_nodes) {
        const int gpus = std::min<int>(8 - static_cast<int>(n.gres_used.empty() ? 0 : n.gres_used[0].count), cpus / 8);
        if (gpus > 0) {
          a.gres = {{"gpu", "h100", gpus}};
          if (n.gres_used.empty()) n.gres_used.push_back({"gpu", "h100", 0});
          n.gres_used[0].count += gpus;
        }
      }
      n.alloc_cpus += cpus;
      n.alloc_mem_mb += mem;
      n.running_jobs += 1;
      j.alloc.push_back(std::move(a));
      running.push_back(std::move(j));
    }
  }

  const long rss_before = rss_kb();
  std::vector<core::Job> pending(o.pending);
  for (int i = 0; i < o.pending; ++i) {
    core::Job& j = pending[i];
    j.id = next_id++;
    j.partition = "batch";
    j.submit_time = now - o.pending + i;
    j.priority = 0xffff0000u - static_cast<uint32_t>(i);
    static const int64_t limits[] = {10, 30, 60, 120, 240, 480, 720, 1440, 2880};
    j.time_limit_min = limits[pick(0, 8)];
    const int kind = pick(0, 99);
    core::JobSpec& s = j.spec;
    if (kind < 55) {  // small single-node CPU job
      s.ntasks = 1;
      s.cpus_per_task = 1 << pick(0, 4);
      s.mem_per_cpu_mb = 2048;
    } else if (kind < 70) {  // whole nodes
      s.exclusive = true;
      s.nodes_min = pick(1, 4);
      s.nodes_set = true;
      s.ntasks = s.nodes_min;
      s.constraint = "cpu";
    } else if (kind < 80) {  // multi-node MPI
      s.nodes_min = 1 << pick(1, 5);
      s.nodes_set = true;
      s.ntasks_per_node = 32;
      s.ntasks = s.nodes_min * 32;
      s.mem_per_cpu_mb = 1024;
    } else if (kind < 95) {  // one to eight GPUs on a node
      s.ntasks = 1;
      s.cpus_per_task = 8;
      s.gpus_per_node = std::to_string(1 << pick(0, 3));
      s.mem_per_cpu_mb = 4096;
    } else {  // multi-node GPU training
      s.nodes_min = 1 << pick(1, 4);
      s.nodes_set = true;
      s.ntasks_per_node = 8;
      s.ntasks = s.nodes_min * 8;
      s.gpus_per_task = "1";
      s.mem_per_cpu_mb = 4096;
    }
  }
  const long rss_after = rss_kb();

  sched::ClusterView v;
  for (auto& n : nodes) v.nodes.push_back(&n);
  v.partitions.push_back(part);
  for (auto& j : pending) v.pending.push_back(&j);
  for (auto& j : running) v.running.push_back(&j);
  v.params.policy = o.policy;

  std::vector<double> times;
  sched::Decisions d;
  auto engine = sched::make_scheduler();
  for (int r = 0; r < o.repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    d = engine->schedule(v, now);
    const auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  int64_t last_plan = now;
  for (const auto& p : d.planned) last_plan = std::max(last_plan, p.start_time);
  const char* policy = o.policy == sched::Policy::Fifo ? "fifo"
                       : o.policy == sched::Policy::Easy ? "easy"
                                                         : "conservative";
  std::printf("engine pass: %d nodes (%d with GPUs), %zu running, %d pending, policy %s\n",
              o.nodes, gpu_nodes, running.size(), o.pending, policy);
  std::printf("  pass time: best %.3f s, median %.3f s (%d runs)\n", times.front(),
              times[times.size() / 2], o.repeat);
  std::printf("  decisions: %zu started, %zu planned (last planned start +%.1f h), %zu reasons\n",
              d.starts.size(), d.planned.size(), double(last_plan - now) / 3600.0,
              d.reasons.size());
  std::printf("  node timeline examinations: %llu\n", static_cast<unsigned long long>(d.work));
  std::printf("  pending job records (core::Job as the engine reads them): %.0f bytes each\n",
              double(rss_after - rss_before) * 1024.0 / o.pending);
  return 0;
}
