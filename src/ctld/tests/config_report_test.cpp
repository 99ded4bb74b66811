// scontrol show config's lines: Slurm 22.05's keys in its order (observed on the oracle), drover's
// effective values, slurm.conf's values in Slurm's units, Slurm's defaults for the rest.
#include "ctld/config_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

using drover::ctld::config_report;
using drover::ctld::ConfigFacts;
using drover::ctld::load_config_text;

namespace {

const std::string kBase =
    "ClusterName=lab\nSlurmctldHost=ctl1\nSlurmctldPort=7001\nNodeName=n[1-3] CPUs=2\n"
    "PartitionName=p Nodes=n[1-3]\n";

std::map<std::string, std::string> as_map(const drover::ctld::ConfigLines& lines) {
  std::map<std::string, std::string> m;
  for (const auto& [k, v] : lines) m[k] = v;
  return m;
}

std::vector<std::string> keys(const drover::ctld::ConfigLines& lines) {
  std::vector<std::string> out;
  for (const auto& kv : lines) out.push_back(kv.first);
  return out;
}

}  // namespace

TEST(ConfigReport, DefaultsAndEffectiveValues) {
  auto c =
      load_config_text(kBase + "KillWait=5\nMinJobAge=3600\nTCPTimeout=4\n", "/etc/slurm.conf");
  c.source_path = "/etc/slurm.conf";
  const auto r = config_report(c, ConfigFacts{0, 42, 3, "22.05.8"});
  const auto m = as_map(r.main);
  EXPECT_EQ(m.at("ClusterName"), "lab");
  EXPECT_EQ(m.at("SlurmctldHost[0]"), "ctl1");
  EXPECT_EQ(m.at("SlurmctldPort"), "7001");
  EXPECT_EQ(m.at("KillWait"), "5 sec");
  EXPECT_EQ(m.at("MinJobAge"), "3600 sec");
  EXPECT_EQ(m.at("TCPTimeout"), "4 sec");       // not acted on: shown as written, in sec
  EXPECT_EQ(m.at("MessageTimeout"), "10 sec");  // Slurm's default
  EXPECT_EQ(m.at("NEXT_JOB_ID"), "42");
  EXPECT_EQ(m.at("MaxNodeCount"), "3");
  EXPECT_EQ(m.at("SLURM_CONF"), "/etc/slurm.conf");
  EXPECT_EQ(m.at("SLURM_VERSION"), "22.05.8");
  EXPECT_EQ(m.at("PriorityType"), "priority/basic");
  EXPECT_EQ(m.at("SchedulerType"), "sched/backfill");
  EXPECT_EQ(m.at("AccountingStorageEnforce"), "none");
  EXPECT_EQ(m.at("DefMemPerNode"), "UNLIMITED");
  EXPECT_EQ(m.at("SlurmUser"), "root(0)");
  EXPECT_EQ(m.count("PriorityWeightAge"), 0u);  // the multifactor block only with multifactor
  EXPECT_EQ(m.count("FairShareDampeningFactor"), 0u);
  // Slurm's order: the first and last lines and a stretch in between.
  const auto k = keys(r.main);
  ASSERT_GE(k.size(), 190u);
  EXPECT_EQ(k.front(), "AccountingStorageBackupHost");
  EXPECT_EQ(k.back(), "X11Parameters");
  auto at = std::find(k.begin(), k.end(), "SlurmctldPidFile");
  ASSERT_NE(at, k.end());
  EXPECT_EQ(*(at + 1), "SlurmctldPlugstack");
  EXPECT_EQ(*(at + 2), "SLURM_CONF");
  EXPECT_EQ(r.mpi.size(), 12u);
}

TEST(ConfigReport, MultifactorBlockInSlurmsOrder) {
  auto c = load_config_text(kBase +
                                "PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
                                "PriorityFlags=ACCRUE_ALWAYS\nAccountingStorageEnforce=limits\n"
                                "DefMemPerCPU=500\nSchedulerType=sched/builtin\n",
                            "/etc/slurm.conf");
  const auto r = config_report(c, ConfigFacts{});
  const auto m = as_map(r.main);
  EXPECT_EQ(m.at("PriorityType"), "priority/multifactor");
  EXPECT_EQ(m.at("PriorityWeightAge"), "1000");
  EXPECT_EQ(m.at("PriorityWeightTRES"), "(null)");
  EXPECT_EQ(m.at("PriorityDecayHalfLife"), "7-00:00:00");
  EXPECT_EQ(m.at("PriorityCalcPeriod"), "00:05:00");
  EXPECT_EQ(m.at("PriorityMaxAge"), "7-00:00:00");
  EXPECT_EQ(m.at("PriorityFavorSmall"), "No");
  EXPECT_EQ(m.at("PriorityFlags"), "ACCRUE_ALWAYS");
  EXPECT_EQ(m.at("PriorityUsageResetPeriod"), "NONE");
  EXPECT_EQ(m.at("FairShareDampeningFactor"), "1");
  EXPECT_EQ(m.at("AccountingStorageEnforce"), "associations,limits");
  EXPECT_EQ(m.at("DefMemPerCPU"), "500");
  EXPECT_EQ(m.count("DefMemPerNode"), 0u);
  EXPECT_EQ(m.at("SchedulerType"), "sched/builtin");
  const auto k = keys(r.main);
  auto at = std::find(k.begin(), k.end(), "PrioritySiteFactorPlugin");
  ASSERT_NE(at, k.end());
  const std::vector<std::string> block(at + 1, at + 15);
  EXPECT_EQ(block, (std::vector<std::string>{
                       "PriorityDecayHalfLife", "PriorityCalcPeriod", "PriorityFavorSmall",
                       "PriorityFlags", "PriorityMaxAge", "PriorityUsageResetPeriod",
                       "PriorityType", "PriorityWeightAge", "PriorityWeightAssoc",
                       "PriorityWeightFairShare", "PriorityWeightJobSize",
                       "PriorityWeightPartition", "PriorityWeightQOS", "PriorityWeightTRES"}));
}
