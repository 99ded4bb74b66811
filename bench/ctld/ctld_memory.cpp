// Memory per pending job in the controller's state machine: submits N jobs as sbatch sends
// them (a batch script and a typical exported environment), runs a full scheduling pass,
// and prints the resident-set growth per job at each step. Not a timed test: a program
// that prints figures (docs/benchmarks.md). Each submission carries a request id of the
// commands' form (32 hex digits), as sbatch sends it; NO_REQUEST_ID=1 leaves it out.
//
//   ctld_memory [N]   (default 100000)
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "ctld/state_machine.hpp"
#include "proto/json.hpp"

using namespace drover;

namespace {

long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

ctld::Config one_node() {
  ctld::Config c;
  core::NodeConf n;
  n.name = "node1";
  n.cpus = 2;
  n.real_memory_mb = 1000;
  c.conf.nodes.push_back(n);
  core::PartitionConf p;
  p.name = "debug";
  p.nodes = {"node1"};
  p.is_default = true;
  p.state = "DOWN";
  c.conf.partitions.push_back(p);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  ctld::StateMachine sm(one_node(), sched::make_scheduler());
  sm.restore(1, {}, 1000);
  core::JobSpec s;
  s.name = "wrap";
  s.script = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n";
  s.workdir = "/home/user/project";
  s.std_out = "/dev/null";
  s.argv = {"wrap"};
  // Pending in a DOWN partition (as bench/compare's depth run): offered to every pass.
  for (int i = 0; i < 40; ++i)  // a login shell's worth of exported variables (~1.5 KB)
    s.environment["VARIABLE_" + std::to_string(i)] = std::string(30, 'x');
  nlohmann::json req = {{"spec", s}};
  const bool request_ids = std::getenv("NO_REQUEST_ID") == nullptr;
  const ctld::Caller who{1000, 1000, "user", "user"};

  if (std::getenv("NO_TRIM") == nullptr) malloc_trim(0);
  const long base = rss_kb();
  for (int i = 0; i < n; ++i) {
    ctld::Effects fx;  // as the server: effects are applied and dropped each batch
    if (request_ids) {
      char id[33];
      std::snprintf(id, sizeof id, "%08x%08x%08x%08x", static_cast<unsigned>(i) * 2654435761u,
                    static_cast<unsigned>(i), 0x5eed1234u, ~static_cast<unsigned>(i));
      req["request_id"] = id;
    }
    sm.submit(proto::SubmitRequest::from_json(req), who, 1000 + i / 100, fx);
  }
  if (std::getenv("NO_TRIM") == nullptr) malloc_trim(0);
  const long submitted = rss_kb();
  for (int pass = 0; pass < 5; ++pass) {  // full passes, as the server runs them
    ctld::Effects fx;
    sm.tick(1000 + n + pass, fx);
    sm.schedule(1000 + n + pass, fx);
    sm.take_plan_changes();  // the server takes them after every batch
  }
  if (std::getenv("NO_TRIM") == nullptr) malloc_trim(0);
  const long planned = rss_kb();
  std::printf("pending jobs           %d\n", n);
  std::printf("after submission       %.2f KB per job\n", double(submitted - base) / n);
  std::printf("after full passes      %.2f KB per job\n", double(planned - base) / n);
  return 0;
}
