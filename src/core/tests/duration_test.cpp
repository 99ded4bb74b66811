#include "core/duration.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "core/error.hpp"

using namespace drover::core;

TEST(ParseTimeLimit, Forms) {
  EXPECT_EQ(parse_time_limit_minutes("90"), 90);  // M
  EXPECT_EQ(parse_time_limit_minutes("01"), 1);
  EXPECT_EQ(parse_time_limit_minutes("61:00"), 61);   // M:S
  EXPECT_EQ(parse_time_limit_minutes("1:0:30"), 61);  // H:M:S, seconds round up
  EXPECT_EQ(parse_time_limit_minutes("1-0"), 1440);   // D-H
  EXPECT_EQ(parse_time_limit_minutes("1-"), 1440);    // sbatch accepts a bare "D-"
  EXPECT_EQ(parse_time_limit_minutes("2-3:4"), 2 * 1440 + 3 * 60 + 4);    // D-H:M
  EXPECT_EQ(parse_time_limit_minutes("2-3:4:5"), 2 * 1440 + 3 * 60 + 5);  // D-H:M:S
  EXPECT_EQ(parse_time_limit_minutes("0-0:0:1"), 1);
}

TEST(ParseTimeLimit, SecondsRoundUpWithoutRangeChecks) {
  EXPECT_EQ(parse_time_limit_minutes("0:30"), 1);
  EXPECT_EQ(parse_time_limit_minutes("0:1"), 1);
  EXPECT_EQ(parse_time_limit_minutes("1:61"), 3);  // 121 s; sbatch shows 00:03:00
}

TEST(ParseTimeLimit, ZeroAndInfinite) {
  EXPECT_EQ(parse_time_limit_minutes("0"), 0);
  EXPECT_EQ(parse_time_limit_minutes("0:0"), 0);
  EXPECT_EQ(parse_time_limit_minutes("00:00:00"), 0);
  EXPECT_EQ(parse_time_limit_minutes("-1"), kInfinite);
  EXPECT_EQ(parse_time_limit_minutes("UNLIMITED"), kInfinite);
  EXPECT_EQ(parse_time_limit_minutes("unlimited"), kInfinite);
  EXPECT_EQ(parse_time_limit_minutes("INFINITE"), kInfinite);
  EXPECT_EQ(parse_time_limit_minutes("Infinite"), kInfinite);
}

TEST(ParseTimeLimit, Errors) {
  // All rejected by real sbatch 22.05 with "Invalid --time specification".
  for (const char* bad : {"bad", "", "1:2:3:4", "1-2-3", " 5", "5 ", "5x", "1.5", "1:-1", "-", ":",
                          "1:", ":5", "1::2", "1:2-3", "infinitex", "1-:5", "+5", "1-2:3:4:5"}) {
    try {
      parse_time_limit_minutes(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ParseError& e) {
      EXPECT_STREQ(e.what(), "Invalid --time specification");
    }
  }
  // Real Slurm wraps these around; drover refuses them.
  EXPECT_THROW(parse_time_limit_minutes("-5"), ParseError);
  EXPECT_THROW(parse_time_limit_minutes("99999999999"), ParseError);
  EXPECT_THROW(parse_time_limit_minutes("99999999999999999999999"), ParseError);
  try {
    parse_time_limit_minutes("x", "--time-min");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid --time-min specification");
  }
}

TEST(FormatElapsed, SqueueStyle) {
  EXPECT_EQ(format_elapsed(0), "0:00");
  EXPECT_EQ(format_elapsed(307), "5:07");
  EXPECT_EQ(format_elapsed(3723), "1:02:03");
  EXPECT_EQ(format_elapsed(93784), "1-02:03:04");
  EXPECT_EQ(format_elapsed(86400), "1-00:00:00");
  EXPECT_EQ(format_elapsed(-3), "INVALID");
}

TEST(FormatHms, ScontrolStyle) {
  EXPECT_EQ(format_hms(0), "00:00:00");
  EXPECT_EQ(format_hms(5), "00:00:05");
  EXPECT_EQ(format_hms(3600), "01:00:00");
  EXPECT_EQ(format_hms(93784), "1-02:03:04");
  EXPECT_EQ(format_hms(400 * 86400), "400-00:00:00");
}

TEST(FormatTimeLimit, Both) {
  EXPECT_EQ(format_time_limit(kInfinite, true), "UNLIMITED");
  EXPECT_EQ(format_time_limit(kInfinite, false), "infinite");
  EXPECT_EQ(format_time_limit(60, true), "01:00:00");
  EXPECT_EQ(format_time_limit(60, false), "1:00:00");
  EXPECT_EQ(format_time_limit(30, false), "30:00");
  EXPECT_EQ(format_time_limit(1440 + 1, true), "1-00:01:00");
  EXPECT_EQ(format_time_limit(1440 + 1, false), "1-00:01:00");
}

TEST(FormatTimestamp, LocalTime) {
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(format_timestamp(0), "Unknown");
  EXPECT_EQ(format_timestamp(kTimestampNone), "None");
  EXPECT_EQ(format_timestamp(1795293185), "2026-11-21T20:33:05");
  setenv("TZ", "Europe/Berlin", 1);
  tzset();
  std::string berlin = format_timestamp(1795293185);
  // Only assert the offset when zone data is installed (UTC fallback otherwise).
  if (berlin != "2026-11-21T20:33:05") {
    EXPECT_EQ(berlin, "2026-11-21T21:33:05");
  }
  unsetenv("TZ");
  tzset();
}
