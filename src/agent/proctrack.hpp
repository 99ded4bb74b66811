#pragma once
// Jobs confined to cgroups: every process of a job is found and killed through its cgroup
// (also those that left the job's session or process group), and its memory is limited to
// what the job holds. Each agent owns a subtree `drover/<node>_<tag>` (the tag tells apart
// the agents of several local clusters on one host) with `job_<id>/step_<name>` below it.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "proto/agent_msg.hpp"

namespace drover::agent {

// What a host offers under its cgroup mount root (/sys/fs/cgroup).
struct CgroupLayout {
  // Where job cgroups are tracked and killed: a v2 hierarchy (the root itself, or `unified`
  // beside v1 controllers), else the v1 freezer. Empty: none.
  std::string track;
  bool track_v2 = false;
  // Where memory is limited: the v2 hierarchy when it has the memory controller, else the v1
  // memory hierarchy. Empty: none.
  std::string memory;
  bool memory_v2 = false;
  // Where CPUs are confined (cgroup.conf's ConstrainCores): the v2 hierarchy when it has the
  // cpuset controller, else the v1 cpuset hierarchy. Empty: none.
  std::string cpuset;
  bool cpuset_v2 = false;
  // Where devices are confined (ConstrainDevices): the v1 devices hierarchy only (v2 has no
  // devices files; it would take a BPF program). Empty: none.
  std::string devices;
  std::string describe() const;
};
CgroupLayout detect_cgroups(const std::string& root);

// The value of `key` in "key value" lines (memory.events, memory.oom_control, cgroup.events);
// 0 when absent.
int64_t cgroup_counter(const std::string& text, const std::string& key);

// This agent's subtree: "drover/<node>_<8 hex digits of the spool directory's path>".
std::string node_cgroup_name(const std::string& node, const std::string& spool_dir);

class ProcTrack {
 public:
  // Finds what the host offers under `root` and logs one line saying what it uses. Without
  // root privileges or cgroups, nothing is tracked (jobs are killed by process group).
  ProcTrack(const std::string& node, const std::string& spool_dir,
            const std::string& root = "/sys/fs/cgroup");
  // The agent's own subtree goes with it when no job is left in it (unless keep_subtree()).
  ~ProcTrack();
  // For a job's supervisor: the subtree is the agent's, left in place.
  void keep_subtree() { keep_subtree_ = true; }
  ProcTrack(const ProcTrack&) = delete;
  ProcTrack& operator=(const ProcTrack&) = delete;
  bool enabled() const { return !layout_.track.empty(); }
  bool limits_memory() const { return !layout_.memory.empty(); }

  // Creates the cgroups of a job's step ("batch", "0", ...) and returns the open cgroup.procs
  // files the child writes itself into before exec (place_self); the caller closes them after
  // fork. With `confine` (the controller's, from slurm.conf and cgroup.conf) the job is confined
  // as it says; without, mem_mb > 0 limits the job's memory on this node. Empty when not
  // enabled or when `confine` says proctrack/pgid. Throws std::runtime_error when a cgroup
  // cannot be made; a limit that cannot be set is logged and left out.
  // `step_memory`: the step's own memory limits (srun --mem), in a memory cgroup of its own
  // below the job's.
  std::vector<int> prepare(uint64_t job, const std::string& step, int64_t mem_mb,
                           const proto::Confine* confine = nullptr,
                           const proto::Confine* step_memory = nullptr);
  // Sends `sig` to every process of the job (step empty) or of one of its steps.
  void signal(uint64_t job, const std::string& step, int sig) const;
  // SIGKILL to every process of the job or step (cgroup.kill, else freeze and kill each).
  void kill(uint64_t job, const std::string& step = "") const;
  // Whether any process of the job or step is left.
  bool populated(uint64_t job, const std::string& step = "") const;
  struct Usage {
    int64_t oom_kills = 0;
    int64_t max_rss_bytes = -1;  // the job's peak memory here; -1: not known
  };
  Usage usage(uint64_t job) const;
  // Removes the cgroups of an empty job (or of one step); false if something is left.
  bool remove(uint64_t job, const std::string& step = "") const;
  // Jobs a previous agent of this node left running: killed, waited for (up to `wait`) and
  // removed, before this agent registers. Returns their ids. The (job, step) cgroups in `keep`
  // (whose supervisors still run them: "batch", an srun step) stay; of their jobs only the
  // other steps go.
  std::vector<uint64_t> kill_leftovers(
      std::chrono::milliseconds wait,
      const std::set<std::pair<uint64_t, std::string>>& keep = {}) const;

 private:
  std::string track_dir(uint64_t job, const std::string& step) const;
  std::string memory_dir(uint64_t job) const;
  // A job's (step empty) or step's cgroup in a v1 hierarchy of its own (cpuset, devices).
  std::string v1_dir(const std::string& root, uint64_t job, const std::string& step) const;
  void limit_memory(uint64_t job, const std::string& mem, int64_t mem_mb,
                    const proto::Confine* confine) const;
  // The step's cpuset (the job's made first); its cgroup.procs when it is a v1 one.
  std::optional<std::string> confine_cpus(uint64_t job, const std::string& step,
                                          const std::vector<int>& cpus) const;
  std::optional<std::string> confine_devices(uint64_t job, const std::string& step,
                                             const std::vector<std::string>& deny) const;

  CgroupLayout layout_;
  std::string name_;  // drover/<node>_<tag>
  bool keep_subtree_ = false;
};

// In the forked child (async-signal-safe): writes its pid into each cgroup.procs descriptor.
// False if one write failed.
bool place_self(const std::vector<int>& fds);

}  // namespace drover::agent
