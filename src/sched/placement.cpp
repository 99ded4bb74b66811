#include <algorithm>
#include <climits>
#include <optional>
#include <set>

#include "core/constraint.hpp"
#include "core/gres.hpp"
#include "core/hostlist.hpp"
#include "sched/scheduler.hpp"

namespace drover::sched {
namespace {

// Memory a job needs on a node where it holds `cpus` CPUs; 0 means "the whole node".
int64_t mem_needed(const core::JobSpec& spec, const ClusterView& view, const core::Node& node,
                   int cpus) {
  if (spec.exclusive) return node.real_memory_mb;
  if (spec.mem_per_node_mb > 0) return spec.mem_per_node_mb;
  if (spec.mem_per_node_mb == 0) return node.real_memory_mb;
  if (spec.mem_per_cpu_mb >= 0) return spec.mem_per_cpu_mb * cpus;
  if (view.def_mem_per_cpu_mb > 0) return view.def_mem_per_cpu_mb * cpus;
  if (view.def_mem_per_node_mb > 0) return view.def_mem_per_node_mb;
  return node.real_memory_mb;
}

// -w / -x / -C: which nodes a job may use at all, and which it must use.
struct NodeFilter {
  std::set<std::string> required, excluded;
  core::Constraint constraint;

  explicit NodeFilter(const core::JobSpec& spec) {
    // The controller validated these at submission; a bad one here matches nothing.
    try {
      if (!spec.nodelist.empty())
        for (auto& n : core::expand_hostlist(spec.nodelist)) required.insert(std::move(n));
      if (!spec.exclude.empty())
        for (auto& n : core::expand_hostlist(spec.exclude)) excluded.insert(std::move(n));
      if (!spec.constraint.empty()) constraint = core::Constraint::parse(spec.constraint);
    } catch (const std::exception&) {
      required.insert("");
    }
  }
  bool allows(const core::Node& n) const {
    if (excluded.count(n.name)) return false;
    if (constraint.empty()) return true;
    return constraint.matches(std::set<std::string>(n.features.begin(), n.features.end()));
  }
};

// --gres / --gpus-per-node (per node), --gpus-per-task, --gpus (per job), --mem-per-gpu.
struct GresRequest {
  std::vector<core::GresCount> per_node;
  core::GresCount per_task{"gpu", "", 0}, per_job{"gpu", "", 0};
  bool valid = true;

  explicit GresRequest(const core::JobSpec& spec) {
    try {
      if (!spec.gres.empty()) per_node = core::parse_gres_list(spec.gres);
      if (!spec.gpus_per_node.empty())
        per_node.push_back(core::parse_gpu_count(spec.gpus_per_node));
      if (!spec.gpus_per_task.empty()) per_task = core::parse_gpu_count(spec.gpus_per_task);
      if (!spec.gpus.empty()) per_job = core::parse_gpu_count(spec.gpus);
    } catch (const std::exception&) {
      valid = false;
    }
  }
  bool empty() const { return per_node.empty() && per_task.count == 0 && per_job.count == 0; }
  // Tasks a node can host as far as its free GRES go (INT32_MAX: no limit from GRES).
  int task_cap(const core::Node& n, const std::vector<core::GresCount>& used) const {
    if (!valid) return 0;
    std::vector<core::GresCount> after = used;
    for (const auto& g : per_node) {
      if (core::gres_free(n.gres_total, after, g) < g.count) return 0;
      core::gres_take(n.gres_total, after, g, g.count);
    }
    if (per_job.count > 0 && core::gres_free(n.gres_total, after, per_job) == 0) return 0;
    if (per_task.count == 0) return INT32_MAX;
    return static_cast<int>(core::gres_free(n.gres_total, after, per_task) / per_task.count);
  }
  // GPUs a node's share of the job uses (for --mem-per-gpu).
  int64_t gpus_on(int tasks, int64_t job_share) const {
    int64_t n = per_task.count * tasks + job_share;
    for (const auto& g : per_node)
      if (g.name == "gpu") n += g.count;
    return n;
  }
};

}  // namespace

bool place(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view,
           bool assume_idle, std::vector<core::NodeAlloc>& out) {
  out.clear();
  const int cpt = std::max(1, spec.cpus_per_task);
  const bool filtered = !spec.nodelist.empty() || !spec.exclude.empty() || !spec.constraint.empty();
  std::optional<NodeFilter> filter;
  if (filtered) filter.emplace(spec);
  const int required = filter ? static_cast<int>(filter->required.size()) : 0;
  const int nmin = std::max({1, spec.nodes_min, required});
  int nmax = spec.nodes_max > 0 ? spec.nodes_max : (spec.nodes_set ? nmin : spec.ntasks);
  nmax = std::max(nmax, nmin);
  if (part.max_nodes > 0 && nmin > part.max_nodes) return false;
  if (part.max_nodes > 0) nmax = std::min(nmax, part.max_nodes);
  const int ntasks = std::max(spec.ntasks, nmin);

  // How many tasks each candidate node can take right now.
  struct Candidate {
    int index;
    int capacity;
  };
  std::vector<Candidate> cands;
  int required_found = 0;
  const std::optional<GresRequest> gres =
      spec.asks_for_gres() ? std::optional<GresRequest>(GresRequest(spec)) : std::nullopt;
  const std::vector<core::GresCount> no_gres;
  auto used_gres = [&](const core::Node& n) -> const std::vector<core::GresCount>& {
    return assume_idle ? no_gres : n.gres_used;
  };
  auto mem_for = [&](const core::Node& n, int tasks) {
    if (gres && spec.mem_per_gpu_mb > 0)
      return spec.mem_per_gpu_mb *
             std::max<int64_t>(
                 1,
                 gres->gpus_on(tasks, std::min<int64_t>(gres->per_job.count,
                                                        core::gres_free(n.gres_total, used_gres(n),
                                                                        gres->per_job))));
    return mem_needed(spec, view, n, tasks * cpt);
  };
  for (int idx : part.nodes) {
    const core::Node& n = *view.nodes[idx];
    if (!n.schedulable()) continue;
    if (filter && !filter->allows(n)) continue;
    int free_cpus = assume_idle ? n.cpus : n.cpus - n.alloc_cpus;
    int64_t free_mem = assume_idle ? n.real_memory_mb : n.real_memory_mb - n.alloc_mem_mb;
    if (spec.exclusive && !assume_idle && (n.alloc_cpus > 0 || n.running_jobs > 0)) continue;
    int cap = free_cpus / cpt;
    if (spec.ntasks_per_node > 0) cap = std::min(cap, spec.ntasks_per_node);
    if (gres) cap = std::min(cap, gres->task_cap(n, used_gres(n)));
    // Shrink the task count until the memory for it fits.
    while (cap > 0 && mem_for(n, cap) > free_mem) --cap;
    if (cap <= 0) continue;
    if (filter && filter->required.count(n.name)) {
      // Required nodes go first so the block distribution always uses them.
      cands.insert(cands.begin() + required_found, {idx, cap});
      ++required_found;
    } else {
      cands.push_back({idx, cap});
    }
  }
  if (required_found < required) return false;
  if (static_cast<int>(cands.size()) < nmin) return false;

  // Block distribution: fill nodes in order, but make sure the first nmin nodes get a task.
  std::vector<int> tasks(cands.size(), 0);
  int remaining = ntasks;
  for (int i = 0; i < nmin; ++i) {
    tasks[i] = 1;
    --remaining;
  }
  int used = nmin;
  for (size_t i = 0; i < cands.size() && remaining > 0; ++i) {
    if (tasks[i] == 0) {
      if (used >= nmax) break;
      ++used;
    }
    int add = std::min(remaining, cands[i].capacity - tasks[i]);
    tasks[i] += add;
    remaining -= add;
  }
  if (remaining > 0) return false;
  int64_t job_gpus_left = gres ? gres->per_job.count : 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (tasks[i] == 0) continue;
    const core::Node& n = *view.nodes[cands[i].index];
    int cpus = spec.exclusive ? n.cpus : tasks[i] * cpt;
    core::NodeAlloc a{n.name, cpus, mem_needed(spec, view, n, cpus), tasks[i], {}};
    if (gres) {
      // Charge what this node's share holds, against a copy of what is in use there.
      std::vector<core::GresCount> used = used_gres(n);
      for (const auto& g : gres->per_node) core::gres_take(n.gres_total, used, g, g.count, &a.gres);
      if (gres->per_task.count > 0)
        core::gres_take(n.gres_total, used, gres->per_task, gres->per_task.count * tasks[i],
                        &a.gres);
      int64_t share = 0;
      if (job_gpus_left > 0) {
        share = std::min(job_gpus_left, core::gres_free(n.gres_total, used, gres->per_job));
        core::gres_take(n.gres_total, used, gres->per_job, share, &a.gres);
        job_gpus_left -= share;
      }
      if (spec.mem_per_gpu_mb > 0)
        a.mem_mb = spec.mem_per_gpu_mb * std::max<int64_t>(1, gres->gpus_on(tasks[i], share));
    }
    out.push_back(std::move(a));
  }
  if (job_gpus_left > 0) {
    out.clear();
    return false;
  }
  return true;
}

bool can_ever_fit(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view) {
  // Nodes that are down still count: they may come back.
  ClusterView all = view;
  std::vector<core::Node> copies;
  copies.reserve(view.nodes.size());
  for (const core::Node* n : view.nodes) {
    copies.push_back(*n);
    copies.back().registered = true;
    copies.back().down = false;
    copies.back().drain = false;
  }
  for (size_t i = 0; i < copies.size(); ++i) all.nodes[i] = &copies[i];
  std::vector<core::NodeAlloc> ignored;
  return place(spec, part, all, true, ignored);
}

}  // namespace drover::sched
