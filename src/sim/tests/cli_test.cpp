#include "sim/cli.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using drover::sim::sim_main;

namespace {

const std::string kFixture = DROVER_SIM_TEST_DATA "/easy_mediumWL_smallPF_head40.swf";

struct Outcome {
  int rc;
  std::string out, err;
};

Outcome run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int rc = sim_main(args, out, err);
  return {rc, out.str(), err.str()};
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "drover_sim_" + std::to_string(::getpid()) + "_" + name;
}

std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(SimCli, ReportForAHandComputedTrace) {
  // See replay_test.cpp FifoGivesTheHandComputedSchedule for the schedule.
  const std::string path = write_temp("small.swf",
                                      "; MaxNodes: 2\n; MaxProcs: 4\n"
                                      "1 0 -1 100 -1 -1 -1 4 120 -1 1 3 3 -1 -1 -1 -1 -1\n"
                                      "2 10 -1 50 -1 -1 -1 2 60 -1 1 3 3 -1 -1 -1 -1 -1\n"
                                      "3 20 -1 30 -1 -1 -1 4 60 -1 1 3 3 -1 -1 -1 -1 -1\n"
                                      "4 30 -1 10 -1 -1 -1 1 60 -1 1 3 3 -1 -1 -1 -1 -1\n"
                                      "5 40 -1 200 -1 -1 -1 1 60 -1 1 3 3 -1 -1 -1 -1 -1\n");
  Outcome r = run({path, "--policy", "fcfs"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // The engine's work counter is its own business; the rest is pinned.
  const size_t work = r.out.rfind(", work ");
  ASSERT_NE(work, std::string::npos);
  EXPECT_EQ(r.out.substr(0, work),
            "trace: " + path +
                "\n"
                "cluster: 2 nodes x 2 cpus = 4 cpus (nodes: MaxNodes; cpus per node: "
                "MaxProcs/MaxNodes)\n"
                "policy: fcfs (engine Policy::Fifo); priority: priority/basic, submit order\n"
                "jobs: 5 in trace, 5 replayed, 0 skipped\n"
                "time limits: requested time rounded up to whole minutes; 0 jobs without one "
                "use their run time so rounded (an exact estimate); 1 runs cut at the limit\n"
                "wait: mean 102.00 s, p95 150.00 s\n"
                "bounded slowdown (tau 10 s): mean 5.69, p95 16.00\n"
                "utilization: 71.88% (690 cpu-s over 4 cpus x 240 s)\n"
                "makespan: 240 s (0.00 days; first submit 0, last end 240)\n"
                "nodes: static, 2 nodes from the first submission to the last end\n"
                "node-hours: 0.13 (cost 0.13 at 1 per node-hour); peak 2 nodes, 0 started, 0 "
                "scaling decisions\n"
                "engine: 4 schedule() passes, 4 skipped (nothing could start), max pending 4");
  EXPECT_NE(r.err.find("drover sim: engine wall time "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" in 4 schedule() passes"), std::string::npos) << r.err;
  std::remove(path.c_str());
}

TEST(SimCli, FixtureIsDeterministicAndWritesTheCsv) {
  const std::string csv = temp_path("jobs.csv");
  Outcome a = run({kFixture, "--policy", "easy", "--jobs-csv", csv});
  ASSERT_EQ(a.rc, 0) << a.err;
  Outcome b = run({kFixture, "--policy=easy"});
  ASSERT_EQ(b.rc, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out.find("jobs: 40 in trace, 40 replayed, 0 skipped\n"), std::string::npos);
  EXPECT_NE(a.out.find("parse: 79 fractional values rounded to the nearest integer\n"),
            std::string::npos);
  EXPECT_NE(a.out.find("cluster: 8 nodes x 1 cpus = 8 cpus (nodes: the largest job; "),
            std::string::npos);
  std::string rows = slurp(csv);
  EXPECT_EQ(rows.rfind("id,submit,start,end,wait,run,procs,bsld\n0,0,0,89,0,89,1,1.0000\n", 0), 0u)
      << rows;
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 41);
  std::remove(csv.c_str());
}

TEST(SimCli, OverridesAndEveryPolicy) {
  for (const char* p : {"fcfs", "easy", "conservative", "multifactor"}) {
    Outcome r = run({"--nodes", "4", "--cpus-per-node", "2", kFixture, "--policy", p});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_NE(r.out.find("cluster: 4 nodes x 2 cpus = 8 cpus (nodes: --nodes; cpus per node: "
                         "--cpus-per-node)\n"),
              std::string::npos);
    EXPECT_NE(r.out.find(std::string("policy: ") + p + " "), std::string::npos);
  }
}

TEST(SimCli, UsageErrors) {
  EXPECT_EQ(run({}).rc, 2);
  EXPECT_EQ(run({kFixture, "--policy", "fifo"}).rc, 2);
  EXPECT_EQ(run({kFixture, "--policy"}).rc, 2);
  EXPECT_EQ(run({kFixture, "--nodes", "0"}).rc, 2);
  EXPECT_EQ(run({kFixture, "--nodes", "4x"}).rc, 2);
  EXPECT_EQ(run({kFixture, "--cpus-per-node", "-1"}).rc, 2);
  EXPECT_EQ(run({kFixture, "--bogus"}).rc, 2);
  EXPECT_EQ(run({kFixture, kFixture}).rc, 2);
  Outcome r = run({kFixture, "--policy", "fifo"});
  EXPECT_NE(r.err.find("--policy: 'fifo' is not fcfs, easy, conservative or multifactor"),
            std::string::npos);
  EXPECT_NE(r.err.find("usage: drover sim TRACE"), std::string::npos);
  Outcome h = run({"--help"});
  EXPECT_EQ(h.rc, 0);
  EXPECT_NE(h.out.find("usage: drover sim TRACE"), std::string::npos);
}

TEST(SimCli, TraceErrorsNameFileAndLine) {
  const std::string bad =
      write_temp("bad.swf", "; MaxNodes: 2\n1 0 -1 100 -1 -1 -1 4 120 -1 1 3 3 -1 -1\n");
  Outcome r = run({bad});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "drover sim: " + bad + ": line 2: expected 18 fields, found 15\n");
  std::remove(bad.c_str());

  r = run({"/nonexistent/x.swf"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "drover sim: /nonexistent/x.swf: cannot open\n");
}
