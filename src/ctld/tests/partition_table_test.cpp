// The controller's partition table: order, lookup, the default partition, nodes leaving.
#include "ctld/partition_table.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace drover;
using namespace drover::ctld;

namespace {

Partition part(const std::string& name, std::vector<NodeId> nodes, bool is_default = false) {
  Partition p;
  p.name = name;
  p.nodes = std::move(nodes);
  p.is_default = is_default;
  return p;
}

TEST(PartitionTable, KeepsSlurmConfOrderAndFindsByName) {
  PartitionTable t({part("debug", {0, 1}), part("batch", {1, 2}), part("gpu", {3})});
  ASSERT_EQ(t.size(), 3u);
  std::vector<std::string> names;
  for (const auto& p : t) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"debug", "batch", "gpu"}));
  ASSERT_NE(t.find("batch"), nullptr);
  EXPECT_EQ(t.find("batch")->nodes, (std::vector<NodeId>{1, 2}));
  EXPECT_EQ(t.find("nope"), nullptr);
  EXPECT_EQ(t.find("Batch"), nullptr);  // names are case-sensitive, as in Slurm
  t.find("gpu")->max_nodes = 1;
  EXPECT_EQ(std::as_const(t).find("gpu")->max_nodes, 1);
}

TEST(PartitionTable, RefusesANameTwice) {
  EXPECT_THROW(PartitionTable({part("a", {}), part("a", {})}), std::invalid_argument);
}

TEST(PartitionTable, TheLastDefaultIsTheDefault) {
  EXPECT_EQ(PartitionTable({part("a", {})}).default_partition(), nullptr);
  PartitionTable t({part("a", {}, true), part("b", {}), part("c", {}, true)});
  ASSERT_NE(t.default_partition(), nullptr);
  EXPECT_EQ(t.default_partition()->name, "c");
}

TEST(PartitionTable, MakingOneTheDefaultEndsTheOthersTurn) {
  PartitionTable t({part("a", {}, true), part("b", {}), part("c", {}, true)});
  EXPECT_EQ(t.make_sole_default("b"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(t.default_partition()->name, "b");
  EXPECT_FALSE(t.find("a")->is_default);
  EXPECT_TRUE(t.make_sole_default("b").empty());  // already the only one
}

TEST(PartitionTable, ANodeLeavesEveryPartition) {
  PartitionTable t({part("a", {0, 1, 2}), part("b", {2, 1}), part("c", {3})});
  EXPECT_EQ(t.holding(1), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(t.holding(7).empty());
  t.remove_node(1);
  EXPECT_EQ(t.find("a")->nodes, (std::vector<NodeId>{0, 2}));
  EXPECT_EQ(t.find("b")->nodes, (std::vector<NodeId>{2}));
  EXPECT_EQ(t.find("c")->nodes, (std::vector<NodeId>{3}));
  EXPECT_TRUE(t.holding(1).empty());
}

}  // namespace
