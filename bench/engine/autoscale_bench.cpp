// Autoscaler benchmark: one what-if decision (sched::Autoscaler::decide) over a busy cluster,
// many pending jobs and many NodeSets, beside a plain engine pass over the same cluster.
//
//   autoscale_bench [--nodes N] [--pending P] [--sets S] [--max M] [--repeat R] [--seed S]
//
// The cluster: N nodes of 64 CPUs (a fifth with 8 H100s), about full, as engine_bench builds
// it. S NodeSets, none started yet, each of up to M nodes, in shapes that cycle through CPU
// nodes of 16 to 128 CPUs and GPU nodes (1 L4, 4 A100, 8 H100), some with a feature, costs
// rising with size. P pending jobs: small CPU jobs, whole nodes, multi-node MPI, GPU jobs of
// any type or a named one, multi-node GPU training. Prints the decision time (best and median
// of R), what it decided, and the plain pass's time. Figures only: nothing here fails.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/gres.hpp"
#include "sched/autoscale.hpp"
#include "sched/scheduler.hpp"

using namespace drover;

namespace {

struct Options {
  int nodes = 1000;
  int pending = 10000;
  int sets = 100;
  int max = 50;
  int repeat = 5;
  unsigned seed = 1;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--nodes")
      o.nodes = std::stoi(v);
    else if (a == "--pending")
      o.pending = std::stoi(v);
    else if (a == "--sets")
      o.sets = std::stoi(v);
    else if (a == "--max")
      o.max = std::stoi(v);
    else if (a == "--repeat")
      o.repeat = std::max(1, std::stoi(v));
    else if (a == "--seed")
      o.seed = static_cast<unsigned>(std::stoul(v));
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::mt19937_64 rng(o.seed);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  const int64_t now = 1'000'020;

  std::vector<core::Node> nodes(static_cast<size_t>(o.nodes));
  const int gpu_nodes = o.nodes / 5;
  sched::PartitionView part{"batch", {}, "", -1, -1, 1};
  for (int i = 0; i < o.nodes; ++i) {
    core::Node& n = nodes[static_cast<size_t>(i)];
    n.name = "node" + std::to_string(i + 1);
    n.cpus = 64;
    n.sockets = 2;
    n.cores_per_socket = 32;
    n.real_memory_mb = 512 * 1024;
    n.registered = true;
    if (i < gpu_nodes) {
      n.gres = "gpu:h100:8";
      n.gres_total = core::parse_gres_list(n.gres);
    }
    part.nodes.push_back(i);
  }
  // Running work: every node nearly full until some time in the next day.
  std::vector<core::Job> running;
  uint64_t next_id = 1;
  for (core::Node& n : nodes) {
    while (n.alloc_cpus < n.cpus - 4) {
      core::Job j;
      j.id = next_id++;
      j.state = core::JobState::Running;
      j.partition = "batch";
      const int cpus = std::min(n.cpus - n.alloc_cpus, 1 << pick(2, 6));
      j.time_limit_min = pick(30, 1440);
      j.start_time = now - pick(0, static_cast<int>(j.time_limit_min) * 60 - 60);
      core::NodeAlloc a(n.name, cpus, int64_t{cpus} * 2048, cpus);
      n.alloc_cpus += cpus;
      n.alloc_mem_mb += int64_t{cpus} * 2048;
      n.running_jobs += 1;
      j.alloc.push_back(std::move(a));
      running.push_back(std::move(j));
    }
  }

  // NodeSets.
  std::vector<sched::NodeSetView> sets(static_cast<size_t>(o.sets));
  for (int k = 0; k < o.sets; ++k) {
    sched::NodeSetView& s = sets[static_cast<size_t>(k)];
    s.name = "set" + std::to_string(k);
    s.partitions = {"batch"};
    s.max_replicas = o.max;
    s.start_delay_s = 60;
    s.idle_timeout_s = 600;
    core::Node& sh = s.shape;
    switch (k % 7) {
      case 0:
        sh.cpus = 16;
        break;
      case 1:
        sh.cpus = 32;
        break;
      case 2:
        sh.cpus = 64;
        break;
      case 3:
        sh.cpus = 128;
        break;
      case 4:
        sh.cpus = 16;
        sh.gres = "gpu:l4:1";
        break;
      case 5:
        sh.cpus = 64;
        sh.gres = "gpu:a100:4";
        break;
      default:
        sh.cpus = 128;
        sh.gres = "gpu:h100:8";
        break;
    }
    sh.cores_per_socket = sh.cpus;
    sh.real_memory_mb = int64_t{sh.cpus} * 8192;
    if (!sh.gres.empty()) sh.gres_total = core::parse_gres_list(sh.gres);
    if (k % 3 == 0) sh.features = {"ib"};
    s.cost = sh.cpus * (sh.gres.empty() ? 1.0 : 4.0) * (1.0 + 0.01 * k);
  }

  std::vector<core::Job> pending(static_cast<size_t>(o.pending));
  static const char* gpu_types[] = {"", "l4:", "a100:", "h100:"};
  for (int i = 0; i < o.pending; ++i) {
    core::Job& j = pending[static_cast<size_t>(i)];
    j.id = next_id++;
    j.partition = "batch";
    j.submit_time = now - o.pending + i;
    j.priority = 0xffff0000u - static_cast<uint32_t>(i);
    static const int64_t limits[] = {10, 30, 60, 120, 240, 480, 720, 1440, 2880};
    j.time_limit_min = limits[pick(0, 8)];
    core::JobSpec& s = j.spec;
    const int kind = pick(0, 99);
    if (kind < 55) {
      s.ntasks = 1;
      s.cpus_per_task = 1 << pick(0, 4);
      s.mem_per_cpu_mb = 2048;
    } else if (kind < 70) {
      s.exclusive = true;
      s.nodes_min = pick(1, 4);
      s.nodes_set = true;
      s.ntasks = s.nodes_min;
      if (pick(0, 3) == 0) s.constraint = "ib";
    } else if (kind < 80) {
      s.nodes_min = 1 << pick(1, 5);
      s.nodes_set = true;
      s.ntasks_per_node = 16;
      s.ntasks = s.nodes_min * 16;
      s.mem_per_cpu_mb = 1024;
    } else if (kind < 95) {
      s.ntasks = 1;
      s.cpus_per_task = 8;
      s.gpus_per_node = std::string(gpu_types[pick(0, 3)]) + "1";
      s.mem_per_cpu_mb = 4096;
    } else {
      s.nodes_min = 1 << pick(1, 4);
      s.nodes_set = true;
      s.ntasks_per_node = 4;
      s.ntasks = s.nodes_min * 4;
      s.gpus_per_task = "1";
      s.mem_per_cpu_mb = 4096;
    }
  }

  sched::ClusterView v;
  for (auto& n : nodes) v.nodes.push_back(&n);
  v.partitions.push_back(part);
  for (auto& j : pending) v.pending.push_back(&j);
  for (auto& j : running) v.running.push_back(&j);
  v.params.policy = sched::Policy::Conservative;

  using Clock = std::chrono::steady_clock;
  std::vector<double> plain_t, what_if_t;
  auto engine = sched::make_scheduler();
  sched::Autoscaler autoscaler;
  sched::Decisions plain;
  sched::AutoscaleDecision d;
  for (int r = 0; r < o.repeat; ++r) {
    auto t0 = Clock::now();
    plain = engine->schedule(v, now);
    auto t1 = Clock::now();
    d = autoscaler.decide(v, sets, now);
    auto t2 = Clock::now();
    plain_t.push_back(std::chrono::duration<double>(t1 - t0).count());
    what_if_t.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  int add = 0, sets_grown = 0, wanted = 0;
  size_t scaled_for = 0;
  for (const auto& s : d.sets) {
    add += s.add;
    wanted += s.wanted;
    sets_grown += s.add > 0;
    scaled_for += s.scaled_for.size();
  }
  std::printf(
      "autoscaler: %d nodes (%d with GPUs), %zu running, %d pending, %d NodeSets of up "
      "to %d nodes (%d hypothetical nodes)\n",
      o.nodes, gpu_nodes, running.size(), o.pending, o.sets, o.max, o.sets * o.max);
  std::printf("  what-if decision: best %.3f s, median %.3f s (%d runs)\n",
              *std::min_element(what_if_t.begin(), what_if_t.end()), median(what_if_t), o.repeat);
  std::printf("  plain engine pass on the real nodes: best %.3f s, median %.3f s\n",
              *std::min_element(plain_t.begin(), plain_t.end()), median(plain_t));
  std::printf(
      "  decided: start %d nodes in %d sets now for %zu jobs; %d wanted in all; %zu jobs "
      "no set could run; work %llu\n",
      add, sets_grown, scaled_for, wanted, d.unrunnable.size(),
      static_cast<unsigned long long>(d.work));
  return 0;
}
