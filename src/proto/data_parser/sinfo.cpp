#include "proto/data_parser/sinfo.hpp"

#include <algorithm>

#include "proto/data_parser/cluster.hpp"
#include "proto/data_parser/values.hpp"

namespace drover::proto::data_parser {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// {"minimum", "maximum"} of a numeric field over the nodes (0 for none).
json min_max(const std::vector<const json*>& nodes, const char* key, int64_t dflt) {
  int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const int64_t v = num(*nodes[i], key, dflt);
    lo = i == 0 ? v : std::min(lo, v);
    hi = i == 0 ? v : std::max(hi, v);
  }
  return {{"minimum", lo}, {"maximum", hi}};
}

}  // namespace

SinfoCounts sinfo_node_counts(const std::vector<const json*>& nodes) {
  SinfoCounts c;
  for (const json* n : nodes) {
    const std::string st = str(*n, "state_short");
    if (starts_with(st, "alloc") || starts_with(st, "mix") || starts_with(st, "drng"))
      ++c.allocated;
    else if (starts_with(st, "idle"))
      ++c.idle;
    else
      ++c.other;
    ++c.total;
  }
  return c;
}

SinfoCounts sinfo_cpu_counts(const std::vector<const json*>& nodes) {
  SinfoCounts c;
  for (const json* n : nodes) {
    const int64_t cpus = num(*n, "cpus", 1), used = num(*n, "alloc_cpus");
    const std::string st = str(*n, "state_short");
    c.total += cpus;
    c.allocated += used;
    if (starts_with(st, "down") || starts_with(st, "drain") || starts_with(st, "unk"))
      c.other += cpus - used;
    else
      c.idle += cpus - used;
  }
  return c;
}

json sinfo_entry(const json* partition, const std::vector<const json*>& nodes,
                 const std::string& cluster,
                 const std::function<std::string(uint32_t)>& user_name) {
  static const json kNoNode = json::object();
  const json& first = nodes.empty() ? kNoNode : *nodes.front();
  const SinfoCounts n = sinfo_node_counts(nodes), c = sinfo_cpu_counts(nodes);
  json names = json::array(), addresses = json::array();
  int64_t alloc_mem = 0, load_lo = 0, load_hi = 0, free_lo = -1, free_hi = -1;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const json& node = *nodes[i];
    names.push_back(str(node, "name"));
    addresses.push_back(str(node, "address").empty() ? str(node, "name") : str(node, "address"));
    alloc_mem += num(node, "alloc_mem_mb");
    const int64_t load = cpu_load_hundredths(node);
    load_lo = i == 0 ? load : std::min(load_lo, load);
    load_hi = i == 0 ? load : std::max(load_hi, load);
    // FreeMem is unknown until an agent reports it; a line knows it when any node does.
    if (const int64_t free = num(node, "free_mem_mb", -1); free >= 0) {
      free_lo = free_lo < 0 ? free : std::min(free_lo, free);
      free_hi = std::max(free_hi, free);
    }
  }
  const std::string reason = str(first, "reason");
  const json cpus = min_max(nodes, "cpus", 1), memory = min_max(nodes, "real_memory_mb", 1);
  return {
      {"port", 0},
      {"node", {{"state", node_states(first)}}},
      {"nodes",
       {{"allocated", n.allocated},
        {"idle", n.idle},
        {"other", n.other},
        {"total", n.total},
        {"hostnames", names},
        {"addresses", std::move(addresses)},
        {"nodes", names}}},
      {"cpus",
       {{"allocated", c.allocated},
        {"idle", c.idle},
        {"other", c.other},
        {"total", c.total},
        {"minimum", cpus["minimum"]},
        {"maximum", cpus["maximum"]},
        {"load", {{"minimum", load_lo}, {"maximum", load_hi}}},
        {"per_node", {{"max", infinite()}}}}},
      {"sockets", min_max(nodes, "sockets", 1)},
      {"cores", min_max(nodes, "cores_per_socket", 1)},
      {"threads", min_max(nodes, "threads_per_core", 1)},
      {"disk", min_max(nodes, "tmp_disk_mb", 0)},
      {"memory",
       {{"minimum", memory["minimum"]},
        {"maximum", memory["maximum"]},
        {"free",
         {{"minimum", free_lo < 0 ? unset() : number(free_lo)},
          {"maximum", free_hi < 0 ? unset() : number(free_hi)}}},
        {"allocated", alloc_mem}}},
      {"weight", {{"minimum", 1}, {"maximum", 1}}},
      {"features", {{"total", str(first, "features")}, {"active", str(first, "active_features")}}},
      {"gres", {{"total", str(first, "gres")}, {"used", gres_used_text(first)}}},
      {"cluster", ""},
      {"comment", ""},
      {"extra", ""},
      {"reason",
       {{"description", reason},
        {"time", reason.empty() ? 0 : num(first, "reason_time")},
        {"user", reason.empty() ? std::string()
                                : user_name(static_cast<uint32_t>(num(first, "reason_uid")))}}},
      {"reservation", ""},
      {"resource_spec", {{"cpus", ""}, {"memory", 0}}},
      {"partition", partition ? partition_info(*partition, cluster) : json::object()},
  };
}

}  // namespace drover::proto::data_parser
