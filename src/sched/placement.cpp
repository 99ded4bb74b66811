// Placement outside a scheduling pass: what the controller asks at submission.
#include "sched/request.hpp"
#include "sched/resources.hpp"
#include "sched/scheduler.hpp"

namespace drover::sched {

bool place(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view,
           bool assume_idle, std::vector<core::NodeAlloc>& out) {
  out.clear();
  GresKinds kinds;
  std::vector<NodeSlot> slots = build_slots(view.nodes, view.running, kinds);
  const Request req =
      Request::compile(spec, kinds, view.def_mem_per_cpu_mb, view.def_mem_per_node_mb);
  if (part.max_nodes > 0 && req.nmin > part.max_nodes) return false;
  Request capped = req;
  if (part.max_nodes > 0) capped.nmax = std::min(capped.nmax, part.max_nodes);
  std::vector<Candidate> cands;
  if (!fitting_nodes(req, part.nodes, slots, assume_idle, cands)) return false;
  std::vector<Share> shares;
  if (!select_nodes(capped, cands, shares)) return false;
  for (const Share& sh : shares) {
    NodeSlot& slot = slots[sh.slot];
    const Amount use = capped.usage(slot, sh.free, sh.tasks, sh.job_gpus);
    core::NodeAlloc a(slot.node->name, use.cpus, use.mem_mb, sh.tasks);
    pick_ids(slot, kinds, use, a);
    out.push_back(std::move(a));
  }
  return true;
}

bool can_ever_fit(const core::JobSpec& spec, const PartitionView& part, const ClusterView& view) {
  // Nodes that are down still count: they may come back.
  std::vector<core::NodeAlloc> ignored;
  return place(spec, part, view, true, ignored);
}

}  // namespace drover::sched
