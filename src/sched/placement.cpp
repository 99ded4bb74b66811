#include <algorithm>
#include <optional>

#include <set>

#include "core/constraint.hpp"
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
  for (int idx : part.nodes) {
    const core::Node& n = *view.nodes[idx];
    if (!n.schedulable()) continue;
    if (filter && !filter->allows(n)) continue;
    int free_cpus = assume_idle ? n.cpus : n.cpus - n.alloc_cpus;
    int64_t free_mem = assume_idle ? n.real_memory_mb : n.real_memory_mb - n.alloc_mem_mb;
    if (spec.exclusive && !assume_idle && (n.alloc_cpus > 0 || n.running_jobs > 0)) continue;
    int cap = free_cpus / cpt;
    if (spec.ntasks_per_node > 0) cap = std::min(cap, spec.ntasks_per_node);
    // Shrink the task count until the memory for it fits.
    while (cap > 0 && mem_needed(spec, view, n, cap * cpt) > free_mem) --cap;
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
  for (size_t i = 0; i < cands.size(); ++i) {
    if (tasks[i] == 0) continue;
    const core::Node& n = *view.nodes[cands[i].index];
    int cpus = spec.exclusive ? n.cpus : tasks[i] * cpt;
    out.push_back({n.name, cpus, mem_needed(spec, view, n, cpus), tasks[i]});
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
