// sacctmgr's changes in the controller: who may make them, previews and commits, and the engine
// working with the new accounts, users and limits at once (the server's part, storing before
// installing, is played here by installing what acct_change hands over).
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"
#include "proto/acct_json.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;
using Req = core::AcctRequest;

namespace {

Req add_account(const std::string& name, const std::string& settings = "") {
  Req r;
  r.action = Req::Action::Add;
  r.entity = Req::Entity::Account;
  r.names = {name};
  r.settings = settings;
  return r;
}

Req add_user(const std::string& name, const std::string& account) {
  Req r;
  r.action = Req::Action::Add;
  r.entity = Req::Entity::User;
  r.names = {name};
  r.accounts = {account};
  return r;
}

Req modify_user(const std::string& name, const std::string& settings) {
  Req r;
  r.action = Req::Action::Modify;
  r.entity = Req::Entity::User;
  r.names = {name};
  r.settings = settings;
  return r;
}

// sacctmgr -i: a preview, then the commit; what the server does with a committed change.
json sacctmgr(Harness& h, const Caller& who, const Req& r, Effects& fx) {
  std::optional<core::AcctData> to_store;
  json preview = h.sm.acct_change(
      proto::AcctChangeRequest::from_json({{"request", r}, {"commit", false}}), who, to_store);
  EXPECT_FALSE(to_store.has_value());
  if (!preview.value("changed", false)) return preview;
  json done = h.sm.acct_change(
      proto::AcctChangeRequest::from_json(
          {{"request", r}, {"commit", true}, {"generation", preview["generation"]}}),
      who, to_store);
  if (to_store) h.sm.install_accounting(std::move(*to_store), fx);
  done["out"] = preview["out"].get<std::string>() + done["out"].get<std::string>();
  return done;
}

Config enforcing_config() {
  Config c = two_node_config();
  c.enforce = sched::parse_enforce("associations,limits,qos");
  return c;
}

}  // namespace

TEST(AcctAdmin, WithoutDataTheNewClustersEntitiesAreShown) {
  Harness h;
  const json r = h.sm.acct_show();
  const auto d = r["data"].get<core::AcctData>();
  EXPECT_EQ(d.cluster, "test");
  EXPECT_NE(d.find_assoc("root", "root"), nullptr);
  EXPECT_FALSE(h.sm.acct_data().has_value());
}

TEST(AcctAdmin, OnlyOperatorsAndAdminLevelsMayChangeAnyoneMayLook) {
  Harness h;
  Effects fx;
  // An ordinary user sees what would be added, and is refused at commit, as by slurmdbd.
  json r = sacctmgr(h, h.alice, add_account("physics"), fx);
  EXPECT_EQ(r["rc"], 1);
  EXPECT_EQ(r["err"], " Problem adding accounts: Access/permission denied\n");
  EXPECT_NE(r["out"].get<std::string>().find(" Adding Account(s)\n  physics\n"), std::string::npos);
  EXPECT_FALSE(h.sm.acct_data().has_value());
  // Modify and delete are refused before anything.
  r = sacctmgr(h, h.alice, modify_user("root", "MaxJobs=1"), fx);
  EXPECT_EQ(r["err"],
            "sacctmgr: error: Your user doesn't have privilege to perform this action\n"
            " Error with request: Access/permission denied\n");
  EXPECT_EQ(r["out"], "");
  // root may; so may a user root made an Operator.
  r = sacctmgr(h, h.root, add_account("physics"), fx);
  EXPECT_EQ(r["rc"], 0) << r.dump();
  ASSERT_TRUE(h.sm.acct_data().has_value());
  Req op = add_user("alice", "physics");
  op.fields = {{"AdminLevel", "Operator"}};
  EXPECT_EQ(sacctmgr(h, h.root, op, fx)["rc"], 0);
  r = sacctmgr(h, h.alice, add_account("chem"), fx);
  EXPECT_EQ(r["rc"], 0) << r.dump();
  EXPECT_NE(h.sm.acct_data()->find_assoc("chem", ""), nullptr);
  // bob (no AdminLevel) may still list everything.
  EXPECT_EQ(h.sm.acct_show()["data"].get<core::AcctData>(), *h.sm.acct_data());
}

TEST(AcctAdmin, ACommitOnDataChangedSinceThePreviewIsRefused) {
  Harness h;
  Effects fx;
  std::optional<core::AcctData> to_store;
  const json preview = h.sm.acct_change(
      proto::AcctChangeRequest::from_json({{"request", add_account("physics")}, {"commit", false}}),
      h.root, to_store);
  sacctmgr(h, h.root, add_account("chem"), fx);
  const json r =
      h.sm.acct_change(proto::AcctChangeRequest::from_json({{"request", add_account("physics")},
                                                            {"commit", true},
                                                            {"generation", preview["generation"]}}),
                       h.root, to_store);
  EXPECT_EQ(r["rc"], 1);
  EXPECT_FALSE(to_store.has_value());
  EXPECT_EQ(h.sm.acct_data()->find_assoc("physics", ""), nullptr);
}

TEST(AcctAdmin, TheEngineEnforcesALimitSetByModifyAtOnce) {
  Harness h(enforcing_config());
  Effects fx;
  // Enforcement and a new cluster's accounts (what the server starts with when there are
  // none): only root's association, so alice is refused until sacctmgr adds her.
  h.sm.install_accounting(core::new_acct_data("test"), fx);
  EXPECT_EQ(h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.spec()}}), h.alice, h.now,
                        fx)["error"],
            "Invalid account or account/partition combination specified");
  ASSERT_EQ(sacctmgr(h, h.root, add_account("physics"), fx)["rc"], 0);
  ASSERT_EQ(sacctmgr(h, h.root, add_user("alice", "physics"), fx)["rc"], 0);
  const uint64_t first = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(first)->state, core::JobState::Running);
  ASSERT_EQ(sacctmgr(h, h.root, modify_user("alice", "MaxJobs=1"), fx)["rc"], 0);
  const uint64_t second = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(second)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(second)->reason, "AssocMaxJobsLimit");
  // Lifting it lets the job start in the next pass.
  ASSERT_EQ(sacctmgr(h, h.root, modify_user("alice", "MaxJobs=-1"), fx)["rc"], 0);
  EXPECT_TRUE(fx.reschedule());
  h.sm.schedule(h.now, fx);
  EXPECT_EQ(h.sm.find_job(second)->state, core::JobState::Running);
}

TEST(AcctAdmin, AccountsWithPendingOrRunningJobsStay) {
  Harness h(enforcing_config());
  Effects fx;
  h.sm.install_accounting(core::new_acct_data("test"), fx);
  sacctmgr(h, h.root, add_account("physics"), fx);
  Req theory = add_account("theory");
  theory.parents = {"physics"};
  sacctmgr(h, h.root, theory, fx);
  sacctmgr(h, h.root, add_user("alice", "theory"), fx);
  json spec = h.spec();
  spec["account"] = "theory";
  const uint64_t id = h.submit(h.alice, spec, fx);
  Req del;
  del.action = Req::Action::Delete;
  del.entity = Req::Entity::Account;
  del.names = {"physics"};
  json r = sacctmgr(h, h.root, del, fx);
  EXPECT_EQ(r["rc"], 1);
  EXPECT_EQ(r["err"],
            " Error with request: Job(s) active, cancel job(s) before remove\n  JobID = " +
                std::to_string(id) + "          C = test       A = theory     U = alice    \n");
  h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}), h.alice, h.now,
              fx);
  r = sacctmgr(h, h.root, del, fx);
  EXPECT_EQ(r["rc"], 0) << r.dump();
  EXPECT_EQ(r["out"], " Deleting accounts...\n  physics\n");
  // The whole tree under it went; theory's record stays, as in Slurm.
  EXPECT_EQ(h.sm.acct_data()->find_assoc("theory", "alice"), nullptr);
  EXPECT_NE(h.sm.acct_data()->find_account("theory"), nullptr);
  EXPECT_FALSE(h.sm.submit(proto::SubmitRequest::from_json({{"spec", spec}}), h.alice, h.now, fx)
                   .value("ok", true));
}

TEST(AcctAdmin, FairShareUsageStaysWithTheAssociationsThatRemain) {
  Config c = two_node_config();
  c.priority.type = sched::PriorityType::Multifactor;
  Harness h(std::move(c));
  Effects fx;
  h.sm.install_accounting(core::new_acct_data("test"), fx);
  sacctmgr(h, h.root, add_account("physics", "Fairshare=10"), fx);
  sacctmgr(h, h.root, add_user("alice", "physics"), fx);
  json spec = h.spec();
  spec["account"] = "physics";
  const uint64_t id = h.submit(h.alice, spec, fx);
  h.sm.schedule(h.now, fx);
  h.now += 100;
  h.sm.agent_exited(h.sm.find_job(id)->batch_host, exit_report({{"job_id", id}, {"status", 0}}),
                    h.now, fx);
  const json before = h.sm.usage_record();
  ASSERT_EQ(before["users"].size(), 1u);
  sacctmgr(h, h.root, add_account("chem", "Fairshare=5"), fx);
  EXPECT_EQ(h.sm.usage_record(), before);
  // The tree has the new account with its shares.
  const json shares = h.sm.query(proto::QueryRequest::from_json({{"what", "shares"}}), h.now);
  bool chem = false;
  for (const auto& row : shares["rows"])
    if (row["account"] == "chem" && row["user"] == "") chem = row["raw_shares"] == 5;
  EXPECT_TRUE(chem) << shares.dump();
}

TEST(AcctAdmin, UsageOfUsersWithoutAnAssociationSurvivesAChange) {
  // Nothing enforced: alice has no association and is charged under root.
  Config c = two_node_config();
  c.priority.type = sched::PriorityType::Multifactor;
  Harness h(std::move(c));
  Effects fx;
  h.sm.install_accounting(core::new_acct_data("test"), fx);
  const uint64_t id = h.submit(h.alice, h.spec(), fx);
  h.sm.schedule(h.now, fx);
  h.now += 100;
  h.sm.agent_exited(h.sm.find_job(id)->batch_host, exit_report({{"job_id", id}, {"status", 0}}),
                    h.now, fx);
  const json before = h.sm.usage_record();
  ASSERT_EQ(before["users"].size(), 1u);
  EXPECT_EQ(before["users"][0][1], "root");
  sacctmgr(h, h.root, add_account("physics"), fx);
  EXPECT_EQ(h.sm.usage_record(), before);
}
