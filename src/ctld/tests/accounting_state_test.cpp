// The controller's accounting state: generations of the entities, the tree, the counters.
#include "ctld/accounting_state.hpp"

#include <gtest/gtest.h>

using namespace drover;
using namespace drover::ctld;

namespace {

TEST(AccountingState, OnlyInstalledChangesMakeANewGeneration) {
  AccountingState a;
  EXPECT_FALSE(a.data().has_value());
  a.load(core::new_acct_data("c1"));  // slurm.conf's accounting file at start
  ASSERT_TRUE(a.data().has_value());
  EXPECT_EQ(a.generation(), 0u);
  core::AcctData next = core::new_acct_data("c2");
  a.install(std::move(next));
  EXPECT_EQ(a.generation(), 1u);
  EXPECT_EQ(a.data()->cluster, "c2");
}

TEST(AccountingState, TheTreeIsReplacedWhole) {
  AccountingState a;
  const size_t root_only = a.tree().size();
  a.tree().add_user("alice", "root");
  EXPECT_EQ(a.tree().size(), root_only + 1);
  a.set_tree(sched::AssocTree(50));
  EXPECT_EQ(a.tree().size(), root_only);
  EXPECT_EQ(a.tree().usage_time(), 50);
}

TEST(AccountingState, SubmitCountersAreRecountedOnceForgotten) {
  AccountingState a;
  EXPECT_EQ(a.submit_usage(), nullptr);
  const sched::Limits limits(core::acct_dump_of(core::new_acct_data("c1")), sched::Enforce{});
  a.set_submit_usage(limits.empty_usage());
  EXPECT_NE(a.submit_usage(), nullptr);
  a.forget_submit_usage();
  EXPECT_EQ(a.submit_usage(), nullptr);
}

}  // namespace
