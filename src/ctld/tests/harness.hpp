#pragma once
// A state machine with two 2-CPU nodes and helpers to drive it, shared by the ctld unit tests.
#include <gtest/gtest.h>

#include "ctld/state_machine.hpp"
#include "proto/json.hpp"

namespace drover::ctld::testing {

using nlohmann::json;

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

struct Harness {
  StateMachine sm;
  int64_t now = 1000;
  Caller alice{1000, 1000, "alice", "alice"};
  Caller bob{1001, 1001, "bob", "bob"};
  Caller root{0, 0, "root", "root"};
  explicit Harness(Config c = two_node_config()) : sm(std::move(c), sched::make_scheduler()) {
    sm.restore(1, {}, now);
    Effects fx;
    for (const char* n : {"node1", "node2"})
      sm.agent_register(n, json{{"running", json::array()}}, now, fx);
  }
  json spec(int ntasks = 1, int cpus = 1) {
    core::JobSpec s;
    s.name = "job";
    s.script = "#!/bin/sh\ntrue\n";
    s.workdir = "/tmp";
    s.ntasks = ntasks;
    s.cpus_per_task = cpus;
    return s;
  }
  uint64_t submit(const Caller& who, json s, Effects& fx) {
    json r = sm.submit({{"spec", s}}, who, now, fx);
    EXPECT_TRUE(r.value("ok", false)) << r.dump();
    return r.value("job_id", uint64_t{0});
  }
  std::vector<json> launches(const Effects& fx) {
    std::vector<json> out;
    for (const auto& [node, msg] : fx.to_agents)
      if (msg["type"] == "launch") out.push_back(msg);
    return out;
  }
};

}  // namespace drover::ctld::testing
