#include "sim/swf.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

using namespace drover;
using sim::parse_swf;

namespace {

// The ParseError message for `text`, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    parse_swf(text);
  } catch (const core::ParseError& e) {
    return e.what();
  }
  return "";
}

const char* kJob = "1 0 10 100 4 -1 -1 4 120 -1 1 7 8 -1 -1 -1 -1 -1\n";

}  // namespace

TEST(Swf, ReadsHeaderAndFieldsInOrder) {
  auto t = parse_swf(
      "; Version: 2.2\n"
      "; UnixStartTime: 843480031\n"
      ";   MaxNodes: 100\n"
      "; MaxProcs: 128\n"
      "; Note: MaxNodes: 7 in a note is not a header key\n"
      ";\n"
      "   15   599850 192180   3477    4     -1    -1    5  53940    -1  1  12  13  14 15 16 17 "
      "18\n");
  EXPECT_EQ(t.header.max_nodes, 100);
  EXPECT_EQ(t.header.max_procs, 128);
  EXPECT_EQ(t.header.unix_start_time, 843480031);
  ASSERT_EQ(t.jobs.size(), 1u);
  const auto& j = t.jobs[0];
  EXPECT_EQ(j.line, 7);
  EXPECT_EQ(j.job_number, 15);
  EXPECT_EQ(j.submit, 599850);
  EXPECT_EQ(j.wait, 192180);
  EXPECT_EQ(j.run, 3477);
  EXPECT_EQ(j.alloc_procs, 4);
  EXPECT_EQ(j.avg_cpu, -1);
  EXPECT_EQ(j.used_mem, -1);
  EXPECT_EQ(j.req_procs, 5);
  EXPECT_EQ(j.req_time, 53940);
  EXPECT_EQ(j.req_mem, -1);
  EXPECT_EQ(j.status, 1);
  EXPECT_EQ(j.user, 12);
  EXPECT_EQ(j.group, 13);
  EXPECT_EQ(j.app, 14);
  EXPECT_EQ(j.queue, 15);
  EXPECT_EQ(j.partition, 16);
  EXPECT_EQ(j.preceding_job, 17);
  EXPECT_EQ(j.think_time, 18);
  EXPECT_EQ(t.rounded_values, 0u);
  for (int f = 11; f < sim::kSwfFields; ++f) EXPECT_EQ(sim::swf_field(j, f), f + 1);
  EXPECT_EQ(sim::swf_field(j, 3), 3477);
  EXPECT_EQ(sim::swf_field_name(3), "run time");
}

TEST(Swf, NoHeaderLeavesUnknowns) {
  auto t = parse_swf(kJob);
  EXPECT_EQ(t.header.max_nodes, -1);
  EXPECT_EQ(t.header.max_procs, -1);
  EXPECT_EQ(t.header.unix_start_time, -1);
  ASSERT_EQ(t.jobs.size(), 1u);
  EXPECT_TRUE(parse_swf("").jobs.empty());
  EXPECT_TRUE(parse_swf("; only a comment").jobs.empty());
}

TEST(Swf, FractionalValuesRoundToNearestHalvesAwayFromZero) {
  auto t = parse_swf(
      "2050 2739.599152 0.0 6.609 2 -1 -1 2 67.0 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
      "2060 2754.5 -0.0 140.49 2 -1 -1 2 212.0 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
      "7 -2.5 1e2 0.5 2 -1 -1 2 -1.0 -1 1 -1 -1 -1 -1 -1 -1 -1\n");
  ASSERT_EQ(t.jobs.size(), 3u);
  EXPECT_EQ(t.jobs[0].submit, 2740);
  EXPECT_EQ(t.jobs[0].wait, 0);
  EXPECT_EQ(t.jobs[0].run, 7);
  EXPECT_EQ(t.jobs[0].req_time, 67);
  EXPECT_EQ(t.jobs[1].submit, 2755);  // half away from zero
  EXPECT_EQ(t.jobs[1].wait, 0);       // -0.0
  EXPECT_EQ(t.jobs[1].run, 140);
  EXPECT_EQ(t.jobs[2].submit, -3);
  EXPECT_EQ(t.jobs[2].wait, 100);
  EXPECT_EQ(t.jobs[2].run, 1);
  EXPECT_EQ(t.jobs[2].req_time, -1);
  // Only values with a fractional part count: 2739.599152, 6.609, 2754.5, 140.49, -2.5, 0.5.
  EXPECT_EQ(t.rounded_values, 6u);
}

TEST(Swf, BlankLinesCarriageReturnsAndCommentsAnywhere) {
  auto t = parse_swf(std::string("\r\n") + "; MaxNodes: 4\r\n" + "\t" + kJob + "\n; late note\n" +
                     "2 5 0 1 1 -1 -1 1 60 -1 1 7 8 -1 -1 -1 -1 -1\r\n");
  EXPECT_EQ(t.header.max_nodes, 4);
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(t.jobs[0].line, 3);
  EXPECT_EQ(t.jobs[1].line, 6);
  EXPECT_EQ(t.jobs[1].think_time, -1);
}

TEST(Swf, MalformedLinesNameTheLine) {
  EXPECT_EQ(error_of(std::string(kJob) + "1 2 3\n"), "line 2: expected 18 fields, found 3");
  EXPECT_EQ(error_of(std::string(kJob) + "1 0 10 100 4 -1 -1 4 120 -1 1 7 8 -1 -1 -1 -1 -1 19\n"),
            "line 2: expected 18 fields, found 19");
  EXPECT_EQ(error_of("\n\n1 0 10 abc 4 -1 -1 4 120 -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 3: field 4 (run time): 'abc' is not a number");
  EXPECT_EQ(error_of("1 0 10 12x 4 -1 -1 4 120 -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 4 (run time): '12x' is not a number");
  EXPECT_EQ(error_of("1 0 10 100 4 -1 -1 4 nan -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 9 (requested time): 'nan' is not a number");
  EXPECT_EQ(error_of("1 0 10 100 4 -1 -1 4 inf -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 9 (requested time): 'inf' is out of range");
  EXPECT_EQ(error_of("1 0 10 100 4 -1 -1 4 1e300 -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 9 (requested time): '1e300' is out of range");
  EXPECT_EQ(error_of("99999999999999999999 0 10 100 4 -1 -1 4 1 -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 1 (job number): '99999999999999999999' is out of range");
  EXPECT_EQ(error_of("1 0 10 100 4 -1 -1 4 - -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 9 (requested time): '-' is not a number");
  EXPECT_EQ(error_of("1 0 10 100 4 -1 -1 4 +5 -1 1 7 8 -1 -1 -1 -1 -1\n"),
            "line 1: field 9 (requested time): '+5' is not a number");
  EXPECT_EQ(error_of("; MaxNodes: lots\n"), "line 1: MaxNodes: 'lots' is not a number");
  EXPECT_EQ(error_of("; MaxProcs:\n"), "line 1: MaxProcs: no value");
  // A header value may carry a remark after it.
  EXPECT_EQ(parse_swf("; MaxProcs: 430 (of 512)\n").header.max_procs, 430);
}

TEST(Swf, FixtureFromEasyMediumWorkload) {
  // The first 40 lines of easy_mediumWL_smallPF.swf: no header, unsorted submit times,
  // fractional values and -0.0.
  auto t = sim::read_swf_file(DROVER_SIM_TEST_DATA "/easy_mediumWL_smallPF_head40.swf");
  EXPECT_EQ(t.header.max_nodes, -1);
  ASSERT_EQ(t.jobs.size(), 40u);
  EXPECT_EQ(t.jobs[0].job_number, 0);
  EXPECT_EQ(t.jobs[0].run, 89);       // 88.51
  EXPECT_EQ(t.jobs[1].submit, 2740);  // 2739.599152
  EXPECT_EQ(t.jobs[5].wait, 0);       // -0.0
  EXPECT_EQ(t.jobs[39].job_number, 6240);
  EXPECT_EQ(t.rounded_values, 79u);
}

TEST(Swf, FileErrorsNameThePath) {
  try {
    sim::read_swf_file("/nonexistent/trace.swf");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/trace.swf: cannot open");
  }
}
