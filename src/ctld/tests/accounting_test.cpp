// The controller with an accounting file: accounts and QOS of new jobs, submission limits,
// jobs held back by limits (with Slurm's reasons) starting once room frees, fair share over
// the file's accounts and the QOS priority factor.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

const char* kAccounts = R"(Cluster - test:QOS='normal,high'
Account - physics:Fairshare=1
Account - chem:Fairshare=1
Parent - physics
User - alice
User - bob
Parent - chem
User - carol
User - alice
QOS - high:Priority=100
)";

Config accounting_config(const std::string& extra_lines = "",
                         const std::string& enforce = "associations,limits,qos") {
  Config c = two_node_config();
  c.enforce = sched::parse_enforce(enforce);
  load_accounting(c, std::string(kAccounts) + extra_lines, "accounts.cfg");
  return c;
}

const Caller carol{1002, 1002, "carol", "carol"};
const Caller dave{1003, 1003, "dave", "dave"};

json submit_reply(Harness& h, const Caller& who, json spec) {
  Effects fx;
  return h.sm.submit(proto::SubmitRequest::from_json({{"spec", spec}}), who, h.now, fx);
}

// A full pass, as the controller runs after anything frees resources.
void full_pass(Harness& h) {
  Effects fx;
  // The agents are alive: a node silent for two heartbeat intervals would be not responding.
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, h.now);
  h.sm.tick(h.now, fx);
  h.sm.schedule(h.now, fx);
}

void finish(Harness& h, uint64_t id) {
  Effects fx;
  const core::Job* j = h.sm.find_job(id);
  ASSERT_NE(j, nullptr);
  h.sm.agent_exited(j->batch_host, exit_report({{"job_id", id}, {"status", 0}}), h.now, fx);
}

}  // namespace

TEST(Accounting, AccountAndQosOfNewJobs) {
  Harness h(accounting_config());
  Effects fx;
  // No -A: the user's DefaultAccount (its first account); no --qos: "normal".
  const uint64_t a = h.submit(h.alice, h.spec(), fx);
  EXPECT_EQ(h.sm.find_job(a)->spec.account, "physics");
  EXPECT_EQ(h.sm.find_job(a)->spec.qos, "normal");
  json s = h.spec();
  s["account"] = "CHEM";
  s["qos"] = "high";
  const uint64_t b = h.submit(h.alice, s, fx);
  EXPECT_EQ(h.sm.find_job(b)->spec.account, "chem");
  EXPECT_EQ(h.sm.find_job(b)->spec.qos, "high");

  s["account"] = "chem";
  s["qos"] = "normal";
  EXPECT_EQ(submit_reply(h, h.bob, s)["error"],
            "Invalid account or account/partition combination specified");
  EXPECT_EQ(submit_reply(h, dave, h.spec())["error"],
            "Invalid account or account/partition combination specified");
  s["account"] = "physics";
  s["qos"] = "gold";
  EXPECT_EQ(submit_reply(h, h.bob, s)["error"], "Invalid qos specification");
}

TEST(Accounting, WithoutEnforcementAccountsAreFilledInOnly) {
  Harness h(accounting_config("", ""));
  Effects fx;
  json s = h.spec();
  s["account"] = "chem";  // bob is not in chem: his default account is charged instead
  const uint64_t b = h.submit(h.bob, s, fx);
  EXPECT_EQ(h.sm.find_job(b)->spec.account, "physics");
  const uint64_t d = h.submit(dave, h.spec(), fx);  // unknown users are accepted
  EXPECT_EQ(h.sm.find_job(d)->spec.account, "");
  EXPECT_EQ(h.sm.find_job(d)->spec.qos, "normal");
}

// QOS normal allows one running job per user: alice's second job waits for
// QOSMaxJobsPerUserLimit (no expected start) while bob's, submitted after it, starts; when
// her first job ends, the second starts.
TEST(Accounting, MaxJobsPerUserHoldsBackAndReleases) {
  Config c = two_node_config();
  c.enforce = sched::parse_enforce("limits");
  load_accounting(c, std::string(kAccounts) + "QOS - normal:MaxJobsPerUser=1\n", "accounts.cfg");
  Harness h(c);
  Effects fx;
  const uint64_t first = h.submit(h.alice, h.spec(), fx);
  const uint64_t second = h.submit(h.alice, h.spec(), fx);
  const uint64_t other = h.submit(h.bob, h.spec(), fx);
  full_pass(h);
  EXPECT_EQ(h.sm.find_job(first)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(second)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(second)->reason, "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(h.sm.find_job(second)->start_time, core::kNoTime);
  EXPECT_EQ(h.sm.find_job(other)->state, core::JobState::Running);

  h.now += 60;
  finish(h, first);
  full_pass(h);
  EXPECT_EQ(h.sm.find_job(second)->state, core::JobState::Running);
}

// physics may hold 2 CPUs at once: bob's 2-CPU job waits for AssocGrpCpuLimit while alice's
// 1-CPU job runs; carol's (chem) job behind it starts; bob's starts once alice's ends.
TEST(Accounting, GroupCpuLimitOfAnAccount) {
  Config c = two_node_config();
  c.enforce = sched::parse_enforce("limits");
  std::string text = kAccounts;
  text.replace(text.find("Account - physics:Fairshare=1"), 29,
               "Account - physics:Fairshare=1:GrpTRES=cpu=2");
  load_accounting(c, text, "accounts.cfg");
  Harness g(c);
  Effects fx;
  const uint64_t small = g.submit(g.alice, g.spec(1), fx);
  g.sm.schedule(g.now, fx);
  ASSERT_EQ(g.sm.find_job(small)->state, core::JobState::Running);
  const uint64_t big = g.submit(g.bob, g.spec(2), fx);
  const uint64_t chem = g.submit(carol, g.spec(2), fx);
  full_pass(g);
  EXPECT_EQ(g.sm.find_job(big)->state, core::JobState::Pending);
  EXPECT_EQ(g.sm.find_job(big)->reason, "AssocGrpCpuLimit");
  EXPECT_EQ(g.sm.find_job(chem)->state, core::JobState::Running);

  g.now += 60;
  finish(g, small);
  full_pass(g);
  EXPECT_EQ(g.sm.find_job(big)->state, core::JobState::Running);
}

// MaxSubmitJobs=2 for bob: a third job is refused with Slurm's policy error until one of his
// jobs has ended; an array counts its tasks.
TEST(Accounting, SubmitLimitRefusesUntilAJobEnds) {
  std::string text = kAccounts;
  text.replace(text.find("User - bob"), 10, "User - bob:MaxSubmitJobs=2");
  Config c = two_node_config();
  c.enforce = sched::parse_enforce("limits");
  load_accounting(c, text, "accounts.cfg");
  Harness h(c);
  Effects fx;
  json arr = h.spec();
  arr["array"] = "1-3";
  EXPECT_EQ(submit_reply(h, h.bob, arr)["error"],
            "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
            "limits)");
  const uint64_t first = h.submit(h.bob, h.spec(), fx);
  h.submit(h.bob, h.spec(), fx);
  EXPECT_FALSE(submit_reply(h, h.bob, h.spec())["ok"].get<bool>());
  EXPECT_TRUE(submit_reply(h, h.alice, h.spec())["ok"].get<bool>());
  h.sm.schedule(h.now, fx);
  finish(h, first);
  EXPECT_TRUE(submit_reply(h, h.bob, h.spec())["ok"].get<bool>());
}

// MaxWall on the QOS: a job without --time gets it as its limit; one asking for more waits
// (QOSMaxWallDurationPerJobLimit), or is refused when the QOS has DenyOnLimit.
TEST(Accounting, MaxWallSetsTheLimitAndHoldsLongerJobs) {
  Harness h(accounting_config("QOS - normal:MaxWall=30\n", "limits"));
  Effects fx;
  const uint64_t plain = h.submit(h.alice, h.spec(), fx);
  EXPECT_EQ(h.sm.find_job(plain)->time_limit_min, 30);
  json longer = h.spec();
  longer["time_limit_min"] = 60;
  const uint64_t waits = h.submit(h.alice, longer, fx);
  full_pass(h);
  EXPECT_EQ(h.sm.find_job(plain)->state, core::JobState::Running);
  EXPECT_EQ(h.sm.find_job(waits)->reason, "QOSMaxWallDurationPerJobLimit");

  Harness deny(accounting_config("QOS - normal:MaxWall=30:Flags=DenyOnLimit\n", "limits"));
  EXPECT_EQ(submit_reply(deny, deny.alice, longer)["error"],
            "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
            "limits)");
}

// A partition's QOS comes first: its GrpJobs=1 holds the second job of the partition back.
TEST(Accounting, PartitionQos) {
  Config c = two_node_config();
  c.conf.partitions[0].other["QOS"] = "part";
  c.enforce = sched::parse_enforce("limits");
  load_accounting(c, std::string(kAccounts) + "QOS - part:GrpJobs=1\n", "accounts.cfg");
  Harness h(c);
  Effects fx;
  h.submit(h.alice, h.spec(), fx);
  const uint64_t second = h.submit(h.bob, h.spec(), fx);
  full_pass(h);
  EXPECT_EQ(h.sm.find_job(second)->reason, "QOSGrpJobsLimit");
}

// Fair share follows the file's tree: usage by alice in physics lowers bob (physics) below
// carol (chem), and a QOS's Priority feeds the QOS factor.
TEST(Accounting, FairShareOverTheFilesAccountsAndQosPriority) {
  Config c = accounting_config("", "");
  c.priority.type = sched::PriorityType::Multifactor;
  c.priority.weight_fairshare = 10000;
  c.priority.weight_qos = 1000;
  Harness h(c);
  Effects fx;
  const uint64_t heavy = h.submit(h.alice, h.spec(4, 1), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(heavy)->state, core::JobState::Running);
  h.now += 3600;
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, h.now);
  finish(h, heavy);
  json fill = h.spec(4, 1);
  fill["time_limit_min"] = 10;
  h.submit(carol, fill, fx);
  h.sm.schedule(h.now, fx);
  const uint64_t b = h.submit(h.bob, h.spec(), fx);
  const uint64_t c2 = h.submit(carol, h.spec(), fx);
  json high = h.spec();
  high["qos"] = "high";
  const uint64_t q = h.submit(h.bob, high, fx);
  full_pass(h);
  EXPECT_LT(h.sm.find_job(b)->priority, h.sm.find_job(c2)->priority);
  EXPECT_EQ(h.sm.find_job(q)->priority, h.sm.find_job(b)->priority + 1000);
}

TEST(Accounting, ConfigAndFile) {
  Config c = load_config_text(
      "ClusterName=test\nAccountingStorageEnforce=limits,qos\n"
      "NodeName=n1 CPUs=2\nPartitionName=debug Nodes=n1 Default=YES QOS=high\n",
      "slurm.conf");
  EXPECT_TRUE(c.enforce.limits && c.enforce.qos && c.enforce.associations);
  EXPECT_THROW(load_config_text("AccountingStorageEnforce=sometimes\n", "slurm.conf"),
               core::ParseError);

  const auto dir = std::filesystem::temp_directory_path() / "drover-accounting-test";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / "accounts.cfg");
  const std::string conf = (dir / "slurm.conf").string();
  EXPECT_EQ(accounting_path(conf), (dir / "accounts.cfg").string());
  EXPECT_FALSE(read_accounts_file(conf).has_value());
  std::ofstream(dir / "accounts.cfg") << kAccounts;
  auto file = read_accounts_file(conf);
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(file->path, (dir / "accounts.cfg").string());
  EXPECT_EQ(file->dump.assocs.size(), 6u);
  const std::string digest = file->digest;
  EXPECT_EQ(read_accounts_file(conf)->digest, digest);
  apply_accounting(c, file->dump);
  ASSERT_TRUE(c.limits);
  EXPECT_EQ(c.limits->key("alice", "physics", "normal", "debug").part_qos,
            c.limits->find_qos("high"));
  std::ofstream(dir / "accounts.cfg") << kAccounts << "# edited\n";
  EXPECT_NE(read_accounts_file(conf)->digest, digest);
  std::ofstream(dir / "accounts.cfg") << "Cluster - test\nParent - nowhere\n";
  try {
    read_accounts_file(conf);
    FAIL();
  } catch (const core::ParseError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "accounts.cfg").string() +
                                         ":2: Parent 'nowhere' is not an account defined above");
  }
  std::filesystem::remove_all(dir);
}
