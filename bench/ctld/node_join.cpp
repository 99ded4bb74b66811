// Nodes joining at once: a cluster with N pending jobs (default 10,000) sees J dynamic nodes
// (default 1,000) register in one state-thread batch (droverd -Z), while submissions keep
// coming, as the server applies them: each batch's events, then a scheduling pass. Prints how
// long each step held the state thread, i.e. how long a submission arriving then waited. Not
// a timed test: a program that prints figures (docs/benchmarks.md).
//
//   node_join [PENDING] [JOINING]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ctld/state_machine.hpp"
#include "proto/json.hpp"

using namespace drover;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

ctld::Config cluster(int static_nodes, int max_nodes) {
  ctld::Config c;
  c.conf.options["MaxNodeCount"] = std::to_string(max_nodes);
  core::PartitionConf p;
  p.name = "all";
  p.is_default = true;
  p.all_nodes = true;
  for (int i = 1; i <= static_nodes; ++i) {
    core::NodeConf n;
    n.name = "node" + std::to_string(i);
    n.cpus = 4;
    n.real_memory_mb = 16000;
    c.conf.nodes.push_back(n);
    p.nodes.push_back(n.name);
  }
  c.conf.partitions.push_back(p);
  c.def_mem_per_cpu_mb = 100;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int pending = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int joining = argc > 2 ? std::atoi(argv[2]) : 1000;
  const int static_nodes = 100;
  ctld::StateMachine sm(cluster(static_nodes, static_nodes + joining), sched::make_scheduler());
  int64_t now = 1000;
  sm.restore(1, {}, now);
  {
    ctld::Effects fx;
    for (int i = 1; i <= static_nodes; ++i)
      sm.agent_register("node" + std::to_string(i), proto::Register{}, now, fx);
  }
  const ctld::Caller who{1000, 1000, "user", "user"};
  auto job = [&](int i) {
    core::JobSpec s;
    s.name = "job";
    s.script = "#!/bin/sh\ntrue\n";
    s.workdir = "/tmp";
    // Mostly 8-CPU jobs (only the joining 16-CPU nodes hold them) and some 1-CPU ones.
    s.ntasks = i % 10 == 0 ? 1 : 8;
    s.time_limit_min = 60 + i % 120;
    return nlohmann::json{{"spec", s}};
  };
  for (int i = 0; i < pending; ++i) {
    ctld::Effects fx;
    sm.submit(proto::SubmitRequest::from_json(job(i)), who, now, fx);
  }
  double worst_before = 0, worst_after = 0;
  auto step = [&](double& worst) {
    // One submission, then the pass the server runs after its batch.
    const auto t = Clock::now();
    ctld::Effects fx;
    sm.submit(proto::SubmitRequest::from_json(job(1)), who, now, fx);
    sm.tick(now, fx);
    sm.schedule(now, fx);
    worst = std::max(worst, ms_since(t));
    ++now;
  };
  for (int i = 0; i < 5; ++i) step(worst_before);

  // The batch in which every joining agent registers, and the pass after it.
  const auto t_reg = Clock::now();
  ctld::Effects fx;
  proto::Register joiner;
  joiner.dynamic = true;
  joiner.conf = "CPUs=16 RealMemory=64000";
  joiner.cpus = 16;
  joiner.real_memory = 64000;
  for (int i = 1; i <= joining; ++i) sm.agent_register("dyn" + std::to_string(i), joiner, now, fx);
  const double reg_ms = ms_since(t_reg);
  const auto t_pass = Clock::now();
  sm.tick(now, fx);
  sm.schedule(now, fx);
  const double pass_ms = ms_since(t_pass);
  size_t started = 0;
  for (const auto& o : fx.orders()) started += std::holds_alternative<proto::Launch>(o.msg);
  ++now;
  for (int i = 0; i < 5; ++i) step(worst_after);

  std::printf("pending jobs                     %d\n", pending);
  std::printf("nodes joining in one batch       %d (to %d static)\n", joining, static_nodes);
  std::printf("longest step before (ms)         %.1f\n", worst_before);
  std::printf("registrations, whole batch (ms)  %.1f\n", reg_ms);
  std::printf("pass after they joined (ms)      %.1f  (%zu jobs started)\n", pass_ms, started);
  std::printf("longest submission stall (ms)    %.1f\n", reg_ms + pass_ms);
  std::printf("longest step after (ms)          %.1f\n", worst_after);
  return 0;
}
