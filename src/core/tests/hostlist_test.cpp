#include "core/hostlist.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"

using drover::core::compress_hostlist;
using drover::core::expand_hostlist;
using drover::core::ParseError;
using drover::core::ranged_hostlist;
using V = std::vector<std::string>;

TEST(ExpandHostlist, SimpleAndRanges) {
  EXPECT_EQ(expand_hostlist("node1"), V{"node1"});
  EXPECT_EQ(expand_hostlist("node[1-3,05],gpu1"), (V{"node1", "node2", "node3", "node05", "gpu1"}));
  EXPECT_EQ(expand_hostlist("n[5]"), V{"n5"});
  EXPECT_EQ(expand_hostlist("[1-2]"), (V{"1", "2"}));
}

TEST(ExpandHostlist, ZeroPaddingFollowsLowBound) {
  auto v = expand_hostlist("n[01-10]");
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v.front(), "n01");
  EXPECT_EQ(v[8], "n09");
  EXPECT_EQ(v.back(), "n10");
  // Slurm takes the width from the low bound only.
  EXPECT_EQ(expand_hostlist("n[1-03]"), (V{"n1", "n2", "n3"}));
  EXPECT_EQ(expand_hostlist("n[01-3]"), (V{"n01", "n02", "n03"}));
  EXPECT_EQ(expand_hostlist("n[098-100]"), (V{"n098", "n099", "n100"}));
}

TEST(ExpandHostlist, SuffixAndCartesian) {
  EXPECT_EQ(expand_hostlist("a[01-02]b"), (V{"a01b", "a02b"}));
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]"), (V{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_hostlist("n[1-2]-[3-4]"), (V{"n1-3", "n1-4", "n2-3", "n2-4"}));
  EXPECT_EQ(expand_hostlist("n[1-2][3-4]"), (V{"n13", "n14", "n23", "n24"}));
}

TEST(ExpandHostlist, SeparatorsAndDuplicates) {
  EXPECT_EQ(expand_hostlist(""), V{});
  EXPECT_EQ(expand_hostlist("n1 n2"), (V{"n1", "n2"}));
  EXPECT_EQ(expand_hostlist("n[1-2],,n3"), (V{"n1", "n2", "n3"}));
  EXPECT_EQ(expand_hostlist("n1,n1"), (V{"n1", "n1"}));  // Slurm keeps duplicates
  EXPECT_EQ(expand_hostlist("n[1-3,2]"), (V{"n1", "n2", "n3", "n2"}));
}

TEST(ExpandHostlist, Errors) {
  for (const char* bad :
       {"node[3-1]", "n[a-b]", "n[]", "n[1,,2]", "n[-1]", "n[1-2,]", "n[,1]", "n[1x2]", "n[1-2",
        "node]", "n[[1-2]]", "n[1-2]]", "n[ 1-2]", "n[1-100000]", "n[1234567890123456789]"}) {
    EXPECT_THROW(expand_hostlist(bad), ParseError) << bad;
  }
  try {
    expand_hostlist("node[3-1]");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid hostlist: node[3-1]");
  }
  // The cartesian product is capped too.
  EXPECT_THROW(expand_hostlist("a[0-60000]b[0-60000]"), ParseError);
}

TEST(CompressHostlist, SortsAndRanges) {
  EXPECT_EQ(compress_hostlist({"node3", "node1", "node2", "gpu1"}), "gpu1,node[1-3]");
  EXPECT_EQ(compress_hostlist({"node3", "node1", "node2", "node1"}), "node[1-3]");
  EXPECT_EQ(compress_hostlist({"n2", "n10", "n1"}), "n[1-2,10]");
  EXPECT_EQ(compress_hostlist({"b", "a10", "a9", "a"}), "a,a[9-10],b");
  EXPECT_EQ(compress_hostlist({"a", "b", "a"}), "a,b");
  EXPECT_EQ(compress_hostlist({"n1"}), "n1");
  EXPECT_EQ(compress_hostlist({}), "");
  EXPECT_EQ(compress_hostlist({"n1", "n3"}), "n[1,3]");
}

TEST(CompressHostlist, Widths) {
  EXPECT_EQ(compress_hostlist({"n01", "n02"}), "n[01-02]");
  EXPECT_EQ(compress_hostlist({"n01", "n02", "n1", "n2", "n3"}), "n[1-3,01-02]");
  EXPECT_EQ(compress_hostlist({"n1", "n01"}), "n[1,01]");
  EXPECT_EQ(compress_hostlist({"n0", "n00"}), "n[0,00]");
  EXPECT_EQ(compress_hostlist({"n9", "n10", "n11"}), "n[9-11]");
  EXPECT_EQ(compress_hostlist({"n09", "n10"}), "n[09-10]");
  EXPECT_EQ(compress_hostlist({"n008", "n009", "n010"}), "n[008-010]");
  EXPECT_EQ(compress_hostlist(expand_hostlist("n[01-10]")), "n[01-10]");
  EXPECT_EQ(compress_hostlist(expand_hostlist("n[098-100]")), "n[098-100]");
}

TEST(CompressHostlist, OnlyTrailingNumberIsRanged) {
  EXPECT_EQ(compress_hostlist({"a1b", "a2b"}), "a1b,a2b");
  EXPECT_EQ(compress_hostlist({"r1n1", "r1n2", "r2n1"}), "r1n[1-2],r2n1");
  EXPECT_EQ(compress_hostlist({"x1y2", "x1y1"}), "x1y[1-2]");
  EXPECT_EQ(compress_hostlist({"n-1", "n-2"}), "n-[1-2]");
  EXPECT_EQ(compress_hostlist({"n", "n1"}), "n,n1");
}

TEST(CompressHostlist, RoundTrip) {
  for (const char* e : {"node[1-3,5,7-9],gpu[01-04]", "r[1-3]n[1-2]", "a,b,c[1-2]", "n[0-1000]"}) {
    auto names = expand_hostlist(e);
    auto again = expand_hostlist(compress_hostlist(names));
    std::sort(names.begin(), names.end());
    std::sort(again.begin(), again.end());
    EXPECT_EQ(names, again) << e;
  }
}

// Expected strings from Slurm 22.05's `scontrol show hostlist` / `hostlistsorted`.
TEST(RangedHostlist, AsGivenAndSortedKeepDuplicates) {
  auto given = [](std::string_view e) { return ranged_hostlist(expand_hostlist(e), false); };
  auto sorted = [](std::string_view e) { return ranged_hostlist(expand_hostlist(e), true); };
  EXPECT_EQ(given("node1,node3,node2,x"), "node[1,3,2],x");
  EXPECT_EQ(given("a1,b1,a2"), "a1,b1,a2");
  EXPECT_EQ(sorted("a1,b1,a2"), "a[1-2],b1");
  EXPECT_EQ(given("a1,a2,a4,a3"), "a[1-2,4,3]");
  EXPECT_EQ(sorted("a1,a2,a4,a3"), "a[1-4]");
  EXPECT_EQ(given("a5,a4,a3"), "a[5,4,3]");
  EXPECT_EQ(given("x,y,x"), "x,y,x");
  EXPECT_EQ(sorted("x,y,x"), "x,x,y");
  EXPECT_EQ(given("a[1-3],a[2-5]"), "a[1-3,2-5]");
  EXPECT_EQ(sorted("a[1-3],a[2-5]"), "a[1-2,2-3,3-5]");
  EXPECT_EQ(given("n9,n10"), "n[9-10]");
  EXPECT_EQ(given("a1b2,a1b3"), "a1b[2-3]");
  EXPECT_EQ(given("n01,n02,n3,n10"), "n[01-02,3,10]");
  EXPECT_EQ(sorted("b2,a1,a3,b1"), "a[1,3],b[1-2]");
}
