#pragma once
// cgroup.conf (Slurm 22.05's keys, defaults and errors) and what it makes of a job's memory:
// the limits task/cgroup sets on a job's memory cgroup.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

struct CgroupConf {
  std::string plugin = "autodetect";  // CgroupPlugin: autodetect, cgroup/v1, cgroup/v2
  bool automount = false;             // CgroupAutomount
  std::string mountpoint = "/sys/fs/cgroup";
  bool ignore_systemd = false, ignore_systemd_on_failure = false;
  bool constrain_cores = false;
  bool constrain_ram = false;
  bool constrain_swap = false;
  bool constrain_devices = false;
  bool constrain_kmem = false;
  double allowed_ram_pct = 100;              // AllowedRAMSpace: percent of the job's memory
  double allowed_swap_pct = 0;               // AllowedSwapSpace: percent of the job's memory
  double max_ram_pct = 100;                  // MaxRAMPercent: of the node's memory
  double max_swap_pct = 100;                 // MaxSwapPercent
  double max_kmem_pct = 100;                 // MaxKmemPercent
  std::optional<double> allowed_kmem_bytes;  // AllowedKmemSpace
  uint64_t min_ram_mb = 30;                  // MinRAMSpace
  uint64_t min_kmem_mb = 30;                 // MinKmemSpace
  std::optional<uint64_t> swappiness;        // MemorySwappiness (0-100)
  // Lines slurmd logs as errors but accepts: a key given twice, a swappiness above 100.
  std::vector<std::string> warnings;
};

// Parses cgroup.conf text. Throws ParseError with Slurm's two lines (the cause, then "Could not
// open/read/parse cgroup.conf file <path>") for an unknown key, a value that is not a number
// or boolean, a negative size, a line without a value.
CgroupConf parse_cgroup_conf(std::string_view text, std::string_view path);

// The limits of a job's memory cgroup on one node, in bytes; 0: none. As task/cgroup: the hard
// limit is AllowedRAMSpace percent of the job's memory there (all of the node's when the job
// holds none), between MinRAMSpace and MaxRAMPercent of the node; RAM+swap adds
// AllowedSwapSpace percent, capped by MaxSwapPercent; with only ConstrainSwapSpace the RAM limit
// is the RAM+swap one.
struct MemoryLimits {
  int64_t hard = 0;   // memory.limit_in_bytes / memory.max
  int64_t soft = 0;   // memory.soft_limit_in_bytes / memory.high
  int64_t memsw = 0;  // memory.memsw.limit_in_bytes (v2: memory.swap.max = memsw - hard)
};
MemoryLimits memory_limits(const CgroupConf& conf, int64_t job_mem_mb, int64_t node_mem_mb);

// The GPU device files gres.conf gives `node`, in order (a job's GPU index i is the i-th):
// lines "Name=gpu File=/dev/nvidia[0-1]" (all nodes) or with "NodeName=node[1-2]" (those).
// Other GRES and lines without File= give none. Throws ParseError for a bad range.
std::vector<std::string> gres_gpu_files(std::string_view gres_conf, std::string_view node);

}  // namespace drover::core
