#include "ctld/step_layout.hpp"

#include <algorithm>
#include <set>

#include "core/hostlist.hpp"

namespace drover::ctld {

namespace {
// The CPU ids a job holds on a node (older records may have counts only: number them).
std::vector<uint16_t> job_cpu_ids(const core::NodeAlloc& a) {
  if (!a.cpu_ids.empty()) return a.cpu_ids;
  std::vector<uint16_t> ids;
  for (int i = 0; i < a.cpus; ++i) ids.push_back(static_cast<uint16_t>(i));
  return ids;
}
}  // namespace

StepLayout layout_step(const std::vector<core::NodeAlloc>& job_alloc,
                       const std::vector<core::Step>& steps, const StepRequest& req) {
  StepLayout out;
  const int cpt = std::max(1, req.cpus_per_task);
  std::vector<std::string> wanted, excluded;
  try {
    if (!req.nodelist.empty()) wanted = core::expand_hostlist(req.nodelist);
    if (!req.exclude.empty()) excluded = core::expand_hostlist(req.exclude);
  } catch (const std::exception&) {
    out.error = "Invalid node name specified";
    return out;
  }
  for (const auto& w : wanted)
    if (std::none_of(job_alloc.begin(), job_alloc.end(),
                     [&](const core::NodeAlloc& a) { return a.node == w; })) {
      out.error = "Requested node configuration is not available";
      return out;
    }

  struct Candidate {
    const core::NodeAlloc* job;
    std::vector<uint16_t> free_ids;
    int total_cap, free_cap;
    bool required;
  };
  std::vector<Candidate> cands;
  for (const auto& a : job_alloc) {
    if (std::find(excluded.begin(), excluded.end(), a.node) != excluded.end()) continue;
    std::vector<uint16_t> ids = job_cpu_ids(a);
    if (!req.overlap) {
      std::set<uint16_t> busy;
      for (const auto& s : steps) {
        if (s.state != core::JobState::Running || s.overlap) continue;
        for (const auto& sa : s.alloc)
          if (sa.node == a.node) busy.insert(sa.cpu_ids.begin(), sa.cpu_ids.end());
      }
      std::erase_if(ids, [&](uint16_t id) { return busy.count(id) > 0; });
    }
    const bool required = std::find(wanted.begin(), wanted.end(), a.node) != wanted.end();
    int total = static_cast<int>(job_cpu_ids(a).size()) / cpt;
    int free_cap = static_cast<int>(ids.size()) / cpt;
    if (req.overcommit) total = free_cap = 1 << 20;  // no CPU count limits the tasks
    if (req.mem_mb > a.mem_mb && a.mem_mb > 0) {
      out.error = "Memory required by task is not available";
      return out;
    }
    cands.push_back({&a, ids, total, free_cap, required});
  }
  const int avail_nodes = static_cast<int>(cands.size());
  int nodes = req.nodes_min;
  int ntasks = req.ntasks;
  if (nodes <= 0) {
    if (ntasks > 0 && req.ntasks_per_node > 0)
      nodes = (ntasks + req.ntasks_per_node - 1) / req.ntasks_per_node;
    else if (ntasks > 0)
      nodes = std::min(ntasks, avail_nodes);
    else
      nodes = avail_nodes;
    nodes = std::max<int>(nodes, static_cast<int>(wanted.size()));
  }
  if (ntasks <= 0) ntasks = req.ntasks_per_node > 0 ? nodes * req.ntasks_per_node : nodes;
  if (nodes > static_cast<int>(job_alloc.size())) {
    out.error = "Only allocated " + std::to_string(job_alloc.size()) + " nodes asked for " +
                std::to_string(nodes);
    out.plain = true;
    return out;
  }
  if (nodes > avail_nodes || static_cast<int>(wanted.size()) > nodes) {
    out.error = "Requested node configuration is not available";
    return out;
  }
  if (ntasks < nodes) {
    out.error = "Requested node configuration is not available";
    return out;
  }

  // Required nodes first, then the rest in allocation order; on each pass a node must hold
  // one task at least. First against everything the job holds (can it ever run?), then
  // against what other steps leave free now.
  auto choose = [&](bool now, std::vector<int>& counts, std::vector<int>& chosen) {
    chosen.clear();
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < avail_nodes && static_cast<int>(chosen.size()) < nodes; ++i) {
        const Candidate& c = cands[static_cast<size_t>(i)];
        if ((pass == 0) != c.required) continue;
        const int cap = now ? c.free_cap : c.total_cap;
        if (cap >= std::max(1, req.ntasks_per_node)) chosen.push_back(i);
      }
    if (static_cast<int>(chosen.size()) < nodes) return false;
    std::sort(chosen.begin(), chosen.end());
    counts.assign(chosen.size(), 0);
    if (req.ntasks_per_node > 0) {
      if (ntasks > nodes * req.ntasks_per_node) return false;
      int left = ntasks;
      for (size_t k = 0; k < chosen.size(); ++k) {
        counts[k] = std::min(req.ntasks_per_node, left - static_cast<int>(chosen.size() - k - 1));
        left -= counts[k];
      }
      return left == 0;
    }
    int left = ntasks;
    for (auto& n : counts) n = 1, --left;
    while (left > 0) {
      bool placed = false;
      for (size_t k = 0; k < chosen.size() && left > 0; ++k) {
        const Candidate& c = cands[static_cast<size_t>(chosen[k])];
        if (counts[k] < (now ? c.free_cap : c.total_cap)) {
          ++counts[k];
          --left;
          placed = true;
        }
      }
      if (!placed) return false;
    }
    return true;
  };
  std::vector<int> counts, chosen;
  if (!choose(false, counts, chosen)) {
    out.error = "More processors requested than permitted";
    return out;
  }
  if (!choose(true, counts, chosen)) {
    out.error = "Requested nodes are busy";
    out.busy = true;
    return out;
  }

  out.ntasks = ntasks;
  out.tasks.assign(chosen.size(), {});
  if (req.cyclic) {
    std::vector<int> left = counts;
    uint32_t id = 0;
    while (id < static_cast<uint32_t>(ntasks))
      for (size_t k = 0; k < chosen.size(); ++k)
        if (left[k] > 0) {
          --left[k];
          out.tasks[k].push_back(id++);
        }
  } else {
    uint32_t id = 0;
    for (size_t k = 0; k < chosen.size(); ++k)
      for (int t = 0; t < counts[k]; ++t) out.tasks[k].push_back(id++);
  }
  for (size_t k = 0; k < chosen.size(); ++k) {
    const Candidate& c = cands[static_cast<size_t>(chosen[k])];
    const int cpus =
        req.exact && !req.overcommit ? counts[k] * cpt : static_cast<int>(c.free_ids.size());
    core::NodeAlloc a(c.job->node, cpus, req.mem_mb, counts[k], c.job->gres);
    a.cpu_ids.assign(c.free_ids.begin(), c.free_ids.begin() + a.cpus);
    a.gpu_ids = c.job->gpu_ids;
    out.alloc.push_back(std::move(a));
  }
  return out;
}

}  // namespace drover::ctld
