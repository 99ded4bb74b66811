// sacctmgr's rules beyond what the captured scenario shows (that one is replayed against real
// Slurm's output in src/cli/tests/sacctmgr_golden_test.cpp).
#include "core/acct_admin.hpp"

#include <gtest/gtest.h>

using namespace drover::core;
using Req = AcctRequest;

namespace {

AcctData apply(const AcctData& d, const Req& r, const std::vector<AcctJob>& active = {}) {
  AcctOutcome o = apply_acct_request(d, r, true, active, true);
  EXPECT_TRUE(o.changed) << o.out << o.err;
  return o.data;
}

Req req(Req::Action a, Req::Entity e, std::vector<std::string> names, std::string settings = "") {
  Req r;
  r.action = a;
  r.entity = e;
  r.names = std::move(names);
  r.settings = std::move(settings);
  return r;
}

AcctData site() {
  AcctData d = new_acct_data("lab");
  d = apply(d, req(Req::Action::Add, Req::Entity::Account, {"physics"}, "GrpTRES=cpu=8,mem=4G"));
  Req u = req(Req::Action::Add, Req::Entity::User, {"alice"});
  u.accounts = {"physics"};
  d = apply(d, u);
  d = apply(d, req(Req::Action::Add, Req::Entity::Qos, {"high"}));
  return d;
}

}  // namespace

TEST(AcctAdmin, ModifyChangesTresLimitsOneTresAtATime) {
  AcctData d = site();
  d = apply(d,
            req(Req::Action::Modify, Req::Entity::Account, {"physics"}, "GrpTRES=cpu=-1,node=2"));
  EXPECT_EQ(d.find_assoc("physics", "")->settings.limits.grp_tres,
            (TresCounts{{"mem", 4096}, {"node", 2}}));
}

TEST(AcctAdmin, QosListsAreSetAddedToAndTakenFrom) {
  AcctData d = site();
  Req r = req(Req::Action::Modify, Req::Entity::User, {"alice"});
  r.qos_op = '+';
  r.qos = {"high"};
  d = apply(d, r);
  const AcctAssoc& alice = *d.find_assoc("physics", "alice");
  EXPECT_EQ(alice.settings.qos, (std::vector<std::string>{"+high"}));
  EXPECT_EQ(shown_settings(d, alice).qos, (std::vector<std::string>{"high", "normal"}));
  r.qos_op = '=';
  r.qos = {"high"};
  d = apply(d, r);
  EXPECT_EQ(shown_settings(d, *d.find_assoc("physics", "alice")).qos,
            (std::vector<std::string>{"high"}));
  // Taking the last one out leaves no list: the parent's applies again, as after QOS=''.
  r.qos_op = '-';
  d = apply(d, r);
  EXPECT_FALSE(d.find_assoc("physics", "alice")->settings.qos_set);
  EXPECT_EQ(shown_settings(d, *d.find_assoc("physics", "alice")).qos,
            (std::vector<std::string>{"normal"}));
}

TEST(AcctAdmin, DeletingAQosTakesItOutOfListsAndDefaults) {
  AcctData d = site();
  Req r = req(Req::Action::Modify, Req::Entity::Account, {"physics"}, "DefaultQOS=high");
  r.qos_op = '=';
  r.qos = {"normal", "high"};
  d = apply(d, r);
  d = apply(d, req(Req::Action::Delete, Req::Entity::Qos, {"high"}));
  const AcctAssoc& physics = *d.find_assoc("physics", "");
  EXPECT_EQ(physics.settings.qos, (std::vector<std::string>{"normal"}));
  EXPECT_EQ(physics.settings.default_qos, "");
  EXPECT_EQ(d.find_qos("high"), nullptr);
}

TEST(AcctAdmin, AUserLosingItsDefaultAccountGetsAnotherOrNone) {
  AcctData d = site();
  d = apply(d, req(Req::Action::Add, Req::Entity::Account, {"chem"}));
  Req u = req(Req::Action::Add, Req::Entity::User, {"alice"});
  u.accounts = {"chem"};
  d = apply(d, u);
  EXPECT_EQ(d.find_user("alice")->default_account, "physics");
  d = apply(d, req(Req::Action::Delete, Req::Entity::Account, {"physics"}));
  EXPECT_EQ(d.find_user("alice")->default_account, "chem");
  d = apply(d, req(Req::Action::Delete, Req::Entity::Account, {"chem"}));
  EXPECT_EQ(d.find_user("alice")->default_account, "");
  EXPECT_NE(d.find_user("alice"), nullptr);
}

TEST(AcctAdmin, PendingJobsOfAUserAssociationBlockItsDeletion) {
  AcctData d = site();
  Req del = req(Req::Action::Delete, Req::Entity::User, {"alice"});
  AcctOutcome o = apply_acct_request(d, del, true, {{7, "physics", "alice", "debug"}}, true);
  EXPECT_EQ(o.rc, 1);
  EXPECT_FALSE(o.changed);
  EXPECT_EQ(o.err,
            " Error with request: Job(s) active, cancel job(s) before remove\n"
            "  JobID = 7          C = lab        A = physics    U = alice    \n");
  EXPECT_EQ(o.data, d);
  // Jobs of others in the account do not.
  o = apply_acct_request(d, del, true, {{7, "physics", "bob", "debug"}}, true);
  EXPECT_EQ(o.rc, 0);
  EXPECT_EQ(o.out, " Deleting users...\n  alice\n");
}

TEST(AcctAdmin, PreviewsChangeNothingAndRightsComeFirstForModify) {
  const AcctData d = site();
  AcctOutcome o = apply_acct_request(d, req(Req::Action::Add, Req::Entity::Account, {"chem"}),
                                     false, {}, false);
  EXPECT_TRUE(o.changed);
  EXPECT_EQ(o.rc, 0);
  o = apply_acct_request(d, req(Req::Action::Add, Req::Entity::Account, {"chem"}), false, {}, true);
  EXPECT_FALSE(o.changed);
  EXPECT_EQ(o.err, " Problem adding accounts: Access/permission denied\n");
  o = apply_acct_request(d, req(Req::Action::Delete, Req::Entity::Account, {"nosuch"}), false, {},
                         false);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("Access/permission denied"), std::string::npos);
  EXPECT_EQ(o.data, d);
}

TEST(AcctAdmin, BadValuesAreRefusedWithTheParsersWords) {
  const AcctData d = site();
  const AcctOutcome o = apply_acct_request(
      d, req(Req::Action::Modify, Req::Entity::Account, {"physics"}, "MaxJobs=lots"), true, {},
      false);
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.err, " MaxJobs=lots: not a whole number (or -1)\n");
  EXPECT_EQ(o.out, "");
}
