#include "sched/fairshare.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/error.hpp"

using namespace drover;
using sched::AssocId;
using sched::AssocTree;
using sched::RawShares;
using sched::ShareInfo;

namespace {

constexpr int64_t kDay = 86400;
constexpr double kInf = std::numeric_limits<double>::infinity();

RawShares shares(uint32_t n) { return RawShares{n, false}; }
const RawShares kParent{1, true};

sched::FairShareOptions fair_tree() { return {}; }
sched::FairShareOptions classic(uint32_t damping = 1) {
  sched::FairShareOptions o;
  o.fair_tree = false;
  o.dampening_factor = damping;
  return o;
}

AssocId user(const AssocTree& t, const char* u, const char* a) { return *t.find_user(u, a); }
AssocId account(const AssocTree& t, const char* a) { return *t.find_account(a); }

// ---- classic_fair_share.html's worked example ----
//
// root -> A (40) -> B (30) -> user1;  A -> C (10) -> user2, user3 (1 share each)
// root -> D (60) -> E (25) -> user4;  D -> F (35) -> user5
// Usage: user1 0.2 of the machine, user2 0.25, user4 0.25. The page normalises by the whole
// machine; Slurm normalises by the root's usage, so the remaining 0.3 is charged to a user
// under the root that holds no shares (which changes no one's normalised shares).
AssocTree classic_doc_tree() {
  AssocTree t;
  t.add_account("A", "root", shares(40));
  t.add_account("D", "root", shares(60));
  t.add_account("B", "A", shares(30));
  t.add_account("C", "A", shares(10));
  t.add_account("E", "D", shares(25));
  t.add_account("F", "D", shares(35));
  t.add_user("user1", "B");
  t.add_user("user2", "C");
  t.add_user("user3", "C");
  t.add_user("user4", "E");
  t.add_user("user5", "F");
  t.add_user("others", "root", shares(0));
  t.add_usage(user(t, "user1", "B"), 20);
  t.add_usage(user(t, "user2", "C"), 25);
  t.add_usage(user(t, "user4", "E"), 25);
  t.add_usage(user(t, "others", "root"), 30);
  return t;
}

TEST(ClassicFairShare, DocExample) {
  AssocTree t = classic_doc_tree();
  auto s = sched::compute_fairshare(t, classic());
  // Normalised shares.
  EXPECT_NEAR(s[user(t, "user1", "B")].norm_shares, 0.3, 1e-12);
  EXPECT_NEAR(s[user(t, "user2", "C")].norm_shares, 0.05, 1e-12);
  EXPECT_NEAR(s[user(t, "user3", "C")].norm_shares, 0.05, 1e-12);
  EXPECT_NEAR(s[user(t, "user4", "E")].norm_shares, 0.25, 1e-12);
  EXPECT_NEAR(s[user(t, "user5", "F")].norm_shares, 0.35, 1e-12);
  EXPECT_NEAR(s[account(t, "A")].norm_shares, 0.4, 1e-12);
  // Effective usage: accounts under the root keep their actual usage.
  EXPECT_NEAR(s[account(t, "A")].effective_usage, 0.45, 1e-12);
  EXPECT_NEAR(s[account(t, "D")].effective_usage, 0.25, 1e-12);
  EXPECT_NEAR(s[account(t, "B")].effective_usage, 0.3875, 1e-12);
  EXPECT_NEAR(s[account(t, "C")].effective_usage, 0.3, 1e-12);
  EXPECT_NEAR(s[account(t, "E")].effective_usage, 0.25, 1e-12);
  EXPECT_NEAR(s[account(t, "F")].effective_usage, 0.1458333, 1e-7);
  EXPECT_NEAR(s[user(t, "user1", "B")].effective_usage, 0.3875, 1e-12);
  EXPECT_NEAR(s[user(t, "user2", "C")].effective_usage, 0.275, 1e-12);
  EXPECT_NEAR(s[user(t, "user3", "C")].effective_usage, 0.15, 1e-12);
  EXPECT_NEAR(s[user(t, "user4", "E")].effective_usage, 0.25, 1e-12);
  EXPECT_NEAR(s[user(t, "user5", "F")].effective_usage, 0.1458333, 1e-7);
  // Fair-share factors, as the page prints them.
  const std::pair<const char*, double> expected[] = {{"user1", 0.408479},
                                                     {"user2", 0.022097},
                                                     {"user3", 0.125000},
                                                     {"user4", 0.500000},
                                                     {"user5", 0.749154}};
  const char* accts[] = {"B", "C", "C", "E", "F"};
  for (int i = 0; i < 5; ++i) {
    AssocId id = user(t, expected[i].first, accts[i]);
    EXPECT_NEAR(*s[id].fairshare, expected[i].second, 5e-7) << expected[i].first;
    EXPECT_DOUBLE_EQ(sched::job_fairshare_factor(t, s, id, classic()), *s[id].fairshare);
  }
  // The root: NormShares 1, EffectvUsage 1, so FairShare 0.5; no NormUsage.
  EXPECT_EQ(s[AssocTree::kRoot].norm_shares, 1.0);
  EXPECT_EQ(s[AssocTree::kRoot].effective_usage, 1.0);
  EXPECT_DOUBLE_EQ(*s[AssocTree::kRoot].fairshare, 0.5);
  EXPECT_FALSE(s[AssocTree::kRoot].norm_usage.has_value());
  EXPECT_FALSE(s[user(t, "user1", "B")].level_fs.has_value());  // Fair Tree only
}

TEST(ClassicFairShare, DampeningFactorSoftensOverUse) {
  AssocTree t = classic_doc_tree();
  auto s1 = sched::compute_fairshare(t, classic(1));
  auto s2 = sched::compute_fairshare(t, classic(2));
  AssocId u4 = user(t, "user4", "E");  // used exactly its share: 2^(-1/d)
  EXPECT_NEAR(*s1[u4].fairshare, 0.5, 1e-12);
  EXPECT_NEAR(*s2[u4].fairshare, std::sqrt(0.5), 1e-12);
  AssocId u2 = user(t, "user2", "C");  // 2^(-5.5 / 2)
  EXPECT_NEAR(*s2[u2].fairshare, std::pow(2.0, -2.75), 1e-12);
  // No shares: 0.
  EXPECT_EQ(*s1[user(t, "others", "root")].fairshare, 0.0);
}

// ---- Fair Tree ----
//
// root -> acctA (40): alice (usage 10), bob (30), acctA1 (1) -> carol (0)
// root -> acctB (60): dave (3 shares, usage 20), alice (0)     [alice is in two accounts]
// root -> acctC (0 shares): erin (0)
AssocTree fair_tree_sample(bool reversed = false) {
  AssocTree t;
  auto accounts = [&] {
    t.add_account("acctA", "root", shares(40));
    t.add_account("acctB", "root", shares(60));
    t.add_account("acctC", "root", shares(0));
    t.add_account("acctA1", "acctA", shares(1));
  };
  auto users = [&] {
    t.add_user("alice", "acctA");
    t.add_user("bob", "acctA");
    t.add_user("carol", "acctA1");
    t.add_user("dave", "acctB", shares(3));
    t.add_user("alice", "acctB");
    t.add_user("erin", "acctC");
  };
  if (!reversed) {
    accounts();
    users();
  } else {
    // Same tree, created in another order.
    t.add_account("acctC", "root", shares(0));
    t.add_user("erin", "acctC");
    t.add_account("acctB", "root", shares(60));
    t.add_user("alice", "acctB");
    t.add_user("dave", "acctB", shares(3));
    t.add_account("acctA", "root", shares(40));
    t.add_account("acctA1", "acctA", shares(1));
    t.add_user("carol", "acctA1");
    t.add_user("bob", "acctA");
    t.add_user("alice", "acctA");
  }
  t.add_usage(user(t, "bob", "acctA"), 30);
  t.add_usage(user(t, "dave", "acctB"), 20);
  t.add_usage(user(t, "alice", "acctA"), 10);
  return t;
}

TEST(FairTree, HandComputedTree) {
  AssocTree t = fair_tree_sample();
  ASSERT_EQ(t.user_count(), 6u);
  auto s = sched::compute_fairshare(t, fair_tree());
  // Level FS = S / U among siblings: acctB 0.6/(20/60) = 1.8 > acctA 0.4/(40/60) = 0.6 >
  // acctC (no shares) 0.
  EXPECT_NEAR(*s[account(t, "acctA")].level_fs, 0.6, 1e-12);
  EXPECT_NEAR(*s[account(t, "acctB")].level_fs, 1.8, 1e-12);
  EXPECT_EQ(*s[account(t, "acctC")].level_fs, 0.0);
  EXPECT_NEAR(s[account(t, "acctA")].norm_shares, 0.4, 1e-12);
  EXPECT_NEAR(s[account(t, "acctA")].effective_usage, 40.0 / 60, 1e-12);
  // In acctB: alice has no usage (+inf), dave 0.75 / 1.
  EXPECT_EQ(*s[user(t, "alice", "acctB")].level_fs, kInf);
  EXPECT_NEAR(*s[user(t, "dave", "acctB")].level_fs, 0.75, 1e-12);
  // In acctA: acctA1 unused (+inf), alice (1/3)/(10/40), bob (1/3)/(30/40).
  EXPECT_EQ(*s[account(t, "acctA1")].level_fs, kInf);
  EXPECT_NEAR(*s[user(t, "alice", "acctA")].level_fs, 4.0 / 3, 1e-12);
  EXPECT_NEAR(*s[user(t, "bob", "acctA")].level_fs, 4.0 / 9, 1e-12);
  // carol's account has no usage: her U is 0 and her Level FS +inf.
  EXPECT_EQ(s[user(t, "carol", "acctA1")].effective_usage, 0.0);
  EXPECT_EQ(*s[user(t, "carol", "acctA1")].level_fs, kInf);
  // Depth-first by Level FS: acctB (alice, dave), acctA (acctA1 (carol), alice, bob), acctC.
  EXPECT_DOUBLE_EQ(*s[user(t, "alice", "acctB")].fairshare, 6.0 / 6);
  EXPECT_DOUBLE_EQ(*s[user(t, "dave", "acctB")].fairshare, 5.0 / 6);
  EXPECT_DOUBLE_EQ(*s[user(t, "carol", "acctA1")].fairshare, 4.0 / 6);
  EXPECT_DOUBLE_EQ(*s[user(t, "alice", "acctA")].fairshare, 3.0 / 6);
  EXPECT_DOUBLE_EQ(*s[user(t, "bob", "acctA")].fairshare, 2.0 / 6);
  EXPECT_DOUBLE_EQ(*s[user(t, "erin", "acctC")].fairshare, 1.0 / 6);
  // Accounts and the root get no fair-share factor; the root no Level FS either.
  EXPECT_FALSE(s[account(t, "acctA")].fairshare.has_value());
  EXPECT_FALSE(s[AssocTree::kRoot].level_fs.has_value());
  EXPECT_EQ(s[AssocTree::kRoot].norm_shares, 0.0);
  EXPECT_EQ(s[AssocTree::kRoot].effective_usage, 1.0);
  EXPECT_DOUBLE_EQ(sched::job_fairshare_factor(t, s, user(t, "dave", "acctB"), fair_tree()),
                   5.0 / 6);
}

TEST(FairTree, SameTreeBuiltInAnotherOrderGivesTheSameFactors) {
  AssocTree a = fair_tree_sample(false), b = fair_tree_sample(true);
  auto sa = sched::compute_fairshare(a, fair_tree());
  auto sb = sched::compute_fairshare(b, fair_tree());
  for (AssocId id = 0; id < a.size(); ++id) {
    const auto& x = a.at(id);
    if (!x.is_user()) continue;
    AssocId other = *b.find_user(x.user, x.account);
    EXPECT_EQ(sa[id].fairshare, sb[other].fairshare) << x.user << "@" << x.account;
    EXPECT_EQ(sa[id].level_fs, sb[other].level_fs) << x.user << "@" << x.account;
  }
}

// fair_tree.html: root => Acct1 => Acct12 => UserA, root => Acct1 => Acct16 => UserB. UserB ranks
// higher exactly when Acct16's Level FS is higher than Acct12's.
TEST(FairTree, DocFirstCommonAncestorExample) {
  for (int b_usage : {50, 150}) {
    AssocTree t;
    t.add_account("Acct1");
    t.add_account("Acct12", "Acct1");
    t.add_account("Acct16", "Acct1");
    AssocId a = t.add_user("UserA", "Acct12");
    AssocId b = t.add_user("UserB", "Acct16");
    t.add_usage(a, 100);
    t.add_usage(b, b_usage);
    auto s = sched::compute_fairshare(t, fair_tree());
    double lf12 = *s[account(t, "Acct12")].level_fs, lf16 = *s[account(t, "Acct16")].level_fs;
    EXPECT_EQ(*s[b].fairshare > *s[a].fairshare, lf16 > lf12) << b_usage;
    if (b_usage == 50) {
      EXPECT_NEAR(lf12, 0.5 / (100.0 / 150), 1e-12);
      EXPECT_NEAR(lf16, 0.5 / (50.0 / 150), 1e-12);
      EXPECT_EQ(*s[b].fairshare, 1.0);
      EXPECT_EQ(*s[a].fairshare, 0.5);
    }
  }
}

// Sibling accounts with equal Level FS have their children merged before ranking, so their
// users interleave by their own Level FS.
//   root -> x (1): u1 (usage 30), u2 (10);  y (1): u3 (20), u4 (20);  z (2): u5 (20)
TEST(FairTree, TiedAccountsMergeTheirChildren) {
  AssocTree t;
  t.add_account("x");
  t.add_account("y");
  t.add_account("z", "root", shares(2));
  t.add_usage(t.add_user("u1", "x"), 30);
  t.add_usage(t.add_user("u2", "x"), 10);
  t.add_usage(t.add_user("u3", "y"), 20);
  t.add_usage(t.add_user("u4", "y"), 20);
  t.add_usage(t.add_user("u5", "z"), 20);
  auto s = sched::compute_fairshare(t, fair_tree());
  EXPECT_EQ(*s[account(t, "x")].level_fs, *s[account(t, "y")].level_fs);  // 0.25 / 0.4
  EXPECT_NEAR(*s[account(t, "z")].level_fs, 2.5, 1e-12);
  // z first (u5), then x and y together: u2 (2.0), u3 = u4 (1.0, tied), u1 (2/3).
  EXPECT_DOUBLE_EQ(*s[user(t, "u5", "z")].fairshare, 5.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "u2", "x")].fairshare, 4.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "u3", "y")].fairshare, 3.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "u4", "y")].fairshare, 3.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "u1", "x")].fairshare, 1.0 / 5);
}

// A user with the same Level FS as a sibling account gets the same rank as that account's
// highest ranked user; ranks then go on as if no tie had happened.
//   root -> s (1): w (no usage);  q (1): v1 (usage 20), r (1) -> v2 (5), v3 (5), v4 (10)
TEST(FairTree, UserTiedWithSiblingAccount) {
  AssocTree t;
  t.add_account("s");
  t.add_account("q");
  t.add_account("r", "q");
  t.add_user("w", "s");
  t.add_usage(t.add_user("v1", "q"), 20);
  t.add_usage(t.add_user("v2", "r"), 5);
  t.add_usage(t.add_user("v3", "r"), 5);
  t.add_usage(t.add_user("v4", "r"), 10);
  auto s = sched::compute_fairshare(t, fair_tree());
  EXPECT_EQ(*s[user(t, "v1", "q")].level_fs, *s[account(t, "r")].level_fs);
  EXPECT_DOUBLE_EQ(*s[user(t, "w", "s")].fairshare, 5.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "v1", "q")].fairshare, 4.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "v2", "r")].fairshare, 4.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "v3", "r")].fairshare, 4.0 / 5);
  EXPECT_DOUBLE_EQ(*s[user(t, "v4", "r")].fairshare, 1.0 / 5);
}

TEST(FairTree, NoUsageAnywhere) {
  AssocTree t;
  t.add_account("a");
  t.add_account("b", "root", shares(0));
  t.add_user("a1", "a");
  t.add_user("a2", "a");
  t.add_user("b1", "b");
  auto s = sched::compute_fairshare(t, fair_tree());
  // Everything with shares is +inf and tied; the account without shares comes last.
  EXPECT_EQ(*s[account(t, "a")].level_fs, kInf);
  EXPECT_EQ(*s[account(t, "b")].level_fs, 0.0);
  EXPECT_EQ(*s[user(t, "a1", "a")].fairshare, 1.0);
  EXPECT_EQ(*s[user(t, "a2", "a")].fairshare, 1.0);
  EXPECT_DOUBLE_EQ(*s[user(t, "b1", "b")].fairshare, 1.0 / 3);
  for (AssocId id = 1; id < t.size(); ++id) {
    EXPECT_EQ(s[id].effective_usage, 0.0);
    EXPECT_EQ(*s[id].norm_usage, 0.0);
  }
}

// FairShare=parent: the account's children compete where it would, the account itself ranks
// nobody; the parent-user ranks first in its account.
//   root -> m (1): n (parent) -> n1 (usage 30), n2 (10);  m1 (2 shares, no usage)
AssocTree parent_tree() {
  AssocTree t;
  t.add_account("m");
  t.add_account("n", "m", kParent);
  t.add_usage(t.add_user("n1", "n"), 30);
  t.add_usage(t.add_user("n2", "n"), 10);
  t.add_user("m1", "m", shares(2));
  return t;
}

TEST(FairTree, FairShareParentAccount) {
  AssocTree t = parent_tree();
  auto s = sched::compute_fairshare(t, fair_tree());
  AssocId n = account(t, "n"), n1 = user(t, "n1", "n"), n2 = user(t, "n2", "n"),
          m1 = user(t, "m1", "m");
  // n1, n2 and m1 share m's level: 1 + 1 + 2 shares.
  EXPECT_NEAR(s[n1].norm_shares, 0.25, 1e-12);
  EXPECT_NEAR(s[m1].norm_shares, 0.5, 1e-12);
  EXPECT_NEAR(s[n1].effective_usage, 0.75, 1e-12);  // of m's usage
  EXPECT_NEAR(*s[n1].level_fs, 1.0 / 3, 1e-12);
  EXPECT_NEAR(*s[n2].level_fs, 1.0, 1e-12);
  EXPECT_EQ(*s[m1].level_fs, kInf);
  EXPECT_FALSE(s[n].level_fs.has_value());
  EXPECT_NEAR(s[n].norm_shares, 1.0, 1e-12);  // m's
  EXPECT_DOUBLE_EQ(*s[m1].fairshare, 3.0 / 3);
  EXPECT_DOUBLE_EQ(*s[n2].fairshare, 2.0 / 3);
  EXPECT_DOUBLE_EQ(*s[n1].fairshare, 1.0 / 3);
}

TEST(FairTree, FairShareParentUserRanksFirstInItsAccount) {
  AssocTree t;
  t.add_account("k");
  AssocId p1 = t.add_user("p1", "k", kParent);
  AssocId p2 = t.add_user("p2", "k");
  t.add_usage(p1, 10);
  t.add_usage(p2, 10);
  auto s = sched::compute_fairshare(t, fair_tree());
  EXPECT_EQ(*s[p1].fairshare, 1.0);
  EXPECT_EQ(*s[p2].fairshare, 0.5);
  EXPECT_NEAR(*s[p2].level_fs, 2.0, 1e-12);  // alone in the level's shares: 1 / 0.5
  EXPECT_FALSE(s[p1].level_fs.has_value());
  EXPECT_NEAR(s[p1].norm_shares, 1.0, 1e-12);  // k's
}

TEST(ClassicFairShare, FairShareParent) {
  AssocTree t = parent_tree();
  auto s = sched::compute_fairshare(t, classic());
  AssocId n = account(t, "n"), n1 = user(t, "n1", "n"), n2 = user(t, "n2", "n"),
          m1 = user(t, "m1", "m");
  EXPECT_NEAR(s[n1].norm_shares, 0.25, 1e-12);
  EXPECT_NEAR(s[m1].norm_shares, 0.5, 1e-12);
  EXPECT_NEAR(s[n].norm_shares, 1.0, 1e-12);
  EXPECT_NEAR(s[n].effective_usage, 1.0, 1e-12);  // m's
  EXPECT_NEAR(s[n1].effective_usage, 0.75 + 0.25 * 0.25, 1e-12);
  EXPECT_NEAR(s[n2].effective_usage, 0.25 + 0.75 * 0.25, 1e-12);
  EXPECT_NEAR(s[m1].effective_usage, 0.5, 1e-12);
  EXPECT_NEAR(*s[n1].fairshare, std::pow(2.0, -3.25), 1e-12);
  EXPECT_NEAR(*s[n2].fairshare, std::pow(2.0, -1.75), 1e-12);
  EXPECT_NEAR(*s[m1].fairshare, 0.5, 1e-12);

  // A FairShare=parent user's jobs use its account's values.
  AssocTree u;
  u.add_account("k");
  u.add_account("other");
  AssocId p = u.add_user("p", "k", kParent);
  u.add_usage(p, 30);
  u.add_usage(u.add_user("o", "other"), 10);
  auto su = sched::compute_fairshare(u, classic());
  AssocId k = account(u, "k");
  EXPECT_NEAR(su[k].effective_usage, 0.75, 1e-12);
  EXPECT_NEAR(sched::job_fairshare_factor(u, su, p, classic()), std::pow(2.0, -0.75 / 0.5), 1e-12);
}

TEST(ClassicFairShare, DepthOblivious) {
  // root -> A (1): a1 (usage 60), a2 (usage 0);  B (1): b1 (usage 40)
  AssocTree t;
  t.add_account("A");
  t.add_account("B");
  AssocId a1 = t.add_user("a1", "A"), a2 = t.add_user("a2", "A");
  AssocId b1 = t.add_user("b1", "B");
  t.add_usage(a1, 60);
  t.add_usage(b1, 40);
  sched::FairShareOptions o = classic();
  o.depth_oblivious = true;
  auto s = sched::compute_fairshare(t, o);
  // Accounts under the root: normalised usage. a1: ratio_p = 0.6 / 0.5 = 1.2,
  // ratio_s = 0.6 / 0.5 = 1.2, ratio_l = (0.6 / 0.25) / 1.2 = 2; both over 1, so k = 1 and
  // U_E = 1.2 * 2 * 0.25 = 0.6. b1 alone in B: ratio_l = 1, U_E = 0.8 * 1 * 0.5 = 0.4.
  EXPECT_NEAR(s[account(t, "A")].effective_usage, 0.6, 1e-12);
  EXPECT_NEAR(s[a1].effective_usage, 0.6, 1e-12);
  EXPECT_NEAR(s[b1].effective_usage, 0.4, 1e-12);
  EXPECT_NEAR(s[a2].effective_usage, 0.0, 1e-12);  // no usage: its own (0)
  EXPECT_NEAR(*s[a1].fairshare, std::pow(2.0, -2.4), 1e-12);
  // b1 is all of B's usage (ratio_l = 1, log 0), so k = 1 and R is B's ratio 0.8.
  EXPECT_NEAR(*s[b1].fairshare, std::pow(2.0, -0.8), 1e-12);

  // Opposite directions pull R toward 1: under-served parent, over-served child.
  AssocTree d;
  d.add_account("P", "root", shares(3));
  d.add_account("Q");
  AssocId p1 = d.add_user("p1", "P"), p2 = d.add_user("p2", "P");
  d.add_usage(p1, 40);
  d.add_usage(p2, 10);
  d.add_usage(d.add_user("q1", "Q"), 50);
  auto sd = sched::compute_fairshare(d, o);
  // P: U 0.5, S 0.75 -> ratio_p = 2/3. p1: S 0.375, U_norm 0.4, ratio_s = 0.5 / 0.75 = 2/3,
  // ratio_l = (0.4 / 0.375) / (2/3) = 1.6. k = 1 / (1 + (5 ln(2/3))^2).
  double ratio_p = 2.0 / 3, ratio_l = 1.6;
  double k = 1 / (1 + std::pow(5 * std::log(ratio_p), 2));
  EXPECT_NEAR(sd[p1].effective_usage, ratio_p * std::pow(ratio_l, k) * 0.375, 1e-12);
}

// ---- usage and decay ----

TEST(Usage, AddsUpTheTree) {
  AssocTree t = fair_tree_sample();
  EXPECT_EQ(t.at(AssocTree::kRoot).raw_usage, 60);
  EXPECT_EQ(t.at(account(t, "acctA")).raw_usage, 40);
  t.add_usage(user(t, "carol", "acctA1"), 5);
  EXPECT_EQ(t.at(account(t, "acctA1")).raw_usage, 5);
  EXPECT_EQ(t.at(account(t, "acctA")).raw_usage, 45);
  EXPECT_EQ(t.at(AssocTree::kRoot).raw_usage, 65);
  t.reset_usage();
  for (AssocId id = 0; id < t.size(); ++id) EXPECT_EQ(t.at(id).raw_usage, 0);
}

TEST(Usage, DecayHalvesEveryHalfLife) {
  AssocTree t(0);
  t.add_account("a");
  AssocId u = t.add_user("u", "a");
  t.add_usage(u, 1000);
  t.decay_to(7 * kDay, 7 * kDay);
  EXPECT_DOUBLE_EQ(t.at(u).raw_usage, 500);
  EXPECT_DOUBLE_EQ(t.at(AssocTree::kRoot).raw_usage, 500);
  t.decay_to(14 * kDay, 7 * kDay);
  EXPECT_DOUBLE_EQ(t.at(u).raw_usage, 250);
  EXPECT_EQ(t.usage_time(), 14 * kDay);
  // Time going backwards changes nothing.
  t.decay_to(10 * kDay, 7 * kDay);
  EXPECT_DOUBLE_EQ(t.at(u).raw_usage, 250);
  EXPECT_EQ(t.usage_time(), 14 * kDay);
  // Half life 0: no decay, the clock still moves.
  t.decay_to(100 * kDay, 0);
  EXPECT_DOUBLE_EQ(t.at(u).raw_usage, 250);
  EXPECT_EQ(t.usage_time(), 100 * kDay);
  // Many small steps land where one big step does.
  AssocTree a(0), b(0);
  a.add_usage(AssocTree::kRoot, 1e6);
  b.add_usage(AssocTree::kRoot, 1e6);
  for (int64_t now = 300; now <= 3 * kDay; now += 300) a.decay_to(now, kDay);
  b.decay_to(3 * kDay, kDay);
  EXPECT_NEAR(a.at(AssocTree::kRoot).raw_usage, 125000, 1e-6);
  EXPECT_NEAR(b.at(AssocTree::kRoot).raw_usage, 125000, 1e-6);
}

TEST(Usage, DecayFactorAgreesWithSlurmsPerSecondFactor) {
  EXPECT_EQ(sched::decay_factor(0, kDay), 1.0);
  EXPECT_EQ(sched::decay_factor(kDay, 0), 1.0);
  EXPECT_DOUBLE_EQ(sched::decay_factor(kDay / 2, kDay), std::sqrt(0.5));
  // Slurm: (1 - 0.693 / half_life) per second.
  const int64_t hl = 7 * kDay;
  double slurm = std::pow(1 - 0.693 / hl, static_cast<double>(hl));
  EXPECT_NEAR(sched::decay_factor(hl, hl), slurm, 1e-4);
}

TEST(Usage, RunningJobIntegratesDecayedUsage) {
  const int64_t hl = 3600;
  AssocTree t(hl);  // usage valued at t = 3600
  AssocId u = t.add_user("u", "root");
  // Rate 2 over [0, 3600): 2 * (3600 / ln 2) * (1 - 1/2).
  t.add_running_usage(u, 0, hl, 2.0, hl);
  EXPECT_NEAR(t.at(u).raw_usage, hl / std::log(2.0), 1e-9);
  EXPECT_LT(t.at(u).raw_usage, 2.0 * hl);  // decayed: less than the undecayed 7200

  // Charging each calculation period and decaying in between gives the same total.
  AssocTree pieces(0);
  AssocId v = pieces.add_user("v", "root");
  for (int64_t now = 300; now <= hl; now += 300) {
    pieces.decay_to(now, hl);
    pieces.add_running_usage(v, now - 300, now, 2.0, hl);
  }
  EXPECT_NEAR(pieces.at(v).raw_usage, t.at(u).raw_usage, 1e-9);

  // Without decay: rate * seconds.
  AssocTree flat(1000);
  AssocId w = flat.add_user("w", "root");
  flat.add_running_usage(w, 400, 1000, 3.0, 0);
  EXPECT_DOUBLE_EQ(flat.at(w).raw_usage, 1800);

  // Slurm's per-period charge (period usage decayed by the whole period) is within 0.1%.
  AssocTree one(300);
  AssocId x = one.add_user("x", "root");
  one.add_running_usage(x, 0, 300, 1.0, 7 * kDay);
  double slurm = 300 * std::pow(1 - 0.693 / (7 * kDay), 300.0);
  EXPECT_NEAR(one.at(x).raw_usage / slurm, 1.0, 1e-3);

  EXPECT_THROW(t.add_running_usage(u, 0, hl + 1, 1.0, hl), std::invalid_argument);
  EXPECT_THROW(t.add_running_usage(u, 10, 5, 1.0, hl), std::invalid_argument);
}

TEST(AssocTreeTest, NamesAndErrors) {
  AssocTree t;
  EXPECT_EQ(t.at(AssocTree::kRoot).account, "root");
  t.add_account("a");
  EXPECT_THROW(t.add_account("a"), std::invalid_argument);
  EXPECT_THROW(t.add_account("b", "nope"), std::invalid_argument);
  AssocId u1 = t.add_user("u", "a");
  AssocId u2 = t.add_user("u", "root");  // the same user in a second account
  EXPECT_NE(u1, u2);
  EXPECT_THROW(t.add_user("u", "a"), std::invalid_argument);
  EXPECT_THROW(t.add_user("v", "nope"), std::invalid_argument);
  EXPECT_EQ(t.user_count(), 2u);
  EXPECT_FALSE(t.find_user("u", "b").has_value());
  EXPECT_FALSE(t.find_account("u").has_value());

  EXPECT_EQ(sched::parse_raw_shares("parent"), kParent);
  EXPECT_EQ(sched::parse_raw_shares("Parent"), kParent);
  EXPECT_EQ(sched::parse_raw_shares("40"), shares(40));
  EXPECT_EQ(sched::parse_raw_shares("0"), shares(0));
  EXPECT_EQ(sched::parse_raw_shares("2147483646"), shares(2147483646));
  for (const char* bad : {"", "-1", "2147483647", "ten", "1.5"})
    EXPECT_THROW(sched::parse_raw_shares(bad), core::ParseError) << bad;
}

// ---- TRES billing (priority_multifactor.html's examples) ----

TEST(Billing, DocExamples) {
  // TRESBillingWeights=CPU=1.0,Mem=0.25G on 16-CPU, 64 GB nodes; memory counts in MB.
  auto weights = sched::parse_tres_weights("CPU=1.0,Mem=0.25G", "TRESBillingWeights");
  auto job = [](double cpus, double mem_gb) {
    return std::map<std::string, double>{{"cpu", cpus}, {"mem", mem_gb * 1024}};
  };
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(1, 60), weights, false), 16);
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(16, 1), weights, false), 16.25);
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(16, 60), weights, false), 31);
  // MAX_TRES: the largest node TRES plus the global ones. (The page's second table has typos:
  // it gives job 2 15 CPUs and job 3 64 GB.)
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(1, 60), weights, true), 15);
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(16, 1), weights, true), 16);
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(16, 64), weights, true), 16);
  auto with_license = job(1, 60);
  with_license["license/matlab"] = 2;
  weights["license/matlab"] = 3;
  EXPECT_DOUBLE_EQ(sched::billable_tres(with_license, weights, true), 15 + 6);
  EXPECT_DOUBLE_EQ(sched::billable_tres(with_license, weights, false), 16 + 6);
  // No weights: the CPU count.
  EXPECT_DOUBLE_EQ(sched::billable_tres(job(12, 60), {}, false), 12);
}

// ---- sshare ----

//   root -> science (2): alice (usage 3000.7), bob (FairShare=parent);  eng (1): carol (1000)
AssocTree sshare_tree() {
  AssocTree t;
  t.add_account("science", "root", shares(2));
  t.add_account("eng");
  t.add_usage(t.add_user("alice", "science"), 3000.7);
  t.add_user("bob", "science", kParent);
  t.add_usage(t.add_user("carol", "eng"), 1000);
  return t;
}

TEST(Sshare, FairTreeDefault) {
  AssocTree t = sshare_tree();
  auto rows = sched::sshare_rows(t, sched::compute_fairshare(t, fair_tree()));
  EXPECT_EQ(sched::format_sshare(rows),
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
            "FairShare \n"
            "-------------------- ---------- ---------- ----------- ----------- ------------- "
            "---------- \n"
            "root                                          0.000000        4000      1.000000     "
            "       \n"
            " eng                                     1    0.333333        1000      0.249956     "
            "       \n"
            "  eng                     carol          1    1.000000        1000      1.000000   "
            "1.000000 \n"
            " science                                 2    0.666667        3000      0.750044     "
            "       \n"
            "  science                 alice          1    1.000000        3000      1.000000   "
            "0.333333 \n"
            "  science                   bob     parent    0.666667           0      0.000000   "
            "0.666667 \n");
}

TEST(Sshare, FairTreeLong) {
  AssocTree t = sshare_tree();
  auto rows = sched::sshare_rows(t, sched::compute_fairshare(t, fair_tree()));
  rows[0].tres_run_mins = "cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0";
  sched::SshareOptions o;
  o.long_format = true;
  std::string out = sched::format_sshare(rows, o);
  const std::string lines[] = {
      "Account                    User  RawShares  NormShares    RawUsage   NormUsage  "
      "EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    "
      "TRESRunMins ",
      "-------------------- ---------- ---------- ----------- ----------- ----------- "
      "------------- ---------- ---------- ------------------------------ "
      "------------------------------ ",
      "root                                          0.000000        4000                  "
      "1.000000                                                      "
      "cpu=0,mem=0,energy=0,node=0,b+ ",
      " eng                                     1    0.333333        1000    0.249956      "
      "0.249956              1.333567                                                              "
      " ",
      "  eng                     carol          1    1.000000        1000    0.249956      "
      "1.000000   1.000000   1.000000                                                              "
      " ",
      " science                                 2    0.666667        3000    0.750044      "
      "0.750044              0.888837                                                              "
      " ",
      "  science                 alice          1    1.000000        3000    0.750044      "
      "1.000000   0.333333   1.000000                                                              "
      " ",
      "  science                   bob     parent    0.666667           0    0.000000      "
      "0.000000   0.666667                                                                         "
      " ",
  };
  std::string expected;
  for (const auto& l : lines) expected += l + "\n";
  EXPECT_EQ(out, expected);
}

TEST(Sshare, Parsable) {
  AssocTree t = sshare_tree();
  auto rows = sched::sshare_rows(t, sched::compute_fairshare(t, fair_tree()));
  sched::SshareOptions o;
  o.parsable2 = true;
  std::string out = sched::format_sshare(rows, o);
  EXPECT_EQ(out.substr(0, out.find('\n', out.find('\n') + 1) + 1),
            "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n"
            "root|||0.000000|4000|1.000000|\n");
  EXPECT_NE(out.find("\n  science|bob|parent|0.666667|0|0.000000|0.666667\n"), std::string::npos)
      << out;
  o.parsable2 = false;
  o.parsable = true;
  o.no_header = true;
  out = sched::format_sshare(rows, o);
  EXPECT_EQ(out.substr(0, out.find('\n') + 1), "root|||0.000000|4000|1.000000||\n");
}

TEST(Sshare, ClassicColumns) {
  AssocTree t = sshare_tree();
  auto rows = sched::sshare_rows(t, sched::compute_fairshare(t, classic()));
  sched::SshareOptions o;
  o.fair_tree = false;
  o.long_format = true;
  std::string out = sched::format_sshare(rows, o);
  EXPECT_EQ(out.find("LevelFS"), std::string::npos);
  // The root: NormShares 1, EffectvUsage 1, FairShare 2^-1; accounts have a FairShare too.
  EXPECT_NE(
      out.find("\nroot                                          1.000000        4000          "
               "        1.000000   0.500000 "),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("\n eng                                     1    0.333333        1000    "
                     "0.249956      0.249956   0.594658 "),
            std::string::npos)
      << out;
}

TEST(Sshare, WideAndInfiniteDoubles) {
  sched::SshareRow r;
  r.account = "a";
  r.user = "u";
  r.raw_shares = shares(1);
  r.norm_shares = 1;
  r.effective_usage = 0;
  r.fairshare = 1;
  r.level_fs = 12345678.9;  // %f is too wide for 10: %e with the digits that fit
  sched::SshareOptions o;
  o.long_format = true;
  std::string out = sched::format_sshare({r}, o);
  EXPECT_NE(out.find("   1.000000 1.2346e+07 "), std::string::npos) << out;
  r.level_fs = kInf;
  out = sched::format_sshare({r}, o);
  EXPECT_NE(out.find("   1.000000        inf "), std::string::npos) << out;
  r.account = "an-account-name-longer-than-twenty";
  out = sched::format_sshare({r}, o);
  EXPECT_NE(out.find("\nan-account-name-lon+          u "), std::string::npos) << out;
}

}  // namespace
