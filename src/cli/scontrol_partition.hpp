#pragma once
// scontrol update PartitionName=X Key=Value...: the values checked and typed on the client,
// with Slurm 22.05's scontrol messages, before the controller is asked.
#include <optional>
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"
#include "proto/request.hpp"

namespace drover::cli {

struct PartitionUpdate {
  std::optional<proto::PartitionUpdateRequest> request;  // none: nothing to send
  CommandResult result;  // what to print (and the exit status) when nothing is sent
};

// `args` are the words after "update" (the first is PartitionName=...).
PartitionUpdate parse_partition_update(const std::vector<std::string>& args);

// scontrol update JobId=...: a numeric value scontrol refuses itself (Priority, Nice,
// NumNodes, NumTasks, MinCPUsNode out of range or not a number), with its message and exit
// status (0 for a node count, as Slurm's); nullopt when the controller is to judge it.
std::optional<CommandResult> job_update_number_error(const std::string& key,
                                                     const std::string& value);

// Parses, asks the controller, prints; returns the exit status.
int scontrol_partition_update(const std::vector<std::string>& args);

}  // namespace drover::cli
