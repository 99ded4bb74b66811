#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.hpp"

namespace drover::core {

struct NodeConf {
  std::string name;  // one entry per node after hostlist expansion of NodeName=node[1-4]
  int cpus = 1;      // CPUs= (or Procs=); omitted: boards * sockets * cores * threads
  int boards = 1;
  int sockets = 1;  // sockets on the node (Boards x SocketsPerBoard when boards are used)
  int cores_per_socket = 1;
  int threads_per_core = 1;
  int64_t real_memory_mb = 1;            // Slurm default is 1
  std::string gres;                      // raw "gpu:a100:4,gpu:1g.10gb:2"
  std::vector<std::string> features;     // Features=a,b (also Feature, AvailableFeatures)
  std::string state = "UNKNOWN";         // State=, upper-cased; DownNodes= lines apply here too
  std::string node_addr, node_hostname;  // as in Slurm: NodeAddr defaults to NodeHostname,
                                         // which defaults to the node name
  int port = 0;                          // 0: SlurmdPort applies
  int weight = 1;
  // Other recognised node attributes by canonical name (Reason, TmpDisk, CpuSpecList, ...).
  std::map<std::string, std::string> other;
};

struct PartitionConf {
  std::string name;
  std::vector<std::string> nodes;  // expanded; "ALL" -> all nodes defined; NodeSet names expanded
  // Which nodes that join later (dynamic nodes) it takes: all (Nodes=ALL), or those with a
  // feature of a NodeSet (Feature=) that Nodes= names.
  bool all_nodes = false;
  std::vector<std::string> node_set_features;
  bool is_default = false;
  int64_t max_time_min = kInfinite;
  int64_t default_time_min = kInfinite;  // kInfinite here means unset
  std::string state = "UP";              // upper-cased
  int max_nodes = -1;                    // -1: unlimited
  int min_nodes = 0;                     // MinNodes=; Slurm's default is 0
  int priority_tier = 1;
  int priority_job_factor = 1;
  std::vector<std::string> allow_accounts, allow_qos;  // empty: all
  std::string over_subscribe = "NO";                   // upper-cased, e.g. "FORCE:4"
  bool root_only = false;
  bool hidden = false;
  // Other recognised partition attributes by canonical name (AllowGroups, DenyAccounts, ...).
  std::map<std::string, std::string> other;
};

struct SlurmConf {
  std::string cluster_name;
  // Every other recognised key (ClusterName too), by its canonical Slurm spelling, value as
  // written (quotes removed). A key given twice keeps the last value and adds a warning.
  std::map<std::string, std::string> options;
  std::vector<NodeConf> nodes;            // in definition order
  std::vector<PartitionConf> partitions;  // in definition order
  std::vector<std::string> warnings;      // "slurm.conf:12: unknown key 'Foo'"

  // Typed accessors with caller-supplied Slurm defaults; keys match case-insensitively.
  int64_t get_int(std::string_view key, int64_t dflt) const;  // throws if present, not a number
  std::string get(std::string_view key, std::string_view dflt) const;
  const NodeConf* find_node(std::string_view name) const;
  const PartitionConf* find_partition(std::string_view name) const;
  const PartitionConf* default_partition() const;  // the one with Default=YES, else nullptr
};

// Returns the text of an included file, or nullopt when it cannot be read. `path` is as written
// after the %c (cluster name) substitution; resolving relative paths is the caller's business.
using IncludeResolver = std::function<std::optional<std::string>(std::string_view path)>;

// Parses slurm.conf text. Lines hold whitespace-separated Key=Value pairs (keys case-insensitive,
// values optionally double-quoted); '#' starts a comment unless written "\#" or inside quotes; a
// trailing '\' joins the next line. NodeName=, PartitionName=, DownNodes=, NodeSet= and
// FrontendName= lines are records; NodeName=DEFAULT / PartitionName=DEFAULT set defaults for the
// records that follow. Unknown keys and attributes become warnings. "Include" lines are only
// noted in warnings here. Throws ParseError("<source>:<line>: ...") for malformed lines, bad
// numbers, duplicate nodes and partitions naming undefined nodes.
SlurmConf parse_slurm_conf(std::string_view text, std::string_view source_name = "slurm.conf");

// Same, following "Include" lines through `resolver` (nested up to 16 deep); an include the
// resolver cannot supply is an error, as it is for slurmctld.
SlurmConf parse_slurm_conf(std::string_view text, std::string_view source_name,
                           const IncludeResolver& resolver);

// Canonical spelling of a documented slurm.conf key ("killwait" -> "KillWait"), or nullopt.
std::optional<std::string> canonical_slurm_conf_key(std::string_view key);

}  // namespace drover::core
