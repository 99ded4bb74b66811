#pragma once
// The autoscaler's what-if planner: how many nodes of which NodeSet to start so that pending
// jobs start sooner, and which idle nodes may go. Pure, like the engine it drives: no clock,
// no I/O, no Kubernetes. It runs the scheduling engine itself on the real nodes plus
// hypothetical ones of each NodeSet's shape, so every rule the engine applies (partitions,
// limits, QOS, reservations, --exclusive, GPUs and their types, features, node Weight) decides
// what the new nodes are for. Held, dependent and not-yet-eligible jobs are left out of the
// view by the caller exactly as for a scheduling pass, so they are not scaled for.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/node.hpp"
#include "sched/scheduler.hpp"

namespace drover::sched {

// One node a NodeSet already has (its pod exists).
struct NodeSetMember {
  // Its index in ClusterView::nodes; -1 when it is not there yet (a pod not yet registered).
  int slot = -1;
  // When it takes jobs: at or before now for a node that is up; later for one starting.
  int64_t ready_at = 0;
  // Since when it runs nothing; -1 while it runs a job (or is starting).
  int64_t idle_since = -1;
};

// An autoscaled group of identical nodes (a Kubernetes NodeSet), as the planner sees it.
struct NodeSetView {
  std::string name;
  // The shape of one node: cpus, sockets/cores, real_memory_mb, gres/gres_total, features,
  // tmp_disk_mb. Name, state and Weight are the planner's.
  core::Node shape;
  std::vector<std::string> partitions;  // the partitions its nodes join
  double cost = 1;                      // relative cost of a node; cheaper sets are preferred
  int min_replicas = 0, max_replicas = 0;
  int64_t start_delay_s = 60;    // from the decision to a node that takes jobs
  int64_t idle_timeout_s = 600;  // idle this long, and not wanted by the plan: removed
  std::vector<NodeSetMember> members;
};

struct AutoscaleParams {
  // A new node is started now when the plan uses it by now + its start delay + this; nodes
  // the plan uses only later are left to a later decision (AutoscaleDecision::next_check).
  int64_t lookahead_s = 60;
};

struct AutoscaleDecision {
  struct Set {
    int add = 0;                       // nodes to start now
    std::vector<int> remove;           // members to drain and remove (indices into members)
    int wanted = 0;                    // new nodes the whole plan uses (now or later)
    std::vector<uint64_t> scaled_for;  // pending jobs the added nodes are for
    // Pending jobs the plan puts on new nodes of this set, now or later (its demand).
    std::vector<uint64_t> planned_for;
  };
  std::vector<Set> sets;  // one per NodeSetView, in the same order
  // Pending jobs that no NodeSet at its maximum could ever run, with why (they are not
  // scaled for).
  std::vector<PendingReason> unrunnable;
  // The next time the answer may change with nothing else happening (a node the plan wants
  // later, an idle timeout running out); kNoCheck: none.
  int64_t next_check = kNoCheck;
  uint64_t work = 0;  // the engine's work counter for the what-if pass
  static constexpr int64_t kNoCheck = INT64_MAX;
};

// Nodes being started, as a scheduling pass should see them: usable (registered) nodes kept
// from every job until they are up, by windows no job can name. Jobs then plan on them and
// wait for them, and nothing backfills onto the nodes such a plan holds meanwhile.
// `ready` is (index in ClusterView::nodes, when it is up); those up by `now` are skipped.
std::vector<ReservationView> starting_node_windows(
    const std::vector<std::pair<int, int64_t>>& ready, int64_t now);

// Keeps its own engine (and its memory) from one decision to the next, apart from the
// controller's: a what-if pass does not disturb what the real passes have learnt.
class Autoscaler {
 public:
  Autoscaler();
  ~Autoscaler();
  Autoscaler(const Autoscaler&) = delete;
  Autoscaler& operator=(const Autoscaler&) = delete;

  // `view` is what a full scheduling pass would get at `now` (its policy is planned
  // conservatively whatever it says, so that every pending job gets a plan).
  AutoscaleDecision decide(const ClusterView& view, const std::vector<NodeSetView>& sets,
                           int64_t now, const AutoscaleParams& params = {});

 private:
  std::unique_ptr<Scheduler> engine_;
  // The hypothetical and starting nodes of the last decision (the view points into them).
  std::vector<std::unique_ptr<core::Node>> extra_;
  // A job array's pending tasks beyond the first, as jobs of their own, so that each gets a
  // plan (the engine plans one per array record); by the array record they stand for.
  std::vector<std::unique_ptr<core::Job>> tasks_;
};

}  // namespace drover::sched
