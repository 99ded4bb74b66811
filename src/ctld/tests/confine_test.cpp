#include "ctld/confine.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover;

namespace {
core::NodeAlloc held(int64_t mem_mb) {
  core::NodeAlloc a("node1", 1, mem_mb, 1);
  a.cpu_ids = {1};
  a.gpu_ids = {1};
  return a;
}
core::Node node1() {
  core::Node n;
  n.name = "node1";
  n.real_memory_mb = 1000;
  return n;
}
}  // namespace

TEST(Confine, NoneUnlessSlurmConfNamesTheMechanisms) {
  const ctld::Config c = ctld::load_config_text("NodeName=node1 CPUs=2\n", "slurm.conf");
  EXPECT_FALSE(c.confine_set);
  const core::Node n = node1();
  EXPECT_FALSE(ctld::node_confine(c, held(100), &n));
}

TEST(Confine, TaskCgroupWithCgroupConf) {
  ctld::Config c = ctld::load_config_text(
      "NodeName=node1 CPUs=2\nTaskPlugin=task/affinity,task/cgroup\n", "slurm.conf");
  ASSERT_TRUE(c.task_cgroup);
  c.cgroup = core::parse_cgroup_conf(
      "ConstrainCores=yes\nConstrainRAMSpace=yes\nAllowedRAMSpace=50\nConstrainDevices=yes\n",
      "cgroup.conf");
  c.gres_conf = "Name=gpu File=/dev/nvidia[0-2]\n";
  const core::Node n = node1();
  const auto conf = ctld::node_confine(c, held(200), &n);
  ASSERT_TRUE(conf);
  EXPECT_TRUE(conf->cgroup);
  EXPECT_EQ(conf->cpus, std::vector<int>{1});
  EXPECT_EQ(conf->mem_hard, 100 << 20);
  EXPECT_EQ(conf->memsw, 0);
  EXPECT_TRUE(conf->constrain_devices);
  EXPECT_EQ(conf->deny_devices, (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidia2"}));
}

TEST(Confine, TaskNoneLimitsNothingAndPgidHasNoCgroups) {
  ctld::Config c = ctld::load_config_text("NodeName=node1\nTaskPlugin=task/none\n", "slurm.conf");
  const core::Node n = node1();
  auto conf = ctld::node_confine(c, held(200), &n);
  ASSERT_TRUE(conf);
  EXPECT_TRUE(conf->cgroup);
  EXPECT_EQ(conf->mem_hard, 0);
  EXPECT_TRUE(conf->cpus.empty());
  c = ctld::load_config_text("NodeName=node1\nProctrackType=proctrack/pgid\n", "slurm.conf");
  conf = ctld::node_confine(c, held(200), &n);
  ASSERT_TRUE(conf);
  EXPECT_FALSE(conf->cgroup);
}

TEST(Confine, UnknownPluginsAreRefused) {
  EXPECT_THROW(ctld::load_config_text("NodeName=node1\nTaskPlugin=task/foo\n", "slurm.conf"),
               core::ParseError);
  EXPECT_THROW(ctld::load_config_text("NodeName=node1\nProctrackType=proctrack/x\n", "slurm.conf"),
               core::ParseError);
}
