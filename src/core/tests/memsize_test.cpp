#include "core/memsize.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;

TEST(ParseMem, UnitsAsSbatch) {
  EXPECT_EQ(parse_mem_mb("100"), 100);
  EXPECT_EQ(parse_mem_mb("512M"), 512);
  EXPECT_EQ(parse_mem_mb("512m"), 512);
  EXPECT_EQ(parse_mem_mb("2G"), 2048);
  EXPECT_EQ(parse_mem_mb("2g"), 2048);
  EXPECT_EQ(parse_mem_mb("1T"), 1024 * 1024);
  EXPECT_EQ(parse_mem_mb("1t"), 1024 * 1024);
  // A trailing B/b after the unit is accepted by sbatch.
  EXPECT_EQ(parse_mem_mb("2GB"), 2048);
  EXPECT_EQ(parse_mem_mb("2Gb"), 2048);
  EXPECT_EQ(parse_mem_mb("2gb"), 2048);
  EXPECT_EQ(parse_mem_mb("2MB"), 2);
  EXPECT_EQ(parse_mem_mb("2mB"), 2);
  // strtoll-style leading blanks and plus sign.
  EXPECT_EQ(parse_mem_mb(" 5"), 5);
  EXPECT_EQ(parse_mem_mb(" 5G"), 5120);
  EXPECT_EQ(parse_mem_mb("+5"), 5);
}

TEST(ParseMem, KilobytesRoundUp) {
  EXPECT_EQ(parse_mem_mb("10K"), 1);
  EXPECT_EQ(parse_mem_mb("10k"), 1);
  EXPECT_EQ(parse_mem_mb("1K"), 1);
  EXPECT_EQ(parse_mem_mb("2KB"), 1);
  EXPECT_EQ(parse_mem_mb("1024K"), 1);
  EXPECT_EQ(parse_mem_mb("1025K"), 2);
  EXPECT_EQ(parse_mem_mb("2048K"), 2);
  EXPECT_EQ(parse_mem_mb("0K"), 0);
}

TEST(ParseMem, Zero) {
  EXPECT_EQ(parse_mem_mb("0"), 0);
  EXPECT_EQ(parse_mem_mb("0G"), 0);
}

TEST(ParseMem, Errors) {
  // Each rejected by real sbatch 22.05 with this message.
  for (const char* bad : {"1P", "1E", "-1", "-5", "bad", "", "1.5G", "5x", "2GiB", "2 G", "5G ",
                          "2GBx", "2B", "5b", "0x10", "G"}) {
    try {
      parse_mem_mb(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ParseError& e) {
      EXPECT_STREQ(e.what(), "Invalid --mem specification");
    }
  }
  EXPECT_THROW(parse_mem_mb("9223372036854775807G"), ParseError);
  EXPECT_THROW(parse_mem_mb("99999999999999999999"), ParseError);
  EXPECT_EQ(parse_mem_mb("9223372036854775807"), INT64_MAX);
  try {
    parse_mem_mb("x", "--mem-per-cpu");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid --mem-per-cpu specification");
  }
}

TEST(FormatMem, ScontrolTres) {
  EXPECT_EQ(format_mem_mb(4000), "4000M");
  EXPECT_EQ(format_mem_mb(2048), "2G");
  EXPECT_EQ(format_mem_mb(1536), "1536M");
  EXPECT_EQ(format_mem_mb(1024 * 1024), "1T");
  EXPECT_EQ(format_mem_mb(1024 * 1024 * 3 / 2), "1536G");
  EXPECT_EQ(format_mem_mb(1), "1M");
  EXPECT_EQ(format_mem_mb(0), "0");
  EXPECT_EQ(format_mem_mb(int64_t{1} << 40), "1E");
  EXPECT_EQ(format_mem_mb(int64_t{1} << 50), "1024E");
}
