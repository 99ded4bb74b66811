#include "sched/request.hpp"

#include <algorithm>
#include <climits>

#include "core/hostlist.hpp"

namespace drover::sched {

Request Request::compile(const core::JobSpec& spec, const GresKinds& kinds,
                         int64_t def_mem_per_cpu_mb, int64_t def_mem_per_node_mb) {
  Request r;
  r.cpt = std::max(1, spec.cpus_per_task);
  r.exclusive = spec.exclusive;
  r.ntasks_per_node = spec.ntasks_per_node;
  r.nodes_set = spec.nodes_set;

  // The controller validated these options at submission; one that fails to parse here
  // makes the request unsatisfiable rather than silently ignored.
  try {
    if (!spec.nodelist.empty()) r.required = core::expand_hostlist(spec.nodelist);
    if (!spec.exclude.empty())
      for (auto& n : core::expand_hostlist(spec.exclude)) r.excluded.insert(std::move(n));
    if (!spec.constraint.empty()) r.constraint = core::Constraint::parse(spec.constraint);
  } catch (const std::exception&) {
    r.valid = false;
  }
  r.filtered = !spec.nodelist.empty() || !spec.exclude.empty() || !spec.constraint.empty();
  if (r.filtered) r.filter_key = spec.nodelist + '\x1f' + spec.exclude + '\x1f' + spec.constraint;

  const int required = static_cast<int>(r.required.size());
  r.nmin = std::max({1, spec.nodes_min, required});
  int nmax = spec.nodes_max > 0 ? spec.nodes_max : (spec.nodes_set ? r.nmin : spec.ntasks);
  r.nmax = std::max(nmax, r.nmin);
  r.ntasks = std::max(spec.ntasks, r.nmin);

  for (size_t k = 0; k < kinds.size(); ++k)
    if (kinds.kind(static_cast<int>(k)).first == "gpu") r.gpu_mask |= 1u << k;
  auto gres_of = [&](const core::GresCount& g) {
    Gres out{kinds.matching(g), static_cast<int32_t>(g.count)};
    if (out.mask == 0 && g.count > 0) r.valid = false;  // no node has it
    return out;
  };
  try {
    if (!spec.gres.empty())
      for (const auto& g : core::parse_gres_list(spec.gres))
        if (g.count > 0) r.per_node.push_back(gres_of(g));
    if (!spec.gpus_per_node.empty())
      r.per_node.push_back(gres_of(core::parse_gpu_count(spec.gpus_per_node)));
    if (!spec.gpus_per_task.empty())
      r.per_task = gres_of(core::parse_gpu_count(spec.gpus_per_task));
    if (!spec.gpus.empty()) {
      r.per_job = gres_of(core::parse_gpu_count(spec.gpus));
      // Each node takes one of them at least: a node count given as a range stops there
      // (Slurm; without -N the tasks may spread wider, on nodes given none).
      if (spec.nodes_max > 0) r.nmax = std::max(r.nmin, std::min(r.nmax, r.per_job.count));
    }
  } catch (const std::exception&) {
    r.valid = false;
  }

  if (spec.exclusive || spec.mem_per_node_mb == 0) {
    r.mem = Mem::WholeNode;
  } else if (spec.mem_per_gpu_mb > 0 && spec.asks_for_gres()) {
    r.mem = Mem::PerGpu;
    r.mem_value = spec.mem_per_gpu_mb;
  } else if (spec.mem_per_node_mb > 0) {
    r.mem = Mem::PerNode;
    r.mem_value = spec.mem_per_node_mb;
  } else if (spec.mem_per_cpu_mb >= 0) {
    r.mem = Mem::PerCpu;
    r.mem_value = spec.mem_per_cpu_mb;
  } else if (def_mem_per_cpu_mb > 0) {
    r.mem = Mem::PerCpu;
    r.mem_value = def_mem_per_cpu_mb;
  } else if (def_mem_per_node_mb > 0) {
    r.mem = Mem::PerNode;
    r.mem_value = def_mem_per_node_mb;
  }

  r.kinds_ = static_cast<int>(kinds.size());
  auto one_kind = [](uint32_t mask) { return mask != 0 && (mask & (mask - 1)) == 0; };
  r.has_floor_ = r.valid && r.mem != Mem::PerGpu && r.per_job.count <= 0 &&
                 (r.per_task.count <= 0 || one_kind(r.per_task.mask));
  for (const auto& g : r.per_node)
    if (!one_kind(g.mask) || g.count < 0) r.has_floor_ = false;
  if (r.has_floor_ && r.make_floor(r.min_tasks_per_node(), r.floor_)) {
    r.floor_tasks_ = r.min_tasks_per_node();
  } else {
    r.floor_tasks_ = 0;
  }

  // What a node is asked to hold (tasks_fit, the floor and the tasks every node must take),
  // then how many nodes and tasks.
  std::string& need = r.node_need_key;
  need.reserve(64);
  auto add = [](std::string& key, int64_t v) {
    key += std::to_string(v);
    key += ',';
  };
  for (int64_t v : {int64_t(r.cpt), int64_t(r.min_tasks_per_node()), int64_t(r.ntasks_per_node),
                    int64_t(r.exclusive), int64_t(r.mem), r.mem_value, int64_t(r.per_task.mask),
                    int64_t(r.per_task.count), int64_t(r.per_job.mask), int64_t(r.per_job.count),
                    int64_t(r.valid)})
    add(need, v);
  for (const auto& g : r.per_node) {
    add(need, g.mask);
    add(need, g.count);
  }
  r.shape_key = need;
  for (int64_t v : {int64_t(r.ntasks), int64_t(r.nmin), int64_t(r.nmax)}) add(r.shape_key, v);
  r.exact_starts = r.kept_floor(r.min_tasks_per_node()) != nullptr;
  if (!r.exact_starts) need = r.shape_key;
  return r;
}

bool Request::allows(const core::Node& n) const {
  if (!filtered) return true;
  if (excluded.count(n.name)) return false;
  if (constraint.empty()) return true;
  // Slurm matches active features: an available one may need a reboot first.
  return constraint.matches(
      std::set<std::string>(n.active_features.begin(), n.active_features.end()));
}

bool Request::requires_node(const std::string& name) const {
  return std::find(required.begin(), required.end(), name) != required.end();
}

int64_t Request::mem_for(const NodeSlot& slot, int tasks, int64_t gpus_here) const {
  switch (mem) {
    case Mem::WholeNode:
      return slot.total.mem_mb;
    case Mem::PerNode:
      return mem_value;
    case Mem::PerCpu:
      return mem_value * tasks * cpt;
    case Mem::PerGpu:
      return mem_value * std::max<int64_t>(1, gpus_here);
  }
  return slot.total.mem_mb;
}

namespace {
// Takes `count` from the kinds in `mask` (lowest kind first) out of `from`, into `into`.
void take(Amount& from, Amount& into, uint32_t mask, int32_t count) {
  for (int k = 0; mask != 0 && count > 0; ++k, mask >>= 1) {
    if (!(mask & 1u)) continue;
    const int32_t n = std::min(count, from.gres[k]);
    from.gres[k] -= n;
    into.gres[k] += n;
    count -= n;
  }
}
// The job's GPUs (--gpus) that `free` still has once the per-node GPUs and the per-task GPUs
// of `tasks` tasks are taken.
int64_t job_gpus_left(const Request& req, Amount free, int tasks) {
  Amount ignored;
  for (const auto& g : req.per_node) take(free, ignored, g.mask, g.count);
  if (req.per_task.count > 0) take(free, ignored, req.per_task.mask, req.per_task.count * tasks);
  return free.gres_in(req.per_job.mask);
}
// Whether the node's whole capacity is free (--exclusive: nothing else may run there).
bool whole_node_free(const NodeSlot& slot, const Amount& free) {
  if (free.cpus < slot.total.cpus || free.mem_mb < slot.total.mem_mb) return false;
  for (int k = 0; k < kMaxGresKinds; ++k)
    if (free.gres[k] < slot.total.gres[k]) return false;
  return true;
}
}  // namespace

// Exactly what the placement takes, not tasks_fit's bound: a plan that the jobs after it were
// fitted around must still hold. With --mem-per-gpu that bound charges a node the memory of
// every GPU of the job it could take, more than a share with fewer of them uses; and the
// search (as Slurm's node filter) takes a node for a --gpus job only with one of its GPUs free,
// but a share given none of them holds without.
bool Request::holds(const NodeSlot& slot, const Amount& free, int tasks, int job_gpus) const {
  if (!valid || tasks <= 0) return false;
  if (ntasks_per_node > 0 && tasks > ntasks_per_node) return false;
  if (exclusive && !whole_node_free(slot, free)) return false;
  Amount left = free, taken;
  for (const auto& g : per_node) {
    if (left.gres_in(g.mask) < g.count) return false;
    take(left, taken, g.mask, g.count);
  }
  if (per_task.count > 0) {
    if (left.gres_in(per_task.mask) < int64_t{per_task.count} * tasks) return false;
    take(left, taken, per_task.mask, per_task.count * tasks);
  }
  if (job_gpus > 0 && left.gres_in(per_job.mask) < job_gpus) return false;
  const Amount use = usage(slot, free, tasks, job_gpus);
  return use.cpus <= free.cpus && use.mem_mb <= free.mem_mb;
}

int Request::tasks_fit(const NodeSlot& slot, const Amount& free) const {
  if (!valid) return 0;
  if (exclusive && !whole_node_free(slot, free)) return 0;
  int cap = cpt == 1 ? free.cpus : free.cpus / cpt;  // (a division is dear here)
  if (ntasks_per_node > 0) cap = std::min(cap, ntasks_per_node);
  if (cap <= 0) return 0;
  int64_t job_share = 0;
  if (!per_node.empty() || per_task.count > 0 || per_job.count > 0) {
    Amount after = free, taken;
    for (const auto& g : per_node) {
      if (after.gres_in(g.mask) < g.count) return 0;
      take(after, taken, g.mask, g.count);
    }
    if (per_job.count > 0) {
      job_share = std::min<int64_t>(per_job.count, after.gres_in(per_job.mask));
      if (job_share == 0) return 0;
    }
    if (per_task.count > 0)
      cap = std::min<int64_t>(cap, after.gres_in(per_task.mask) / per_task.count);
    if (cap <= 0) return 0;
  }
  switch (mem) {
    case Mem::WholeNode:
      if (free.mem_mb < slot.total.mem_mb) return 0;
      break;
    case Mem::PerNode:
      if (free.mem_mb < mem_value) return 0;
      break;
    case Mem::PerCpu:
      if (mem_value > 0) {
        const int64_t per_task = mem_value * cpt;
        cap = std::min<int64_t>(cap, per_task == 1 ? free.mem_mb : free.mem_mb / per_task);
      }
      break;
    case Mem::PerGpu: {
      int64_t node_gpus = 0;
      for (const auto& g : per_node)
        if (g.mask & gpu_mask) node_gpus += g.count;
      while (cap > 0 &&
             mem_for(slot, cap, node_gpus + per_task.count * cap + job_share) > free.mem_mb)
        --cap;
      break;
    }
  }
  return std::max(0, cap);
}

bool Request::make_floor(int min_tasks, Floor& out) const {
  if (!has_floor_ || min_tasks < 1) return false;
  if (ntasks_per_node > 0 && ntasks_per_node < min_tasks) return false;
  const int64_t m = min_tasks;
  constexpr int64_t kNone = Floor::kNone;
  std::array<int64_t, kMaxGresKinds> need;  // the first kinds_ in use
  std::fill_n(need.begin(), kinds_, kNone);
  out = Floor{};
  out.cpus = m * cpt;
  out.whole_node = exclusive;
  out.kinds = kinds_;
  std::array<int64_t, kMaxGresKinds> taken{};
  auto kind_of = [](uint32_t mask) { return __builtin_ctz(mask); };
  for (const auto& g : per_node) {
    const int k = kind_of(g.mask);
    taken[k] += g.count;
    need[k] = std::max(need[k], taken[k]);
  }
  if (per_task.count > 0) {
    const int k = kind_of(per_task.mask);
    need[k] = std::max(need[k], taken[k] + m * per_task.count);
  }
  switch (mem) {
    case Mem::WholeNode:
      out.whole_mem = true;
      break;
    case Mem::PerNode:
      out.mem_mb = mem_value;
      break;
    case Mem::PerCpu:
      if (mem_value > 0) out.mem_mb = m * mem_value * cpt;
      break;
    case Mem::PerGpu:
      return false;
  }
  for (int k = 0; k < kinds_; ++k)
    if (need[k] != kNone) {
      out.kind[out.gres_n] = static_cast<uint8_t>(k);
      out.gres[out.gres_n++] = need[k];
    }
  return true;
}

Amount Request::usage(const NodeSlot& slot, const Amount& free, int tasks, int job_gpus) const {
  Amount use;
  Amount left = free;
  for (const auto& g : per_node) take(left, use, g.mask, g.count);
  if (per_task.count > 0) take(left, use, per_task.mask, per_task.count * tasks);
  if (job_gpus > 0) take(left, use, per_job.mask, job_gpus);
  use.cpus = exclusive ? slot.total.cpus : tasks * cpt;
  use.mem_mb = exclusive ? slot.total.mem_mb : mem_for(slot, tasks, use.gres_in(gpu_mask));
  return use;
}

bool fitting_nodes(const Request& req, const std::vector<int>& nodes,
                   const std::vector<NodeSlot>& slots, bool assume_idle,
                   std::vector<Candidate>& out) {
  out.clear();
  size_t required_found = 0;
  for (int idx : nodes) {
    const NodeSlot& s = slots[idx];
    if (!assume_idle && !s.usable) continue;
    if (!req.allows(*s.node)) continue;
    const Amount& free = assume_idle ? s.total : s.free_now;
    const int cap = req.tasks_fit(s, free);
    if (cap <= 0) continue;
    if (!req.required.empty() && req.requires_node(s.node->name))
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(required_found++), {idx, free, cap});
    else
      out.push_back({idx, free, cap});
  }
  return required_found == req.required.size();
}

namespace {

// The shares of the nodes chosen (cands[chosen[c]] running tasks[c] tasks), with the job's
// GPUs (--gpus) spread as Slurm 22.05 spreads them: in node order, each node takes what it has
// while leaving one for each node after it, then what is still wanted goes in node order.
// With at least as many GPUs as nodes that is one on each node and the rest in node order
// (-n5 --gpus=2 over two nodes: one each); with fewer, the last nodes get one each (-n5
// --gpus=1: the second node's GPU, the first node none). False when the nodes do not hold
// them all.
bool shares_with_job_gpus(const Request& req, const std::vector<Candidate>& cands,
                          const std::vector<size_t>& chosen, const std::vector<int>& tasks,
                          std::vector<Share>& out) {
  out.clear();
  thread_local std::vector<int> avail, give;
  avail.assign(chosen.size(), 0);
  give.assign(chosen.size(), 0);
  int left = req.per_job.count;
  if (left > 0)
    for (size_t c = 0; c < chosen.size(); ++c)
      avail[c] = static_cast<int>(
          std::min<int64_t>(left, job_gpus_left(req, cands[chosen[c]].free, tasks[c])));
  const int nodes = static_cast<int>(chosen.size());
  for (int c = 0; c < nodes && left > 0; ++c) {
    const int leave = nodes - c - 1;
    give[c] = std::max(0, std::min(avail[c], left - leave));
    left -= give[c];
  }
  for (size_t c = 0; c < chosen.size() && left > 0; ++c) {
    const int more = std::min(left, avail[c] - give[c]);
    give[c] += more;
    left -= more;
  }
  if (left > 0) return false;
  for (size_t c = 0; c < chosen.size(); ++c) {
    const Candidate& cand = cands[chosen[c]];
    out.push_back({cand.slot, tasks[c], give[c], cand.free});
  }
  return true;
}

// The tasks not yet on the nodes chosen (`tasks`: what each has so far), in node order, each
// node up to what it holds. False when they do not all fit.
bool place_rest_in_node_order(const Request& req, const std::vector<Candidate>& cands,
                              const std::vector<size_t>& chosen, std::vector<int>& tasks) {
  int remaining = req.ntasks;
  for (int t : tasks) remaining -= t;
  for (size_t c = 0; c < chosen.size() && remaining > 0; ++c) {
    const int add = std::min(remaining, cands[chosen[c]].cap - tasks[c]);
    if (add > 0) tasks[c] += add, remaining -= add;
  }
  return remaining <= 0;
}

}  // namespace

bool select_in_node_order(const Request& req, const std::vector<Candidate>& cands,
                          std::vector<Share>& out) {
  out.clear();
  if (static_cast<int>(cands.size()) < req.nmin) return false;
  // Block distribution: the first nmin nodes get a task each, then fill in order.
  thread_local std::vector<int> tasks;  // (kept: this runs for most searches)
  tasks.assign(cands.size(), 0);
  int remaining = req.ntasks;
  for (int i = 0; i < req.nmin; ++i) {
    tasks[i] = 1;
    --remaining;
  }
  int used = req.nmin;
  for (size_t i = 0; i < cands.size() && remaining > 0; ++i) {
    if (tasks[i] == 0) {
      if (used >= req.nmax) break;
      ++used;
    }
    const int add = std::min(remaining, cands[i].cap - tasks[i]);
    tasks[i] += add;
    remaining -= add;
  }
  if (remaining > 0) return false;
  thread_local std::vector<size_t> chosen;
  thread_local std::vector<int> chosen_tasks;
  chosen.clear();
  chosen_tasks.clear();
  for (size_t i = 0; i < cands.size(); ++i)
    if (tasks[i] > 0) {
      chosen.push_back(i);
      chosen_tasks.push_back(tasks[i]);
    }
  return shares_with_job_gpus(req, cands, chosen, chosen_tasks, out);
}

namespace {

// GPUs per job (--gpus) that the nodes holding the tasks do not have: nodes in order, each
// taken while tasks or GPUs are still wanting, as Slurm adds nodes until the job's GPU count is
// met (every candidate has one of the job's GPUs, tasks_fit sees to that), at most one node per
// task (observed: -n3 --gpus=5 on idle nodes of two GPUs each takes three nodes, a task and
// 2, 2 and 1 GPUs each); then a task on each and the rest in node order.
bool select_for_job_gpus(const Request& req, const std::vector<Candidate>& cands,
                         std::vector<Share>& out) {
  out.clear();
  if (req.per_job.count <= 0 || req.per_task.count > 0) return false;
  const size_t most = static_cast<size_t>(std::min(req.nmax, req.ntasks));
  const size_t fixed = std::min(req.required.size(), cands.size());
  std::vector<size_t> chosen;
  int64_t cap_sum = 0, gpu_sum = 0;
  for (size_t i = 0; i < cands.size(); ++i) {
    const bool wanting = i < fixed || static_cast<int>(chosen.size()) < req.nmin ||
                         cap_sum < req.ntasks || gpu_sum < req.per_job.count;
    if (!wanting) break;
    if (chosen.size() == most) return false;
    const int here = static_cast<int>(
        std::min<int64_t>(req.per_job.count, job_gpus_left(req, cands[i].free, 0)));
    // The last node the job may have must complete it (-n1 --gpus=3: the first node with
    // three GPUs free, not the first node).
    if (chosen.size() + 1 == most && i >= fixed &&
        (static_cast<int>(chosen.size()) + 1 < req.nmin || cap_sum + cands[i].cap < req.ntasks ||
         gpu_sum + here < req.per_job.count))
      continue;
    chosen.push_back(i);
    cap_sum += cands[i].cap;
    gpu_sum += here;
  }
  if (static_cast<int>(chosen.size()) < req.nmin || cap_sum < req.ntasks ||
      gpu_sum < req.per_job.count)
    return false;
  std::vector<int> tasks(chosen.size(), 1);
  return place_rest_in_node_order(req, cands, chosen, tasks) &&
         shares_with_job_gpus(req, cands, chosen, tasks, out);
}

// GPUs per job when the ways above fail: whether any nodes hold the job, found exactly (a
// search that misses a placement finds a later start, and one that finds it when looking
// again starts the job early on nodes the plans of the jobs after it hold). Some nodes, not
// the fewest: each counts for the tasks its CPUs hold and the job's GPUs there. Of the nodes
// offering one GPU count only the roomiest `most` can matter; over those, for each node
// count and GPU count (up to the job's), the most tasks held.
bool select_for_job_gpus_exactly(const Request& req, const std::vector<Candidate>& cands,
                                 std::vector<Share>& out) {
  out.clear();
  if (req.per_job.count <= 0 || req.per_task.count > 0 || !req.required.empty()) return false;
  const int most = std::min(req.nmax, req.ntasks), want = req.per_job.count;
  if (most <= 0 || static_cast<int>(cands.size()) < req.nmin) return false;
  auto gpus_of = [&](size_t i) {
    return static_cast<size_t>(std::min<int64_t>(want, job_gpus_left(req, cands[i].free, 0)));
  };
  std::vector<std::vector<size_t>> by_gpus(static_cast<size_t>(want) + 1);
  for (size_t i = 0; i < cands.size(); ++i) by_gpus[gpus_of(i)].push_back(i);
  std::vector<size_t> pool;
  for (auto& list : by_gpus) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return cands[a].cap > cands[b].cap; });
    if (list.size() > static_cast<size_t>(most)) list.resize(static_cast<size_t>(most));
    pool.insert(pool.end(), list.begin(), list.end());
  }
  std::sort(pool.begin(), pool.end());
  const size_t width = static_cast<size_t>(want) + 1, layers = static_cast<size_t>(most) + 1;
  const size_t plane = layers * width;
  if ((pool.size() + 1) * plane > (size_t{1} << 20)) return false;  // (rare; not worth it)
  // room[p][k][g]: the most tasks k of the first p nodes of the pool hold with g GPUs (-1:
  // none do).
  std::vector<int32_t> room((pool.size() + 1) * plane, -1);
  room[0] = 0;
  for (size_t p = 0; p < pool.size(); ++p) {
    const int32_t* from = &room[p * plane];
    int32_t* to = &room[(p + 1) * plane];
    std::copy(from, from + plane, to);
    const size_t g = gpus_of(pool[p]);
    const int32_t cap = cands[pool[p]].cap;
    for (size_t k = 0; k + 1 < layers; ++k)
      for (size_t have = 0; have < width; ++have)
        if (from[k * width + have] >= 0) {
          int32_t& dst = to[(k + 1) * width + std::min(width - 1, have + g)];
          dst = std::max(dst, from[k * width + have] + cap);
        }
  }
  const int32_t* last = &room[pool.size() * plane];
  size_t k = 0;
  for (size_t n = static_cast<size_t>(std::max(1, req.nmin)); n < layers && k == 0; ++n)
    if (last[n * width + width - 1] >= req.ntasks) k = n;
  if (k == 0) return false;
  // Back through the pool: a node is in when the state after it is not the state before.
  std::vector<size_t> chosen;
  size_t have = width - 1;
  for (size_t p = pool.size(); p-- > 0 && k > 0;) {
    const int32_t* before = &room[p * plane];
    const int32_t value = room[(p + 1) * plane + k * width + have];
    if (before[k * width + have] == value) continue;
    const size_t g = gpus_of(pool[p]);
    const int32_t cap = cands[pool[p]].cap;
    size_t prev = width;
    for (size_t h = 0; h < width && prev == width; ++h)
      if (std::min(width - 1, h + g) == have && before[(k - 1) * width + h] >= 0 &&
          before[(k - 1) * width + h] + cap == value)
        prev = h;
    if (prev == width) return false;  // (cannot happen)
    chosen.push_back(pool[p]);
    have = prev;
    --k;
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<int> tasks(chosen.size(), 1);
  return place_rest_in_node_order(req, cands, chosen, tasks) &&
         shares_with_job_gpus(req, cands, chosen, tasks, out);
}

}  // namespace

namespace {

// Slurm's scheduling weight of a node for a job: its Weight, then (for a job asking for GPUs)
// the fewer of them usable there, the heavier: Slurm favours nodes with more GPUs for it.
uint64_t sched_weight(const Request& req, const Candidate& c, const NodeSlot& slot) {
  const uint64_t base = static_cast<uint64_t>(std::max(0, slot.node->weight)) << 8;
  const bool gres = !req.per_node.empty() || req.per_task.count > 0 || req.per_job.count > 0;
  if (!gres) return base | 0xff;
  int64_t near = 0;
  auto usable = [&](uint32_t mask, int64_t most) {
    if ((mask & req.gpu_mask) == 0) return;
    int64_t n = c.free.gres_in(mask);
    if (req.mem == Request::Mem::PerGpu && req.mem_value > 0)
      n = std::min(n, c.free.mem_mb / req.mem_value);
    near += most > 0 ? std::min(n, most) : n;
  };
  for (const auto& g : req.per_node) usable(g.mask, g.count);
  if (req.per_task.count > 0) usable(req.per_task.mask, 0);
  if (req.per_job.count > 0) usable(req.per_job.mask, req.per_job.count);
  return base | static_cast<uint64_t>(0xff - std::min<int64_t>(near, 0xff));
}

}  // namespace

bool select_like_slurm(const Request& req, const std::vector<Candidate>& cands,
                       const std::vector<NodeSlot>& slots, std::vector<Share>& out) {
  out.clear();
  if (!req.required.empty() || cands.empty()) return false;
  const size_t n = cands.size();
  const bool per_job = req.per_job.count > 0;
  // What each node offers the job: CPUs for whole tasks, and GPUs toward --gpus.
  std::vector<int64_t> avail(n), gpus(n);
  std::vector<uint64_t> weight(n);
  for (size_t i = 0; i < n; ++i) {
    avail[i] = int64_t{cands[i].cap} * req.cpt;
    gpus[i] =
        per_job ? std::min<int64_t>(req.per_job.count, job_gpus_left(req, cands[i].free, 0)) : 0;
    weight[i] = sched_weight(req, cands[i], slots[cands[i].slot]);
  }
  // Runs of nodes next to each other in node order, of one weight.
  struct Run {
    size_t first, end;
    int64_t cpus = 0, gpus = 0;
    int nodes = 0;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < n; ++i) {
    if (runs.empty() || cands[i].slot != cands[i - 1].slot + 1 || weight[i] != weight[i - 1])
      runs.push_back({i, i});
    Run& r = runs.back();
    r.end = i + 1;
    r.cpus += avail[i];
    r.gpus += gpus[i];
    ++r.nodes;
  }
  int64_t rem_cpus = int64_t{req.ntasks} * req.cpt, rem_max_cpus = rem_cpus, got_gpus = 0;
  int rem_nodes = req.nmin, min_rem_nodes = req.nmin, max_nodes = req.nmax;
  auto gpus_done = [&] { return !per_job || got_gpus >= req.per_job.count; };
  auto done = [&] { return rem_nodes <= 0 && rem_cpus <= 0 && gpus_done(); };
  std::vector<size_t> chosen;
  std::vector<int64_t> taken(n, 0);
  std::vector<bool> used(runs.size(), false);
  while (max_nodes > 0 && !done()) {
    // The lightest run; among equals the first to hold the rest, then the one that holds
    // it with the fewest CPUs, or while none does the one with the most.
    int best = -1;
    bool best_enough = false;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (used[r]) continue;
      const Run& run = runs[r];
      const bool enough = run.cpus >= rem_cpus && run.nodes >= rem_nodes &&
                          (!per_job || got_gpus + run.gpus >= req.per_job.count);
      const uint64_t w = weight[run.first];
      bool better = best < 0 || w < weight[runs[best].first];
      if (!better && w == weight[runs[best].first]) {
        const int64_t best_cpus = runs[best].cpus;
        better = (enough && !best_enough) || (enough && run.cpus < best_cpus) ||
                 (!enough && run.cpus > best_cpus);
      }
      if (better) {
        best = static_cast<int>(r);
        best_enough = enough;
      }
    }
    if (best < 0) break;
    const Run& run = runs[best];
    used[best] = true;
    // One node more: the one that holds the rest most tightly, if any does alone.
    size_t only = n;
    if (rem_nodes <= 1)
      for (size_t i = run.first; i < run.end; ++i) {
        if (taken[i] > 0 || avail[i] < rem_cpus) continue;
        if (per_job && got_gpus + gpus[i] < req.per_job.count) continue;
        if (only == n || avail[i] < avail[only]) only = i;
        if (avail[only] == rem_cpus) break;
      }
    for (size_t i = run.first; i < run.end && max_nodes > 0 && !done(); ++i) {
      if (only < n && i != only) continue;
      int64_t cpus = avail[i];
      if (cpus <= 0 || taken[i] > 0) continue;
      if (max_nodes == 1 && cpus < rem_cpus) continue;
      // Leave a CPU for each node still wanted.
      const int64_t most = rem_max_cpus - std::max(min_rem_nodes - 1, 0);
      if (cpus > most) cpus = std::max<int64_t>(most, req.cpt);
      taken[i] = cpus;
      chosen.push_back(i);
      got_gpus += gpus[i];
      rem_cpus -= cpus;
      rem_max_cpus -= cpus;
      --rem_nodes;
      --min_rem_nodes;
      --max_nodes;
    }
  }
  if (rem_cpus > 0 || !gpus_done() || static_cast<int>(chosen.size()) < req.nmin ||
      static_cast<int>(chosen.size()) > req.ntasks)
    return false;
  // The tasks, in node order: one on each node chosen, then each up to the CPUs it was
  // chosen for, then up to what it holds.
  std::sort(chosen.begin(), chosen.end());
  std::vector<int> tasks(chosen.size(), 1);
  int remaining = req.ntasks - static_cast<int>(chosen.size());
  for (size_t c = 0; c < chosen.size() && remaining > 0; ++c) {
    const int add = std::min<int64_t>(remaining, taken[chosen[c]] / req.cpt - 1);
    if (add > 0) tasks[c] += add, remaining -= add;
  }
  if (!place_rest_in_node_order(req, cands, chosen, tasks)) return false;
  // --ntasks-per-node with exactly that many on each node: a layout that breaks it is not
  // taken (select_nodes' own then stands).
  for (int t : tasks)
    if (t < req.min_tasks_per_node()) return false;
  return shares_with_job_gpus(req, cands, chosen, tasks, out);
}

bool select_nodes(const Request& req, std::vector<Candidate>& cands, std::vector<Share>& out) {
  if (select_in_node_order(req, cands, out)) return true;
  // In node order the first nodes may be too small for a job limited to few nodes: then the
  // roomiest nodes go first (required nodes stay in front).
  if (static_cast<int>(cands.size()) > req.nmin) {
    const size_t fixed = std::min(req.required.size(), cands.size());
    std::vector<Candidate> roomiest(cands.begin(), cands.end());
    std::stable_sort(roomiest.begin() + static_cast<std::ptrdiff_t>(fixed), roomiest.end(),
                     [](const Candidate& a, const Candidate& b) { return a.cap > b.cap; });
    if (select_in_node_order(req, roomiest, out)) return true;
  }
  return select_for_job_gpus(req, cands, out) || select_for_job_gpus_exactly(req, cands, out);
}

}  // namespace drover::sched
