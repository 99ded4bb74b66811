#pragma once
// From the controller's own records to the operator's snapshot: the seam droverctld's adapter
// uses, kept here so the mapping is unit-tested with the reconciler.
#include <cstdint>
#include <vector>

#include "core/node.hpp"
#include "k8s/operator/observed.hpp"

namespace drover::k8s::op {

// `dynamic`: the node joined at run time (the operator leaves slurm.conf's nodes alone).
// `reason_by`: who set its drain/down reason, as the controller knows (e.g. the operator's own
// commands carry its identity).
DroverNode to_drover_node(const core::Node& n, bool dynamic, ReasonBy reason_by,
                          std::vector<JobOnNode> jobs);

// A running job's expected end from its start time and effective time limit in minutes;
// 0 (unknown) for no start or an unlimited (negative) limit.
int64_t expected_end(int64_t start_time, int64_t time_limit_min);

}  // namespace drover::k8s::op
