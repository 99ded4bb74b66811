// The scheduling engine: strict priority order with backfill over an availability profile.
//
// Jobs are taken in order (partition PriorityTier, then priority, submit time, job id). For
// each, the engine finds the earliest time its request fits on its partition's nodes in the
// profile, given what running jobs hold until their expected end and what the plan has
// already reserved for the jobs before it. A job that fits now starts; otherwise, under the
// conservative policy, it reserves its resources at its earliest start (so nothing after
// it can delay it), under EASY only the first blocked job of a partition does, and under
// FIFO the first blocked job stops its partition.
#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/hostlist.hpp"
#include "sched/limits.hpp"
#include "sched/node_bounds.hpp"
#include "sched/profile.hpp"
#include "sched/request.hpp"
#include "sched/resources.hpp"
#include "sched/scheduler.hpp"

namespace drover::sched {
namespace {

int64_t duration_s(int64_t limit_min) { return limit_min < 0 ? kNever : limit_min * 60; }

// When a job holding resources is expected to give them back.
int64_t expected_end(const core::Job& job, int64_t now) {
  if (job.completing) return now + 1;
  if (job.time_limit_min < 0) return kNever;
  const int64_t end = job.start_time + job.time_limit_min * 60;
  return end > now ? end : now + 1;  // overdue: ending any moment
}

// Lower bounds on start times found so far this pass for one request shape on one node
// set: the profile only loses room as the pass goes on, so a job of the same shape that
// runs at least as long cannot start earlier than one placed before it.
class ShapeCursor {
 public:
  int64_t lower_bound(int64_t duration) const {
    int64_t t = 0;
    for (const auto& [d, start] : points_)
      if (d <= duration) t = std::max(t, start);
    return t;
  }
  void record(int64_t duration, int64_t start) {
    for (auto& [d, s] : points_)
      if (d == duration) {
        s = std::max(s, start);
        return;
      }
    if (points_.size() >= 16) points_.erase(points_.begin());
    points_.emplace_back(duration, start);
  }

 private:
  std::vector<std::pair<int64_t, int64_t>> points_;
};

// What Request::compile reads of a job's spec: equal keys compile to equal requests.
struct SpecKey {
  int ntasks, nodes_min, nodes_max, cpus_per_task, ntasks_per_node;
  bool nodes_set, exclusive;
  int64_t mem_per_node_mb, mem_per_cpu_mb, mem_per_gpu_mb;
  std::string nodelist, exclude, constraint, gres, gpus, gpus_per_node, gpus_per_task;

  explicit SpecKey(const core::JobSpec& s)
      : ntasks(s.ntasks),
        nodes_min(s.nodes_min),
        nodes_max(s.nodes_max),
        cpus_per_task(s.cpus_per_task),
        ntasks_per_node(s.ntasks_per_node),
        nodes_set(s.nodes_set),
        exclusive(s.exclusive),
        mem_per_node_mb(s.mem_per_node_mb),
        mem_per_cpu_mb(s.mem_per_cpu_mb),
        mem_per_gpu_mb(s.mem_per_gpu_mb),
        nodelist(s.nodelist),
        exclude(s.exclude),
        constraint(s.constraint),
        gres(s.gres),
        gpus(s.gpus),
        gpus_per_node(s.gpus_per_node),
        gpus_per_task(s.gpus_per_task) {}
};

inline size_t mix(size_t h, uint64_t v) {
  return (h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2))) * 0xff51afd7ed558ccdULL;
}

// Hash and equality for keys and for specs themselves (looked up without making a key).
struct SpecKeyHash {
  using is_transparent = void;
  template <typename S>
  size_t operator()(const S& k) const {
    auto pair = [](int a, int b) {
      return static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32 | static_cast<uint32_t>(b);
    };
    size_t h = mix(mix(0, pair(k.ntasks, k.nodes_min)), pair(k.nodes_max, k.cpus_per_task));
    h = mix(h, pair(k.ntasks_per_node, int(k.nodes_set) | int(k.exclusive) << 1));
    for (int64_t v : {k.mem_per_node_mb, k.mem_per_cpu_mb, k.mem_per_gpu_mb})
      h = mix(h, static_cast<uint64_t>(v));
    for (const auto* v : {&k.nodelist, &k.exclude, &k.constraint, &k.gres, &k.gpus,
                          &k.gpus_per_node, &k.gpus_per_task})
      if (!v->empty()) h = mix(h, std::hash<std::string_view>{}(*v));
    return h;
  }
};

struct SpecKeyEqual {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    auto same = [](const std::string& x, const std::string& y) {
      return x.size() == y.size() && (x.empty() || x == y);
    };
    return a.ntasks == b.ntasks && a.nodes_min == b.nodes_min && a.nodes_max == b.nodes_max &&
           a.cpus_per_task == b.cpus_per_task && a.ntasks_per_node == b.ntasks_per_node &&
           a.nodes_set == b.nodes_set && a.exclusive == b.exclusive &&
           a.mem_per_node_mb == b.mem_per_node_mb && a.mem_per_cpu_mb == b.mem_per_cpu_mb &&
           a.mem_per_gpu_mb == b.mem_per_gpu_mb && same(a.nodelist, b.nodelist) &&
           same(a.exclude, b.exclude) && same(a.constraint, b.constraint) && same(a.gres, b.gres) &&
           same(a.gpus, b.gpus) && same(a.gpus_per_node, b.gpus_per_node) &&
           same(a.gpus_per_task, b.gpus_per_task);
  }
};

// What the pass's lookups are keyed by: a partition (index in the view), an interned filter
// or shape (Request::filter_id, shape_id), the reservation the job is a member of (-1:
// none) and, for node bounds, how long the job asks the profile about and holds its nodes.
struct PassKey {
  int part, id, member;
  int64_t length = 0, holds = 0;
  bool operator==(const PassKey&) const = default;
};

struct PassKeyHash {
  size_t operator()(const PassKey& k) const {
    size_t h = mix(mix(mix(0, static_cast<uint64_t>(k.part)), static_cast<uint64_t>(k.id)),
                   static_cast<uint64_t>(k.member));
    return mix(mix(h, static_cast<uint64_t>(k.length)), static_cast<uint64_t>(k.holds));
  }
};

class Engine final : public Scheduler {
 public:
  explicit Engine(std::optional<Policy> pinned) : pinned_(pinned) {}

  Decisions schedule(const ClusterView& view, int64_t now) override {
    Pass pass(view, now, pinned_.value_or(view.params.policy), memo_, plans_);
    Decisions d = pass.run();
    remember(view, d);
    return d;
  }

 private:
  std::optional<Policy> pinned_;

  // What this pass planned becomes the plan memory; with a whole-queue pass, jobs it considered
  // and gave only a reason have no plan any more (the ones out_of_time left alone keep theirs).
  void remember(const ClusterView& view, const Decisions& d) {
    if (view.whole_queue) {
      std::unordered_set<uint64_t> skipped(d.not_considered.begin(), d.not_considered.end());
      for (const PendingReason& r : d.reasons)
        if (!skipped.count(r.job_id)) plans_.forget(r.job_id);
    }
    for (const PlannedStart& p : d.planned) plans_.set(p.job_id, p.start_time, p.shares);
  }

  // Kept from pass to pass: compiled requests by what they are compiled from (while the
  // GRES kinds and default memory stay the same), their filters and shapes numbered; the
  // nodes' index by name, kept up to date node by node as nodes come and go (a node's slot is
  // its id in ClusterView::nodes); the memory of the node slots and the profile.
  struct Memo {
    std::vector<const core::Node*> nodes;
    std::deque<std::string> node_names;  // a deque: slot_of_node keeps views of them
    std::unordered_map<std::string_view, int> slot_of_node;

    void index_nodes(const std::vector<const core::Node*>& now) {
      // Only the slots whose node changed are looked at again.
      auto forget = [&](size_t i) {
        if (nodes[i] != nullptr) {
          auto it = slot_of_node.find(node_names[i]);
          if (it != slot_of_node.end() && it->second == static_cast<int>(i)) slot_of_node.erase(it);
        }
        nodes[i] = nullptr;
        node_names[i].clear();
      };
      for (size_t i = now.size(); i < nodes.size(); ++i) forget(i);
      nodes.resize(now.size(), nullptr);
      node_names.resize(now.size());
      for (size_t i = 0; i < now.size(); ++i) {
        if (now[i] == nodes[i] && (now[i] == nullptr || now[i]->name == node_names[i])) continue;
        forget(i);
        if (now[i] == nullptr) continue;
        nodes[i] = now[i];
        node_names[i] = now[i]->name;
        // The name may still be keyed by a view of the slot it had before.
        slot_of_node.erase(node_names[i]);
        slot_of_node.emplace(node_names[i], static_cast<int>(i));
      }
    }
    std::vector<NodeSlot> slots;
    Profile profile;
    PassArena bounds_memory;  // the pass's NodeBounds (reset as each pass starts)

    static constexpr size_t kMaxRequests = 1 << 16;
    std::unordered_map<SpecKey, Request, SpecKeyHash, SpecKeyEqual> requests;
    std::unordered_map<std::string, int> filter_ids, shape_ids, need_ids;
    std::vector<std::pair<std::string, std::string>> kinds;
    int64_t def_mem_per_cpu_mb = 0, def_mem_per_node_mb = 0;

    // Forgets what was compiled under other GRES kinds or defaults (or too much of it).
    void check(const GresKinds& k, int64_t def_cpu, int64_t def_node) {
      bool same = k.size() == kinds.size() && def_cpu == def_mem_per_cpu_mb &&
                  def_node == def_mem_per_node_mb && requests.size() < kMaxRequests;
      for (size_t i = 0; same && i < k.size(); ++i) same = k.kind(static_cast<int>(i)) == kinds[i];
      if (same) return;
      requests.clear();
      filter_ids.clear();
      shape_ids.clear();
      need_ids.clear();
      kinds.clear();
      for (size_t i = 0; i < k.size(); ++i) kinds.push_back(k.kind(static_cast<int>(i)));
      def_mem_per_cpu_mb = def_cpu;
      def_mem_per_node_mb = def_node;
    }
    static int intern(std::unordered_map<std::string, int>& ids, const std::string& key) {
      return ids.emplace(key, static_cast<int>(ids.size())).first->second;
    }
    const Request& request(const core::JobSpec& spec, const GresKinds& k) {
      if (auto it = requests.find(spec); it != requests.end()) return it->second;
      Request r = Request::compile(spec, k, def_mem_per_cpu_mb, def_mem_per_node_mb);
      r.filter_id = intern(filter_ids, r.filter_key);
      r.shape_id = intern(shape_ids, r.filter_key + '\x1e' + r.shape_key);
      r.need_id = intern(need_ids, r.filter_key + '\x1e' + r.node_need_key);
      return requests.emplace(SpecKey(spec), std::move(r)).first->second;
    }
  };
  Memo memo_;

  struct Pass {
    struct Found {
      int64_t start = kNever;
      std::vector<Share> shares;
    };

    const ClusterView& view;
    const int64_t now;
    const Policy policy;
    Memo& memo;
    const PlanMemory& plans;
    GresKinds kinds;
    std::vector<NodeSlot>& slots;
    Profile& profile;
    Decisions d;
    std::unordered_map<PassKey, std::vector<int>, PassKeyHash> cand_cache;
    std::unordered_map<int, std::vector<char>> part_members;  // partition -> slot in it
    std::unordered_map<PassKey, ShapeCursor, PassKeyHash> cursors;
    std::unordered_map<PassKey, bool, PassKeyHash> fits_cache;
    std::unordered_map<PassKey, std::string_view, PassKeyHash> resv_reason_cache;
    std::unordered_map<PassKey, NodeBounds, PassKeyHash> bounds;
    // Per node set and need (PassKey without length and holds): its bounds of each length.
    std::unordered_map<PassKey, std::vector<std::pair<PassKey, NodeBounds*>>, PassKeyHash>
        bounds_by_length;
    std::vector<Candidate> cands;  // scratch
    std::vector<int64_t> later;    // scratch
    std::vector<int64_t> growth;   // scratch
    struct Feasible {
      int pos;
      Profile::Span w;
    };
    std::vector<Feasible> feasible;  // scratch
    bool out_of_budget = false;
    bool timed_out = false;  // bf_max_time (view.out_of_time) ended the pass

    // Reservation windows on each node (slot): only a reservation's members may run there
    // during [start, end).
    struct Block {
      int64_t start, end;
      int resv;
    };
    std::vector<std::vector<Block>> blocks;
    bool any_blocks = false;
    int64_t latest_block_end = 0;  // the last finite end of a reservation window
    std::unordered_map<std::string, int> resv_by_name;
    int member = -1;  // the reservation of the job being placed (-1: none)
    const std::unordered_map<std::string_view, int>& slot_of_node;
    std::set<uint64_t> preempted_ids;        // running jobs already chosen to make room
    std::optional<int> lowest_running_tier;  // preempt/partition_prio: found when first needed
    // How long the job being placed holds its nodes (FIFO asks the profile only about now,
    // but a job must still not run into a reservation).
    int64_t holds_for = 0;
    // The job being placed has not been planned before (a start now goes where Slurm puts it;
    // see choose_nodes).
    bool never_planned = false;
    const Plan* plan = nullptr;  // the job's plan from an earlier pass (PlanMemory)

    Pass(const ClusterView& v, int64_t t, Policy p, Memo& m, const PlanMemory& pm)
        : view(v),
          now(t),
          policy(p),
          memo(m),
          plans(pm),
          slots(m.slots),
          profile(m.profile),
          slot_of_node(m.slot_of_node) {
      memo.bounds_memory.reset();
      memo.index_nodes(v.nodes);
      build_slots(v.nodes, v.running, kinds, slot_of_node, slots);
      profile.reset(slots, static_cast<int>(kinds.size()), t, v.params.bf_resolution_s);
      memo.check(kinds, v.def_mem_per_cpu_mb, v.def_mem_per_node_mb);
      const std::unordered_map<std::string_view, int>& index = slot_of_node;
      if (policy != Policy::Fifo)
        for (const core::Job* job : v.running) {
          const int64_t end = expected_end(*job, now);
          for (const auto& a : job->alloc) {
            auto it = index.find(a.node);
            if (it == index.end()) continue;
            profile.release_at(it->second, end, held_by(a));
          }
        }
      blocks.resize(slots.size());
      for (size_t i = 0; i < v.reservations.size(); ++i) {
        const ReservationView& r = v.reservations[i];
        resv_by_name.emplace(r.name, static_cast<int>(i));
        if (r.end <= now) continue;
        for (int idx : r.nodes)
          if (idx >= 0 && static_cast<size_t>(idx) < slots.size())
            blocks[idx].push_back({r.start, r.end, static_cast<int>(i)});
        if (r.end < kNever) latest_block_end = std::max(latest_block_end, r.end);
        any_blocks = any_blocks || !r.nodes.empty();
      }
    }

    // The end of the last reservation window on the node that the job being placed may not
    // use and that meets [from, until); -1 when none does.
    int64_t blocked_until(int slot, int64_t from, int64_t until) const {
      int64_t past = -1;
      for (const Block& b : blocks[slot])
        if (b.resv != member && b.start < until && from < b.end) past = std::max(past, b.end);
      return past;
    }

    // Profile::earliest_span, moved past the reservation windows on the node that the job
    // being placed may not use.
    Profile::Span window(int slot, const Request& req, int64_t from, int64_t duration) {
      for (;;) {
        const Profile::Span w =
            profile.earliest_span(slot, req, slots[slot], from, duration, req.min_tasks_per_node());
        if (w.start >= kNever || !any_blocks) return w;
        const int64_t past = blocked_until(slot, w.start, w.start + std::max(duration, holds_for));
        if (past < 0) return w;
        from = profile.round_up(past);
        if (from >= kNever) return Profile::Span{};
      }
    }

    // What a job's share of one node holds there.
    Amount held_by(const core::NodeAlloc& a) const {
      Amount held = gres_amount(kinds, a.gres);
      held.cpus = a.cpus;
      held.mem_mb = a.mem_mb;
      return held;
    }

    // What a running job holds on each node it uses, by slot.
    std::vector<std::pair<int, Amount>> holdings(const core::Job& job) const {
      std::vector<std::pair<int, Amount>> out;
      for (const auto& a : job.alloc)
        if (auto it = slot_of_node.find(a.node); it != slot_of_node.end())
          out.emplace_back(it->second, held_by(a));
      return out;
    }

    // How `victim` would be preempted for `job` (pending in `part`), or nullopt when it may
    // not be (PreemptType, the modes of its partition or QOS, PreemptExemptTime).
    std::optional<Preemption> preemption_of(const core::Job& job, const PartitionView& part,
                                            const core::Job& victim) const {
      const PreemptionView& pv = view.preemption;
      if (pv.type == PreemptionView::Type::None || pv.mode == PreemptMode::Off) return {};
      if (victim.completing || victim.state != core::JobState::Running) return {};
      std::optional<PreemptMode> mode;
      int64_t grace = 0, exempt = pv.exempt_time_s;
      if (pv.type == PreemptionView::Type::PartitionPrio) {
        const PartitionView* vp = find_partition(victim.partition);
        if (vp == nullptr || vp->priority_tier >= part.priority_tier) return {};
        mode = vp->preempt_mode;
        grace = vp->grace_time_s;
      } else {
        auto mine = pv.qos.find(job.spec.qos);
        if (mine == pv.qos.end() ||
            std::find(mine->second.preempts.begin(), mine->second.preempts.end(),
                      victim.spec.qos) == mine->second.preempts.end())
          return {};
        if (auto theirs = pv.qos.find(victim.spec.qos); theirs != pv.qos.end()) {
          mode = theirs->second.mode;
          grace = theirs->second.grace_time_s;
          if (theirs->second.exempt_time_s >= 0) exempt = theirs->second.exempt_time_s;
        }
      }
      const PreemptMode m = mode.value_or(pv.mode);
      if (m == PreemptMode::Off) return {};
      if (exempt > 0 && victim.start_time + exempt > now) return {};
      return Preemption{victim.id, job.id, m, grace};
    }

    // Whether `req` fits now on `nodes` with `extra` given back on some of them, not running
    // into a reservation it may not use.
    bool fits_now_with(const Request& req, const std::vector<int>& nodes,
                       const std::unordered_map<int, Amount>& extra, std::vector<Share>& shares) {
      std::vector<Candidate> cs;
      for (int idx : nodes) {
        if (blocked_until(idx, now, now + holds_for) >= 0) continue;
        Amount free = slots[idx].free_now;
        if (auto it = extra.find(idx); it != extra.end()) free += it->second;
        const int cap = req.tasks_fit(slots[idx], free);
        if (cap > 0 && cap >= req.min_tasks_per_node()) cs.push_back({idx, free, cap});
      }
      shares.clear();
      return static_cast<int>(cs.size()) >= req.nmin && choose_nodes(req, cs, now, shares);
    }

    // Preemption for a job that cannot start now: the fewest running jobs it may preempt
    // (lowest tier and priority, then youngest, first) whose resources let it start now.
    // They are to be stopped; the job is planned now on what they free and starts once they
    // are gone. Returns whether any were chosen.
    bool preempt_for(const core::Job& job, const std::vector<std::string>& names,
                     const Request& req, int64_t duration) {
      if (view.preemption.type == PreemptionView::Type::None ||
          view.preemption.mode == PreemptMode::Off)
        return false;
      // Most blocked jobs may preempt nobody: say so before looking at the running jobs.
      if (view.preemption.type == PreemptionView::Type::Qos) {
        auto mine = view.preemption.qos.find(job.spec.qos);
        if (mine == view.preemption.qos.end() || mine->second.preempts.empty()) return false;
      } else if (!lowest_running_tier) {
        lowest_running_tier = std::numeric_limits<int>::max();
        for (const core::Job* r : view.running)
          if (const PartitionView* vp = find_partition(r->partition))
            lowest_running_tier = std::min(*lowest_running_tier, vp->priority_tier);
      }
      for (const auto& name : names) {
        const PartitionView* part = find_partition(name);
        if (!static_reason(job, part, req, false).empty()) continue;
        if (view.preemption.type == PreemptionView::Type::PartitionPrio &&
            part->priority_tier <= *lowest_running_tier)
          continue;
        const std::vector<int>& nodes = candidates(*part, req);
        std::set<int> on_nodes(nodes.begin(), nodes.end());
        // Jobs already on their way out count as gone: if that is enough, just wait.
        std::unordered_map<int, Amount> extra;
        struct Victim {
          const core::Job* job;
          Preemption how;
          int tier;
        };
        std::vector<Victim> victims;
        for (const core::Job* r : view.running) {
          const bool leaving = r->completing || preempted_ids.count(r->id) > 0;
          bool here = false;
          for (const auto& [slot, held] : holdings(*r)) here = here || on_nodes.count(slot) > 0;
          if (!here) continue;
          if (leaving) {
            for (const auto& [slot, held] : holdings(*r)) extra[slot] += held;
            continue;
          }
          if (auto how = preemption_of(job, *part, *r)) {
            const PartitionView* vp = find_partition(r->partition);
            victims.push_back({r, *how, vp ? vp->priority_tier : 0});
          }
        }
        std::vector<Share> shares;
        if (victims.empty() || fits_now_with(req, nodes, extra, shares)) continue;
        std::sort(victims.begin(), victims.end(), [](const Victim& a, const Victim& b) {
          if (a.tier != b.tier) return a.tier < b.tier;
          if (a.job->priority != b.job->priority) return a.job->priority < b.job->priority;
          if (a.job->start_time != b.job->start_time) return a.job->start_time > b.job->start_time;
          return a.job->id > b.job->id;
        });
        std::vector<const Victim*> chosen;
        bool fits = false;
        for (const Victim& v : victims) {
          chosen.push_back(&v);
          for (const auto& [slot, held] : holdings(*v.job)) extra[slot] += held;
          if ((fits = fits_now_with(req, nodes, extra, shares))) break;
        }
        if (!fits) continue;
        // Spare any victim the job can do without (the last chosen is needed).
        for (size_t i = chosen.size(); i-- > 1;) {
          for (const auto& [slot, held] : holdings(*chosen[i - 1]->job)) extra[slot] -= held;
          if (fits_now_with(req, nodes, extra, shares)) {
            chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(i - 1));
          } else {
            for (const auto& [slot, held] : holdings(*chosen[i - 1]->job)) extra[slot] += held;
          }
        }
        fits_now_with(req, nodes, extra, shares);
        for (const Victim* v : chosen) {
          preempted_ids.insert(v->job->id);
          d.preempted.push_back(v->how);
          // In the plan their resources come back now rather than at their expected end.
          const int64_t end = expected_end(*v->job, now);
          for (const auto& [slot, held] : holdings(*v->job)) {
            profile.release_at(slot, now, held);
            if (end < kNever && policy != Policy::Fifo) {  // FIFO's profile has no ends
              const int64_t at = profile.round_up(end);
              if (at < kNever) profile.reserve(slot, at, kNever, held);
            }
          }
        }
        Found f;
        f.start = now;
        f.shares = std::move(shares);
        reserve(job, *part, req, f, duration);
        return true;
      }
      return false;
    }

    // Whether a reservation the job may not use holds the node now.
    bool reserved_now(int idx) const { return blocked_until(idx, now, now + 1) >= 0; }

    // Why a job that did not start is waiting when reservations are in its way: its -w
    // nodes are reserved, or what is left of the partition could not hold it even idle
    // (Slurm's wording). "" when reservations are not the reason. The same for every job of
    // a shape in a pass, so worked out once per shape.
    std::string_view reservation_reason(const PartitionView& part, const Request& req) {
      if (!any_blocks) return "";
      const PassKey key = shape_key(part, req);
      if (auto it = resv_reason_cache.find(key); it != resv_reason_cache.end()) return it->second;
      std::string_view why;
      std::vector<int> open;
      for (int idx : part.nodes)
        if (!reserved_now(idx)) open.push_back(idx);
      if (open.size() < part.nodes.size()) {
        for (const auto& name : req.required)
          for (int idx : part.nodes)
            if (slots[idx].node->name == name && reserved_now(idx))
              why = "ReqNodeNotAvail, May be reserved for other job";
        std::vector<Candidate> all;
        std::vector<Share> shares;
        if (why.empty() &&
            !(fitting_nodes(req, open, slots, true, all) && select_nodes(req, all, shares)))
          why =
              "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher "
              "priority partitions";
      }
      resv_reason_cache.emplace(key, why);
      return why;
    }

    // Slurm's reason when -w names nodes that are down or drained: "" when none is.
    std::string unavailable_required(const Request& req, const PartitionView* part) const {
      if (req.required.empty() || part == nullptr) return "";
      std::vector<std::string> out;
      for (int idx : part->nodes)
        if (!slots[idx].usable && req.requires_node(slots[idx].node->name))
          out.push_back(slots[idx].node->name);
      if (out.empty()) return "";
      return "ReqNodeNotAvail, UnavailableNodes:" + core::compress_hostlist(out);
    }

    // Whether `slot` is one of candidates(part, req) (the same rules, without the list).
    bool is_candidate(const PartitionView& part, const Request& req, int slot) {
      auto& member_of = part_members[index_of(part)];
      if (member_of.empty()) {
        member_of.assign(slots.size(), 0);
        for (int idx : part.nodes) member_of[idx] = 1;
      }
      if (!member_of[slot]) return false;
      const NodeSlot& s = slots[slot];
      if (!s.usable || !req.allows(*s.node)) return false;
      const ReservationView* resv = member >= 0 ? &view.reservations[member] : nullptr;
      return resv == nullptr || resv->flex ||
             std::find(resv->nodes.begin(), resv->nodes.end(), slot) != resv->nodes.end();
    }

    // A job keeps the nodes, and the tasks on each, that the previous pass planned it on when
    // they still hold it at the start found now: the jobs planned after it were fitted around
    // that placement, so with run times as expected every job keeps its reservation. (The
    // search alone may choose otherwise once lower-priority jobs backfilled beside it.) When the
    // search finds only a later start (node selection is a heuristic: with GPUs per job it may
    // not find those nodes again), the previous plan's start and nodes are kept if they still
    // hold it. (The plan is `plan`, the job's from the plan memory.)
    void keep_planned_nodes(const PartitionView& part, const Request& req, int64_t length,
                            Found& f) {
      if (!req.required.empty() || plan == nullptr || plan->shares.empty()) return;
      if (policy != Policy::Fifo && plan->start >= now && plan->start < f.start) {
        std::vector<Share> kept;
        if (planned_shares_hold(plan->shares, part, req, length, plan->start, kept)) {
          f.start = plan->start;
          f.shares = std::move(kept);
        }
        return;
      }
      if (f.start >= kNever) return;
      // Mostly the search chose them again.
      auto same = [](const Share& a, const PlannedShare& b) {
        return static_cast<uint32_t>(a.slot) == b.node &&
               static_cast<uint32_t>(a.tasks) == b.tasks &&
               static_cast<uint32_t>(a.job_gpus) == b.job_gpus;
      };
      if (std::equal(f.shares.begin(), f.shares.end(), plan->shares.begin(), plan->shares.end(),
                     same))
        return;
      std::vector<Share> kept;
      if (planned_shares_hold(plan->shares, part, req, length, f.start, kept))
        f.shares = std::move(kept);
    }
    // Whether the previous plan's nodes and tasks hold the job from `start` for `length`
    // (Request::holds: what that placement takes, not the search's bound per node).
    bool planned_shares_hold(const std::vector<PlannedShare>& planned, const PartitionView& part,
                             const Request& req, int64_t length, int64_t start,
                             std::vector<Share>& kept) {
      kept.reserve(planned.size());
      for (const PlannedShare& ps : planned) {
        const int slot = static_cast<int>(ps.node);
        if (ps.node >= slots.size() || !is_candidate(part, req, slot)) return false;
        if (any_blocks && blocked_until(slot, start, start + std::max(length, holds_for)) >= 0)
          return false;
        const Amount free = profile.free_over(slot, start, length);
        const int tasks = static_cast<int>(ps.tasks), gpus = static_cast<int>(ps.job_gpus);
        if (!req.holds(slots[slot], free, tasks, gpus)) return false;
        kept.push_back({slot, tasks, gpus, free});
      }
      return true;
    }

    // The partition's nodes this request may use, required nodes first.
    const std::vector<int>& candidates(const PartitionView& part, const Request& req) {
      PassKey key{index_of(part), filter_of(req), member};
      const ReservationView* resv = member >= 0 ? &view.reservations[member] : nullptr;
      auto it = cand_cache.find(key);
      if (it != cand_cache.end()) return it->second;
      std::vector<int> out;
      size_t required_found = 0;
      for (int idx : part.nodes) {
        const NodeSlot& s = slots[idx];
        if (!s.usable || !req.allows(*s.node)) continue;
        if (resv != nullptr && !resv->flex &&
            std::find(resv->nodes.begin(), resv->nodes.end(), idx) == resv->nodes.end())
          continue;
        if (!req.required.empty() && req.requires_node(s.node->name)) {
          out.insert(out.begin() + static_cast<std::ptrdiff_t>(required_found++), idx);
        } else {
          out.push_back(idx);
        }
      }
      // A -w node that may not be used (down, drained) leaves the job nothing to run on.
      if (required_found < req.required.size()) out.clear();
      // Lower Weight first, node order among equals (Slurm's node sets by weight).
      auto by_weight = [&](int a, int b) { return slots[a].node->weight < slots[b].node->weight; };
      const auto rest = out.begin() + static_cast<std::ptrdiff_t>(required_found);
      if (!std::is_sorted(rest, out.end(), by_weight)) std::stable_sort(rest, out.end(), by_weight);
      return cand_cache.emplace(key, std::move(out)).first->second;
    }

    // Whether the nodes of the job being placed, starting at `t`, are the ones Slurm would
    // choose (choose_nodes).
    bool slurm_chooses(const Request& req, int64_t t) const {
      return t == now && never_planned && req.required.empty();
    }

    // `cands` from the nodes found free at a time (positions in `nodes`), with what each
    // holds; returns the tasks they hold together.
    int64_t fill_candidates(const Request& req, const std::vector<int>& nodes,
                            const std::vector<Feasible>& feas) {
      cands.clear();
      int64_t room = 0;
      for (const auto& x : feas) {
        const int slot = nodes[x.pos];
        const Profile::Window w = profile.fill(slot, req, slots[slot], x.w);
        cands.push_back({slot, w.free, w.cap});
        room += w.cap;
      }
      return room;
    }

    // The nodes for a job at `t` from every node that can take part then (select_nodes), and
    // for a start now of a job never planned before those Slurm would choose
    // (select_like_slurm). Whether the job starts is select_nodes' answer alone, as for the
    // plans made for later times: a search that finds more now than it did when planning
    // would let a job start early on nodes the plans of the jobs after it hold. A job that was
    // planned starts on nodes chosen the way its plan's were (the jobs after it were planned
    // around that way: choosing otherwise made the KTH replay's waits 2-6% longer).
    bool choose_nodes(const Request& req, std::vector<Candidate>& cands, int64_t t,
                      std::vector<Share>& shares) {
      if (!select_nodes(req, cands, shares)) return false;
      if (slurm_chooses(req, t)) {
        thread_local std::vector<Share> slurm;
        if (select_like_slurm(req, cands, slots, slurm)) shares.swap(slurm);
      }
      return true;
    }

    // The earliest start at or after `from` where `req` fits for `duration` (kNever: not
    // within the horizon), with the nodes chosen.
    Found find_start(const Request& req, const std::vector<int>& nodes, int64_t from,
                     int64_t duration, int64_t horizon) {
      Found f;
      const size_t required = req.required.size();
      int64_t t = profile.round_up(std::max(from, now));
      if (from <= now) t = now;
      while (t <= horizon) {
        cands.clear();
        later.clear();
        growth.clear();
        int64_t required_next = t;  // required nodes must all be there
        bool required_never = false;
        for (size_t i = 0; i < nodes.size(); ++i) {
          const int slot = nodes[i];
          const Profile::Span w = window(slot, req, t, duration);
          ++d.work;
          if (w.start == t) {
            const Profile::Window full = profile.fill(slot, req, slots[slot], w);
            cands.push_back({slot, full.free, full.cap});
            // Its room may grow when its next step comes.
            if (w.next_change < kNever) growth.push_back(w.next_change);
          } else if (w.start < kNever) {
            later.push_back(w.start);
            if (i < required) required_next = std::max(required_next, w.start);
          } else if (i < required) {
            required_never = true;
          }
        }
        // -w nodes must all be in the candidate list (they come first in `nodes`).
        if (nodes.size() < required || required_never) return f;
        size_t required_here = 0;
        for (size_t i = 0; i < cands.size() && i < required; ++i)
          if (cands[i].slot == nodes[i]) ++required_here;
        if (required_here == required && static_cast<int>(cands.size()) >= req.nmin &&
            choose_nodes(req, cands, t, f.shares)) {
          f.start = t;
          return f;
        }
        const int missing = req.nmin - static_cast<int>(cands.size());
        if (missing <= 0) {
          // Enough nodes, too little room on them: try again when anything changes.
          later.insert(later.end(), growth.begin(), growth.end());
          if (later.empty()) return f;
          t = std::max(*std::min_element(later.begin(), later.end()), required_next);
          continue;
        }
        if (static_cast<int>(later.size()) < missing) return f;
        std::nth_element(later.begin(), later.begin() + (missing - 1), later.end());
        t = std::max(later[missing - 1], required_next);
        if (t <= now) return f;  // cannot happen: every later start is > t
      }
      return f;
    }

    // What the pass knows of the nodes for a node set, need and length, and, where it holds
    // for the request, what it knows for the nearest shorter lengths: a node that cannot take
    // part for that long cannot for longer either. (Looking further costs more than it saves.)
    static constexpr size_t kShorter = 2;
    struct Known {
      NodeBounds& own;
      std::array<const NodeBounds*, kShorter> shorter{};
    };
    Known known_for(const PassKey& key, const Request& req) {
      auto [it, added] = bounds.try_emplace(key, &memo.bounds_memory);
      std::vector<std::pair<PassKey, NodeBounds*>>& lengths =
          bounds_by_length[PassKey{key.part, key.id, key.member}];
      if (added) lengths.emplace_back(key, &it->second);
      Known k{it->second};
      if (!req.exact_starts) return k;
      std::array<int64_t, kShorter> length{};
      for (const auto& [other, b] : lengths) {
        if (other.length >= key.length || other.holds > key.holds) continue;
        // Keep the kShorter longest, nearest first.
        const NodeBounds* candidate = b;
        int64_t l = other.length;
        for (size_t i = 0; i < kShorter; ++i)
          if (k.shorter[i] == nullptr || l > length[i]) {
            std::swap(k.shorter[i], candidate);
            std::swap(length[i], l);
            if (candidate == nullptr) break;
          }
      }
      return k;
    }

    // Whether every time a search from `from` can meet fits NodeBounds (based at now): the
    // times it starts from and the profile's steps and reservation ends it finds. (Beyond
    // that, some 68 years ahead, find_start does without.)
    bool bounds_hold(int64_t from) const {
      auto fits = [&](int64_t t) { return t >= kNever || NodeBounds::in_range(now, t); };
      return fits(from) && fits(profile.latest()) && fits(profile.round_up(latest_block_end));
    }

    // Nodes past those that hold a job in node order that a start now also looks at.
    static constexpr size_t kSlurmLookahead = 64;

    // A search that finds at most this many nodes free at a time moves on to the next time
    // any other node may be (see find_start_bounded).
    static constexpr size_t kFewFree = 4;

    // find_start for requests without -w nodes, looking at a time only at the nodes not known
    // to be unable to take part then (NodeBounds). Due nodes are examined in node order:
    // select_nodes first tries the nodes in that order, and once the nodes found so far hold the
    // job that way, more nodes would not change its choice, so the search stops there. Only when
    // node order fails (too few nodes may be used) does select_nodes need every node free at t.
    Found find_start_bounded(const Request& req, const std::vector<int>& nodes, int64_t from,
                             int64_t duration, int64_t horizon, Known known) {
      Found f;
      NodeBounds& b = known.own;
      if (!b.ready(nodes.size())) b.init(nodes.size(), now);
      for (const NodeBounds*& other : known.shorter)
        if (other != nullptr && !other->ready(nodes.size())) other = nullptr;
      std::vector<Feasible>& feas = feasible;
      const size_t nmin = static_cast<size_t>(req.nmin), nmax = static_cast<size_t>(req.nmax);
      int64_t t = b.first_due(from);
      while (t <= horizon && t < kNever) {
        feas.clear();
        cands.clear();
        // Node order over the first nmax nodes free at t: the tasks they hold by their CPUs
        // (an upper bound, cheap) and, once that would do, what they really hold.
        int64_t cpu_room = 0, room = 0;
        bool in_order_fails = false;
        // A start now is chosen as Slurm chooses (choose_nodes) once node order holds the job:
        // from the nodes found so far and the next kSlurmLookahead that can take part (all of
        // them on a cluster of up to some dozens of nodes; looking at every node free now for
        // every job that starts costs a large cluster's pass a tenth).
        const bool starts_now = slurm_chooses(req, t);
        size_t in_order_holds_at = 0;  // feas.size() when node order held the job (0: not yet)
        for (int pos = b.next_due(0, t); pos >= 0; pos = b.next_due(pos + 1, t)) {
          // What may be read next, asked for at once so that the misses overlap: the
          // shorter lengths' spans and the node's timeline (most of a search's time is
          // waiting for memory).
          for (const NodeBounds* other : known.shorter)
            if (other != nullptr) other->prefetch(pos);
          profile.prefetch(nodes[pos]);
          // Known for a shorter length: no need to look at the node.
          const NodeBounds* by = nullptr;
          for (const NodeBounds* other : known.shorter)
            if (other != nullptr && !other->due(pos, t)) {
              by = other;
              break;
            }
          if (by != nullptr) {
            b.learn_from(pos, *by);
            continue;
          }
          const int slot = nodes[pos];
          const Profile::Span w = window(slot, req, t, duration);
          ++d.work;
          if (w.start != t) {
            b.learn(pos, t, w.start);
            continue;
          }
          feas.push_back({pos, w});
          if (in_order_holds_at > 0) {
            if (feas.size() >= in_order_holds_at + kSlurmLookahead) break;
            continue;
          }
          if (in_order_fails) continue;
          const size_t k = feas.size();
          if (k <= nmax) cpu_room += req.tasks_by_cpus(profile.min_cpus(slot, w));
          if (k >= nmin && cpu_room >= req.ntasks) {
            for (size_t i = cands.size(); i < std::min(k, nmax); ++i) {
              const int at = nodes[feas[i].pos];
              const Profile::Window full = profile.fill(at, req, slots[at], feas[i].w);
              cands.push_back({at, full.free, full.cap});
              room += full.cap;
            }
            if (room >= req.ntasks) {
              if (select_in_node_order(req, cands, f.shares)) {
                f.start = t;
                if (!starts_now) return f;
                in_order_holds_at = feas.size();
                continue;
              }
              in_order_fails = true;  // (GPUs per job): more nodes would not take part
            }
          }
          if (k >= nmax) in_order_fails = true;
        }
        if (in_order_holds_at > 0) {
          // The nodes seen, as select_nodes and Slurm would choose from them (node order
          // holds the job on the first of them, so select_nodes does).
          fill_candidates(req, nodes, feas);
          std::vector<Share> chosen;
          if (choose_nodes(req, cands, t, chosen)) f.shares = std::move(chosen);
          return f;
        }
        if (in_order_fails && feas.size() > nmin) {
          // select_nodes' other way, the roomiest nodes first, needs every node free at t.
          // Unless they hold all the tasks together it fails; by their CPUs first (cheap).
          int64_t all_room = 0;
          for (const auto& x : feas)
            all_room += req.tasks_by_cpus(profile.min_cpus(nodes[x.pos], x.w));
          if (all_room >= req.ntasks) {
            all_room = fill_candidates(req, nodes, feas);
            if (all_room >= req.ntasks && choose_nodes(req, cands, t, f.shares)) {
              f.start = t;
              return f;
            }
          }
        }
        int64_t next;
        const size_t missing = nmin - std::min(nmin, feas.size());
        if (missing == 0) {
          // Enough nodes, too little room on them: try again when anything changes.
          next = b.kth_due_after(t, 1, kNever);
          for (const auto& x : feas) next = std::min(next, x.w.next_change);
        } else {
          // Too few nodes: none can be placed before the missing-th of the others is due.
          // Any earlier time does as well (it finds too few), and with few nodes free now
          // looking at them again at the times before costs less than finding that one
          // (unless the bounds are a plain list).
          const bool few = feas.size() <= kFewFree && !b.scans();
          next = b.kth_due_after(t, few ? 1 : static_cast<int>(missing), kNever);
        }
        t = next;
      }
      return f;
    }

    int index_of(const PartitionView& part) const {
      return static_cast<int>(&part - view.partitions.data());
    }
    // The request's numbered filter and shape (numbered when it was compiled).
    int filter_of(const Request& req) {
      return req.filter_id >= 0 ? req.filter_id : Memo::intern(memo.filter_ids, req.filter_key);
    }
    int shape_of(const Request& req) {
      return req.shape_id >= 0
                 ? req.shape_id
                 : Memo::intern(memo.shape_ids, req.filter_key + '\x1e' + req.shape_key);
    }
    int need_of(const Request& req) {
      return req.need_id >= 0
                 ? req.need_id
                 : Memo::intern(memo.need_ids, req.filter_key + '\x1e' + req.node_need_key);
    }

    // Requests with equal keys need the same on the same nodes (and may use the same
    // reservation).
    PassKey shape_key(const PartitionView& part, const Request& req) {
      return {index_of(part), shape_of(req), member};
    }

    // Whether the request fits the partition's nodes (down ones included) were they idle.
    bool fits_empty(const PartitionView& part, const Request& req) {
      const PassKey key = shape_key(part, req);
      if (auto it = fits_cache.find(key); it != fits_cache.end()) return it->second;
      std::vector<Candidate> all;
      std::vector<Share> shares;
      const bool ok =
          fitting_nodes(req, part.nodes, slots, true, all) && select_nodes(req, all, shares);
      fits_cache.emplace(key, ok);
      return ok;
    }

    bool budget_left() {
      if (view.params.work_budget > 0 && d.work >= view.params.work_budget) out_of_budget = true;
      if (!out_of_budget && view.out_of_time && view.out_of_time())
        timed_out = out_of_budget = true;
      return !out_of_budget;
    }

    // Starts the job now on the chosen shares.
    void start(const core::Job& job, const PartitionView& part, const Request& req, const Found& f,
               int64_t duration) {
      Start s{job.id, part.name, {}};
      const int64_t end = duration >= kNever ? kNever : profile.round_up(now + duration);
      for (const Share& sh : f.shares) {
        NodeSlot& slot = slots[sh.slot];
        const Amount use = req.usage(slot, slot.free_now, sh.tasks, sh.job_gpus);
        core::NodeAlloc a(slot.node->name, use.cpus, use.mem_mb, sh.tasks);
        pick_ids(slot, kinds, use, a);
        slot.free_now -= use;
        slot.running_jobs += 1;
        profile.reserve(sh.slot, now, end, use);
        s.alloc.push_back(std::move(a));
      }
      d.starts.push_back(std::move(s));
    }

    void reserve(const core::Job& job, const PartitionView& part, const Request& req,
                 const Found& f, int64_t duration) {
      const int64_t end = duration >= kNever ? kNever : profile.round_up(f.start + duration);
      PlannedStart p{job.id, f.start, part.name, {}, {}};
      p.shares.reserve(f.shares.size());
      p.nodes.reserve(f.shares.size());
      for (const Share& sh : f.shares)
        p.shares.push_back({static_cast<uint32_t>(sh.slot), static_cast<uint32_t>(sh.tasks),
                            static_cast<uint32_t>(sh.job_gpus)});
      for (const Share& sh : f.shares) {
        // The plan charges counts; ids are chosen when the job starts.
        profile.reserve(sh.slot, f.start, end,
                        req.usage(slots[sh.slot], sh.free, sh.tasks, sh.job_gpus));
        // (The memo's copy of the names, side by side, rather than each node's record.)
        p.nodes.push_back(memo.node_names[static_cast<size_t>(sh.slot)]);
      }
      d.planned.push_back(std::move(p));
    }

    // Why a job cannot start in `part` whatever the nodes are doing ("" when it may);
    // `blocked`: a job before it in the partition is waiting.
    static std::string_view static_reason(const core::Job& job, const PartitionView* part,
                                          const Request& req, bool blocked) {
      if (part == nullptr) return "BadConstraints";
      if (!part->not_running_reason.empty()) return part->not_running_reason;
      if (part->max_time_min >= 0 &&
          (job.time_limit_min < 0 || job.time_limit_min > part->max_time_min))
        return "PartitionTimeLimit";
      if (blocked) return "Priority";
      if (static_cast<int>(part->nodes.size()) < req.nmin ||
          (part->max_nodes > 0 && req.nmin > part->max_nodes))
        // Slurm: a node count the user asked for is a node limit; one derived from the
        // task count is a configuration mismatch.
        return req.nodes_set ? "PartitionNodeLimit" : "PartitionConfig";
      return "";
    }

    const PartitionView* find_partition(const std::string& name) const {
      for (const auto& p : view.partitions)
        if (p.name == name) return &p;
      return nullptr;
    }

    Decisions run() {
      struct Entry {
        int tier;
        uint32_t priority;
        int64_t submit_time;
        uint64_t id;
        const core::Job* job;
      };
      std::vector<Entry> order;
      order.reserve(view.pending.size());
      for (const core::Job* job : view.pending) {
        int tier = 0;
        auto take = [&](const std::string& name) {
          if (const PartitionView* p = find_partition(name))
            tier = std::max(tier, p->priority_tier);
        };
        // (Most jobs name one partition: no list made for it.)
        if (job->spec.partitions.size() < 2) {
          take(job->partition);
        } else {
          for (const auto& name : job->spec.partitions) take(name);
        }
        order.push_back({tier, job->priority, job->submit_time, job->id, job});
      }
      std::sort(order.begin(), order.end(), [](const Entry& a, const Entry& b) {
        if (a.tier != b.tier) return a.tier > b.tier;
        if (a.priority != b.priority) return a.priority > b.priority;
        if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
        return a.id < b.id;
      });
      d.reasons.reserve(order.size());
      if (policy != Policy::Fifo) d.planned.reserve(order.size());

      // Partitions where a job could not start, by name (the answer) and by index; EASY:
      // partitions whose first blocked job has a plan.
      std::set<std::string>& blocked_names = d.blocked_partitions;
      blocked_names = view.blocked_partitions;
      std::vector<char> blocked(view.partitions.size(), 0), reserved(view.partitions.size(), 0);
      for (size_t i = 0; i < view.partitions.size(); ++i)
        blocked[i] = blocked_names.count(view.partitions[i].name) > 0;
      auto block = [&](const PartitionView& part) {
        blocked_names.insert(part.name);
        blocked[index_of(part)] = 1;
      };
      auto is_blocked = [&](const PartitionView* part) {
        return part != nullptr && blocked[index_of(*part)];
      };
      std::unordered_map<uint32_t, int> tested_per_user;
      std::vector<const PartitionView*> parts;  // the job's partitions (null: no such one)
      std::vector<std::string> one_name(1);
      std::optional<LimitPass> limits;  // usage of running jobs, then of those started here
      if (view.limits != nullptr)
        limits.emplace(*view.limits, view.running, view.def_mem_per_cpu_mb,
                       view.def_mem_per_node_mb);
      const int64_t horizon =
          view.params.bf_window_s > 0 ? now + view.params.bf_window_s : kNever - 1;
      int tested = 0;

      for (const Entry& e : order) {
        const core::Job& job = *e.job;
        if (!budget_left() ||
            (view.params.bf_max_job_test > 0 && tested >= view.params.bf_max_job_test)) {
          d.reasons.push_back({job.id, job.reason == "None" ? "Priority" : job.reason});
          if (timed_out) d.not_considered.push_back(job.id);
          continue;
        }
        if (view.params.bf_max_job_user > 0 &&
            tested_per_user[job.uid] >= view.params.bf_max_job_user) {
          d.reasons.push_back({job.id, job.reason == "None" ? "Priority" : job.reason});
          continue;
        }
        ++tested;
        if (view.params.bf_max_job_user > 0) ++tested_per_user[job.uid];
        const Request& req = memo.request(job.spec, kinds);
        int64_t duration = duration_s(job.time_limit_min);
        // A member of a reservation runs within its window and is expected to end by its
        // end at the latest.
        member = -1;
        const ReservationView* resv = nullptr;
        if (!job.spec.reservation.empty()) {
          auto it = resv_by_name.find(job.spec.reservation);
          if (it == resv_by_name.end() || view.reservations[it->second].end <= now) {
            d.reasons.push_back({job.id, "ReservationDeleted"});
            continue;
          }
          member = it->second;
          resv = &view.reservations[member];
          if (!resv->flex) duration = std::min(duration, resv->end - std::max(now, resv->start));
        }
        const bool bounded_by_resv = resv != nullptr && !resv->flex;
        holds_for = duration;
        plan = plans.find(job.id);
        never_planned = plan == nullptr || plan->shares.empty();
        int limit = 1;
        if (auto it = view.start_limit.find(job.id); it != view.start_limit.end())
          limit = it->second;
        if (job.spec.partitions.size() < 2) one_name[0] = job.partition;
        const std::vector<std::string>& names =
            job.spec.partitions.size() < 2 ? one_name : job.spec.partitions;
        parts.clear();
        for (const auto& name : names) parts.push_back(find_partition(name));

        std::string reason;
        bool first_try = true;  // (an array's further tasks have no plan of their own)
        while (limit > 0) {
          if (limits && !(reason = limits->before(job, job.partition)).empty()) break;
          // The earliest start over the job's partitions (the first listed wins a tie).
          Found best;
          const PartitionView* best_part = nullptr;
          int64_t best_length = 0;
          for (const PartitionView* part : parts) {
            if (!static_reason(job, part, req, policy == Policy::Fifo && is_blocked(part)).empty())
              continue;
            const auto& nodes = candidates(*part, req);
            // FIFO, and EASY once the partition has its reservation, only ask "now?".
            const bool now_only =
                policy == Policy::Fifo || (policy == Policy::Easy && reserved[index_of(*part)]);
            const PassKey key = shape_key(*part, req);
            ShapeCursor* cursor = nullptr;
            int64_t from = now;
            if (!now_only) {
              cursor = &cursors[key];
              from = std::max(now, cursor->lower_bound(duration));
            }
            int64_t until = now_only ? now : horizon;
            if (bounded_by_resv) {
              from = std::max(from, resv->start);
              until = std::min(until, resv->end - 1);
            }
            const int64_t length = policy == Policy::Fifo ? 1 : duration;
            Found f;
            if (from > until) {
              // Not within its reservation's window (yet).
            } else if (req.required.empty() && bounds_hold(from)) {
              // Where reservations can be run into, how long the job holds its nodes
              // matters even when the profile is asked about one instant (FIFO).
              PassKey bounds_key{key.part, need_of(req), member, length};
              if (!view.reservations.empty()) bounds_key.holds = holds_for;
              f = find_start_bounded(req, nodes, from, length, until, known_for(bounds_key, req));
            } else {
              f = find_start(req, nodes, from, length, until);
            }
            if (cursor != nullptr && !out_of_budget) cursor->record(duration, f.start);
            if (f.start < best.start) {
              best = std::move(f);
              best_part = part;
              best_length = length;
            }
          }
          if (best_part != nullptr && first_try)
            keep_planned_nodes(*best_part, req, best_length, best);
          first_try = false;
          if (best_part != nullptr && best.start == now) {
            JobTres held;  // limits again, with what the placement holds (Slurm's post-select)
            if (limits) held = placement_tres(req, best.shares, slots, kinds);
            if (limits && !(reason = limits->at_start(job, best_part->name, held)).empty()) break;
            start(job, *best_part, req, best, duration);
            if (limits) limits->started(job, best_part->name, held);
            --limit;
            continue;
          }
          if (!bounded_by_resv || resv->start <= now)
            if (preempt_for(job, names, req, duration)) {
              reason = "Resources";  // until the jobs it preempts are gone
              break;
            }
          // Blocked: the first job blocked in a partition waits for Resources, the ones
          // behind it for Priority; the first partition listed gives the reason.
          for (const PartitionView* part : parts) {
            reason = unavailable_required(req, part);
            if (reason.empty()) reason = static_reason(job, part, req, is_blocked(part));
            if (reason.empty() && bounded_by_resv && resv->start > now) reason = "Reservation";
            if (reason.empty() && part != nullptr) reason = reservation_reason(*part, req);
            if (reason.empty()) reason = "Resources";
            break;
          }
          // Only a job that could run on the partition's nodes were they all up and idle
          // holds up the jobs behind it.
          // A reservation's member waits on its reservation alone.
          // (Nothing to do when all its partitions are held up already.)
          if (!bounded_by_resv && !std::all_of(parts.begin(), parts.end(), is_blocked))
            for (const PartitionView* part : parts)
              if (static_reason(job, part, req, false).empty() && fits_empty(*part, req)) {
                block(*part);
                break;
              }
          if (best_part != nullptr) {
            if (best.start < kNever && policy != Policy::Fifo &&
                (policy == Policy::Conservative || !reserved[index_of(*best_part)])) {
              reserve(job, *best_part, req, best, duration);
              reserved[index_of(*best_part)] = 1;
            }
          }
          break;
        }
        if (limit > 0) d.reasons.push_back({job.id, reason.empty() ? "Resources" : reason});
      }
      return std::move(d);
    }
  };
};

}  // namespace

std::unique_ptr<Scheduler> make_scheduler() { return std::make_unique<Engine>(std::nullopt); }
std::unique_ptr<Scheduler> make_fifo_scheduler() { return std::make_unique<Engine>(Policy::Fifo); }

}  // namespace drover::sched
