#pragma once
// A small cluster for engine tests: nodes, partitions and jobs the tests build by hand, and
// a pass that applies its starts as the controller would.
#include <map>
#include <string>
#include <vector>

#include "sched/scheduler.hpp"

namespace drover::sched::test_cluster {

struct Cluster {
  std::vector<core::Node> nodes;
  std::vector<core::Job> jobs;  // reserve()d up front: views point into it
  std::vector<PartitionView> partitions;
  SchedulerParams params;
  std::vector<ReservationView> reservations;
  PreemptionView preemption;

  Cluster() { jobs.reserve(4096); }

  void add_nodes(int n, int cpus, int64_t mem, const std::string& gres = "",
                 const std::string& prefix = "n") {
    for (int i = 0; i < n; ++i) {
      core::Node node;
      node.name = prefix + std::to_string(nodes.size() + 1);
      node.cpus = cpus;
      node.real_memory_mb = mem;
      node.registered = true;
      node.gres = gres;
      if (!gres.empty()) node.gres_total = core::parse_gres_list(gres);
      nodes.push_back(node);
    }
  }
  int index_of(const std::string& name) const {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].name == name) return static_cast<int>(i);
    return -1;
  }
  void one_partition() {
    PartitionView p{"batch", {}, "", -1, -1, 1};
    for (size_t i = 0; i < nodes.size(); ++i) p.nodes.push_back(static_cast<int>(i));
    partitions = {p};
  }
  // Priorities fall with submission order, as priority/basic gives them.
  core::Job& add_job(int ntasks, int64_t minutes, int cpt = 1, int nodes_min = 1,
                     bool nodes_set = false) {
    core::Job j;
    j.id = jobs.size() + 1;
    j.partition = partitions.empty() ? "batch" : partitions.front().name;
    j.submit_time = static_cast<int64_t>(j.id);
    j.priority = 1000000 - static_cast<uint32_t>(j.id);
    j.spec.ntasks = ntasks;
    j.spec.cpus_per_task = cpt;
    j.spec.mem_per_cpu_mb = 1;
    j.spec.nodes_min = nodes_min;
    j.spec.nodes_set = nodes_set;
    j.time_limit_min = minutes;
    jobs.push_back(j);
    return jobs.back();
  }
  // Marks a job running from `start` on the given allocation and charges its nodes.
  void run(core::Job& j, int64_t start, const std::vector<core::NodeAlloc>& alloc) {
    j.state = core::JobState::Running;
    j.start_time = start;
    j.alloc = alloc;
    for (const auto& a : alloc)
      for (auto& n : nodes)
        if (n.name == a.node) n.charge(a);
  }
  void finish(core::Job& j) {
    for (const auto& a : j.alloc)
      for (auto& n : nodes)
        if (n.name == a.node) n.discharge(a);
    j.state = core::JobState::Completed;
    j.alloc.clear();
  }
  ClusterView view() {
    ClusterView v;
    for (auto& n : nodes) v.nodes.push_back(&n);
    v.partitions = partitions;
    for (auto& j : jobs) {
      if (j.state == core::JobState::Pending) v.pending.push_back(&j);
      if (j.state == core::JobState::Running) v.running.push_back(&j);
    }
    v.params = params;
    v.reservations = reservations;
    v.preemption = preemption;
    return v;
  }
  // As the controller applies a pass: starts (a started job's plan is forgotten); the engine
  // remembers pending jobs' plans for the next pass.
  std::unique_ptr<Scheduler> engine = make_scheduler();
  Decisions pass(int64_t now) {
    auto d = engine->schedule(view(), now);
    for (const auto& s : d.starts) {
      run(jobs[s.job_id - 1], now, s.alloc);
      engine->plans().forget(s.job_id);
    }
    return d;
  }
};

inline std::map<uint64_t, std::string> reasons(const Decisions& d) {
  std::map<uint64_t, std::string> out;
  for (const auto& r : d.reasons) out[r.job_id] = r.reason;
  return out;
}
inline std::map<uint64_t, int64_t> planned(const Decisions& d) {
  std::map<uint64_t, int64_t> out;
  for (const auto& p : d.planned) out[p.job_id] = p.start_time;
  return out;
}
inline std::vector<uint64_t> started(const Decisions& d) {
  std::vector<uint64_t> out;
  for (const auto& s : d.starts) out.push_back(s.job_id);
  return out;
}

}  // namespace drover::sched::test_cluster
