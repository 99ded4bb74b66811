#include "core/getopt.hpp"

#include <gtest/gtest.h>

using namespace drover::core;

namespace {

const std::vector<LongOption> kLongs = {
    {"noheader", ArgKind::None, 'h'},   {"jobs", ArgKind::Optional, 'j'},
    {"format", ArgKind::Required, 'o'}, {"user", ArgKind::Required, 'u'},
    {"users", ArgKind::Required, 'u'},  {"usage", ArgKind::None, 0x100},
};

ParsedArgs parse(std::vector<std::string> args) {
  return parse_options("prog", args, "hj::lo:u:", kLongs);
}

}  // namespace

TEST(Getopt, ShortForms) {
  auto p = parse({"-hl", "-oFMT", "-u", "alice", "-j5", "-j", "rest"});
  ASSERT_TRUE(p.error.empty()) << p.error;
  ASSERT_EQ(p.options.size(), 6u);
  EXPECT_EQ(p.options[0].id, 'h');
  EXPECT_EQ(p.options[1].id, 'l');
  EXPECT_EQ(p.options[2].value, "FMT");
  EXPECT_EQ(p.options[3].value, "alice");
  EXPECT_EQ(p.options[4].value, "5");
  EXPECT_FALSE(p.options[5].value.has_value());  // optional arguments never take the next word
  EXPECT_EQ(p.operands, std::vector<std::string>{"rest"});
}

TEST(Getopt, LongFormsAndPrefixes) {
  auto p = parse({"--format=%i", "--format", "%u", "--no", "--jobs", "--jobs=7", "--use=bob"});
  ASSERT_TRUE(p.error.empty()) << p.error;
  ASSERT_EQ(p.options.size(), 6u);
  EXPECT_EQ(p.options[0].value, "%i");
  EXPECT_EQ(p.options[1].value, "%u");
  EXPECT_EQ(p.options[2].id, 'h');
  EXPECT_FALSE(p.options[3].value.has_value());
  EXPECT_EQ(p.options[4].value, "7");
  // --use matches --user and --users, which mean the same: not ambiguous.
  EXPECT_EQ(p.options[5].id, 'u');
  EXPECT_EQ(p.options[5].value, "bob");
}

TEST(Getopt, OperandsAnywhereAndDoubleDash) {
  auto p = parse({"a", "-h", "b", "--", "-l"});
  ASSERT_TRUE(p.error.empty());
  EXPECT_EQ(p.operands, (std::vector<std::string>{"a", "b", "-l"}));
  EXPECT_EQ(p.options.size(), 1u);
}

TEST(Getopt, GlibcMessages) {
  EXPECT_EQ(parse({"-Z"}).error, "prog: invalid option -- 'Z'");
  EXPECT_EQ(parse({"--bogus"}).error, "prog: unrecognized option '--bogus'");
  EXPECT_EQ(parse({"-o"}).error, "prog: option requires an argument -- 'o'");
  EXPECT_EQ(parse({"--format"}).error, "prog: option '--format' requires an argument");
  EXPECT_EQ(parse({"--form"}).error, "prog: option '--format' requires an argument");
  EXPECT_EQ(parse({"--noheader=1"}).error, "prog: option '--noheader' doesn't allow an argument");
  EXPECT_EQ(parse({"--us"}).error,
            "prog: option '--us' is ambiguous; possibilities: '--user' '--users' '--usage'");
  // Options before the error are kept (they act before getopt complains).
  auto p = parse({"-h", "-Z", "-l"});
  EXPECT_EQ(p.options.size(), 1u);
}
