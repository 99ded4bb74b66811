#pragma once
// A job's resource request compiled once per pass from its JobSpec: the per-node rule
// (tasks a node can hold given what is free there, and what those tasks use), the node
// filter (-w/-x/-C) and the node/task counts.
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
  std::string shape_key;   // equal keys (and filters): equal needs on every node

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
  // What `tasks` tasks (and `job_gpus` of a --gpus job's GPUs) use on the node, the GRES
  // taken from the kinds free in `free`, in kind order.
  Amount usage(const NodeSlot& slot, const Amount& free, int tasks, int job_gpus) const;

 private:
  int64_t mem_for(const NodeSlot& slot, int tasks, int64_t gpus_here) const;
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
// in order, using at most nmax nodes. Returns false when the request cannot be met.
bool select_nodes(const Request& req, std::vector<Candidate>& cands, std::vector<Share>& out);

}  // namespace drover::sched
