#pragma once
// How a job is confined on one of its nodes (proto::Confine), from slurm.conf's ProctrackType and
// TaskPlugin and cgroup.conf: what the agent's supervisor applies to the job's cgroups there.
#include <optional>

#include "core/job.hpp"
#include "core/node.hpp"
#include "ctld/config.hpp"
#include "proto/agent_msg.hpp"

namespace drover::ctld {

// nullopt when slurm.conf names neither ProctrackType nor TaskPlugin (the agent then limits the
// memory the job asked for, drover's own rule). `node` may be null (its memory unknown: the
// job's own is the only bound).
std::optional<proto::Confine> node_confine(const Config& config, const core::NodeAlloc& held,
                                           const core::Node* node);

}  // namespace drover::ctld
