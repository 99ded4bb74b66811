#pragma once
// A launch message from the state machine names its job's payload (script and submitted
// environment, kept in the journal rather than in memory); the server completes it here.
#include <nlohmann/json.hpp>

#include "proto/agent_msg.hpp"

namespace drover::ctld {

// Adds the payload's script and environment to a launch message: the submitted
// environment first, the variables the controller sets (SLURM_*, ...) over it.
void complete_launch(proto::Launch& launch, const nlohmann::json& payload);

}  // namespace drover::ctld
