#pragma once
// A job's resource request compiled once per pass from its JobSpec: the per-node rule
// (tasks a node can hold given what is free there, and what those tasks use), the node
// filter (-w/-x/-C) and the node/task counts.
#include <array>
#include <climits>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/constraint.hpp"
#include "core/job.hpp"
#include "sched/resources.hpp"

namespace drover::sched {

struct Request {
  enum class Mem : uint8_t { WholeNode, PerNode, PerCpu, PerGpu };
  struct Gres {
    uint32_t mask = 0;  // kinds it may draw from
    int32_t count = 0;
  };

  bool valid = true;  // false: options no node can satisfy (unknown GRES, bad filter)
  int cpt = 1, ntasks = 1, nmin = 1, nmax = 1, ntasks_per_node = 0;
  bool exclusive = false;
  bool nodes_set = false;
  Mem mem = Mem::WholeNode;
  int64_t mem_value = 0;
  std::vector<Gres> per_node;
  Gres per_task, per_job;
  uint32_t gpu_mask = 0;  // every GPU kind (for --mem-per-gpu)

  // -w / -x / -C
  std::vector<std::string> required;
  std::set<std::string> excluded;
  core::Constraint constraint;
  bool filtered = false;
  std::string filter_key;  // equal keys: equal node filters
  std::string shape_key;   // equal keys (and filters): equal requests
  // Equal keys (and filters): equal needs on each node (what a node must hold; shapes that
  // differ only in how many nodes and tasks they want in all share it).
  std::string node_need_key;
  // Whether a node's earliest start is found exactly (Profile::earliest_span checks each step
  // against the floor): only then does what a pass learns about a node hold for other shapes
  // with the same need and for longer lengths. (Without a floor a start can be passed over:
  // what several steps leave together, e.g. GPUs of several kinds, is checked, not each step.)
  bool exact_starts = true;
  int filter_id = -1, shape_id = -1, need_id = -1;  // the keys numbered by the engine (-1: not)

  // What a node must have free to hold a given number of tasks, as thresholds per
  // component: holding them is having at least that much of each (and, for --exclusive or
  // a whole node's memory, the node's whole capacity there).
  struct Floor {
    static constexpr int64_t kNone = INT64_MIN;
    int64_t cpus = 0, mem_mb = kNone;
    bool whole_mem = false, whole_node = false;
    int kinds = 0;  // GRES kinds in the pass (for whole_node)
    int gres_n = 0;
    std::array<uint8_t, kMaxGresKinds> kind{};
    std::array<int64_t, kMaxGresKinds> gres{};
    // `free`: an Amount, or anything else cpus_of, mem_of and gres_of read (the profile's
    // packed steps).
    template <typename Free>
    bool covered_by(const NodeSlot& slot, const Free& free) const {
      const int64_t free_mem = mem_of(free);
      const int32_t free_cpus = cpus_of(free);
      if (free_cpus < cpus || free_mem < mem_mb) return false;
      for (int i = 0; i < gres_n; ++i)
        if (gres_of(free, kind[i]) < gres[i]) return false;
      if (whole_mem && free_mem < slot.total.mem_mb) return false;
      if (whole_node) {
        if (free_cpus < slot.total.cpus || free_mem < slot.total.mem_mb) return false;
        for (int k = 0; k < kinds; ++k)
          if (gres_of(free, k) < slot.total.gres[k]) return false;
      }
      return true;
    }
  };

  // Reads only the spec fields that engine.cpp's SpecKey lists (compiled requests are kept
  // by those): keep the two in step.
  static Request compile(const core::JobSpec& spec, const GresKinds& kinds,
                         int64_t def_mem_per_cpu_mb, int64_t def_mem_per_node_mb);

  // Tasks every node of a placement must be able to hold (--ntasks-per-node with exactly
  // that many tasks per node), else 1.
  int min_tasks_per_node() const {
    return ntasks_per_node > 0 && ntasks >= nmax * ntasks_per_node ? ntasks_per_node : 1;
  }
  bool allows(const core::Node& n) const;
  bool requires_node(const std::string& name) const;
  // Tasks a node can hold when `free` is what is left there (0: none).
  int tasks_fit(const NodeSlot& slot, const Amount& free) const;
  // Whether `free` holds `tasks` tasks there and `job_gpus` GPUs of a --gpus request besides
  // (a placement chosen earlier, checked again).
  bool holds(const NodeSlot& slot, const Amount& free, int tasks, int job_gpus) const;
  // What tasks_fit allows at most with `cpus` free (whatever else is free).
  int tasks_by_cpus(int32_t cpus) const {
    int cap = cpt == 1 ? cpus : cpus / cpt;
    if (ntasks_per_node > 0) cap = std::min(cap, ntasks_per_node);
    return std::max(0, cap);
  }
  // The floor for `min_tasks` tasks: tasks_fit(slot, free) >= min_tasks exactly when
  // covered_by(slot, free). False for requests that have none (GPUs drawn from several
  // kinds, --gpus, --mem-per-gpu): ask tasks_fit then.
  bool make_floor(int min_tasks, Floor& out) const;
  // The floor kept for min_tasks_per_node() (null: another count, or none).
  const Floor* kept_floor(int min_tasks) const {
    return floor_tasks_ > 0 && min_tasks == floor_tasks_ ? &floor_ : nullptr;
  }
  // What `tasks` tasks (and `job_gpus` of a --gpus job's GPUs) use on the node, the GRES
  // taken from the kinds free in `free`, in kind order.
  Amount usage(const NodeSlot& slot, const Amount& free, int tasks, int job_gpus) const;

 private:
  int64_t mem_for(const NodeSlot& slot, int tasks, int64_t gpus_here) const;
  bool has_floor_ = false;  // make_floor() applies
  int kinds_ = 0;           // GRES kinds in the pass
  int floor_tasks_ = 0;     // the tasks floor_ is for (0: none kept)
  Floor floor_;
};

// A node that can take part in a placement: its slot, what is free there (throughout the
// period considered) and how many tasks that allows.
struct Candidate {
  int slot;
  Amount free;
  int cap;
};

// The nodes of `nodes` (slot indices) that the request may use and that can hold at least
// one task of it, given what is free (`assume_idle`: their whole capacity, down nodes
// included), with -w nodes first in node order. Returns false when a -w node is missing.
bool fitting_nodes(const Request& req, const std::vector<int>& nodes,
                   const std::vector<NodeSlot>& slots, bool assume_idle,
                   std::vector<Candidate>& out);

// One node's share of a placement.
struct Share {
  int slot;
  int tasks;
  int job_gpus;  // of a --gpus request
  Amount free;   // what was free there when chosen
};

// Chooses nodes and tasks per node from `cands` (in the order given, required nodes first)
// with block distribution: each of the first nmin nodes gets a task, then nodes are filled
// in order, using at most nmax nodes; when that fails, the same with the roomiest nodes
// first. Returns false when the request cannot be met.
bool select_nodes(const Request& req, std::vector<Candidate>& cands, std::vector<Share>& out);
// Slurm 22.05's choice (select/cons_tres without topology) from every node that can take
// part now (`cands` in candidates' order, without -w nodes): runs of nodes next to each other
// of one scheduling weight (Weight, and for GPU jobs the fewer GPUs usable the heavier), the
// lightest run first, among equals the one that holds the job most tightly; in it, for a job
// that may fit on one node, the node that holds it most tightly, else nodes in order. False
// when that does not hold the job (select_nodes may still find a way).
bool select_like_slurm(const Request& req, const std::vector<Candidate>& cands,
                       const std::vector<NodeSlot>& slots, std::vector<Share>& out);
// select_nodes' first way alone: block distribution in the order given. It uses only the
// first nmax nodes, and stops at the first nodes that hold every task: on a longer list that
// begins with the same nodes it chooses the same.
bool select_in_node_order(const Request& req, const std::vector<Candidate>& cands,
                          std::vector<Share>& out);

}  // namespace drover::sched
