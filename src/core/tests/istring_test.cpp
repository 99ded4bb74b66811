#include "core/istring.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <thread>
#include <vector>

namespace drover::core {
namespace {

TEST(IString, EmptyByDefaultAndPointerWide) {
  IString s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.str(), "");
  EXPECT_STREQ(s.c_str(), "");
  EXPECT_EQ(sizeof(IString), sizeof(void*));
  IString e = "";
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e, s);
}

TEST(IString, EqualTextsShareOneEntry) {
  const size_t before = IString::interned_count();
  {
    IString a = std::string("/home/someone/project-istring-test");
    IString b = std::string_view("/home/someone/project-istring-test");
    EXPECT_EQ(IString::interned_count(), before + 1);
    EXPECT_EQ(a.data(), b.data());  // one copy of the text
    EXPECT_EQ(a, b);
    IString c = "other-istring-test";
    EXPECT_EQ(IString::interned_count(), before + 2);
    EXPECT_NE(a, c);
  }
  // The last handle gone, the text is released.
  EXPECT_EQ(IString::interned_count(), before);
}

TEST(IString, CopiesMovesAndAssignmentsKeepCounts) {
  const size_t before = IString::interned_count();
  {
    IString a = "count-test-a";
    IString b = a;
    IString c = std::move(b);
    EXPECT_TRUE(b.empty());  // NOLINT: moved-from is empty
    EXPECT_EQ(c, "count-test-a");
    a = "count-test-b";
    EXPECT_EQ(IString::interned_count(), before + 2);
    c = a;  // the last "count-test-a" goes
    EXPECT_EQ(IString::interned_count(), before + 1);
    IString& same = c;  // through a reference: compilers warn on `c = c` written out
    c = same;           // self-assignment keeps the value
    EXPECT_EQ(c, "count-test-b");
    c.clear();
    EXPECT_TRUE(c.empty());
    a = std::string();
    EXPECT_TRUE(a.empty());
  }
  EXPECT_EQ(IString::interned_count(), before);
}

TEST(IString, ReadsLikeAString) {
  IString s = "slurm-%j.out";
  const std::string& ref = s;
  EXPECT_EQ(ref, "slurm-%j.out");
  std::string_view v = s;
  EXPECT_EQ(v, "slurm-%j.out");
  EXPECT_EQ(s.find('%'), 6u);
  EXPECT_EQ(s.substr(0, 5), "slurm");
  EXPECT_TRUE(s.starts_with("slurm"));
  EXPECT_TRUE(s.ends_with(".out"));
  EXPECT_EQ(s.front(), 's');
  EXPECT_EQ(s.back(), 't');
  EXPECT_EQ(s[1], 'l');
  EXPECT_EQ("dir/" + s, "dir/slurm-%j.out");
  EXPECT_EQ(s + ".gz", "slurm-%j.out.gz");
  EXPECT_TRUE(s == std::string("slurm-%j.out"));
  EXPECT_TRUE(s != "other");
  EXPECT_LT(IString("a"), IString("b"));
  EXPECT_LT(IString("a"), "b");
  EXPECT_GT("b", IString("a"));
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "slurm-%j.out");
  s += "x";
  EXPECT_EQ(s, "slurm-%j.outx");
  s.pop_back();
  EXPECT_EQ(s, "slurm-%j.out");
  std::map<IString, int> m{{IString("b"), 1}, {IString("a"), 2}};
  EXPECT_EQ(m.begin()->first, "a");
}

TEST(IString, ManyThreads) {
  const size_t before = IString::interned_count();
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([] {
      for (int i = 0; i < 20000; ++i) {
        IString a = "shared-across-threads";
        IString b = a;
        IString c = std::to_string(i % 7);
        b = c;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(IString::interned_count(), before);
}

}  // namespace
}  // namespace drover::core
