#include "core/job.hpp"

#include <gtest/gtest.h>

#include "core/job_env.hpp"
#include "core/node.hpp"

using namespace drover::core;

TEST(JobState, NamesRoundTrip) {
  for (auto s : {JobState::Pending, JobState::Running, JobState::Completed, JobState::Cancelled,
                 JobState::Failed, JobState::Timeout, JobState::NodeFail, JobState::OutOfMemory}) {
    EXPECT_EQ(parse_job_state(job_state_name(s)), s);
    EXPECT_EQ(parse_job_state(job_state_short(s)), s);
  }
  EXPECT_EQ(job_state_short(JobState::Pending), "PD");
  EXPECT_EQ(job_state_name(JobState::NodeFail), "NODE_FAIL");
  EXPECT_EQ(parse_job_state("running"), JobState::Running);
  EXPECT_FALSE(parse_job_state("bogus").has_value());
  EXPECT_FALSE(is_finished(JobState::Pending));
  EXPECT_TRUE(is_finished(JobState::Timeout));
}

TEST(JobEnv, CompressCounts) {
  EXPECT_EQ(compress_counts({2, 2, 2, 1}), "2(x3),1");
  EXPECT_EQ(compress_counts({1}), "1");
  EXPECT_EQ(compress_counts({4, 1, 1}), "4,1(x2)");
  EXPECT_EQ(compress_counts({}), "");
}

TEST(JobEnv, BatchEnvironmentCarriesAllocation) {
  Job job;
  job.id = 17;
  job.spec.name = "envtest";
  job.spec.ntasks = 3;
  job.spec.ntasks_set = true;
  job.spec.workdir = "/home/u";
  job.spec.environment = {{"HOME", "/home/u"}, {"SLURM_JOB_ID", "stale"}};
  job.partition = "debug";
  job.user = "u";
  job.uid = 1000;
  job.alloc = {{"node1", 2, 100, 2}, {"node2", 1, 50, 1}};
  job.batch_host = "node1";
  auto env = batch_environment(job, "drover");
  EXPECT_EQ(env["SLURM_JOB_ID"], "17");
  EXPECT_EQ(env["HOME"], "/home/u");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "node[1-2]");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "2,1");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "2,1");
  EXPECT_EQ(env["SLURM_NTASKS"], "3");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "2");
  EXPECT_EQ(env["SLURM_JOB_NUM_NODES"], "2");
  EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "drover");
  EXPECT_EQ(env.count("SLURM_CPUS_PER_TASK"), 0u);
}

TEST(NodeState, LongAndShortForms) {
  Node n;
  n.cpus = 4;
  EXPECT_EQ(n.state_short(), "unk*");
  n.registered = true;
  EXPECT_EQ(n.state_long(false), "IDLE");
  EXPECT_EQ(n.state_short(), "idle");
  n.alloc_cpus = 2;
  n.running_jobs = 1;
  EXPECT_EQ(n.state_short(), "mix");
  n.drain = true;
  EXPECT_EQ(n.state_short(), "drng");
  EXPECT_EQ(n.state_long(true), "MIXED+DRAIN");
  n.alloc_cpus = 4;
  n.drain = false;
  EXPECT_EQ(n.state_short(), "alloc");
  n.down = true;
  n.not_responding = true;
  EXPECT_EQ(n.state_short(), "down*");
}

// The controller keeps every pending job in memory (1,000,000 of them must fit): a new field
// belongs out of line (or interned) unless most jobs need it.
TEST(Job, RecordStaysSmall) {
  EXPECT_LE(sizeof(JobSpec), 448u);
  EXPECT_LE(sizeof(Job), 800u);
}

TEST(JobSpec, EqualTextsAreShared) {
  JobSpec a, b;
  a.workdir = std::string("/home/user/a/long/working/directory");
  b.workdir = std::string("/home/user/a/long/working/directory");
  EXPECT_EQ(a.workdir.data(), b.workdir.data());
  b = a;
  EXPECT_EQ(b.workdir, "/home/user/a/long/working/directory");
}
