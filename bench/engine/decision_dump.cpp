// Decision dump: the engine's decisions over seeded random scenarios, as text, so that a
// change meant to keep decisions can be checked by diffing the dumps of two builds.
//
//   decision_dump [--seeds FIRST:LAST] [--passes P] [--no-work]
//
// Each seed builds a cluster (20 to 2,000 nodes of mixed sizes, GPU nodes with one or two
// GPU kinds, features, some nodes down or draining, sometimes a second partition and an
// advance reservation), fills it with running jobs and submits a mix of pending jobs (every
// option the engine reads: tasks, CPUs per task, node counts, --ntasks-per-node,
// --exclusive, memory rules, -C, -x, -w, GRES per node/task/job, --mem-per-gpu, several
// partitions, reservations, unlimited jobs). The policy cycles with the seed. One engine
// runs P passes; between passes the jobs started run and time moves to the next job end.
// Prints every start (nodes, CPU and GPU ids), planned start, reason and blocked partition;
// `W` lines give the pass's node examinations (leave them out with --no-work).
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sched/scheduler.hpp"

using namespace drover;

namespace {

std::string text(const sched::Decisions& d, bool work) {
  std::string s;
  for (const auto& st : d.starts) {
    s += "S" + std::to_string(st.job_id) + " " + st.partition;
    for (const auto& a : st.alloc) {
      s += " [" + a.node + " " + std::to_string(a.cpus) + " " + std::to_string(a.mem_mb) + " " +
           std::to_string(a.tasks);
      for (auto c : a.cpu_ids) s += " c" + std::to_string(c);
      for (auto g : a.gpu_ids) s += " g" + std::to_string(g);
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
  for (const auto& p : d.preempted) s += "X" + std::to_string(p.job_id) + "\n";
  for (const auto& b : d.blocked_partitions) s += "B" + b + "\n";
  if (work) s += "W" + std::to_string(d.work) + "\n";
  return s;
}

struct Scenario {
  std::vector<core::Node> nodes;
  std::vector<core::Job> jobs;
  std::vector<sched::PartitionView> partitions;
  std::vector<sched::ReservationView> reservations;
  std::vector<int64_t> run_for;  // per job: how long it really runs once started
  sched::SchedulerParams params;

  sched::ClusterView view() {
    sched::ClusterView v;
    for (auto& n : nodes) v.nodes.push_back(&n);
    v.partitions = partitions;
    v.reservations = reservations;
    v.params = params;
    v.def_mem_per_cpu_mb = 500;
    for (auto& j : jobs) {
      if (j.state == core::JobState::Pending) v.pending.push_back(&j);
      if (j.state == core::JobState::Running) v.running.push_back(&j);
    }
    return v;
  }
  core::Node* node(const std::string& name) {
    for (auto& n : nodes)
      if (n.name == name) return &n;
    return nullptr;
  }
  void run(core::Job& j, int64_t start, const std::vector<core::NodeAlloc>& alloc) {
    j.state = core::JobState::Running;
    j.start_time = start;
    j.alloc = alloc;
    for (const auto& a : alloc) node(a.node)->charge(a);
  }
  void finish(core::Job& j) {
    for (const auto& a : j.alloc) node(a.node)->discharge(a);
    j.state = core::JobState::Completed;
    j.alloc.clear();
  }
};

Scenario build(unsigned seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  Scenario s;
  static const int sizes[] = {20, 60, 120, 300, 700, 2000};
  const int n = sizes[seed % 6];
  s.nodes.reserve(n);
  for (int i = 0; i < n; ++i) {
    core::Node node;
    node.name = "n" + std::to_string(i + 1);
    node.cpus = 8 << pick(0, 3);
    node.sockets = 2;
    node.cores_per_socket = node.cpus / 2;
    node.real_memory_mb = int64_t(node.cpus) * 1000 * pick(1, 4);
    node.registered = true;
    const int kind = pick(0, 9);
    if (kind < 2)
      node.gres = "gpu:a100:4";
    else if (kind == 2)
      node.gres = "gpu:a100:2,gpu:v100:2";
    else if (kind == 3)
      node.gres = "gpu:1g.10gb:7";
    if (!node.gres.empty()) node.gres_total = core::parse_gres_list(node.gres);
    node.features = {pick(0, 2) == 0 ? "fast" : "slow"};
    if (pick(0, 40) == 0) node.down = true;
    if (pick(0, 40) == 0) node.drain = true;
    s.nodes.push_back(std::move(node));
  }
  sched::PartitionView batch{"batch", {}, "", -1, -1, 1};
  for (int i = 0; i < n; ++i) batch.nodes.push_back(i);
  s.partitions.push_back(batch);
  const bool two = pick(0, 2) == 0;
  if (two) {
    sched::PartitionView part{"part2", {}, "", pick(0, 1) ? 240 : -1, -1, pick(1, 2)};
    for (int i = 0; i < n; ++i)
      if (i % 3 != 0) part.nodes.push_back(i);
    s.partitions.push_back(part);
  }
  const int64_t now = 1'000'000;
  if (pick(0, 3) == 0) {
    sched::ReservationView r{"resv", now + 60 * pick(0, 300), 0, {}, pick(0, 3) == 0};
    r.end = r.start + 60 * pick(30, 600);
    for (int i = 0; i < n; ++i)
      if (pick(0, 9) == 0) r.nodes.push_back(i);
    s.reservations.push_back(r);
  }
  s.params.policy = static_cast<sched::Policy>(seed % 3);
  if (pick(0, 4) == 0) s.params.bf_window_s = 60 * pick(60, 2000);

  // Running jobs: each node about full, ends staggered.
  uint64_t id = 1;
  const int pending = pick(n / 2, 3 * n + 50);
  s.jobs.reserve(static_cast<size_t>(n) * 8 + pending);
  for (int i = 0; i < n; ++i) {
    core::Node& node = s.nodes[i];
    if (node.down) continue;
    int gpus_left = 0;
    for (const auto& g : node.gres_total) gpus_left += static_cast<int>(g.count);
    while (node.alloc_cpus < node.cpus - 2 && pick(0, 5) != 0) {
      core::Job j;
      j.id = id++;
      j.partition = "batch";
      const int cpus = std::min(node.cpus - node.alloc_cpus, 1 << pick(0, 4));
      const int64_t mem = std::min<int64_t>(node.real_memory_mb - node.alloc_mem_mb, cpus * 500);
      j.time_limit_min = pick(0, 20) == 0 ? -1 : pick(5, 600);
      j.start_time = now - 60 * pick(0, 60);
      core::NodeAlloc a(node.name, cpus, mem, 1);
      if (gpus_left > 0 && pick(0, 1)) {
        const auto& g = node.gres_total[pick(0, static_cast<int>(node.gres_total.size()) - 1)];
        int used = 0;
        for (const auto& u : node.gres_used)
          if (u.name == g.name && u.type == g.type) used += static_cast<int>(u.count);
        if (used < g.count) {
          a.gres = {{g.name, g.type, 1}};
          --gpus_left;
        }
      }
      j.state = core::JobState::Running;
      j.alloc = {a};
      node.charge(a);
      s.run_for.push_back(0);
      s.jobs.push_back(std::move(j));
    }
  }
  // CPU ids and GPU indices of running jobs are left to the engine's defaults (none).
  sched::ClusterView nodes_only;  // what can_ever_fit reads
  for (auto& node : s.nodes) nodes_only.nodes.push_back(&node);
  nodes_only.def_mem_per_cpu_mb = 500;
  for (int i = 0; i < pending; ++i) {
    core::Job j;
    j.id = id;
    j.partition = "batch";
    j.submit_time = now - pending + i;
    j.priority = 1'000'000 - static_cast<uint32_t>(pick(0, 3) == 0 ? pick(0, 100) * 100 : i);
    static const int64_t limits[] = {10, 30, 60, 120, 240, 480, 1440};
    j.time_limit_min = pick(0, 30) == 0 ? -1 : limits[pick(0, 6)];
    core::JobSpec& sp = j.spec;
    sp.mem_per_cpu_mb = 500;
    switch (pick(0, 13)) {
      case 0:
      case 1:
      case 2:
        sp.cpus_per_task = 1 << pick(0, 3);
        break;
      case 3:
        sp.ntasks = pick(2, 40);
        break;
      case 4:
        sp.nodes_min = pick(1, 6);
        sp.nodes_set = true;
        sp.ntasks = sp.nodes_min * pick(1, 4);
        if (pick(0, 1)) sp.nodes_max = sp.nodes_min + pick(0, 2);
        break;
      case 5:
        sp.nodes_min = pick(2, 8);
        sp.nodes_set = true;
        sp.ntasks_per_node = 4 << pick(0, 2);
        sp.ntasks = sp.nodes_min * sp.ntasks_per_node;
        break;
      case 6:
        sp.exclusive = true;
        sp.nodes_min = pick(1, 3);
        sp.nodes_set = true;
        sp.ntasks = sp.nodes_min;
        break;
      case 7:
        sp.gpus_per_node = std::to_string(pick(1, 4));
        sp.cpus_per_task = pick(1, 4);
        break;
      case 8:
        sp.gres = pick(0, 1) ? "gpu:v100:1" : "gpu:a100:2";
        break;
      case 9:
        sp.nodes_min = pick(1, 3);
        sp.nodes_set = true;
        sp.ntasks = sp.nodes_min * 2;
        sp.gpus_per_task = "1";
        break;
      case 10:
        sp.gpus = std::to_string(pick(1, 6));
        sp.mem_per_gpu_mb = 1000;
        sp.ntasks = pick(1, 3);
        break;
      case 11:
        sp.constraint = pick(0, 1) ? "fast" : "slow";
        sp.ntasks = pick(1, 8);
        break;
      case 12:
        sp.exclude = "n" + std::to_string(pick(1, n));
        sp.mem_per_node_mb = pick(0, 3) == 0 ? 0 : 1000 * pick(1, 8);
        sp.mem_per_cpu_mb = -1;
        break;
      default:
        if (pick(0, 3) == 0) {
          sp.nodelist = "n" + std::to_string(pick(1, n));
        } else {
          sp.mem_per_cpu_mb = -1;  // DefMemPerCPU
          sp.ntasks = pick(1, 4);
        }
        break;
    }
    if (two && pick(0, 3) == 0) {
      if (pick(0, 1))
        sp.partitions = {"part2", "batch"};
      else
        j.partition = "part2";
    }
    if (!s.reservations.empty() && pick(0, 15) == 0) sp.reservation = "resv";
    const sched::PartitionView* part = &s.partitions[0];
    for (const auto& p : s.partitions)
      if (p.name == j.partition) part = &p;
    if (!sched::can_ever_fit(sp, *part, nodes_only)) continue;  // refused at submission
    ++id;
    s.run_for.push_back(j.time_limit_min < 0 ? 60 * pick(10, 3000)
                                             : j.time_limit_min * 60 * pick(20, 100) / 100);
    s.jobs.push_back(std::move(j));
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned first = 0, last = 47;
  int passes = 3;
  bool work = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-work") {
      work = false;
    } else if (a == "--seeds" && i + 1 < argc) {
      const std::string v = argv[++i];
      const size_t colon = v.find(':');
      first = static_cast<unsigned>(std::stoul(v.substr(0, colon)));
      last = colon == std::string::npos ? first
                                        : static_cast<unsigned>(std::stoul(v.substr(colon + 1)));
    } else if (a == "--passes" && i + 1 < argc) {
      passes = std::stoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: decision_dump [--seeds FIRST:LAST] [--passes P] [--no-work]\n");
      return 2;
    }
  }
  for (unsigned seed = first; seed <= last; ++seed) {
    Scenario s = build(seed);
    auto engine = sched::make_scheduler();
    int64_t now = 1'000'000;
    for (int pass = 0; pass < passes; ++pass) {
      // Each pass without the plans of the ones before (the engine's plan memory), as the
      // dump has always been made, so that dumps of different engines compare.
      engine->plans().clear();
      const sched::Decisions d = engine->schedule(s.view(), now);
      std::printf("# seed %u pass %d now %lld\n%s", seed, pass, static_cast<long long>(now),
                  text(d, work).c_str());
      for (const auto& st : d.starts) s.run(s.jobs[st.job_id - 1], now, st.alloc);
      // Time moves to the next job end (running jobs from the start end with their limit).
      int64_t next = INT64_MAX;
      auto end_of = [&](const core::Job& j) {
        const int64_t run = s.run_for[j.id - 1];
        if (run > 0) return j.start_time + run;
        return j.time_limit_min < 0 ? INT64_MAX : j.start_time + j.time_limit_min * 60;
      };
      for (const auto& j : s.jobs)
        if (j.state == core::JobState::Running) next = std::min(next, end_of(j));
      if (next == INT64_MAX) break;
      now = std::max(now + 1, next);
      for (auto& j : s.jobs)
        if (j.state == core::JobState::Running && end_of(j) <= now) s.finish(j);
    }
  }
  return 0;
}
