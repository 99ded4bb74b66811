#include "ctld/acct_record.hpp"

#include <gtest/gtest.h>

using namespace drover;

namespace {
core::Job ran(core::JobState state, int code, int sig) {
  core::Job j;
  j.id = 12;
  j.spec.name = "wrap";
  j.spec.ntasks = 2;
  j.spec.account = "phys";
  j.spec.qos = "normal";
  j.spec.workdir = "/home/u";
  j.uid = 1000;
  j.gid = 1000;
  j.user = "u";
  j.group = "g";
  j.partition = "debug";
  j.state = state;
  j.submit_time = 100;
  j.eligible_time = 100;
  j.start_time = 101;
  j.end_time = 130;
  j.time_limit_min = 60;
  j.exit_code = code;
  j.exit_signal = sig;
  j.alloc.emplace_back("node1", 2, 1024, 2);
  j.alloc.emplace_back("node2", 1, 512, 1, std::vector<core::GresCount>{{"gpu", "", 1}});
  j.batch_host = "node1";
  return j;
}
}  // namespace

TEST(AcctRecord, CompletedJobAndBatchStep) {
  auto r = ctld::acct_record(ran(core::JobState::Failed, 3, 0));
  EXPECT_EQ(r.job_id, 12u);
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.alloc_cpus, 3);
  EXPECT_EQ(r.nnodes, 2);
  EXPECT_EQ(r.nodelist, "node[1-2]");
  EXPECT_EQ(r.alloc_tres, "billing=3,cpu=3,gres/gpu=1,mem=1536M,node=2");
  EXPECT_EQ(r.req_cpus, 2);
  EXPECT_EQ(r.array_task_id, store::kAcctNoTask);
  EXPECT_EQ(r.cancelled_by, store::kAcctNoUid);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].name, "batch");
  EXPECT_EQ(r.steps[0].state, "FAILED");
  EXPECT_EQ(r.steps[0].exit_code, 3);
  EXPECT_EQ(r.steps[0].ncpus, 2);
  EXPECT_EQ(r.steps[0].nodelist, "node1");
  EXPECT_EQ(r.steps[0].end_time, 130);
  EXPECT_EQ(r.steps[0].alloc_tres, "cpu=2,mem=1G,node=1");
}

// As real Slurm recorded `sbatch --wrap 'kill -9 $$'` (tests/compat/golden/sacct, job 4): the
// job FAILED 0:9, its batch step CANCELLED 0:9.
TEST(AcctRecord, AShellKilledByASignalEndsItsBatchStepCancelled) {
  auto r = ctld::acct_record(ran(core::JobState::Failed, 0, 9));
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_signal, 9);
  EXPECT_EQ(r.steps.at(0).state, "CANCELLED");
  EXPECT_EQ(r.steps.at(0).exit_signal, 9);
}

// A job that never started without --time has no limit resolved: sacct's Partition_Limit.
TEST(AcctRecord, ANeverStartedJobWithoutATimeHasThePartitionsLimit) {
  auto j = ran(core::JobState::Cancelled, 0, 0);
  j.start_time = core::kNoTime;
  j.alloc.clear();
  EXPECT_EQ(ctld::acct_record(j).time_limit_min, store::kAcctPartitionLimit);
  j.spec.time_limit_min = 30;
  EXPECT_EQ(ctld::acct_record(j).time_limit_min, 60);  // the job's own, resolved
}

TEST(AcctRecord, CancelledKeepsSignalOnTheBatchStep) {
  auto j = ran(core::JobState::Cancelled, 0, 15);
  j.cancelled_by = 1000;
  auto r = ctld::acct_record(j);
  EXPECT_EQ(r.state, "CANCELLED");
  EXPECT_EQ(r.cancelled_by, 1000);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.exit_signal, 0);
  EXPECT_EQ(r.steps.at(0).state, "CANCELLED");
  EXPECT_EQ(r.steps.at(0).exit_signal, 15);

  auto t = ctld::acct_record(ran(core::JobState::Timeout, 0, 15));
  EXPECT_EQ(t.state, "TIMEOUT");
  EXPECT_EQ(t.steps.at(0).state, "CANCELLED");
}

TEST(AcctRecord, PendingJobHasNoStepsAndRunningStepIsOpen) {
  core::Job p;
  p.id = 5;
  p.spec.nodes_min = 2;
  p.spec.mem_per_cpu_mb = 100;
  p.array_job_id = 4;
  p.array_task_id = 1;
  auto r = ctld::acct_record(p);
  EXPECT_EQ(r.state, "PENDING");
  EXPECT_TRUE(r.steps.empty());
  EXPECT_EQ(r.nnodes, 2);
  EXPECT_EQ(r.alloc_cpus, 0);
  EXPECT_EQ(r.array_task_id, 1u);
  EXPECT_TRUE(r.req_mem_per_cpu);
  EXPECT_EQ(r.req_tres, "billing=1,cpu=1,mem=100M,node=2");

  auto run = ran(core::JobState::Running, 0, 0);
  run.end_time = 0;
  auto rr = ctld::acct_record(run);
  EXPECT_EQ(rr.steps.at(0).state, "RUNNING");
  EXPECT_EQ(rr.steps.at(0).end_time, 0);
}

TEST(AcctRecord, FilterDefaultsToTheCallersJobs) {
  auto f = ctld::acct_filter(proto::QueryRequest::from_json({{"what", "acct_jobs"}}), 1000);
  EXPECT_EQ(f.uids, (std::vector<uint32_t>{1000}));
  EXPECT_FALSE(f.window_start);
  f = ctld::acct_filter(
      proto::QueryRequest::from_json(
          {{"all_users", true}, {"start", 5}, {"end", 9}, {"states", {"FAILED"}}}),
      7);
  EXPECT_TRUE(f.uids.empty());
  EXPECT_EQ(*f.window_start, 5);
  EXPECT_EQ(*f.window_end, 9);
  EXPECT_EQ(f.states, (std::vector<std::string>{"FAILED"}));
  f = ctld::acct_filter(proto::QueryRequest::from_json(
                            {{"uids", {0, 1}}, {"job_ids", {3}}, {"include_ineligible", true}}),
                        7);
  EXPECT_EQ(f.uids, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(f.job_ids, (std::vector<uint64_t>{3}));
  EXPECT_TRUE(f.include_ineligible);
  auto j = ctld::acct_record_json(ctld::acct_record(ran(core::JobState::Completed, 0, 0)));
  EXPECT_EQ(j["steps"][0]["name"], "batch");
  EXPECT_EQ(j["alloc_cpus"], 3);
}

namespace {
core::Step step(uint32_t id, const std::string& name, core::JobState state) {
  core::Step s;
  s.id = id;
  s.name = name;
  s.state = state;
  s.start_time = 105;
  s.end_time = state == core::JobState::Running ? 0 : 120;
  s.ntasks = 3;
  s.alloc.emplace_back("node1", 2, 0, 2);  // no --mem: the job's memory there
  s.alloc.emplace_back("node2", 1, 256, 1, std::vector<core::GresCount>{{"gpu", "", 1}});
  return s;
}
}  // namespace

TEST(AcctRecord, SrunStepsFollowTheBatchStep) {
  auto j = ran(core::JobState::Completed, 0, 0);
  j.steps.push_back(step(0, "hostname", core::JobState::Completed));
  auto failed = step(1, "false", core::JobState::Failed);
  failed.exit_code = 1;
  j.steps.push_back(failed);
  auto killed = step(2, "sleep", core::JobState::Cancelled);
  killed.exit_signal = 9;
  j.steps.push_back(killed);
  auto r = ctld::acct_record(j);
  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_EQ(r.steps[0].name, "batch");
  EXPECT_EQ(r.steps[0].job_name, "batch");
  const auto& s0 = r.steps[1];
  EXPECT_EQ(s0.name, "0");
  EXPECT_EQ(s0.job_name, "hostname");
  EXPECT_EQ(s0.state, "COMPLETED");
  EXPECT_EQ(s0.start_time, 105);
  EXPECT_EQ(s0.end_time, 120);
  EXPECT_EQ(s0.nodelist, "node[1-2]");
  EXPECT_EQ(s0.nnodes, 2);
  EXPECT_EQ(s0.ncpus, 3);
  EXPECT_EQ(s0.ntasks, 3);
  EXPECT_EQ(s0.alloc_tres, "cpu=3,gres/gpu=1,mem=1280M,node=2");  // billing is the job's
  EXPECT_EQ(r.steps[2].state, "FAILED");
  EXPECT_EQ(r.steps[2].exit_code, 1);
  EXPECT_EQ(r.steps[3].state, "CANCELLED");
  EXPECT_EQ(r.steps[3].exit_signal, 9);
  auto js = ctld::acct_record_json(r);
  EXPECT_EQ(js["steps"][1]["job_name"], "hostname");
  EXPECT_EQ(js["steps"][1]["ntasks"], 3);
}

TEST(AcctRecord, AllocationsHaveNoBatchStep) {
  // srun outside an allocation: the job is the step's allocation, ended with its result.
  auto j = ran(core::JobState::Failed, 2, 0);
  j.spec.interactive = true;
  j.spec.name = "hostname";
  j.batch_host.clear();
  auto s = step(0, "hostname", core::JobState::Failed);
  s.exit_code = 2;
  j.steps.push_back(s);
  auto r = ctld::acct_record(j);
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].name, "0");
  EXPECT_EQ(r.steps[0].exit_code, 2);

  // salloc, still held, with a step running.
  auto held = ran(core::JobState::Running, 0, 0);
  held.spec.interactive = true;
  held.end_time = 0;
  held.steps.push_back(step(0, "sleep", core::JobState::Running));
  auto h = ctld::acct_record(held);
  ASSERT_EQ(h.steps.size(), 1u);
  EXPECT_EQ(h.steps[0].state, "RUNNING");
  EXPECT_EQ(h.steps[0].end_time, 0);
}

TEST(AcctRecord, JsonRoundTrip) {
  auto r = ctld::acct_record(ran(core::JobState::Cancelled, 0, 15));
  r.array_job_id = 10;
  r.array_task_id = 2;
  r.cancelled_by = 0;
  r.steps.push_back({"0", "FAILED", 1, 0, 102, 120, "node[1-2]", 2, 3, "cpu=3", "hostname", 3});
  EXPECT_EQ(ctld::acct_record_from_json(ctld::acct_record_json(r)), r);
  EXPECT_THROW(ctld::acct_record_from_json(nlohmann::json{{"job_id", 1}}),
               nlohmann::json::exception);
}
