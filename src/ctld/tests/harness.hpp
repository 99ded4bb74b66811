#pragma once
// A state machine with two 2-CPU nodes and helpers to drive it, shared by the ctld unit tests.
#include <gtest/gtest.h>

#include "ctld/state_machine.hpp"
#include "ctld/tests/two_node_config.hpp"
#include "proto/agent_msg.hpp"
#include "proto/json.hpp"

namespace drover::ctld::testing {

using nlohmann::json;

// Agent messages as an agent sends them (its JSON), decoded as the server decodes them.
inline proto::Register registration(const json& j) {
  proto::Register r = proto::Register::from_json(j);
  r.address = j.value("address", "");  // the server's part: where it sees the agent from
  return r;
}
inline proto::JobExited exit_report(const json& j) { return proto::JobExited::from_json(j); }
inline proto::StepExited step_exit_report(const json& j) { return proto::StepExited::from_json(j); }

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
      sm.agent_register(n, registration({{"running", json::array()}}), now, fx);
  }
  // Every test that drives the machine also checks that the job table's indexes followed it.
  ~Harness() { EXPECT_EQ(sm.jobs().check_indexes(), ""); }
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
    json r = sm.submit(proto::SubmitRequest::from_json({{"spec", s}}), who, now, fx);
    EXPECT_TRUE(r.value("ok", false)) << r.dump();
    return r.value("job_id", uint64_t{0});
  }
  std::vector<json> launches(const Effects& fx) {
    std::vector<json> out;
    for (const auto& o : fx.orders())
      if (std::holds_alternative<proto::Launch>(o.msg)) out.push_back(proto::to_json(o.msg));
    return out;
  }
};

// The batch's agent orders as they go on the wire: (node, message).
inline std::vector<std::pair<std::string, json>> wire(const Effects& fx) {
  std::vector<std::pair<std::string, json>> out;
  for (const auto& o : fx.orders()) out.emplace_back(o.node, proto::to_json(o.msg));
  return out;
}

}  // namespace drover::ctld::testing
