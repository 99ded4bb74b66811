// scontrol show step[s] and squeue -s against canned controller replies; the layouts are those
// a real Slurm 22.05 printed (tests/compat/oracle) for the same steps.
#include <gtest/gtest.h>

#include "cli/scontrol_steps.hpp"
#include "core/duration.hpp"

using namespace drover::cli;
using drover::core::format_timestamp;

namespace {

constexpr int64_t kStart = 1'800'000'000;

json step(uint32_t id, const std::string& name, const std::string& nodes, int nnodes, int ntasks,
          int cpus, int64_t mem) {
  return {{"id", id},
          {"name", name},
          {"state", "RUNNING"},
          {"start_time", kStart + 5},
          {"time_limit_min", -1},
          {"nodelist", nodes},
          {"nnodes", nnodes},
          {"ntasks", ntasks},
          {"cpus", cpus},
          {"mem_mb", mem},
          {"gpus", 0},
          {"distribution", "block"},
          {"srun_host", "login1"},
          {"srun_pid", 4242}};
}

// steps as a vector: a one-element braced list passed as `json` is an array under gcc but a
// copy of the element under clang.
json job(uint64_t id, const std::string& name, const std::string& state, std::vector<json> steps) {
  return {{"id", id},
          {"state", state},
          {"completing", false},
          {"partition", "debug"},
          {"user", "alice"},
          {"uid", 1000},
          {"start_time", kStart},
          {"batch_host", state == "RUNNING" ? "node1" : ""},
          {"array_job_id", 0},
          {"array_task_id", 0xfffffffe},
          {"spec", {{"name", name}, {"command", ""}, {"interactive", false}}},
          {"steps", std::move(steps)}};
}

json reply() {
  json batch =
      job(7, "wrap", "RUNNING",
          {step(1, "inner", "node1", 1, 1, 1, 1000), step(0, "sleep", "node[1-2]", 2, 4, 4, 2000)});
  batch["steps"][0]["time_limit_min"] = 5;
  // srun outside an allocation: its job is the allocation, step 0 its own.
  json own = job(3, "hostname", "RUNNING", {step(0, "hostname", "node[1-2]", 2, 2, 2, 0)});
  own["spec"] = {{"name", "hostname"},
                 {"command", "hostname"},
                 {"argv", {"hostname", "-s"}},
                 {"interactive", true}};
  own["steps"][0]["command"] = "srun -N2 hostname -s";
  own["batch_host"] = "";
  // salloc: no batch step; srun's -n2 over two nodes is cyclic by default.
  json held = job(6, "sleep", "RUNNING", {step(0, "sleep", "node[1-2]", 2, 2, 2, 2000)});
  // (salloc -N2 sleep 60, then srun sleep 60 there: not srun's own allocation.)
  held["spec"] = {
      {"name", "sleep"}, {"command", "sleep"}, {"argv", {"sleep", "60"}}, {"interactive", true}};
  held["steps"][0]["command"] = "srun sleep 50";
  held["batch_host"] = "";
  json task = job(12, "arr", "RUNNING", {step(0, "true", "node2", 1, 1, 1, 500)});
  task["array_job_id"] = 11;
  task["array_task_id"] = 2;
  task["partition"] = "big";
  return {{"ok", true},
          {"now", kStart + 65},
          {"cluster_name", "c1"},
          {"jobs", {batch, job(9, "later", "PENDING", {}), own, held, task}}};
}

}  // namespace

TEST(StepViews, RunningStepsInScontrolsOrder) {
  std::vector<std::string> ids;
  for (const auto& s : running_steps(reply())) ids.push_back(s.id_text());
  EXPECT_EQ(ids, (std::vector<std::string>{"3.0", "6.0", "7.batch", "7.0", "7.1", "11_2.batch",
                                           "11_2.0"}));
}

TEST(StepViews, ScontrolShowStep) {
  const std::string start = format_timestamp(kStart), step_start = format_timestamp(kStart + 5);
  auto r = scontrol_show_steps("7", reply(), false);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "StepId=7.batch UserId=1000 StartTime=" + start +
                       " TimeLimit=UNLIMITED\n"
                       "   State=RUNNING Partition=debug NodeList=node1\n"
                       "   Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)\n"
                       "   TRES=(null)\n"
                       "   ResvPorts=(null)\n"
                       "   CPUFreqReq=Default\n"
                       "   SrunHost:Pid=(null):0\n"
                       "\n"
                       "StepId=7.0 UserId=1000 StartTime=" +
                       step_start +
                       " TimeLimit=UNLIMITED\n"
                       "   State=RUNNING Partition=debug NodeList=node[1-2]\n"
                       "   Nodes=2 CPUs=4 Tasks=4 Name=sleep Network=(null)\n"
                       "   TRES=cpu=4,mem=2000M,node=2\n"
                       "   ResvPorts=(null)\n"
                       "   CPUFreqReq=Default Dist=Block\n"
                       "   SrunHost:Pid=login1:4242\n"
                       "\n"
                       "StepId=7.1 UserId=1000 StartTime=" +
                       step_start +
                       " TimeLimit=00:05:00\n"
                       "   State=RUNNING Partition=debug NodeList=node1\n"
                       "   Nodes=1 CPUs=1 Tasks=1 Name=inner Network=(null)\n"
                       "   TRES=cpu=1,mem=1000M,node=1\n"
                       "   ResvPorts=(null)\n"
                       "   CPUFreqReq=Default Dist=Cyclic\n"
                       "   SrunHost:Pid=login1:4242\n"
                       "\n");
  r = scontrol_show_steps("3.0", reply(), true);
  EXPECT_EQ(r.out, "StepId=3.0 UserId=1000 StartTime=" + step_start +
                       " TimeLimit=UNLIMITED State=RUNNING Partition=debug NodeList=node[1-2] "
                       "Nodes=2 CPUs=2 Tasks=2 Name=hostname Network=(null) "
                       "TRES=cpu=2,node=2 ResvPorts=(null) CPUFreqReq=Default Dist=Block "
                       "SrunHost:Pid=login1:4242\n");
  EXPECT_NE(scontrol_show_steps("6.0", reply(), true).out.find("Dist=Cyclic"), std::string::npos);
  // Slurm 22.05 reads the step with strtol: "batch" is step 0.
  EXPECT_EQ(scontrol_show_steps("7.batch", reply(), true).out.substr(0, 11), "StepId=7.0 ");
  EXPECT_EQ(scontrol_show_steps("11_2.0", reply(), true).out.substr(0, 14), "StepId=11_2.0 ");
  r = scontrol_show_steps("", reply(), true);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 7);
}

TEST(StepViews, ScontrolShowStepNotFound) {
  auto r = scontrol_show_steps("7.9", reply(), false);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "Job step 7.9 not found\n");
  r = scontrol_show_steps("9", reply(), false);
  EXPECT_EQ(r.out, "Job step 9. not found\n");
  EXPECT_EQ(r.rc, 1);
  r = scontrol_show_steps("11_5.0", reply(), false);
  EXPECT_EQ(r.out, "Job step 11_5.0 not found\n");
  r = scontrol_show_steps("", {{"ok", true}, {"jobs", json::array()}}, false);
  EXPECT_EQ(r.out, "No job steps in the system\n");
  EXPECT_EQ(r.rc, 0);
  r = scontrol_show_steps("5.0", {{"ok", false}, {"error", "Invalid job id specified"}}, false);
  EXPECT_EQ(r.err, "slurm_get_job_steps error: Invalid job id specified\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(step_query_job_id("5.0"), 5u);
  EXPECT_EQ(step_query_job_id("11_2"), 11u);
  EXPECT_EQ(step_query_job_id("abc"), 0u);
}

TEST(StepViews, SqueueDefaultLayout) {
  StepListOptions o;
  auto r = squeue_steps(reply(), o);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
            "         11_2.0     true       big    alice      1:00 node2\n"
            "     11_2.batch    batch       big    alice      1:05 node1\n"
            "            3.0 hostname     debug    alice      1:00 node[1-2]\n"
            "            6.0    sleep     debug    alice      1:00 node[1-2]\n"
            "            7.0    sleep     debug    alice      1:00 node[1-2]\n"
            "            7.1    inner     debug    alice      1:00 node1\n"
            "        7.batch    batch     debug    alice      1:05 node1\n");
}

TEST(StepViews, SqueueFormatsAndFilters) {
  StepListOptions o;
  o.format = "%i|%l|%A|%U|%b|%Q|%-5j";
  o.jobs = {{7, std::nullopt}};
  o.header = false;
  auto r = squeue_steps(reply(), o);
  EXPECT_EQ(r.err,
            "squeue: error: Invalid job step format specification: Q\n"
            "squeue: error: Invalid job step format specification: -\n");
  EXPECT_EQ(r.out,
            "7.0|UNLIMITED|4|1000|(null)|%Q|%-5j\n"
            "7.1|5:00|1|1000|(null)|%Q|%-5j\n"
            "7.batch|UNLIMITED|1|1000|(null)|%Q|%-5j\n");

  o = {};
  o.named_format = "stepid:8,stepname,numcpus:.4,bogus";
  o.partitions = {"debug"};
  o.nodes = {"node2"};
  r = squeue_steps(reply(), o);
  EXPECT_EQ(r.err, "squeue: error: Invalid job step format specification: bogus\n");
  EXPECT_EQ(r.out,
            "STEPID  NAME                NUM_\n"
            "3.0     hostname               2\n"
            "6.0     sleep                  2\n"
            "7.0     sleep                  4\n");

  o = {};
  std::string error;
  ASSERT_TRUE(parse_step_list("7.batch,11_2.0", o.steps, error));  // 7.batch reads as 7.0
  o.sort = "-i";
  o.users = {"alice"};
  r = squeue_steps(reply(), o);
  EXPECT_EQ(r.out,
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
            "         11_2.0     true       big    alice      1:00 node2\n"
            "            7.0    sleep     debug    alice      1:00 node[1-2]\n");
  o.users = {"bob"};
  EXPECT_EQ(squeue_steps(reply(), o).out,
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n");

  std::vector<StepRef> refs;
  EXPECT_FALSE(parse_step_list("7", refs, error));
  EXPECT_EQ(error, "squeue: error: Invalid job_step id: 7.??\n");
  EXPECT_FALSE(parse_step_list("x.1", refs, error));
  EXPECT_EQ(error, "squeue: error: Invalid job_step id: x.1\n");
}
