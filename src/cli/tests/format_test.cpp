#include "cli/format.hpp"

#include <gtest/gtest.h>

using namespace drover::cli;

TEST(Format, ParsesSqueueDefault) {
  auto f = parse_format("%.18i %.9P %.8j %R");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].code, 'i');
  EXPECT_EQ(f[0].width, 18);
  EXPECT_TRUE(f[0].right);
  EXPECT_EQ(f[1].literal, " ");
  EXPECT_EQ(f[3].code, 'R');
  EXPECT_EQ(f[3].width, 0);
}

TEST(Format, FitTruncatesAndPads) {
  EXPECT_EQ(fit("this_is_a_very_long", 8, true), "this_is_");
  EXPECT_EQ(fit("R", 2, true), " R");
  EXPECT_EQ(fit("PD", 4, false), "PD  ");
  EXPECT_EQ(fit("node1", 0, false), "node1");
}

TEST(Format, RendersSqueueHeaderLikeSlurm) {
  auto f = parse_format("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R");
  auto header = [](char c) -> std::string {
    switch (c) {
      case 'i':
        return "JOBID";
      case 'P':
        return "PARTITION";
      case 'j':
        return "NAME";
      case 'u':
        return "USER";
      case 't':
        return "ST";
      case 'M':
        return "TIME";
      case 'D':
        return "NODES";
      default:
        return "NODELIST(REASON)";
    }
  };
  std::string out = render_table(
      f, 0, [](char, size_t) { return std::string(); }, header, true);
  EXPECT_EQ(
      out,
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n");
}

TEST(Format, DynamicWidthTakesWidestValue) {
  auto f = parse_format("%#P %.5a");
  std::vector<std::string> parts = {"debug*", "long_partition_name"};
  std::string out = render_table(
      f, 2, [&](char c, size_t r) { return c == 'P' ? parts[r] : std::string("up"); },
      [](char c) { return c == 'P' ? std::string("PARTITION") : std::string("AVAIL"); }, true);
  EXPECT_EQ(out,
            "PARTITION           AVAIL\n"
            "debug*                 up\n"
            "long_partition_name    up\n");
}

TEST(Format, PercentLiteral) {
  auto f = parse_format("100%% %i");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].literal, "100% ");
}

// Slurm's commands take any width (squeue -O Name:99999999999 crashes; sinfo -o
// '%999999999N' writes a gigabyte); drover's stop at kMaxFieldWidth, without overflow.
TEST(Format, WidthsAreCapped) {
  auto f = parse_format("%999999999N %99999999999999999999999j %.12i");
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].width, kMaxFieldWidth);
  EXPECT_EQ(f[1].width, kMaxFieldWidth);
  EXPECT_EQ(f[2].width, 12);
  EXPECT_EQ(parse_width("99999999999"), kMaxFieldWidth);
  EXPECT_EQ(parse_width("-99999999999"), -kMaxFieldWidth);
  EXPECT_EQ(parse_width("25x"), 25);
  EXPECT_EQ(parse_width("x"), 0);
  EXPECT_EQ(fit("n", parse_width("99999999999"), false).size(),
            static_cast<size_t>(kMaxFieldWidth));
}

TEST(Format, TheKubernetesOperatorHasAName) {
  EXPECT_EQ(user_name(0xffffffffu), "drover-operator");
  EXPECT_EQ(user_name(0), "root");
}
