#pragma once
// data_parser v0.0.44's sinfo entry (sinfo --json's "sinfo" list): one line of sinfo, i.e. the
// nodes of a partition that sinfo groups together, with their counts, ranges and partition.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace drover::proto::data_parser {

// Allocated / idle / other / total, as sinfo's %F (nodes) and %C (CPUs) print them.
struct SinfoCounts {
  int64_t allocated = 0, idle = 0, other = 0, total = 0;
};
// Nodes: allocated or mixed (or draining) count as allocated, idle as idle, the rest other.
SinfoCounts sinfo_node_counts(const std::vector<const nlohmann::json*>& nodes);
// CPUs: in use count as allocated; the free ones of down, drained or unknown nodes as other.
SinfoCounts sinfo_cpu_counts(const std::vector<const nlohmann::json*>& nodes);

// One entry from the partition's view (null when the line has none) and the node views of the
// line (the controller's `query nodes` answer); `user_name` names the uid that set a reason.
nlohmann::json sinfo_entry(const nlohmann::json* partition,
                           const std::vector<const nlohmann::json*>& nodes,
                           const std::string& cluster,
                           const std::function<std::string(uint32_t)>& user_name);

}  // namespace drover::proto::data_parser
