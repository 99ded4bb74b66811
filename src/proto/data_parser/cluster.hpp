#pragma once
// data_parser v0.0.44's node, partition_info and reservation_info from the controller's views
// (what `query nodes|partitions|reservations` answers): the entries of slurmrestd's
// /slurm/v0.0.44/nodes, partitions and reservations, and of scontrol show node|partition
// --json.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace drover::proto::data_parser {

nlohmann::json node_info(const nlohmann::json& node);
nlohmann::json partition_info(const nlohmann::json& partition, const std::string& cluster);
nlohmann::json reservation_info(const nlohmann::json& reservation);

// A node's state as v0.0.44's state array: "IDLE+DRAIN" -> ["IDLE", "DRAIN"].
nlohmann::json node_states(const nlohmann::json& node);
// GresUsed as Slurm prints it: "gpu:a100:2,gpu:1g.10gb:1".
std::string gres_used_text(const nlohmann::json& node);
// CPULoad as data_parser gives it: in hundredths, 0 when unknown.
int64_t cpu_load_hundredths(const nlohmann::json& node);

}  // namespace drover::proto::data_parser
