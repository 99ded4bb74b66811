#include "core/constraint.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;

namespace {

bool on(const char* expr, std::set<std::string> node) {
  return Constraint::parse(expr).matches(node);
}

}  // namespace

// checked against Slurm 22.05: each of these was accepted by `sbatch -H -C EXPR --wrap true`
// on a cluster whose nodes had every feature named (node1: a,b,c and the odd names below;
// node2: b,d).
TEST(Constraint, AcceptedForms) {
  for (const char* ok : {"a",
                         "a&b",
                         "a|d",
                         "a,b",
                         "[a|d]",
                         "a*2",
                         "b*2",
                         "a*02",
                         "a*99999999999",
                         "[a*1&b*1]",
                         "[a*1&b*1&c*1]",
                         "[a]",
                         "[a*2]",
                         "[a|b|c]",
                         "(a|d)&b",
                         "(a)",
                         "a&(b)",
                         "(a&b)|(c&d)",
                         "(a|b)&(c|d)",
                         "(a|b)|(c|d)&(a)",
                         "a&",
                         "a|",
                         "a,",
                         "[a|d]&b",
                         "b&[a|d]",
                         "[a|d],b",
                         "a&[b|c]&c",
                         "[a|b]|c",
                         "[a|b]&c*2",
                         "a*2|b*3",
                         "a*2,b*3",
                         "a*2&b",
                         "[(a|d)]",
                         "([a|d])",
                         "[a|(b)]",
                         "[a|(b&c)]",
                         "[(a&b)|c]",
                         "a&b|d",
                         "a|b&d",
                         "a&b&c&d",
                         "A",
                         "a-b",
                         "a_b",
                         "a.b",
                         "x1",
                         "1x",
                         "a:b",
                         "a=b"}) {
    EXPECT_NO_THROW(Constraint::parse(ok)) << ok;
  }
  EXPECT_TRUE(Constraint::parse("").empty());
  // scontrol shows Features=a&b for -C a,b; everything else verbatim.
  EXPECT_EQ(Constraint::parse("a,b").text(), "a&b");
  EXPECT_EQ(Constraint::parse("[a|d],b").text(), "[a|d]&b");
  EXPECT_EQ(Constraint::parse("a&").text(), "a&");
  EXPECT_EQ(Constraint::parse("[(a|d)]").text(), "[(a|d)]");
}

// checked against Slurm 22.05: "sbatch: error: Batch job submission failed: Invalid feature
// specification", exit 1 (the controller's answer), with every named feature defined.
TEST(Constraint, RejectedForms) {
  for (const char* bad : {"[a&b]",
                          "((a))",
                          "&a",
                          "a||b",
                          "a&&b",
                          "[a|d",
                          "a|d]",
                          "[[a|d]]",
                          "a*",
                          "a*x",
                          "a*0",
                          "(a",
                          "a)",
                          "()",
                          "[]",
                          "a b",
                          " a",
                          "[a|d]*2",
                          "a*-1",
                          "[a*1|b*1]",
                          "[a*1&b]",
                          "[a&b*1]",
                          "[a*1&b*1|c*1]",
                          "[a|b]&[c|d]",
                          "[a|b],[c|d]",
                          "(a*2|b)",
                          "a&(b|(c))",
                          "a||",
                          "a&|b",
                          "a|&b",
                          "a,,b",
                          "a&,b",
                          ",a",
                          "[a*1|b]",
                          "(a*2)",
                          "(a*2&b)",
                          "[a|b]*",
                          "a*2(b)",
                          "a(b)",
                          "a[b|c]",
                          "a*1*",
                          "[(a*1&b*1)|c]",
                          "[a|b",
                          "(a|b]",
                          "[a|b)",
                          "a&&",
                          "a|,b",
                          "a**2",
                          "[a|b]|[c|d]",
                          "[a&b|d]"}) {
    try {
      Constraint::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ParseError& e) {
      EXPECT_STREQ(e.what(), "Invalid feature specification") << bad;
    }
  }
}

// Slurm 22.05 also accepts these, ignoring what follows a count or a closing bracket; drover
// refuses them.
TEST(Constraint, StricterThanSlurm) {
  for (const char* bad : {"a*2*3", "a*2b", "(a)b", "[a|b]c", "(a|b)*2"})
    EXPECT_THROW(Constraint::parse(bad), ParseError) << bad;
}

// checked against Slurm 22.05 by submitting with -w node1 (a,b,c) or -w node2 (b,d): "a|b&d" is
// refused on node1 and runs on node2, so operators apply left to right without precedence.
TEST(Constraint, LeftToRight) {
  const std::set<std::string> node1{"a", "b", "c"}, node2{"b", "d"};
  EXPECT_FALSE(on("a|b&d", node1));
  EXPECT_TRUE(on("a|b&d", node2));
  EXPECT_TRUE(on("a&c|d", node1));
  EXPECT_TRUE(on("a&c|d", node2));
  EXPECT_TRUE(on("d|a&c", node1));
  EXPECT_FALSE(on("d|a&c", node2));
  EXPECT_FALSE(on("(a|b)&d", node1));
  EXPECT_TRUE(on("(a|b)&d", node2));
  EXPECT_TRUE(on("a|(b&d)", node1));
  EXPECT_TRUE(on("a|(b&d)", node2));
}

TEST(Constraint, Matches) {
  const std::set<std::string> n{"a", "b", "gpu"};
  EXPECT_TRUE(on("a", n));
  EXPECT_FALSE(on("x", n));
  EXPECT_TRUE(on("a&b", n));
  EXPECT_TRUE(on("a,b", n));
  EXPECT_FALSE(on("a&x", n));
  EXPECT_TRUE(on("x|a", n));
  EXPECT_TRUE(on("a*2", n));
  EXPECT_TRUE(on("[x|gpu]", n));
  EXPECT_FALSE(on("[x|y]", n));
  EXPECT_TRUE(on("[a*1&b*2]", n));
  EXPECT_FALSE(on("[a*1&x*2]", n));
  EXPECT_TRUE(on("a&", n));
  EXPECT_TRUE(on("x|", n) == false);
  EXPECT_TRUE(on("[x|(a&b)]", n));
  EXPECT_FALSE(on("[x|(a&y)]", n));
  EXPECT_TRUE(on("([x|a])&b", n));
  EXPECT_TRUE(Constraint().matches(n));
  EXPECT_TRUE(Constraint::parse("").matches({}));
}

TEST(Constraint, Features) {
  EXPECT_EQ(Constraint::parse("a&b|a").features(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Constraint::parse("[c*1&d*2]&(e|f)|g*3").features(),
            (std::vector<std::string>{"c", "d", "e", "f", "g"}));
  EXPECT_EQ(Constraint::parse("[a|(b&c)]").features(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(Constraint::parse("").features().empty());
}
