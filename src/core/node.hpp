#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/gres.hpp"
#include "core/job.hpp"

namespace drover::core {

// A node's base state as Slurm reports it; DRAIN and NOT_RESPONDING are flags on top.
enum class NodeBase : uint8_t { Unknown, Idle, Mixed, Allocated, Down };

struct Node {
  std::string name;
  int cpus = 1, sockets = 1, cores_per_socket = 1, threads_per_core = 1;
  int64_t real_memory_mb = 1;
  std::string gres;
  std::vector<std::string> features;         // AvailableFeatures
  std::vector<std::string> active_features;  // ActiveFeatures, what constraints match: a subset
  bool features_updated = false;             // set by scontrol update: journaled, not slurm.conf's
  std::string address;                       // where its agent was seen
  std::string launch_addr;  // "ip:port" where srun reaches its agent to launch step tasks

  bool registered = false;  // an agent has registered since the controller started
  bool down = false;        // set by heartbeat loss or by an admin
  bool drain = false;       // admin drain: finish running work, take no more
  bool not_responding = false;
  std::string reason;
  uint32_t reason_uid = 0;
  int64_t reason_time = 0;
  int64_t boot_time = 0;         // the machine's boot, as the agent reports it
  int64_t agent_start_time = 0;  // when its agent last registered (SlurmdStartTime)
  int64_t tmp_disk_mb = 0;       // TmpDisk
  int weight = 1;                // Weight: jobs take the lowest first
  int64_t last_heartbeat = 0;
  double cpu_load = -1;      // 1-minute load average the agent last reported
  int64_t free_mem_mb = -1;  // free memory the agent last reported

  int alloc_cpus = 0;
  int64_t alloc_mem_mb = 0;
  std::vector<GresCount> gres_total;  // parsed from `gres`
  std::vector<GresCount> gres_used;   // held by running jobs
  int running_jobs = 0;
  // In an active reservation (any / a MAINT one): set by the controller as reservations
  // begin and end; not part of the node's durable state.
  bool reserved = false, maint = false;

  // Charges a job's share to this node (it starts or is restored) / gives it back (it ends).
  void charge(const NodeAlloc& a);
  void discharge(const NodeAlloc& a);

  NodeBase base() const;
  // Not while its agent is not responding: work sent there might not start, or start twice.
  bool schedulable() const { return registered && !down && !drain && !not_responding; }
  // Slurm's long state name, e.g. "IDLE", "MIXED", "DOWN*", "DRAINING", "IDLE+DRAIN".
  std::string state_long(bool with_flags) const;
  // sinfo's compact form: "idle", "mix", "alloc", "down*", "drain", "drng", "unk*".
  std::string state_short() const;
};

}  // namespace drover::core
