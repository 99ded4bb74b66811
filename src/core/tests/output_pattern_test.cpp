#include "core/output_pattern.hpp"

#include <gtest/gtest.h>

using namespace drover::core;

namespace {
PatternContext job128() {
  PatternContext c;
  c.job_id = 128;
  c.job_name = "train";
  c.user = "alice";
  c.first_node = "node7.cluster.example";
  c.step_id = 0;
  return c;
}
}  // namespace

TEST(OutputPattern, ManPageExamples) {
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("job%J.out", c), "job128.0.out");
  EXPECT_EQ(expand_output_pattern("job%4j.out", c), "job0128.out");
  c.task_id = 1;
  EXPECT_EQ(expand_output_pattern("job%j-%2t.out", c), "job128-01.out");
}

TEST(OutputPattern, AllCodes) {
  PatternContext c = job128();
  c.node_index = 3;
  c.task_id = 5;
  c.step_id = 2;
  EXPECT_EQ(expand_output_pattern("%%-%j-%J-%N-%n-%s-%t-%u-%x", c),
            "%-128-128.2-node7-3-2-5-alice-train");
}

TEST(OutputPattern, BatchStep) {
  PatternContext c = job128();
  c.step_id.reset();
  EXPECT_EQ(expand_output_pattern("%J", c), "128");
  EXPECT_EQ(expand_output_pattern("%s", c), "4294967291");
}

TEST(OutputPattern, Arrays) {
  PatternContext c = job128();
  // Not an array job: %A is the job id, %a Slurm's NO_VAL.
  EXPECT_EQ(expand_output_pattern("slurm-%A_%a.out", c), "slurm-128_4294967294.out");
  c.job_id = 130;
  c.array_job_id = 128;
  c.array_task_id = 2;
  EXPECT_EQ(expand_output_pattern("slurm-%A_%a.out", c), "slurm-128_2.out");
  EXPECT_EQ(expand_output_pattern("%j", c), "130");
  EXPECT_EQ(expand_output_pattern("%6A_%3a", c), "000128_002");
}

TEST(OutputPattern, WidthIgnoredForTextAndCapped) {
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("%10x", c), "train");
  EXPECT_EQ(expand_output_pattern("%5N", c), "node7");
  EXPECT_EQ(expand_output_pattern("%99j", c), "0000000128");
  EXPECT_EQ(expand_output_pattern("%0j", c), "128");
}

TEST(OutputPattern, UnknownAndTrailing) {
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("a%zb", c), "a%zb");
  EXPECT_EQ(expand_output_pattern("a%4zb", c), "a%4zb");
  EXPECT_EQ(expand_output_pattern("out%", c), "out%");
  EXPECT_EQ(expand_output_pattern("out%12", c), "out%12");
  EXPECT_EQ(expand_output_pattern("", c), "");
  EXPECT_EQ(expand_output_pattern("plain.txt", c), "plain.txt");
}

TEST(OutputPattern, BackslashDisablesExpansion) {
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("job\\%j.out", c), "job%j.out");
  EXPECT_EQ(expand_output_pattern("%j\\_%x", c), "%j_%x");
}

TEST(OutputPattern, ShortHostname) {
  PatternContext c = job128();
  c.first_node = "gpu01";
  EXPECT_EQ(expand_output_pattern("%N.log", c), "gpu01.log");
  c.first_node = "";
  EXPECT_EQ(expand_output_pattern("%N.log", c), ".log");
}

TEST(OutputPattern, Defaults) {
  EXPECT_EQ(default_output_pattern(false), "slurm-%j.out");
  EXPECT_EQ(default_output_pattern(true), "slurm-%A_%a.out");
}
