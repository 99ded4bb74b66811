#include "core/array_spec.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <set>

#include "core/error.hpp"

using namespace drover::core;
using Range = IndexSet::Range;

namespace {

IndexSet from(std::initializer_list<uint32_t> xs) {
  IndexSet s;
  for (uint32_t x : xs) s.insert(x);
  return s;
}

// The normal form computed from scratch (see IndexSet::normalize_): greedy from the smallest
// element; a step > 1 run needs three elements.
std::vector<Range> reference_form(const std::vector<uint32_t>& xs) {
  std::vector<Range> out;
  size_t i = 0;
  while (i < xs.size()) {
    if (i + 1 == xs.size()) {
      out.push_back({xs[i], xs[i], 1});
      break;
    }
    uint32_t s = xs[i + 1] - xs[i];
    size_t j = i + 1;
    while (j + 1 < xs.size() && xs[j + 1] - xs[j] == s) ++j;
    if (s > 1 && j == i + 1) {
      out.push_back({xs[i], xs[i], 1});
      ++i;
      continue;
    }
    out.push_back({xs[i], xs[j], s});
    i = j + 1;
  }
  return out;
}

void expect_invalid_array(const std::string& spec) {
  try {
    parse_array_spec(spec, 1001);
    ADD_FAILURE() << "accepted '" << spec << "'";
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Invalid job array specification") << spec;
  }
}

std::string shown(const std::string& spec) {
  return format_array_spec(parse_array_spec(spec, 1001));
}

}  // namespace

TEST(IndexSet, BasicsAndNormalForm) {
  IndexSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.format(), "");
  s.insert(0, 15, 4);
  EXPECT_EQ(s.ranges(), (std::vector<Range>{{0, 12, 4}}));  // last rounded down to a member
  EXPECT_EQ(s.size(), 4u);
  EXPECT_EQ(s.min(), 0u);
  EXPECT_EQ(s.max(), 12u);
  EXPECT_TRUE(s.contains(8));
  EXPECT_FALSE(s.contains(9));
  EXPECT_FALSE(s.contains(16));
  EXPECT_EQ(s.to_vector(), (std::vector<uint32_t>{0, 4, 8, 12}));
  EXPECT_EQ(s.to_vector(2), (std::vector<uint32_t>{0, 4}));

  // Equal sets compare equal however they were built.
  EXPECT_EQ(from({1, 2, 3}), [] {
    IndexSet t;
    t.insert(1, 3);
    return t;
  }());
  EXPECT_EQ(from({0, 4, 8, 12}), s);
  IndexSet a;
  a.insert(1, 5);
  a.insert(3, 8);
  EXPECT_EQ(a.ranges(), (std::vector<Range>{{1, 8, 1}}));
  IndexSet b;
  b.insert(0, 10, 2);
  b.insert(1, 11, 2);
  EXPECT_EQ(b.ranges(), (std::vector<Range>{{0, 11, 1}}));
  EXPECT_EQ(IndexSet::single(7).ranges(), (std::vector<Range>{{7, 7, 1}}));
  // Two indices with a gap are two single indices, not a two-element stepped range.
  EXPECT_EQ(from({0, 500}).ranges(), (std::vector<Range>{{0, 0, 1}, {500, 500, 1}}));
}

TEST(IndexSet, InsertEdgeCases) {
  IndexSet s;
  s.insert(5, 3);  // empty range: nothing
  EXPECT_TRUE(s.empty());
  s.insert(3, 3, 0);  // step 0 is taken as 1
  EXPECT_EQ(s.ranges(), (std::vector<Range>{{3, 3, 1}}));
  s.insert(0, 4294967295u);
  EXPECT_EQ(s.size(), 4294967296ull);
  EXPECT_EQ(s.max(), 4294967295u);
  EXPECT_TRUE(s.erase(4294967295u));
  EXPECT_EQ(s.max(), 4294967294u);
  IndexSet t;
  t.insert(4294967290u, 4294967295u, 5);
  EXPECT_EQ(t.to_vector(), (std::vector<uint32_t>{4294967290u, 4294967295u}));
}

TEST(IndexSet, EraseAndPopMinAreCheapOnHugeRanges) {
  auto t0 = std::chrono::steady_clock::now();
  IndexSet s;
  s.insert(0, 999999);
  for (uint32_t i = 0; i < 100000; ++i) ASSERT_EQ(s.pop_min(), i);
  EXPECT_EQ(s.ranges(), (std::vector<Range>{{100000, 999999, 1}}));
  EXPECT_TRUE(s.erase(500000));  // the middle of a range splits it
  EXPECT_FALSE(s.erase(500000));
  EXPECT_EQ(s.ranges(), (std::vector<Range>{{100000, 499999, 1}, {500001, 999999, 1}}));
  s.insert(500000);
  EXPECT_EQ(s.ranges(), (std::vector<Range>{{100000, 999999, 1}}));

  IndexSet st;
  st.insert(0, 999998, 2);
  EXPECT_TRUE(st.erase(500000));
  EXPECT_EQ(st.ranges(), (std::vector<Range>{{0, 499998, 2}, {500002, 999998, 2}}));
  EXPECT_FALSE(st.erase(500001));
  EXPECT_EQ(st.size(), 499999u);
  EXPECT_TRUE(st.erase(2));  // leaves 0 alone, then 4..499998:2
  EXPECT_EQ(st.ranges()[0], (Range{0, 0, 1}));
  EXPECT_EQ(st.ranges()[1], (Range{4, 499998, 2}));
  st.insert(2);
  st.insert(500000);
  EXPECT_EQ(st.ranges(), (std::vector<Range>{{0, 999998, 2}}));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(IndexSet, MatchesAModelUnderRandomOperations) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; ++round) {
    IndexSet s;
    std::set<uint32_t> model;
    const uint32_t span = 8 + rng() % 120;
    for (int op = 0; op < 60; ++op) {
      switch (rng() % 4) {
        case 0:
        case 1: {
          uint32_t a = rng() % span, b = rng() % span, step = 1 + rng() % 7;
          if (a > b) std::swap(a, b);
          s.insert(a, b, step);
          for (uint32_t x = a; x <= b; x += step) model.insert(x);
          break;
        }
        case 2: {
          uint32_t x = rng() % span;
          EXPECT_EQ(s.erase(x), model.erase(x) == 1);
          break;
        }
        case 3:
          if (!model.empty()) {
            EXPECT_EQ(s.pop_min(), *model.begin());
            model.erase(model.begin());
          }
          break;
      }
      std::vector<uint32_t> xs(model.begin(), model.end());
      ASSERT_EQ(s.to_vector(), xs);
      ASSERT_EQ(s.ranges(), reference_form(xs)) << "round " << round << " op " << op;
      ASSERT_EQ(s.size(), xs.size());
      for (uint32_t x = 0; x < span; ++x) ASSERT_EQ(s.contains(x), model.count(x) == 1);
      ASSERT_EQ(IndexSet::parse(s.format()), s) << s.format();
      ASSERT_EQ(IndexSet::parse(s.format_ranges()), s) << s.format_ranges();
    }
  }
}

// checked against Slurm 22.05: `scontrol show job` ArrayTaskId= / squeue %K for each spec.
TEST(IndexSet, FormatAsSlurmShowsIt) {
  EXPECT_EQ(shown("0-15"), "0-15");
  EXPECT_EQ(shown("0,6,16-32"), "0,6,16-32");
  EXPECT_EQ(shown("0-15:4"), "0,4,8,12");
  EXPECT_EQ(shown("0-15:4%2"), "0,4,8,12%2");
  EXPECT_EQ(shown("1-7%2"), "1-7%2");
  EXPECT_EQ(shown("1-10:3"), "1,4,7,10");
  EXPECT_EQ(shown("1-5,3-8"), "1-8");
  // One progression: step 2 needs 7 elements, step 3+ needs 6, to be shown stepped.
  EXPECT_EQ(shown("0-10:2"), "0,2,4,6,8,10");
  EXPECT_EQ(shown("0-12:2"), "0-12:2");
  EXPECT_EQ(shown("100-110:2"), "100,102,104,106,108,110");
  EXPECT_EQ(shown("10-22:2"), "10-22:2");
  EXPECT_EQ(shown("0-12:3"), "0,3,6,9,12");
  EXPECT_EQ(shown("0-15:3"), "0-15:3");
  EXPECT_EQ(shown("0-16:4"), "0,4,8,12,16");
  EXPECT_EQ(shown("0-20:4"), "0-20:4");
  EXPECT_EQ(shown("0-40:10"), "0,10,20,30,40");
  EXPECT_EQ(shown("0-50:10"), "0-50:10");
  EXPECT_EQ(shown("0-999:100"), "0-900:100");
  EXPECT_EQ(shown("0-999:500"), "0,500");
  EXPECT_EQ(shown("0-1000:2%3"), "0-1000:2%3");
  EXPECT_EQ(shown("0-999:2"), "0-998:2");
  // Anything else is a list of consecutive runs, even where steps would be shorter.
  EXPECT_EQ(shown("1-3,5,7-15:2"), "1-3,5,7,9,11,13,15");
  EXPECT_EQ(shown("0-10:2,11-21:2"), "0,2,4,6,8,10-11,13,15,17,19,21");
  EXPECT_EQ(shown("0-10:2,1-11:2"), "0-11");
  EXPECT_EQ(shown("1,3,5,6,7,9,11,13"), "1,3,5-7,9,11,13");
  EXPECT_EQ(shown("0-12:2,13"), "0,2,4,6,8,10,12-13");
  EXPECT_EQ(shown("0-12:2,15-27:2"), "0,2,4,6,8,10,12,15,17,19,21,23,25,27");
  EXPECT_EQ(shown("0-14:2,1"), "0-2,4,6,8,10,12,14");
  EXPECT_EQ(shown("0-20:4,2"), "0,2,4,8,12,16,20");
}

// checked against Slurm 22.05: ArrayTaskId= is cut at 60 characters plus "..." once the list
// is longer than 61; the throttle follows.
TEST(IndexSet, DisplayTruncation) {
  auto display = [](const std::string& spec) {
    return format_array_spec_display(parse_array_spec(spec, 1001));
  };
  EXPECT_EQ(display("1-58:3,200"), "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,58,200");
  EXPECT_EQ(display("1-58:3,1000"),
            "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,58,1000");  // 61: kept
  EXPECT_EQ(display("1-55:3,100,1000"),
            "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,100,10...");  // 62: cut
  EXPECT_EQ(display("1-58:3,99-100"),
            "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,58,99-...");
  EXPECT_EQ(display("1-100:3,200"),
            "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,58,61,...");
  EXPECT_EQ(display("1-64:3,200%5"),
            "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,58,61,...%5");
  EXPECT_EQ(display("1-58:3,200%5"),
            "1,4,7,10,13,16,19,22,25,28,31,34,37,40,43,46,49,52,55,58,200%5");
  EXPECT_EQ(display("100-400:3,500"),
            "100,103,106,109,112,115,118,121,124,127,130,133,136,139,142,...");
  EXPECT_EQ(display("0-1000:2%3"), "0-1000:2%3");
  // Not cut: the untruncated form.
  EXPECT_EQ(format_array_spec(parse_array_spec("1-100:3,200", 1001)).size(), 103u);
}

TEST(ParseArraySpec, Forms) {
  ArraySpec a = parse_array_spec("0-15", 1001);
  EXPECT_EQ(a.tasks.size(), 16u);
  EXPECT_EQ(a.max_running, 0u);
  a = parse_array_spec("1-7%2", 1001);
  EXPECT_EQ(a.tasks.to_vector(), (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(a.max_running, 2u);
  a = parse_array_spec("0-999999", 1000001);
  EXPECT_EQ(a.tasks.ranges().size(), 1u);
  EXPECT_EQ(a.tasks.size(), 1000000u);
  EXPECT_EQ(parse_array_spec("1000", 1001).tasks.to_vector(), (std::vector<uint32_t>{1000}));
  EXPECT_EQ(parse_array_spec("0-1000:1", 1001).tasks.size(), 1001u);
  EXPECT_EQ(parse_array_spec("0-999:1000", 1001).tasks.to_vector(), (std::vector<uint32_t>{0}));
}

// checked against Slurm 22.05: every one of these was accepted by `sbatch -H --array=...`;
// the comment is what scontrol then showed as ArrayTaskId=.
TEST(ParseArraySpec, SlurmsLeniency) {
  EXPECT_EQ(shown("1-7%0"), "1-7");  // %0: no throttle
  EXPECT_EQ(shown(" 1-3"), "1-3");   // strtol skips leading white space
  EXPECT_EQ(shown("1- 3"), "1-3");
  EXPECT_EQ(shown("1- 3:2"), "1,3");
  EXPECT_EQ(shown("1-3: 2"), "1,3");
  EXPECT_EQ(shown("1-3, 5"), "1-3,5");
  EXPECT_EQ(shown("1-3,\t5"), "1-3,5");
  EXPECT_EQ(shown("+1"), "1");
  EXPECT_EQ(shown("1-+3"), "1-3");
  EXPECT_EQ(shown("1-3:+2"), "1,3");
  EXPECT_EQ(shown("-0"), "0");
  EXPECT_EQ(shown("0--0"), "0");
  EXPECT_EQ(shown("01-03"), "1-3");
  EXPECT_EQ(shown("1,,2"), "1-2");
  EXPECT_EQ(shown("1,"), "1");
  EXPECT_EQ(shown(",1"), "1");
  EXPECT_EQ(shown("[1-3]"), "1-3");
  EXPECT_EQ(shown("[1-3"), "1-3");
  EXPECT_EQ(shown("1-3]"), "1-3");
  EXPECT_EQ(shown("1]-3"), "1-3");
  EXPECT_EQ(shown("[1-3]:2"), "1,3");
  EXPECT_EQ(shown("1-3]:2"), "1,3");
  EXPECT_EQ(shown("1,[3"), "1,3");
  EXPECT_EQ(shown("1-3:1"), "1-3");
  // The throttle: read after the first '%' like strtol, kept as a C int, <= 0 means none.
  EXPECT_EQ(shown("1-3%"), "1-3");
  EXPECT_EQ(shown("1-3%x"), "1-3");
  EXPECT_EQ(shown("1-3%-1"), "1-3");
  EXPECT_EQ(shown("1-3%2%3"), "1-3%2");
  EXPECT_EQ(shown("1-3%+2"), "1-3%2");
  EXPECT_EQ(shown("1-3% 2"), "1-3%2");
  EXPECT_EQ(shown("1-3%2x"), "1-3%2");
  EXPECT_EQ(shown("1-3%0x5"), "1-3");
  EXPECT_EQ(shown("1-3%1000000"), "1-3%1000000");
  EXPECT_EQ(shown("1-3%4294967296"), "1-3");
  EXPECT_EQ(shown("1-3%4294967298"), "1-3%2");
  EXPECT_EQ(shown("1-3%2147483648"), "1-3");
  EXPECT_EQ(shown("1-3%2147483649"), "1-3");
  EXPECT_EQ(shown("1-3%-4294967294"), "1-3%2");
  EXPECT_EQ(shown("%99999999999999999999"), "0");
  // '%' ends an item; the throttle applies to the whole spec wherever it is.
  EXPECT_EQ(shown("1-3,5%2"), "1-3,5%2");
  EXPECT_EQ(shown("1%2,3"), "1,3%2");
  EXPECT_EQ(shown("1-3:2%2"), "1,3%2");
  // An item with no digits before its '%' is index 0.
  EXPECT_EQ(shown("%2"), "0%2");
  EXPECT_EQ(shown("%"), "0");
  EXPECT_EQ(shown(",%2"), "0%2");
  EXPECT_EQ(shown("%2,1"), "0-1%2");
  // No index at all: Slurm submits an ordinary job (squeue shows "44", ArrayTaskId absent).
  EXPECT_TRUE(parse_array_spec("", 1001).tasks.empty());
  EXPECT_TRUE(parse_array_spec(",", 1001).tasks.empty());
}

// checked against Slurm 22.05: `sbatch -H --array=SPEC --wrap true` prints
// "sbatch: error: Batch job submission failed: Invalid job array specification" and exits 1
// (the controller's answer; sbatch checks nothing itself). MaxArraySize is 1001.
TEST(ParseArraySpec, Errors) {
  for (const char* bad : {"x",
                          " ",
                          "1-3 ",
                          "1 -3",
                          "1 ,3",
                          "1-3, ",
                          "-1",
                          "3-1",
                          "1-2000",
                          "1001",
                          "0-1001",
                          "0-4294967295",
                          "4294967296",
                          "4294967297",
                          "4294967295",
                          "2147483648",
                          "2147483647",
                          "-4294967295",
                          "99999999999999999999",
                          "1-3:0",
                          "1-3:-1",
                          "1-3:x",
                          "5:2",
                          "1-3:2:2",
                          "0x1",
                          "1.5",
                          "[1]-[3]",
                          "1-[3]:[2]",
                          "[[1",
                          "1-3]]",
                          "x%2",
                          "1-%2",
                          "1-3:%2",
                          "1-3:4294967298",
                          "1-3:2147483648",
                          "1-3:4294967297",
                          "1-3:9223372036854775807",
                          "1-3:99999999999999999999",
                          "0-999:1001",
                          "0-0:5000",
                          "5-5:0",
                          "0-1000:999999999"})
    expect_invalid_array(bad);
}

TEST(ParseArraySpec, HugeAndInterleavedSpecsStayCheap) {
  auto t0 = std::chrono::steady_clock::now();
  ArraySpec a = parse_array_spec("0-4000000,1-3999999:2,7", 4000001);
  EXPECT_EQ(a.tasks.ranges().size(), 1u);
  a = parse_array_spec("0-4000000:2,1-4000000:2", 4000001);
  EXPECT_EQ(a.tasks.ranges(), (std::vector<Range>{{0, 4000000, 1}}));
  a = parse_array_spec("0-4000000:4,2-4000000:4", 4000001);
  EXPECT_EQ(a.tasks.ranges(), (std::vector<Range>{{0, 4000000, 2}}));
  // Incompatible progressions must be merged element by element; a bounded amount of that is
  // done, beyond it the spec is refused rather than hang.
  a = parse_array_spec("0-3000:2,0-3000:3", 4000001);
  EXPECT_EQ(a.tasks.size(), 1501u + 1001u - 501u);
  a = parse_array_spec("0-1000000:2,1-1000000:3", 4000001);
  EXPECT_EQ(a.tasks.size(), 500001u + 333334u - 166667u);
  EXPECT_THROW(parse_array_spec("0-3000000:2,1-3000000:3", 4000001), ParseError);
  EXPECT_THROW(parse_array_spec("0-4294967294:2,0-4294967294:3", 4294967295u), ParseError);
  EXPECT_THROW(IndexSet::parse("0-4294967295:2,1-4294967295:3"), ParseError);
  EXPECT_EQ(IndexSet::parse("0-4294967295").size(), 4294967296ull);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(IndexSetParse, RoundTripAndErrors) {
  for (const char* text : {"", "0", "0-15", "0,4,8,12", "0-12:2", "1-3,5,7,9,11,13,15",
                           "0,2,4,6,8,10-11,13,15,17,19,21", "4294967295", "0-4294967295"})
    EXPECT_EQ(IndexSet::parse(text).format(), text);
  IndexSet big;
  big.insert(0, 999998, 2);
  big.erase(500000);
  EXPECT_EQ(big.format_ranges(), "0-499998:2,500002-999998:2");
  EXPECT_EQ(IndexSet::parse(big.format_ranges()), big);
  EXPECT_EQ(big.format().size(), 3444437u);  // what Slurm would list
  EXPECT_EQ(IndexSet::parse("0,6,16-32").format_ranges(), "0,6,16-32");
  EXPECT_EQ(IndexSet::parse("0-15:4").format_ranges(), "0-12:4");
  EXPECT_EQ(IndexSet().format_ranges(), "");
  EXPECT_THROW(IndexSet::parse("1-3%2"), ParseError);
  EXPECT_THROW(IndexSet::parse("x"), ParseError);
  EXPECT_THROW(IndexSet::parse("4294967296"), ParseError);
}

TEST(JobRef, Forms) {
  JobRef r = parse_job_ref("36");
  EXPECT_EQ(r.job_id, 36u);
  EXPECT_FALSE(r.tasks);
  r = parse_job_ref("36_5");
  ASSERT_TRUE(r.tasks);
  EXPECT_EQ(r.tasks->to_vector(), (std::vector<uint32_t>{5}));
  r = parse_job_ref("36_[1-3,7]");
  ASSERT_TRUE(r.tasks);
  EXPECT_EQ(r.tasks->to_vector(), (std::vector<uint32_t>{1, 2, 3, 7}));
  r = parse_job_ref("36_*");
  EXPECT_EQ(r.job_id, 36u);
  EXPECT_FALSE(r.tasks);
  EXPECT_EQ(parse_job_ref("36_04").tasks->to_vector(), (std::vector<uint32_t>{4}));
  EXPECT_EQ(parse_job_ref("36_[4]").tasks->to_vector(), (std::vector<uint32_t>{4}));
  EXPECT_EQ(parse_job_ref("4294967295").job_id, 4294967295u);
  EXPECT_EQ(parse_job_ref("1_[0-999999]").tasks->ranges().size(), 1u);
  auto list = parse_job_ref_list("36_4,37,38_[1,3]");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].tasks->to_vector(), (std::vector<uint32_t>{4}));
  EXPECT_EQ(list[1].job_id, 37u);
  EXPECT_EQ(list[2].tasks->to_vector(), (std::vector<uint32_t>{1, 3}));
}

// checked against Slurm 22.05: `scancel REF` prints "scancel: error: Invalid job id REF" and
// exits 1 for these (steps and brackets errors also print "_parse_single_range: Invalid range:
// `1-3:2'" first); `scontrol show job 36_x` prints "scontrol_print_job error: Invalid job id
// specified". Drover is stricter than scancel about " 36", "+36", "36_", "36_+4" and "36_[ 4]",
// which scancel accepts.
TEST(JobRef, Errors) {
  for (const char* bad : {"36_x",
                          "36_[x]",
                          "36_[4",
                          "36_-1",
                          "x",
                          "36x",
                          "36 ",
                          "0",
                          "36_[1-3:2]",
                          "36_[3-1]",
                          "36_[]",
                          "36_[*]",
                          "36_4_8",
                          "36_[4]x",
                          "36_[4],12",
                          "36.0",
                          "36_4.batch",
                          "36+0",
                          "",
                          "36_",
                          " 36",
                          "+36",
                          "36_ 4",
                          "36_[ 4]",
                          "4294967296",
                          "99999999999999999999",
                          "36_4294967294",
                          "36_[1,]",
                          "36_[,1]"}) {
    try {
      parse_job_ref(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ParseError& e) {
      EXPECT_STREQ(e.what(), "Invalid job id specified") << bad;
    }
  }
  EXPECT_THROW(parse_job_ref_list("36,"), ParseError);
  EXPECT_THROW(parse_job_ref_list(",36"), ParseError);
}
