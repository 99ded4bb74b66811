#include "sched/autoscale.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/gres.hpp"
#include "sched/profile.hpp"

namespace drover::sched {
namespace {

// A node the what-if pass has beyond the caller's: a member still starting, or a new one.
struct Extra {
  int set = -1;
  int member = -1;  // index into the set's members; -1: a new node
};

// Reservation names no job can give (sbatch --reservation takes no control characters):
// nodes that are not up yet are kept from everyone until they are.
std::string boot_window_name(size_t i) {
  return "\x01"
         "boot" +
         std::to_string(i);
}

// Stand-ins for an array's further tasks: ids far above any job's, at most this many per array.
constexpr uint64_t kTaskIdBase = uint64_t{1} << 62;
constexpr int kMaxTasksPerArray = 4096;

// Reasons under which a pending job got no plan because of what the nodes are (not a limit,
// a reservation of its own or a pass cut short): worth asking whether any NodeSet could help.
// A job behind a waiting one is told "Priority" even when no node could ever take it.
bool about_nodes(const std::string& reason) {
  return reason == "Resources" || reason == "PartitionConfig" || reason == "PartitionNodeLimit" ||
         reason == "Priority" || reason.rfind("Nodes required", 0) == 0;
}

}  // namespace

std::vector<ReservationView> starting_node_windows(
    const std::vector<std::pair<int, int64_t>>& ready, int64_t now) {
  std::map<int64_t, std::vector<int>> by_time;
  for (const auto& [slot, at] : ready)
    if (at > now) by_time[at].push_back(slot);
  std::vector<ReservationView> out;
  for (auto& [at, slots] : by_time)
    out.push_back({boot_window_name(out.size()), now, at, std::move(slots), false});
  return out;
}

Autoscaler::Autoscaler() : engine_(make_scheduler()) {}
Autoscaler::~Autoscaler() = default;

AutoscaleDecision Autoscaler::decide(const ClusterView& view, const std::vector<NodeSetView>& sets,
                                     int64_t now, const AutoscaleParams& params) {
  AutoscaleDecision out;
  out.sets.resize(sets.size());
  const size_t n_real = view.nodes.size();

  // Cheaper sets get lighter weights, all heavier than every node that exists: a job takes
  // a node that is there (or coming) before a new one, and a cheap new one before a dear one.
  int base_weight = 1;
  for (const core::Node* n : view.nodes)
    if (n != nullptr) base_weight = std::max(base_weight, n->weight);
  base_weight = std::min(base_weight, INT_MAX / 2);
  std::vector<double> costs;
  for (const auto& s : sets) costs.push_back(s.cost);
  std::sort(costs.begin(), costs.end());
  costs.erase(std::unique(costs.begin(), costs.end()), costs.end());
  auto weight_of = [&](const NodeSetView& s) {
    const auto rank = std::lower_bound(costs.begin(), costs.end(), s.cost) - costs.begin();
    return base_weight + 1 + static_cast<int>(rank);
  };

  ClusterView v = view;
  v.params.policy = Policy::Conservative;
  v.blocked_partitions.clear();
  // An array's tasks may all start in this pass (start_limit); those that cannot start now
  // would share one plan. Each gets one of its own, as a job with an id no job has, so that
  // the array is scaled for in one decision.
  std::unordered_map<uint64_t, uint64_t> task_of;  // stand-in id -> the array record's id
  tasks_.clear();
  for (const core::Job* job : view.pending) {
    auto it = view.start_limit.find(job->id);
    if (it == view.start_limit.end() || it->second < 2) continue;
    const int more = std::min(it->second, kMaxTasksPerArray) - 1;
    for (int i = 0; i < more; ++i) {
      auto t = std::make_unique<core::Job>(*job);
      t->id = kTaskIdBase + tasks_.size();
      t->array_pending = {};
      task_of[t->id] = job->id;
      v.pending.push_back(t.get());
      tasks_.push_back(std::move(t));
    }
    v.start_limit[job->id] = 1;
  }
  auto real_id = [&](uint64_t id) {
    auto it = task_of.find(id);
    return it == task_of.end() ? id : it->second;
  };
  std::vector<Extra> extras;                 // by slot - n_real (appended nodes)
  std::map<int64_t, std::vector<int>> boot;  // ready time -> slots kept until then
  size_t next_extra = 0;
  auto new_node = [&](const core::Node& like) -> core::Node* {
    if (next_extra == extra_.size()) extra_.push_back(std::make_unique<core::Node>());
    core::Node* n = extra_[next_extra++].get();
    // Reused in place: the engine's memory of nodes is by address and name.
    std::string name = std::move(n->name);
    *n = like;
    n->name = std::move(name);
    n->registered = true;
    n->down = n->drain = n->not_responding = false;
    n->alloc_cpus = 0;
    n->alloc_mem_mb = 0;
    n->gres_used.clear();
    n->running_jobs = 0;
    n->reserved = n->maint = false;
    return n;
  };
  auto name_node = [](core::Node* n, std::string name) {
    if (n->name != name) n->name = std::move(name);
  };

  for (size_t k = 0; k < sets.size(); ++k) {
    const NodeSetView& s = sets[k];
    core::Node shape = s.shape;
    if (shape.gres_total.empty() && !shape.gres.empty())
      shape.gres_total = core::parse_gres_list(shape.gres);
    // A new node's features are all active, as when a node registers.
    if (shape.active_features.empty()) shape.active_features = shape.features;
    std::vector<int> added;  // slots appended for this set
    int n_boot = 0;
    for (size_t m = 0; m < s.members.size(); ++m) {
      const NodeSetMember& mem = s.members[m];
      if (mem.slot >= 0 && static_cast<size_t>(mem.slot) < n_real &&
          v.nodes[static_cast<size_t>(mem.slot)] != nullptr) {
        if (mem.ready_at <= now) continue;  // up: the engine sees it as it is
        // Starting: as it will be once up, kept from jobs until then.
        core::Node* n = new_node(*v.nodes[static_cast<size_t>(mem.slot)]);
        name_node(n, v.nodes[static_cast<size_t>(mem.slot)]->name);
        v.nodes[static_cast<size_t>(mem.slot)] = n;
        boot[mem.ready_at].push_back(mem.slot);
        continue;
      }
      // Its pod exists but its node has not registered: a node of the set's shape.
      core::Node* n = new_node(shape);
      name_node(n, s.name + "~boot" + std::to_string(n_boot++));
      n->weight = base_weight;
      const int slot = static_cast<int>(v.nodes.size());
      v.nodes.push_back(n);
      extras.push_back({static_cast<int>(k), static_cast<int>(m)});
      added.push_back(slot);
      if (mem.ready_at > now) boot[mem.ready_at].push_back(slot);
    }
    const int room = s.max_replicas - static_cast<int>(s.members.size());
    for (int i = 0; i < room; ++i) {
      core::Node* n = new_node(shape);
      name_node(n, s.name + "~new" + std::to_string(i));
      n->weight = weight_of(s);
      const int slot = static_cast<int>(v.nodes.size());
      v.nodes.push_back(n);
      extras.push_back({static_cast<int>(k), -1});
      added.push_back(slot);
      boot[now + std::max<int64_t>(0, s.start_delay_s)].push_back(slot);
    }
    for (auto& part : v.partitions)
      if (std::find(s.partitions.begin(), s.partitions.end(), part.name) != s.partitions.end())
        part.nodes.insert(part.nodes.end(), added.begin(), added.end());
  }
  // (Windows the caller gave for nodes it shows starting are replaced by these.)
  std::erase_if(v.reservations,
                [](const ReservationView& r) { return r.name.rfind("\x01boot", 0) == 0; });
  std::vector<std::pair<int, int64_t>> ready;
  for (const auto& [at, slots] : boot)
    for (int slot : slots) ready.emplace_back(slot, at);
  for (auto& r : starting_node_windows(ready, now)) v.reservations.push_back(std::move(r));

  // Each decision plans afresh: its hypothetical nodes change from one decision to the next,
  // and plans kept from an earlier one would name them by index.
  engine_->plans().clear();
  const Decisions d = engine_->schedule(v, now);
  out.work = d.work;

  // When the plan first uses each node: appended ones by slot, and the caller's by slot.
  std::vector<int64_t> first_use(v.nodes.size(), kNever);
  std::unordered_map<std::string, int> slot_by_name;
  for (const auto& st : d.starts)
    for (const auto& a : st.alloc) {
      if (slot_by_name.empty())
        for (size_t i = 0; i < v.nodes.size(); ++i)
          if (v.nodes[i] != nullptr) slot_by_name.emplace(v.nodes[i]->name, static_cast<int>(i));
      if (auto it = slot_by_name.find(a.node); it != slot_by_name.end())
        first_use[static_cast<size_t>(it->second)] = now;
    }
  for (const auto& p : d.planned)
    for (const auto& sh : p.shares)
      if (sh.node < first_use.size())
        first_use[sh.node] = std::min(first_use[sh.node], p.start_time);

  // New nodes: started now when the plan wants them by the time they would be up (and a
  // little), else asked about again when they would have to be started.
  std::vector<char> added_now(v.nodes.size(), 0);
  for (size_t i = 0; i < extras.size(); ++i) {
    const Extra& e = extras[i];
    if (e.member >= 0) continue;
    const size_t slot = n_real + i;
    const int64_t use = first_use[slot];
    if (use >= kNever) continue;
    const NodeSetView& s = sets[static_cast<size_t>(e.set)];
    AutoscaleDecision::Set& o = out.sets[static_cast<size_t>(e.set)];
    ++o.wanted;
    const int64_t start_by = use - std::max<int64_t>(0, s.start_delay_s);
    if (start_by <= now + params.lookahead_s) {
      ++o.add;
      added_now[slot] = 1;
    } else {
      out.next_check = std::min(out.next_check, start_by);
    }
  }
  std::vector<std::unordered_set<uint64_t>> listed(sets.size()), demand(sets.size());
  for (const auto& p : d.planned)
    for (const auto& sh : p.shares) {
      if (sh.node < n_real || sh.node >= v.nodes.size()) continue;
      const Extra& e = extras[sh.node - n_real];
      if (e.member >= 0) continue;
      const auto k = static_cast<size_t>(e.set);
      const uint64_t id = real_id(p.job_id);
      if (demand[k].insert(id).second) out.sets[k].planned_for.push_back(id);
      if (added_now[sh.node] && listed[k].insert(id).second) out.sets[k].scaled_for.push_back(id);
    }

  for (size_t k = 0; k < sets.size(); ++k) {
    const NodeSetView& s = sets[k];
    AutoscaleDecision::Set& o = out.sets[k];
    const int have = static_cast<int>(s.members.size());
    if (have + o.add < s.min_replicas) o.add = s.min_replicas - have;
    if (o.add > 0) continue;  // growing: nothing of it is idle for long
    // Scale-in: idle past the timeout, and not wanted by the plan before the timeout would
    // pass again; the longest idle first, never below the minimum.
    std::vector<std::pair<int64_t, int>> idle;  // (idle since, member)
    for (size_t m = 0; m < s.members.size(); ++m) {
      const NodeSetMember& mem = s.members[m];
      if (mem.slot < 0 || static_cast<size_t>(mem.slot) >= n_real || mem.ready_at > now ||
          mem.idle_since < 0)
        continue;
      const int64_t due = mem.idle_since + s.idle_timeout_s;
      if (due > now) {
        out.next_check = std::min(out.next_check, due);
        continue;
      }
      // Wanted before the timeout would pass again, or before a new node could replace it.
      const int64_t keep_until =
          now +
          std::max(s.idle_timeout_s, std::max<int64_t>(0, s.start_delay_s) + params.lookahead_s);
      const int64_t use = first_use[static_cast<size_t>(mem.slot)];
      if (use < keep_until) {
        out.next_check = std::min(out.next_check, std::max(use, now + 1));
        continue;
      }
      idle.emplace_back(mem.idle_since, static_cast<int>(m));
    }
    std::sort(idle.begin(), idle.end());
    const int may_go = std::max(0, have - s.min_replicas);
    for (size_t i = 0; i < idle.size() && static_cast<int>(i) < may_go; ++i)
      o.remove.push_back(idle[i].second);
  }

  // Jobs with no start and no plan for want of nodes: could any NodeSet at its maximum ever
  // run them? (The view above has every set at its maximum.)
  std::unordered_set<uint64_t> placed;
  for (const auto& st : d.starts) placed.insert(st.job_id);
  for (const auto& p : d.planned) placed.insert(p.job_id);
  std::unordered_map<uint64_t, const core::Job*> by_id;
  std::vector<const core::Job*> never;
  for (const auto& r : d.reasons) {
    if (placed.count(r.job_id) || !about_nodes(r.reason) || task_of.count(r.job_id)) continue;
    if (by_id.empty())
      for (const core::Job* j : view.pending) by_id.emplace(j->id, j);
    auto it = by_id.find(r.job_id);
    if (it == by_id.end()) continue;
    const core::Job& job = *it->second;
    std::vector<std::string> names = job.spec.partitions;
    if (names.size() < 2) names = {job.partition};
    bool fits = false;
    for (const auto& name : names)
      for (const auto& part : v.partitions)
        if (part.name == name && can_ever_fit(job.spec, part, v)) fits = true;
    if (!fits) never.push_back(&job);
  }
  if (!never.empty()) {
    // Whether more nodes would do: every set as large as the largest of these jobs asks.
    int64_t most = 1;
    for (const core::Job* j : never)
      most = std::max<int64_t>(most, std::max(j->spec.nodes_min, j->spec.ntasks));
    most = std::min<int64_t>(most, 1024);
    ClusterView big = v;
    std::vector<std::unique_ptr<core::Node>> more;
    for (size_t k = 0; k < sets.size(); ++k) {
      core::Node shape = sets[k].shape;
      if (shape.gres_total.empty() && !shape.gres.empty())
        shape.gres_total = core::parse_gres_list(shape.gres);
      shape.registered = true;
      std::vector<int> slots;
      for (int64_t i = 0; i < most; ++i) {
        more.push_back(std::make_unique<core::Node>(shape));
        more.back()->name = sets[k].name + "~more" + std::to_string(i);
        slots.push_back(static_cast<int>(big.nodes.size()));
        big.nodes.push_back(more.back().get());
      }
      for (auto& part : big.partitions)
        if (std::find(sets[k].partitions.begin(), sets[k].partitions.end(), part.name) !=
            sets[k].partitions.end())
          part.nodes.insert(part.nodes.end(), slots.begin(), slots.end());
    }
    for (const core::Job* j : never) {
      std::vector<std::string> names = j->spec.partitions;
      if (names.size() < 2) names = {j->partition};
      bool more_would = false;
      for (const auto& name : names)
        for (const auto& part : big.partitions)
          if (part.name == name && can_ever_fit(j->spec, part, big)) more_would = true;
      out.unrunnable.push_back(
          {j->id, more_would
                      ? "no NodeSet can run it: it needs more nodes than their maxReplicas allow"
                      : "no NodeSet can run it: no node shape has the CPUs, memory, GPUs or "
                        "features it asks for"});
    }
  }
  return out;
}

}  // namespace drover::sched
