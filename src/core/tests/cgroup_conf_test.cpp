#include "core/cgroup_conf.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_cgroup_conf(text, "/etc/slurm/cgroup.conf");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}
constexpr int64_t kMiB = 1024 * 1024;
}  // namespace

TEST(CgroupConf, SlurmDefaults) {
  const CgroupConf c = parse_cgroup_conf("", "cgroup.conf");
  EXPECT_EQ(c.plugin, "autodetect");
  EXPECT_EQ(c.mountpoint, "/sys/fs/cgroup");
  EXPECT_FALSE(c.constrain_cores || c.constrain_ram || c.constrain_swap || c.constrain_devices);
  EXPECT_EQ(c.allowed_ram_pct, 100);
  EXPECT_EQ(c.allowed_swap_pct, 0);
  EXPECT_EQ(c.max_ram_pct, 100);
  EXPECT_EQ(c.max_swap_pct, 100);
  EXPECT_EQ(c.min_ram_mb, 30u);
  EXPECT_FALSE(c.swappiness);
}

TEST(CgroupConf, KeysAnyCaseCommentsAndBooleans) {
  const CgroupConf c = parse_cgroup_conf(
      "# comment\nconstraincores=YES ConstrainRAMSpace=true  # trailing\n"
      "ConstrainSwapSpace=1\nConstrainDevices=up\nAllowedRAMSpace=101.5\nAllowedSwapSpace=1e1\n"
      "MinRAMSpace=UNLIMITED\nCgroupPlugin=cgroup/v1\nMemorySwappiness=10\n",
      "cgroup.conf");
  EXPECT_TRUE(c.constrain_cores && c.constrain_ram && c.constrain_swap && c.constrain_devices);
  EXPECT_DOUBLE_EQ(c.allowed_ram_pct, 101.5);
  EXPECT_DOUBLE_EQ(c.allowed_swap_pct, 10);
  EXPECT_EQ(c.min_ram_mb, UINT64_MAX);
  EXPECT_EQ(c.plugin, "cgroup/v1");
  EXPECT_EQ(c.swappiness, 10u);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(CgroupConf, SlurmErrorsForBadValues) {
  const std::string fatal = "\nCould not open/read/parse cgroup.conf file /etc/slurm/cgroup.conf";
  EXPECT_EQ(error_of("ConstrainCores=maybe"),
            "\"maybe\" is not a valid option for \"ConstrainCores\"" + fatal);
  EXPECT_EQ(error_of("AllowedRAMSpace=abc"),
            "AllowedRAMSpace value (abc) is not a valid number" + fatal);
  EXPECT_EQ(error_of("AllowedRAMSpace=5%"),
            "AllowedRAMSpace value (5%) is not a valid number" + fatal);
  EXPECT_EQ(error_of("MinRAMSpace=12abc"),
            "MinRAMSpace value (12abc) is not a valid number" + fatal);
  EXPECT_EQ(error_of("MinRAMSpace=-1"), "MinRAMSpace value (-1) is less than zero" + fatal);
  EXPECT_EQ(error_of("Foo=1"), "_parse_next_key: Parsing error at unrecognized key: Foo" + fatal);
  EXPECT_EQ(error_of("TaskAffinity=yes"),
            "_parse_next_key: Parsing error at unrecognized key: TaskAffinity" + fatal);
  EXPECT_EQ(error_of("MinRAMSpace="),
            "Parse error in file /etc/slurm/cgroup.conf line 1: \"MinRAMSpace=\"" + fatal);
  // Accepted as slurmd accepts them.
  EXPECT_EQ(error_of("AllowedRAMSpace=-5\nMaxSwapPercent=150\nAllowedRAMSpace=INFINITE"), "");
}

TEST(CgroupConf, WarningsSlurmdLogs) {
  const CgroupConf c =
      parse_cgroup_conf("ConstrainRAMSpace=yes\nconstrainramspace=no\nMemorySwappiness=101", "x");
  EXPECT_FALSE(c.constrain_ram);
  EXPECT_EQ(c.swappiness, 100u);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0], "ConstrainRAMSpace 1 specified more than once, latest value used");
  EXPECT_EQ(c.warnings[1], "Value for MemorySwappiness is too high, rounding down to 100.");
}

TEST(MemoryLimits, NoneUnlessConstrained) {
  const CgroupConf c;
  const MemoryLimits l = memory_limits(c, 500, 1000);
  EXPECT_EQ(l.hard, 0);
  EXPECT_EQ(l.memsw, 0);
}

TEST(MemoryLimits, AllowedRamSpaceOfTheJobsMemory) {
  CgroupConf c;
  c.constrain_ram = true;
  c.allowed_ram_pct = 50;
  MemoryLimits l = memory_limits(c, 400, 1000);
  EXPECT_EQ(l.hard, 200 * kMiB);
  EXPECT_EQ(l.soft, 200 * kMiB);  // never above the hard limit
  EXPECT_EQ(l.memsw, 0);
  c.allowed_ram_pct = 120;
  l = memory_limits(c, 400, 1000);
  EXPECT_EQ(l.hard, 480 * kMiB);
  EXPECT_EQ(l.soft, 400 * kMiB);
  // A job without memory of its own: the node's; MaxRAMPercent caps it.
  c.allowed_ram_pct = 100;
  c.max_ram_pct = 50;
  EXPECT_EQ(memory_limits(c, 0, 1000).hard, 500 * kMiB);
  // MinRAMSpace is the floor.
  c.max_ram_pct = 100;
  EXPECT_EQ(memory_limits(c, 10, 1000).hard, 30 * kMiB);
}

TEST(MemoryLimits, SwapOnTop) {
  CgroupConf c;
  c.constrain_ram = true;
  c.constrain_swap = true;
  c.allowed_swap_pct = 50;
  MemoryLimits l = memory_limits(c, 400, 1000);
  EXPECT_EQ(l.hard, 400 * kMiB);
  EXPECT_EQ(l.memsw, 600 * kMiB);
  // Only swap constrained: RAM is limited to RAM+swap, AllowedRAMSpace taken as 100.
  c.constrain_ram = false;
  c.allowed_ram_pct = 10;
  l = memory_limits(c, 400, 1000);
  EXPECT_EQ(l.memsw, 600 * kMiB);
  EXPECT_EQ(l.hard, 600 * kMiB);
  // MaxSwapPercent caps RAM+swap (on top of the RAM cap).
  c.constrain_ram = true;
  c.allowed_ram_pct = 100;
  c.allowed_swap_pct = 100;
  c.max_ram_pct = 50;
  c.max_swap_pct = 10;
  l = memory_limits(c, 800, 1000);
  EXPECT_EQ(l.hard, 500 * kMiB);
  EXPECT_EQ(l.memsw, 600 * kMiB);
}

TEST(GresGpuFiles, PerNodeInOrder) {
  const std::string conf =
      "# GPUs\nName=gpu File=/dev/nvidia[0-1]\nNodeName=node[2-3] Name=gpu File=/dev/nvidia9\n"
      "Name=mps Count=100\nName=gpu Type=a100 Count=1\n";
  EXPECT_EQ(gres_gpu_files(conf, "node1"),
            (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidia1"}));
  EXPECT_EQ(gres_gpu_files(conf, "node2"),
            (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia9"}));
  EXPECT_TRUE(gres_gpu_files("", "node1").empty());
}
