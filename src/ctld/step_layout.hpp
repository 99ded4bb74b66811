#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/job.hpp"

namespace drover::ctld {

// What srun asks of a step inside an allocation (0: not given).
struct StepRequest {
  int ntasks = 0;
  int nodes_min = 0, nodes_max = 0;
  int cpus_per_task = 1;
  int ntasks_per_node = 0;
  std::string nodelist, exclude;  // -w / -x hostlists
  bool overlap = false;           // --overlap: ignore (and do not count in) other steps' CPUs
  bool cyclic = false;            // -m cyclic: task ids round-robin over the nodes
  int64_t mem_mb = 0;             // --mem per node (0: shares the job's memory)
  // Without --exact (or -c) a step takes every CPU of the job on its nodes that no other step
  // holds, as Slurm 22.05 does; with it, only its tasks' CPUs.
  bool exact = false;
  bool overcommit = false;  // -O: more tasks than CPUs (each node still gets its CPUs)
};

struct StepLayout {
  std::vector<core::NodeAlloc> alloc;        // per chosen node: tasks, CPUs and ids, GPUs
  std::vector<std::vector<uint32_t>> tasks;  // global task ids per chosen node
  int ntasks = 0;
  std::string error;   // why not ("" when laid out)
  bool busy = false;   // could run once other steps end: srun retries
  bool plain = false;  // srun prints the error as is (not "Unable to create step ...")
};

// Places a step's tasks on the job's nodes (pure). Nodes in allocation order; each node gets at
// least one task and the rest go round-robin to nodes with room (so -N2 -n3 gives 2+1), each
// task `cpus_per_task` of the CPUs that the job holds there and no other step does.
StepLayout layout_step(const std::vector<core::NodeAlloc>& job_alloc,
                       const std::vector<core::Step>& steps, const StepRequest& req);

}  // namespace drover::ctld
