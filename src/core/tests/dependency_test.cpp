#include "core/dependency.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;

namespace {

// What `scontrol show job` printed as Dependency= for the same spec (all unfulfilled).
std::string shown(const std::string& spec) { return format_dependency(parse_dependency(spec)); }

DepEntry entry(DepType type, uint64_t job, uint32_t task = kNoArrayTask, int64_t delay = 0) {
  DepEntry e;
  e.type = type;
  e.job_id = job;
  e.array_task = task;
  e.delay_min = delay;
  return e;
}

void expect_problem(const std::string& spec) {
  try {
    parse_dependency(spec);
    ADD_FAILURE() << "accepted '" << spec << "'";
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Job dependency problem") << spec;
  }
}

}  // namespace

TEST(Dependency, Parse) {
  Dependency d = parse_dependency("afterok:12:13,afterany:14+5");
  EXPECT_FALSE(d.any);
  ASSERT_EQ(d.entries.size(), 3u);
  EXPECT_EQ(d.entries[0], entry(DepType::AfterOk, 12));
  EXPECT_EQ(d.entries[1], entry(DepType::AfterOk, 13));
  EXPECT_EQ(d.entries[2], entry(DepType::AfterAny, 14, kNoArrayTask, 5));
  d = parse_dependency("afternotok:12_3?after:14");
  EXPECT_TRUE(d.any);
  EXPECT_EQ(d.entries[0], entry(DepType::AfterNotOk, 12, 3));
  EXPECT_EQ(d.entries[1], entry(DepType::After, 14));
  d = parse_dependency("singleton");
  ASSERT_EQ(d.entries.size(), 1u);
  EXPECT_EQ(d.entries[0].type, DepType::Singleton);
  EXPECT_EQ(d.entries[0].job_id, 0u);
  EXPECT_TRUE(parse_dependency("").empty());
  EXPECT_EQ(parse_dependency("12").entries, (std::vector<DepEntry>{entry(DepType::AfterAny, 12)}));
  EXPECT_EQ(parse_dependency("12_*").entries[0].array_task, kNoArrayTask);
  EXPECT_EQ(
      parse_dependency("afterok:12_[1-2]").entries,
      (std::vector<DepEntry>{entry(DepType::AfterOk, 12, 1), entry(DepType::AfterOk, 12, 2)}));
}

// checked against Slurm 22.05: each spec was accepted by `sbatch -H -d SPEC --wrap true` and
// `scontrol show job` printed the right-hand side as Dependency= (job 204 an array, so Slurm
// writes "_*" where drover needs is_array; see WholeArrays).
TEST(Dependency, AsSlurmShowsIt) {
  EXPECT_EQ(shown("afterok:202:203?afterany:205"),
            "afterok:202(unfulfilled)?afterok:203(unfulfilled)?afterany:205(unfulfilled)");
  EXPECT_EQ(shown("afterok:202:203,afterany:205"),
            "afterok:202(unfulfilled),afterok:203(unfulfilled),afterany:205(unfulfilled)");
  // ',' and '?' mixed: accepted, and the whole list becomes "any".
  EXPECT_EQ(shown("afterok:202,afterany:203?after:205"),
            "afterok:202(unfulfilled)?afterany:203(unfulfilled)?after:205(unfulfilled)");
  EXPECT_EQ(shown("afterok:202?afterok:203,afterok:205"),
            "afterok:202(unfulfilled)?afterok:203(unfulfilled)?afterok:205(unfulfilled)");
  for (const char* type :
       {"after", "afterany", "afterok", "afternotok", "aftercorr", "afterburstbuffer"}) {
    EXPECT_EQ(shown(std::string(type) + ":999999"), std::string(type) + ":999999(unfulfilled)");
    // Every after* type takes "+minutes".
    EXPECT_EQ(shown(std::string(type) + ":202+5"), std::string(type) + ":202+5(unfulfilled)");
  }
  EXPECT_EQ(shown("singleton"), "singleton(unfulfilled)");
  EXPECT_EQ(shown("SINGLETON"), "singleton(unfulfilled)");
  EXPECT_EQ(shown("AFTEROK:202"), "afterok:202(unfulfilled)");
  EXPECT_EQ(shown("202"), "afterany:202(unfulfilled)");
  EXPECT_EQ(shown("202,203"), "afterany:202(unfulfilled),afterany:203(unfulfilled)");
  EXPECT_EQ(shown("632_2"), "afterany:632_2(unfulfilled)");
  EXPECT_EQ(shown("afterok:656,631"), "afterok:656(unfulfilled),afterany:631(unfulfilled)");
  EXPECT_EQ(shown("afterok:202?singleton"), "afterok:202(unfulfilled)?singleton(unfulfilled)");
  EXPECT_EQ(shown("singleton,afterok:202"), "singleton(unfulfilled),afterok:202(unfulfilled)");
  // The delay carries over to later ids of the same item.
  EXPECT_EQ(shown("after:202+5:203+7"), "after:202+5(unfulfilled),after:203+7(unfulfilled)");
  EXPECT_EQ(shown("afterany:202+5:203"), "afterany:202+5(unfulfilled),afterany:203+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:202:203+5"), "afterok:202(unfulfilled),afterok:203+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:202+5:203:204_1+7:205"),
            "afterok:202+5(unfulfilled),afterok:203+5(unfulfilled),afterok:204_1+7(unfulfilled),"
            "afterok:205+7(unfulfilled)");
  EXPECT_EQ(shown("after:202+5,afterany:203"),
            "after:202+5(unfulfilled),afterany:203(unfulfilled)");
  // The delay: strtol, junk after it ignored, kept as 32-bit seconds.
  EXPECT_EQ(shown("after:202+5+6"), "after:202+5(unfulfilled)");
  EXPECT_EQ(shown("after:202+05"), "after:202+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:202+5min"), "afterok:202+5(unfulfilled)");
  EXPECT_EQ(shown("after:202+1h"), "after:202+1(unfulfilled)");
  EXPECT_EQ(shown("afterok:202+5_2"), "afterok:202+5(unfulfilled)");
  EXPECT_EQ(shown("after:202+1000000"), "after:202+1000000(unfulfilled)");
  EXPECT_EQ(shown("after:202+99999999999"), "after:202+70427578(unfulfilled)");
  // Array tasks.
  EXPECT_EQ(shown("afterok:204_2"), "afterok:204_2(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_9"), "afterok:204_9(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_99999"), "afterok:204_99999(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_"), "afterok:204_0(unfulfilled)");
  EXPECT_EQ(shown("afterok:202_0"), "afterok:202_0(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_2+5"), "afterok:204_2+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[1-2]"), "afterok:204_1(unfulfilled),afterok:204_2(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[1,3]"), "afterok:204_1(unfulfilled),afterok:204_3(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[1000]"), "afterok:204_1000(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[ 2]"), "afterok:204_2(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[2 ]"), "afterok:204_2(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[+2]"), "afterok:204_2(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[2-+3]"), "afterok:204_2(unfulfilled),afterok:204_3(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[1-3]+5:203"),
            "afterok:204_1(unfulfilled),afterok:204_2(unfulfilled),afterok:204_3+5(unfulfilled),"
            "afterok:203+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:202+7:204_[1-3]+5"),
            "afterok:202+7(unfulfilled),afterok:204_1+7(unfulfilled),afterok:204_2+7(unfulfilled),"
            "afterok:204_3+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:204_[1-3]:202"),
            "afterok:204_1(unfulfilled),afterok:204_2(unfulfilled),afterok:204_3(unfulfilled),"
            "afterok:202(unfulfilled)");
  EXPECT_EQ(parse_dependency("afterok:204_[0-1000]").entries.size(), 1001u);
  // strtoul leniency and 32-bit job ids.
  EXPECT_EQ(shown("afterok:+202"), "afterok:202(unfulfilled)");
  EXPECT_EQ(shown("afterok: 202"), "afterok:202(unfulfilled)");
  EXPECT_EQ(shown("afterok:4294967295"), "afterok:4294967295(unfulfilled)");
  EXPECT_EQ(shown("afterok:99999999999999999999"), "afterok:4294967295(unfulfilled)");
  // Duplicates are dropped; the first one (and its delay) stays.
  EXPECT_EQ(shown("afterok:631:631"), "afterok:631(unfulfilled)");
  EXPECT_EQ(shown("afterok:631:631+5"), "afterok:631(unfulfilled)");
  EXPECT_EQ(shown("afterok:631+5:631"), "afterok:631+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:631,afterok:631"), "afterok:631(unfulfilled)");
  EXPECT_EQ(shown("afterok:631?afterok:631"), "afterok:631(unfulfilled)");
  EXPECT_EQ(shown("after:631+5,after:631+7"), "after:631+5(unfulfilled)");
  EXPECT_EQ(shown("afterok:631,afterok:656,afterok:631"),
            "afterok:631(unfulfilled),afterok:656(unfulfilled)");
  EXPECT_EQ(shown("afterok:631,631"), "afterok:631(unfulfilled),afterany:631(unfulfilled)");
  EXPECT_EQ(shown("afterok:631_1:631"), "afterok:631_1(unfulfilled),afterok:631(unfulfilled)");
  EXPECT_EQ(shown("afterok:632_[1-2]:632_2"),
            "afterok:632_1(unfulfilled),afterok:632_2(unfulfilled)");
  EXPECT_EQ(shown("singleton,singleton"), "singleton(unfulfilled)");
  EXPECT_EQ(shown("singleton?singleton"), "singleton(unfulfilled)");
  EXPECT_EQ(shown("202,202"), "afterany:202(unfulfilled)");
}

// checked against Slurm 22.05: "afterok:204" and "afterok:204_*" on an array show as
// "afterok:204_*(unfulfilled)"; "_-1" and "_4294967294" mean the same.
TEST(Dependency, WholeArrays) {
  auto is_array = [](uint64_t id) { return id == 204; };
  for (const char* spec : {"afterok:204", "afterok:204_*", "afterok:204_-1",
                           "afterok:204_4294967295", "afterok:204_4294967294"})
    EXPECT_EQ(format_dependency(parse_dependency(spec), is_array), "afterok:204_*(unfulfilled)")
        << spec;
  EXPECT_EQ(format_dependency(parse_dependency("afterok:204_*+5"), is_array),
            "afterok:204_*+5(unfulfilled)");
  EXPECT_EQ(format_dependency(parse_dependency("afterok:202:204_2"), is_array),
            "afterok:202(unfulfilled),afterok:204_2(unfulfilled)");
  EXPECT_EQ(format_dependency(parse_dependency("singleton"), is_array), "singleton(unfulfilled)");
}

TEST(Dependency, FormatStatesAndSpec) {
  Dependency d = parse_dependency("afterok:20,afterany:21_3,after:22+5,singleton");
  d.entries[0].state = DepState::Failed;
  d.entries[1].state = DepState::Satisfied;
  // checked against Slurm 22.05: an afterok on a job that failed shows "afterok:328(failed)"
  // (reason DependencyNeverSatisfied); satisfied entries disappear.
  EXPECT_EQ(format_dependency(d),
            "afterok:20(failed),after:22+5(unfulfilled),singleton(unfulfilled)");
  EXPECT_EQ(format_dependency_spec(d), "afterok:20,afterany:21_3,after:22+5,singleton");
  d.entries[0].state = d.entries[2].state = d.entries[3].state = DepState::Satisfied;
  EXPECT_EQ(format_dependency(d), "");
  EXPECT_EQ(format_dependency(Dependency{}), "");
  Dependency any = parse_dependency("afterok:1?afterok:2");
  EXPECT_EQ(format_dependency_spec(any), "afterok:1?afterok:2");
  EXPECT_EQ(parse_dependency(format_dependency_spec(any)), any);
  EXPECT_EQ(dep_type_name(DepType::AfterBurstBuffer), "afterburstbuffer");
}

// checked against Slurm 22.05: `sbatch -H -d SPEC --wrap true` printed
// "sbatch: error: Batch job submission failed: Job dependency problem" and exited 1 (the
// controller's answer; sbatch itself checks nothing).
TEST(Dependency, Errors) {
  for (const char* bad : {"foo:202",
                          "202:203",
                          "singleton+5",
                          "singleton:202",
                          "singleton ",
                          " afterok:202",
                          "afterok :202",
                          "after:202+0",
                          "after:202+x",
                          "after:202+-5",
                          "after:202+",
                          "after:202+2147483648",
                          "after:202+4294967296",
                          "afterok",
                          "afterok:",
                          "afterok:x",
                          "afterok:202:",
                          "afterok::202",
                          ",afterok:202",
                          "afterok:202,",
                          "afterok:202,,afterok:203",
                          "?afterok:202",
                          "afterok:202?",
                          "afterok:202?,afterok:203",
                          ":202",
                          "afterokay:202",
                          "aft:202",
                          "after:0",
                          "afterok:4294967296",
                          "afterok:204_x",
                          "afterok:204_2x",
                          "afterok:204_*x",
                          "afterok:204_[",
                          "afterok:204_[]",
                          "afterok:204_[0-1001]",
                          "afterok:204_[99999]",
                          "afterok:204_[3-1]",
                          "afterok:204_[1-3]x",
                          "afterok:204_[1-3]_",
                          "afterok:202_2_3",
                          "afterok:202.0",
                          "afterok:202 ",
                          "afterok:202x",
                          "afterok:202+5:",
                          "afterok:204_[1,3:2]",
                          "afterok:204_[1:2]",
                          "afterok:204_[1-]",
                          "afterok:204_[,1]",
                          "202+5",
                          "632_[1-2]",
                          "631?afterok:631",
                          "631,afterok:656",
                          "631?656",
                          "631:656",
                          "631,656?afterok:631",
                          "202,"})
    expect_problem(bad);
  try {
    parse_dependency("expand:202");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "Requested operation not supported on this system");
  }
  // The bracket limit follows MaxArraySize.
  EXPECT_EQ(parse_dependency("afterok:204_[0-1001]", 2000).entries.size(), 1002u);
}

// Where drover refuses what Slurm 22.05 accepts with odd results: "afterok:204_[1-3:2]" (Slurm:
// task 1 only), "afterok:204_[1-3x]" (1-3), "afterok:204_[*]" (task 0), "afterok:204_[1,]"
// (tasks 0 and 1), "afterok:204_[-1]" (tasks 0 and 1).
TEST(Dependency, StricterThanSlurm) {
  for (const char* bad : {"afterok:204_[1-3:2]", "afterok:204_[1-3x]", "afterok:204_[*]",
                          "afterok:204_[1,]", "afterok:204_[-1]", "afterok:204_[1,,2]"})
    expect_problem(bad);
}
