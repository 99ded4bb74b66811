// The controller's node table: ids that stay, lookup by name, Slurm's order.
#include "ctld/node_table.hpp"

#include <gtest/gtest.h>

using namespace drover;
using namespace drover::ctld;

namespace {

core::Node node(const std::string& name, int cpus = 1) {
  core::Node n;
  n.name = name;
  n.cpus = cpus;
  return n;
}

std::vector<std::string> names(const NodeTable& t) {
  std::vector<std::string> out;
  for (const core::Node& n : t) out.push_back(n.name);
  return out;
}

TEST(NodeTable, SlurmConfNodesFirstThenDynamicOnesInTheOrderTheyCame) {
  NodeTable t;
  EXPECT_EQ(t.add(node("b1")), 0);
  EXPECT_EQ(t.add(node("a1")), 1);  // slurm.conf's order, not sorted
  EXPECT_EQ(t.add(node("d2"), true), 2);
  EXPECT_EQ(t.add(node("d1"), true), 3);
  EXPECT_EQ(names(t), (std::vector<std::string>{"b1", "a1", "d2", "d1"}));
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.dynamic_count(), 2u);
  EXPECT_FALSE(t.dynamic(1));
  EXPECT_TRUE(t.dynamic(3));
}

TEST(NodeTable, NamesAreUnique) {
  NodeTable t;
  EXPECT_EQ(t.add(node("n1")), 0);
  EXPECT_EQ(t.add(node("n1"), true), kNoNode);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NodeTable, IdsAndRecordsStayWhenOtherNodesComeAndGo) {
  NodeTable t;
  t.add(node("s1"));
  const NodeId a = t.add(node("d1", 4), true);
  const NodeId b = t.add(node("d2", 8), true);
  const NodeId c = t.add(node("d3", 16), true);
  const core::Node* rec_c = t.get(c);
  ASSERT_TRUE(t.remove(b));
  EXPECT_FALSE(t.remove(b));
  EXPECT_EQ(t.find("d2"), kNoNode);
  EXPECT_EQ(t.get(b), nullptr);
  EXPECT_EQ(t.find("d1"), a);
  EXPECT_EQ(t.find("d3"), c);
  EXPECT_EQ(t.get(c), rec_c);  // the record did not move
  EXPECT_EQ(t.get("d3")->cpus, 16);
  EXPECT_EQ(names(t), (std::vector<std::string>{"s1", "d1", "d3"}));
  EXPECT_EQ(t.ids(), (std::vector<NodeId>{0, a, c}));
  // The id space keeps its hole; the engine's view has a null there.
  EXPECT_EQ(t.id_end(), c + 1);
  const auto by_id = t.by_id();
  ASSERT_EQ(by_id.size(), 4u);
  EXPECT_EQ(by_id[static_cast<size_t>(b)], nullptr);
  EXPECT_EQ(by_id[static_cast<size_t>(c)], rec_c);
  // A new node takes the hole, as Slurm fills its node table.
  EXPECT_EQ(t.add(node("d4"), true), b);
  EXPECT_EQ(names(t), (std::vector<std::string>{"s1", "d1", "d4", "d3"}));
  EXPECT_EQ(t.find("d3"), c);
}

TEST(NodeTable, DynamicNodesNeverTakeSlurmConfPlaces) {
  NodeTable t;
  t.add(node("s1"));
  t.add(node("s2"));
  const NodeId d = t.add(node("d1"), true);
  EXPECT_EQ(d, 2);
  ASSERT_TRUE(t.remove(d));
  EXPECT_EQ(t.id_end(), 2);  // trailing holes are given back
  EXPECT_EQ(t.add(node("d2"), true), 2);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.get("s2"), t.get(1));
  EXPECT_EQ(t.get("nope"), nullptr);
  EXPECT_FALSE(t.contains("d1"));
  EXPECT_TRUE(t.contains("d2"));
}

TEST(NodeTable, RemovingTheOnlyNodesLeavesAnEmptyTable) {
  NodeTable t;
  const NodeId a = t.add(node("d1"), true);
  const NodeId b = t.add(node("d2"), true);
  t.remove(a);
  t.remove(b);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.dynamic_count(), 0u);
  EXPECT_EQ(t.id_end(), 0);
  EXPECT_TRUE(t.begin() == t.end());
  EXPECT_EQ(t.add(node("d3"), true), 0);
}

}  // namespace
