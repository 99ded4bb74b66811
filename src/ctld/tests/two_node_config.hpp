#pragma once
// The two 2-CPU nodes of the ctld unit tests' state machine; without gtest, so that the
// controller's fuzz target builds the same cluster.
#include "ctld/state_machine.hpp"

namespace drover::ctld::testing {

inline Config two_node_config(int64_t max_time = -1) {
  Config c;
  c.cluster_name = "test";
  c.kill_wait_s = 5;
  c.slurmd_timeout_s = 60;
  c.min_job_age_s = 300;
  c.def_mem_per_cpu_mb = 100;
  for (const char* name : {"node1", "node2"}) {
    core::NodeConf n;
    n.name = name;
    n.cpus = 2;
    n.real_memory_mb = 1000;
    c.conf.nodes.push_back(n);
  }
  core::PartitionConf p;
  p.name = "debug";
  p.nodes = {"node1", "node2"};
  p.is_default = true;
  p.max_time_min = max_time;
  c.conf.partitions.push_back(p);
  return c;
}

}  // namespace drover::ctld::testing
