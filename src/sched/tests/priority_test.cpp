#include "sched/priority.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/slurm_conf.hpp"

using namespace drover;
using sched::JobPriorityInput;
using sched::PriorityConfig;
using sched::PriorityFactors;

namespace {

constexpr int64_t kDay = 86400;

PriorityConfig conf_of(const std::string& text) {
  return sched::parse_priority_config(core::parse_slurm_conf(text));
}

// The message of the ParseError `text` raises, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    conf_of(text);
  } catch (const core::ParseError& e) {
    return e.what();
  }
  return "";
}

// ---- configuration ----

TEST(PriorityConfig, DefaultsAreSlurms) {
  PriorityConfig c = conf_of("ClusterName=c\n");
  EXPECT_EQ(c.type, sched::PriorityType::Basic);
  EXPECT_FALSE(c.multifactor());
  EXPECT_EQ(c.weight_age, 0u);
  EXPECT_EQ(c.weight_fairshare, 0u);
  EXPECT_EQ(c.weight_job_size, 0u);
  EXPECT_EQ(c.weight_partition, 0u);
  EXPECT_EQ(c.weight_qos, 0u);
  EXPECT_EQ(c.weight_assoc, 0u);
  EXPECT_TRUE(c.weight_tres.empty());
  EXPECT_EQ(c.max_age_s, 7 * kDay);
  EXPECT_EQ(c.decay_half_life_s, 7 * kDay);
  EXPECT_EQ(c.calc_period_s, 300);
  EXPECT_EQ(c.fairshare_dampening_factor, 1u);
  EXPECT_EQ(c.usage_reset_period, sched::UsageResetPeriod::None);
  EXPECT_FALSE(c.favor_small);
  EXPECT_TRUE(c.fair_tree());
}

// The first configuration example of priority_multifactor.html, comments and all.
TEST(PriorityConfig, DocExampleWithDecay) {
  PriorityConfig c = conf_of(
      "PriorityType=priority/multifactor\n"
      "# 2 week half-life\n"
      "PriorityDecayHalfLife=14-0\n"
      "PriorityFavorSmall=NO\n"
      "PriorityMaxAge=14-0\n"
      "PriorityWeightAge=1000\n"
      "PriorityWeightFairshare=10000\n"
      "PriorityWeightJobSize=1000\n"
      "PriorityWeightPartition=1000\n"
      "PriorityWeightQOS=0 # don't use the qos factor\n");
  EXPECT_TRUE(c.multifactor());
  EXPECT_EQ(c.decay_half_life_s, 14 * kDay);
  EXPECT_EQ(c.max_age_s, 14 * kDay);
  EXPECT_FALSE(c.favor_small);
  EXPECT_EQ(c.weight_age, 1000u);
  EXPECT_EQ(c.weight_fairshare, 10000u);
  EXPECT_EQ(c.weight_job_size, 1000u);
  EXPECT_EQ(c.weight_partition, 1000u);
  EXPECT_EQ(c.weight_qos, 0u);
}

// The second example: no decay, usage reset monthly.
TEST(PriorityConfig, DocExampleWithoutDecay) {
  PriorityConfig c = conf_of(
      "PriorityType=priority/multifactor\n"
      "PriorityDecayHalfLife=0\n"
      "PriorityUsageResetPeriod=MONTHLY\n"
      "PriorityMaxAge=14-0\n");
  EXPECT_EQ(c.decay_half_life_s, 0);
  EXPECT_EQ(c.usage_reset_period, sched::UsageResetPeriod::Monthly);
}

TEST(PriorityConfig, NoDecayNeedsAResetPeriod) {
  EXPECT_NE(error_of("PriorityDecayHalfLife=0\n").find("PriorityUsageResetPeriod"),
            std::string::npos);
  EXPECT_EQ(conf_of("PriorityDecayHalfLife=0\nPriorityUsageResetPeriod=daily\n").usage_reset_period,
            sched::UsageResetPeriod::Daily);
  EXPECT_NE(error_of("PriorityUsageResetPeriod=fortnightly\n").find("PriorityUsageResetPeriod"),
            std::string::npos);
}

TEST(PriorityConfig, TimeStrings) {
  EXPECT_EQ(conf_of("PriorityMaxAge=30\n").max_age_s, 30 * 60);
  EXPECT_EQ(conf_of("PriorityMaxAge=1:00:00\n").max_age_s, 3600);
  EXPECT_EQ(conf_of("PriorityMaxAge=2-12\n").max_age_s, 2 * kDay + 12 * 3600);
  EXPECT_EQ(conf_of("PriorityMaxAge=UNLIMITED\n").max_age_s, 4294967296 - 60);
  EXPECT_EQ(conf_of("PriorityDecayHalfLife=1-0\n").decay_half_life_s, kDay);
  EXPECT_EQ(conf_of("PriorityCalcPeriod=10\n").calc_period_s, 600);
  EXPECT_NE(error_of("PriorityMaxAge=soon\n").find("PriorityMaxAge=soon"), std::string::npos);
  EXPECT_NE(error_of("PriorityCalcPeriod=0\n").find("PriorityCalcPeriod"), std::string::npos);
  EXPECT_NE(error_of("PriorityDecayHalfLife=-5\n").find("PriorityDecayHalfLife"),
            std::string::npos);
}

TEST(PriorityConfig, WeightsAreUint32AsSlurmReadsThem) {
  EXPECT_EQ(conf_of("PriorityWeightAge=0x10\n").weight_age, 16u);
  EXPECT_EQ(conf_of("PriorityWeightAge=2k\n").weight_age, 2048u);
  EXPECT_EQ(conf_of("PriorityWeightQOS=UNLIMITED\n").weight_qos, 4294967295u);
  EXPECT_EQ(conf_of("PriorityWeightAssoc=4294967295\n").weight_assoc, 4294967295u);
  for (const char* bad : {"PriorityWeightAge=abc", "PriorityWeightAge=-1",
                          "PriorityWeightAge=4294967296", "PriorityWeightAge=12x"}) {
    std::string msg = error_of(std::string(bad) + "\n");
    EXPECT_NE(msg.find("PriorityWeightAge"), std::string::npos) << bad << ": " << msg;
  }
}

TEST(PriorityConfig, TresWeights) {
  PriorityConfig c = conf_of("PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000\n");
  ASSERT_EQ(c.weight_tres.size(), 3u);
  EXPECT_EQ(c.weight_tres.at("cpu"), 1000);
  EXPECT_EQ(c.weight_tres.at("mem"), 2000);
  EXPECT_EQ(c.weight_tres.at("gres/gpu"), 3000);
  EXPECT_EQ(c.weight_tres_text, "CPU=1000,Mem=2000,GRES/gpu=3000");

  // Units divide the weight down to the TRES's base unit (MB for memory).
  auto w = sched::parse_tres_weights("Mem=1G,cpu=-0.5,license/matlab=2,fs/disk=1,node=1k", "X");
  EXPECT_DOUBLE_EQ(w.at("mem"), 1.0 / 1024);
  EXPECT_DOUBLE_EQ(w.at("cpu"), -0.5);
  EXPECT_DOUBLE_EQ(w.at("license/matlab"), 2);
  EXPECT_DOUBLE_EQ(w.at("node"), 1.0 / 1024);
  EXPECT_DOUBLE_EQ(sched::parse_tres_weights("Mem=1024G", "X").at("mem"), 1.0);
  EXPECT_DOUBLE_EQ(sched::parse_tres_weights("mem=3M", "X").at("mem"), 3.0);  // MB is the base

  for (const char* bad : {"Foo=1", "CPU", "CPU=", "CPU=abc", "gres=1", "cpu/x=1", "Mem=2Q"}) {
    std::string msg = error_of(std::string("PriorityWeightTRES=") + bad + "\n");
    EXPECT_NE(msg.find("PriorityWeightTRES"), std::string::npos) << bad << ": " << msg;
  }
}

TEST(PriorityConfig, Flags) {
  PriorityConfig c = conf_of("PriorityFlags=ACCRUE_ALWAYS,small_relative_to_time,MAX_TRES\n");
  EXPECT_TRUE(c.flags.accrue_always);
  EXPECT_TRUE(c.flags.small_relative_to_time);
  EXPECT_TRUE(c.flags.max_tres);
  EXPECT_FALSE(c.flags.calculate_running);
  EXPECT_TRUE(c.fair_tree());

  EXPECT_FALSE(conf_of("PriorityFlags=NO_FAIR_TREE\n").fair_tree());
  PriorityConfig d = conf_of("PriorityFlags=DEPTH_OBLIVIOUS\n");
  EXPECT_TRUE(d.flags.depth_oblivious);
  EXPECT_FALSE(d.fair_tree());  // DEPTH_OBLIVIOUS implies classic fair share
  EXPECT_TRUE(conf_of("PriorityFlags=CALCULATE_RUNNING,INCR_ONLY\n").flags.incr_only);
  PriorityConfig n = conf_of("PriorityFlags=NO_NORMAL_ALL\n");
  EXPECT_TRUE(n.flags.no_normal_assoc && n.flags.no_normal_part && n.flags.no_normal_qos &&
              n.flags.no_normal_tres);
  PriorityConfig p = conf_of("PriorityFlags=NO_NORMAL_PART\n");
  EXPECT_TRUE(p.flags.no_normal_part);
  EXPECT_FALSE(p.flags.no_normal_qos);

  std::string msg = error_of("PriorityFlags=ACCRUE_ALWAYS,FAVOR_ME\n");
  EXPECT_NE(msg.find("PriorityFlags"), std::string::npos) << msg;
  EXPECT_NE(msg.find("FAVOR_ME"), std::string::npos) << msg;
}

TEST(PriorityConfig, OtherKeys) {
  EXPECT_TRUE(conf_of("PriorityFavorSmall=YES\n").favor_small);
  EXPECT_TRUE(conf_of("PriorityFavorSmall=true\n").favor_small);
  EXPECT_NE(error_of("PriorityFavorSmall=maybe\n").find("PriorityFavorSmall"), std::string::npos);
  EXPECT_EQ(conf_of("FairShareDampeningFactor=5\n").fairshare_dampening_factor, 5u);
  EXPECT_NE(error_of("FairShareDampeningFactor=0\n").find("FairShareDampeningFactor"),
            std::string::npos);
  EXPECT_NE(error_of("FairShareDampeningFactor=70000\n").find("FairShareDampeningFactor"),
            std::string::npos);
  EXPECT_NE(error_of("PriorityType=priority/fancy\n").find("PriorityType"), std::string::npos);
}

// ---- factors ----

PriorityConfig multifactor() {
  PriorityConfig c;
  c.type = sched::PriorityType::Multifactor;
  return c;
}

JobPriorityInput cluster_job() {
  JobPriorityInput in;
  in.now = 100 * kDay;
  in.submit_time = in.now - kDay;
  in.eligible_time = in.now - kDay;
  in.cluster_cpus = 100;
  in.cluster_nodes = 10;
  in.cpus = 1;
  in.min_nodes = 1;
  return in;
}

TEST(PriorityFactors, AgeGrowsToOneAtMaxAge) {
  PriorityConfig c = multifactor();  // PriorityMaxAge 7 days
  JobPriorityInput in = cluster_job();
  in.eligible_time = in.now - 7 * kDay / 2;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.5);
  in.eligible_time = in.now - 7 * kDay;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 1.0);
  in.eligible_time = in.now - 30 * kDay;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 1.0);
  in.eligible_time = in.now + 60;  // not yet
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.0);
  in.eligible_time = 0;  // never became eligible
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.0);
  c.max_age_s = 3600;
  in.eligible_time = in.now - 900;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.25);
}

TEST(PriorityFactors, AgeDoesNotAccrueWhileBlockedUnlessAccrueAlways) {
  PriorityConfig c = multifactor();
  JobPriorityInput in = cluster_job();
  in.submit_time = in.now - 7 * kDay / 2;
  in.eligible_time = in.now - 7 * kDay / 4;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.25);
  in.held = true;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.0);
  in.held = false;
  in.dependency_pending = true;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.0);
  // ACCRUE_ALWAYS: from submission, whatever blocks the job.
  c.flags.accrue_always = true;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.5);
  in.held = true;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).age, 0.5);
}

TEST(PriorityFactors, JobSizeAveragesNodeAndCpuShares) {
  PriorityConfig c = multifactor();
  JobPriorityInput in = cluster_job();  // 10 nodes, 100 CPUs
  in.min_nodes = 2;
  in.cpus = 20;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.2);
  // All nodes but one CPU on each: half the weight comes from CPUs, so not 1.0.
  in.min_nodes = 10;
  in.cpus = 10;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.55);
  // The whole machine.
  in.cpus = 100;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 1.0);
  // CPU count unknown: nodes alone.
  in.min_nodes = 3;
  in.cpus = 0;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.3);
  // Asking for more than the cluster caps at 1.
  in.min_nodes = 20;
  in.cpus = 400;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 1.0);
}

TEST(PriorityFactors, JobSizeFavorSmall) {
  PriorityConfig c = multifactor();
  c.favor_small = true;
  JobPriorityInput in = cluster_job();
  in.min_nodes = 1;
  in.cpus = 1;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, (0.9 + 0.99) / 2);
  in.min_nodes = 10;
  in.cpus = 100;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.0);
  in.min_nodes = 5;
  in.cpus = 0;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.5);
}

TEST(PriorityFactors, JobSizeSmallRelativeToTime) {
  PriorityConfig c = multifactor();
  c.flags.small_relative_to_time = true;
  JobPriorityInput in = cluster_job();
  // A full-system job with a one-minute limit: 1.0.
  in.min_nodes = 10;
  in.cpus = 100;
  in.time_limit_min = 1;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 1.0);
  // 50 CPUs for 10 minutes: 50 / 10 / 100.
  in.min_nodes = 1;
  in.cpus = 50;
  in.time_limit_min = 10;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.05);
  // Nodes count as their average CPUs when that is more: 4 nodes = 40 CPUs.
  in.min_nodes = 4;
  in.cpus = 4;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.04);
  // A tiny job with a large limit: close to 0.
  in.min_nodes = 1;
  in.cpus = 1;
  in.time_limit_min = 7 * 24 * 60;
  EXPECT_LT(sched::compute_priority_factors(in, c).job_size, 1e-4);
  in.time_limit_min = core::kInfinite;
  EXPECT_LT(sched::compute_priority_factors(in, c).job_size, 1e-9);
  // PriorityFavorSmall turns it around.
  c.favor_small = true;
  in.cpus = 50;
  in.time_limit_min = 10;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).job_size, 0.95);
}

TEST(PriorityFactors, PartitionQosAssocNormalisedToTheLargest) {
  PriorityConfig c = multifactor();
  JobPriorityInput in = cluster_job();
  in.partition_job_factor = 5;
  in.max_partition_job_factor = 20;
  in.qos_priority = 30;
  in.max_qos_priority = 40;
  in.assoc_priority = 1;
  in.max_assoc_priority = 8;
  PriorityFactors f = sched::compute_priority_factors(in, c);
  EXPECT_DOUBLE_EQ(f.partition, 0.25);
  EXPECT_DOUBLE_EQ(f.qos, 0.75);
  EXPECT_DOUBLE_EQ(f.assoc, 0.125);
  c.flags.no_normal_part = true;
  c.flags.no_normal_qos = true;
  c.flags.no_normal_assoc = true;
  f = sched::compute_priority_factors(in, c);
  EXPECT_DOUBLE_EQ(f.partition, 5);
  EXPECT_DOUBLE_EQ(f.qos, 30);
  EXPECT_DOUBLE_EQ(f.assoc, 1);
  in.qos_priority = 0;
  in.partition_job_factor = 0;
  f = sched::compute_priority_factors(in, c);
  EXPECT_DOUBLE_EQ(f.partition, 0);
  EXPECT_DOUBLE_EQ(f.qos, 0);
}

TEST(PriorityFactors, TresShareOfThePartition) {
  PriorityConfig c = multifactor();
  c.weight_tres = sched::parse_tres_weights("CPU=1000,Mem=2000,GRES/gpu=3000", "W");
  JobPriorityInput in = cluster_job();
  in.job_tres = {{"cpu", 16}, {"mem", 32000}, {"gres/gpu", 1}, {"node", 1}};
  in.partition_tres = {{"cpu", 64}, {"mem", 64000}, {"gres/gpu", 8}, {"node", 4}};
  PriorityFactors f = sched::compute_priority_factors(in, c);
  ASSERT_EQ(f.tres.size(), 3u);  // only weighted TRES
  EXPECT_DOUBLE_EQ(f.tres.at("cpu"), 0.25);
  EXPECT_DOUBLE_EQ(f.tres.at("mem"), 0.5);
  EXPECT_DOUBLE_EQ(f.tres.at("gres/gpu"), 0.125);
  auto w = sched::weigh_factors(f, c);
  EXPECT_DOUBLE_EQ(w.tres_sum, 250 + 1000 + 375);
  c.flags.no_normal_tres = true;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).tres.at("cpu"), 16);
  // Nothing of it in the partition: 0.
  in.partition_tres.erase("gres/gpu");
  c.flags.no_normal_tres = false;
  EXPECT_DOUBLE_EQ(sched::compute_priority_factors(in, c).tres.at("gres/gpu"), 0);
}

// ---- the weighted sum ----

TEST(MultifactorPriority, WeightedSumMinusNicePlusSite) {
  PriorityConfig c = multifactor();
  c.weight_age = 1000;
  c.weight_fairshare = 10000;
  c.weight_job_size = 1000;
  c.weight_partition = 1000;
  c.weight_qos = 2000;
  c.weight_assoc = 500;
  PriorityFactors f;
  f.age = 0.5;         // 500
  f.fairshare = 0.25;  // 2500
  f.job_size = 0.1;    // 100
  f.partition = 1;     // 1000
  f.qos = 0.5;         // 1000
  f.assoc = 0.2;       // 100
  EXPECT_EQ(sched::multifactor_priority(f, c), 5200u);
  f.nice = 200;
  EXPECT_EQ(sched::multifactor_priority(f, c), 5000u);
  f.nice = -300;
  EXPECT_EQ(sched::multifactor_priority(f, c), 5500u);
  f.site = 1000;
  EXPECT_EQ(sched::multifactor_priority(f, c), 6500u);
}

TEST(MultifactorPriority, TruncatesAndClamps) {
  PriorityConfig c = multifactor();
  c.weight_fairshare = 1000;
  PriorityFactors f;
  f.fairshare = 0.9999;  // 999.9 truncates, never rounds up
  EXPECT_EQ(sched::multifactor_priority(f, c), 999u);
  // Nothing at all, or a nice larger than everything else: 1 (0 means held).
  EXPECT_EQ(sched::multifactor_priority(PriorityFactors{}, c), 1u);
  f.nice = 100000;
  EXPECT_EQ(sched::multifactor_priority(f, c), 1u);
  // A negative TRES weight can pull it down too.
  c.weight_tres = {{"cpu", -5000}};
  f.nice = 0;
  f.tres = {{"cpu", 1.0}};
  EXPECT_EQ(sched::multifactor_priority(f, c), 1u);
  // Beyond 32 bits: 2^32 - 1.
  PriorityConfig big = multifactor();
  big.weight_age = big.weight_fairshare = big.weight_qos = 4294967295u;
  PriorityFactors all;
  all.age = all.fairshare = all.qos = 1;
  EXPECT_EQ(sched::multifactor_priority(all, big), 4294967295u);
  all.age = all.qos = 0;
  all.fairshare = 0.5;
  EXPECT_EQ(sched::multifactor_priority(all, big), 2147483647u);  // 2147483647.5 truncated
  all.site = 4294967295LL;
  EXPECT_EQ(sched::multifactor_priority(all, big), 4294967295u);
}

TEST(MultifactorPriority, EndToEndFromInputs) {
  PriorityConfig c = conf_of(
      "PriorityType=priority/multifactor\n"
      "PriorityMaxAge=1-0\n"
      "PriorityWeightAge=1000\n"
      "PriorityWeightFairshare=10000\n"
      "PriorityWeightJobSize=1000\n"
      "PriorityWeightPartition=1000\n"
      "PriorityWeightTRES=CPU=2000\n");
  JobPriorityInput in = cluster_job();   // 10 nodes, 100 CPUs
  in.eligible_time = in.now - 6 * 3600;  // age 0.25 -> 250
  in.fairshare = 0.6;                    // 6000
  in.min_nodes = 1;
  in.cpus = 10;  // (0.1 + 0.1) / 2 -> 100
  in.partition_job_factor = 1;
  in.max_partition_job_factor = 4;  // 0.25 -> 250
  in.job_tres = {{"cpu", 10}};
  in.partition_tres = {{"cpu", 40}};  // 0.25 -> 500
  in.nice = 50;
  EXPECT_EQ(sched::multifactor_priority(sched::compute_priority_factors(in, c), c),
            250u + 6000 + 100 + 250 + 500 - 50);
  // Pure: the same input gives the same answer every time.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(sched::multifactor_priority(sched::compute_priority_factors(in, c), c), 7050u);
}

// ---- sprio ----

PriorityConfig sprio_conf() {
  PriorityConfig c = multifactor();
  c.weight_age = 1000;
  c.weight_fairshare = 10000;
  c.weight_job_size = 1000;
  c.weight_partition = 1000;
  return c;
}

std::vector<sched::SprioRow> sprio_rows() {
  sched::SprioRow a;
  a.job_id = 42;
  a.partition = "debug";
  a.user = "alice";
  a.factors.age = 0.25;
  a.factors.fairshare = 0.5;
  a.factors.job_size = 0.1234;
  a.factors.partition = 1;
  sched::SprioRow b;
  b.job_id = 1234567;
  b.partition = "verylongpartition";
  b.user = "bob";
  b.factors.age = 1;
  b.factors.fairshare = 0.33333;
  b.factors.partition = 0.5;
  b.factors.nice = 100;
  return {a, b};
}

TEST(Sprio, DefaultShowsSiteAndWeightedFactorsWithWeights) {
  // %.15i %9r %.10Y %.10S and the factors whose weight is set (not ASSOC, QOS, TRES here).
  std::string expected =
      "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
      "PARTITION\n"
      "             42 debug           6373          0        250       5000        123       "
      "1000\n"
      "        1234567 verylongp       4733          0       1000       3333          0        "
      "500\n";
  EXPECT_EQ(sched::format_sprio(sprio_rows(), sprio_conf()), expected);
  sched::SprioOptions no_header;
  no_header.no_header = true;
  EXPECT_EQ(sched::format_sprio(sprio_rows(), sprio_conf(), no_header),
            expected.substr(expected.find('\n') + 1));
}

TEST(Sprio, Weights) {
  sched::SprioOptions o;
  o.weights = true;
  EXPECT_EQ(
      sched::format_sprio(sprio_rows(), sprio_conf(), o),
      "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
      "PARTITION\n"
      "        Weights                               1       1000      10000       1000       "
      "1000\n");
}

TEST(Sprio, UsersColumn) {
  sched::SprioOptions o;
  o.users = true;
  std::string out = sched::format_sprio(sprio_rows(), sprio_conf(), o);
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE  FAIRSHARE    "
            "JOBSIZE  PARTITION");
  EXPECT_NE(out.find("             42 debug        alice       6373"), std::string::npos) << out;
}

TEST(Sprio, LongShowsEveryColumn) {
  PriorityConfig c = sprio_conf();
  c.weight_tres_text = "CPU=2000,GRES/gpu=500";
  c.weight_tres = sched::parse_tres_weights(c.weight_tres_text, "PriorityWeightTRES");
  sched::SprioRow r;
  r.job_id = 7;
  r.partition = "gpu";
  r.user = "alice";
  r.factors.age = 0.5;        // 500
  r.factors.fairshare = 0.5;  // 5000
  r.factors.job_size = 0.25;  // 250
  r.factors.partition = 1;    // 1000
  r.factors.site = 5;
  r.factors.nice = -10;
  r.factors.tres = {{"gres/gpu", 0.5}, {"cpu", 0.25}};  // 250, 500
  sched::SprioOptions o;
  o.long_format = true;
  EXPECT_EQ(sched::format_sprio({r}, c, o),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  "
            "FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "              7 gpu          alice       7515          5        500          0       "
            "5000        250       1000          0         -10 cpu=500,gres/gpu=250\n");
  // An administrator's priority replaces the sum and zeroes the parts.
  r.admin_priority = 99;
  std::string out = sched::format_sprio({r}, c, o);
  EXPECT_NE(out.find(" 7 gpu          alice         99          0          0          0"),
            std::string::npos)
      << out;
}

TEST(Sprio, Normalized) {
  sched::SprioOptions o;
  o.normalized = true;
  std::string out = sched::format_sprio(sprio_rows(), sprio_conf(), o);
  std::string first_two = out.substr(0, out.find('\n', out.find('\n') + 1) + 1);
  EXPECT_EQ(first_two,
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION \n"
            "             42 debug     0.00000148 0.2500000  0.5000000  0.1234000  1.0000000 \n");
}

}  // namespace
