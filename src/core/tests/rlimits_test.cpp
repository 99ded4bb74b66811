#include "core/rlimits.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include "core/error.hpp"

using namespace drover::core;

TEST(Rlimits, ListsAsSlurmTakesThem) {
  EXPECT_EQ(parse_rlimit_list("ALL").size(), rlimit_names().size());
  EXPECT_TRUE(parse_rlimit_list("NONE").empty());
  EXPECT_EQ(parse_rlimit_list("NOFILE,CORE"), (std::vector<int>{RLIMIT_CORE, RLIMIT_NOFILE}));
  EXPECT_EQ(parse_rlimit_list("CORE,CORE"), std::vector<int>{RLIMIT_CORE});
  // Upper case only, as Slurm's; the first bad name is the one named.
  try {
    parse_rlimit_list("NOFILE,core,FOO");
    FAIL() << "lower case accepted";
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Bad rlimit name: core");
  }
  EXPECT_EQ(rlimit_env_name(RLIMIT_STACK), "SLURM_RLIMIT_STACK");
}

TEST(Rlimits, ConfigurationLessItsExceptions) {
  EXPECT_EQ(conf_rlimits("", "").size(), rlimit_names().size());  // unset: ALL
  EXPECT_EQ(conf_rlimits("ALL", "(null)").size(), rlimit_names().size());
  const std::vector<int> some = conf_rlimits("ALL", "CORE,MEMLOCK");
  EXPECT_EQ(some.size(), rlimit_names().size() - 2);
  EXPECT_EQ(std::count(some.begin(), some.end(), RLIMIT_CORE), 0);
  EXPECT_EQ(conf_rlimits("CORE,NOFILE", "CORE"), std::vector<int>{RLIMIT_NOFILE});
  EXPECT_TRUE(conf_rlimits("NONE", "CORE").empty());
}
