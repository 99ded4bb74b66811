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
  // Checked against Slurm 22.05: -o b_%J -> b_115, c_%s -> c_batch, s_%5s -> s_batch,
  // r_%5J -> r_00131, i_%J%s -> i_144batch.
  EXPECT_EQ(expand_output_pattern("%J", c), "128");
  EXPECT_EQ(expand_output_pattern("%s", c), "batch");
  EXPECT_EQ(expand_output_pattern("%5s", c), "batch");
  EXPECT_EQ(expand_output_pattern("%5J", c), "00128");
  EXPECT_EQ(expand_output_pattern("%J%s", c), "128batch");
  EXPECT_EQ(expand_output_pattern("%t_%n", c), "0_0");
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

TEST(OutputPattern, ArraysCheckedAgainstSlurm) {
  // Slurm 22.05, --array=3,12 -o 'arr_%A_%a_%5a_%j_%J_%3A' (array job 148): task 3 ran as job
  // 150 -> arr_148_3_00003_150_150_148; task 12 kept the array's id ->
  // arr_148_12_00012_148_148_148.
  PatternContext c = job128();
  c.step_id.reset();
  c.job_id = 150;
  c.array_job_id = 148;
  c.array_task_id = 3;
  EXPECT_EQ(expand_output_pattern("arr_%A_%a_%5a_%j_%J_%3A", c), "arr_148_3_00003_150_150_148");
  c.job_id = 148;
  c.array_task_id = 12;
  EXPECT_EQ(expand_output_pattern("arr_%A_%a_%5a_%j_%J_%3A", c), "arr_148_12_00012_148_148_148");
  // The default for an array (sbatch --array=1-2, job 149): slurm-149_1.out.
  c.job_id = 149;
  c.array_job_id = 149;
  c.array_task_id = 1;
  EXPECT_EQ(expand_output_pattern(default_output_pattern(true), c), "slurm-149_1.out");
}

TEST(OutputPattern, NonArrayCheckedAgainstSlurm) {
  // Slurm 22.05, job 114: -o a_%A_%a -> a_114_4294967294; job 129: p_%5A -> p_00129; job 121
  // g_%10a -> g_4294967294.
  PatternContext c = job128();
  c.step_id.reset();
  c.job_id = 114;
  EXPECT_EQ(expand_output_pattern("a_%A_%a", c), "a_114_4294967294");
  c.job_id = 129;
  EXPECT_EQ(expand_output_pattern("p_%5A", c), "p_00129");
  EXPECT_EQ(expand_output_pattern("g_%10a", c), "g_4294967294");
  EXPECT_EQ(expand_output_pattern(default_output_pattern(false), c), "slurm-129.out");
}

TEST(OutputPattern, WidthIgnoredForTextAndCapped) {
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("%10x", c), "train");
  EXPECT_EQ(expand_output_pattern("%5N", c), "node7");
  EXPECT_EQ(expand_output_pattern("%99j", c), "0000000128");
  EXPECT_EQ(expand_output_pattern("%0j", c), "128");
  // Checked against Slurm 22.05: o_%4x_%3N_%5u -> o_pj_vm_root, h_%12j -> h_0000000121,
  // j_%9999999999999j -> j_0000000145, i_%0j -> i_122, d_%04j -> d_0139, e_%1j -> e_140.
  EXPECT_EQ(expand_output_pattern("%9999999999999j", c), "0000000128");
  EXPECT_EQ(expand_output_pattern("%04j", c), "0128");
  EXPECT_EQ(expand_output_pattern("%1j", c), "128");
  EXPECT_EQ(expand_output_pattern("%2u", c), "alice");
}

TEST(OutputPattern, UnknownAndTrailing) {
  // Checked against Slurm 22.05 (-o as written -> file created): j_%z_%4z -> j_%z_4z,
  // a_%123z -> a_3z, k_% -> k_%, l_%12 -> l_2, b_%5 -> b_5, c_%4% -> c_4%, l_%3%x -> l_3pj,
  // h_%%4j -> h_%4j, t_%%%j -> t_%133, u_%-3j -> u_%-3j, v_%j% -> v_135%, n_%b -> n_%b,
  // q_%r -> q_%r (22.05 has neither %b nor %r).
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("a%zb", c), "a%zb");
  EXPECT_EQ(expand_output_pattern("a%4zb", c), "a4zb");
  EXPECT_EQ(expand_output_pattern("j_%z_%4z", c), "j_%z_4z");
  EXPECT_EQ(expand_output_pattern("a_%123z", c), "a_3z");
  EXPECT_EQ(expand_output_pattern("out%", c), "out%");
  EXPECT_EQ(expand_output_pattern("out%12", c), "out2");
  EXPECT_EQ(expand_output_pattern("b_%5", c), "b_5");
  EXPECT_EQ(expand_output_pattern("c_%4%", c), "c_4%");
  EXPECT_EQ(expand_output_pattern("l_%3%x", c), "l_3train");
  EXPECT_EQ(expand_output_pattern("h_%%4j", c), "h_%4j");
  EXPECT_EQ(expand_output_pattern("t_%%%j", c), "t_%128");
  EXPECT_EQ(expand_output_pattern("u_%-3j", c), "u_%-3j");
  EXPECT_EQ(expand_output_pattern("v_%j%", c), "v_128%");
  EXPECT_EQ(expand_output_pattern("n_%b", c), "n_%b");
  EXPECT_EQ(expand_output_pattern("q_%r", c), "q_%r");
  EXPECT_EQ(expand_output_pattern("", c), "");
  EXPECT_EQ(expand_output_pattern("plain.txt", c), "plain.txt");
}

TEST(OutputPattern, BackslashDisablesExpansion) {
  PatternContext c = job128();
  EXPECT_EQ(expand_output_pattern("job\\%j.out", c), "job%j.out");
  EXPECT_EQ(expand_output_pattern("%j\\_%x", c), "%j_%x");
  // Checked against Slurm 22.05: m_\%j_%x -> m_%j_%x, g_%4\j -> g_%4j.
  EXPECT_EQ(expand_output_pattern("m_\\%j_%x", c), "m_%j_%x");
  EXPECT_EQ(expand_output_pattern("g_%4\\j", c), "g_%4j");
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

TEST(OutputPattern, VariesByTask) {
  for (const char* p : {"o.%t", "o.%n", "o.%N", "%5t.out", "a%%%t"})
    EXPECT_TRUE(pattern_varies_by_task(p)) << p;
  for (const char* p : {"o.txt", "slurm-%j.out", "%x-%u-%s", "o.%%t", "o\\.%t", "o.%", "o.%12"})
    EXPECT_FALSE(pattern_varies_by_task(p)) << p;
}
