#include "core/acct_data.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;

namespace {

const char* kSite = R"(Cluster - 'lab':Fairshare=1
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator'
Account - 'physics':Description='physics dept':Organization='sci':Fairshare=10:GrpJobs=4
Account - 'chem':MaxJobs=3
Parent - 'physics'
User - 'alice':DefaultAccount='physics':MaxJobs=2
Account - 'theory'
User - 'bob':Partition='gpu'
Parent - 'chem'
User - 'alice':DefaultAccount='physics':Fairshare=2
QOS - 'high':Priority=100:Flags=DenyOnLimit
)";

std::vector<std::string> names(const std::vector<const AcctAssoc*>& v) {
  std::vector<std::string> out;
  for (const auto* a : v) out.push_back(a->account + "/" + a->user + "/" + a->partition);
  return out;
}

}  // namespace

TEST(AcctData, FromADumpGetsIdsRecordsAndSacctmgrsDefaults) {
  const AcctData d = acct_data_from_dump(parse_acct_dump(kSite));
  EXPECT_EQ(d.cluster, "lab");
  ASSERT_EQ(d.assocs.size(), 8u);
  EXPECT_EQ(d.assocs[0].id, 1u);
  EXPECT_TRUE(d.assocs[0].is_root());
  EXPECT_EQ(d.assocs[0].settings.fairshare, 1);
  EXPECT_EQ(d.next_assoc_id, 9u);
  const AcctAssoc* alice = d.find_assoc("chem", "alice");
  ASSERT_NE(alice, nullptr);
  EXPECT_EQ(alice->parent, "chem");
  EXPECT_EQ(alice->settings.fairshare, 2);
  ASSERT_NE(d.find_assoc("physics", "bob", "gpu"), nullptr);
  // Records: accounts by name with sacctmgr's default description and organization.
  ASSERT_EQ(d.accounts.size(), 4u);
  EXPECT_EQ(d.accounts[0], (AcctAccount{"chem", "chem", "root"}));
  EXPECT_EQ(d.accounts[1], (AcctAccount{"physics", "physics dept", "sci"}));
  EXPECT_EQ(d.accounts[2], (AcctAccount{"root", "default root account", "root"}));
  EXPECT_EQ(d.accounts[3], (AcctAccount{"theory", "theory", "physics"}));
  ASSERT_NE(d.find_user("bob"), nullptr);
  EXPECT_EQ(d.find_user("bob")->default_account, "physics");
  EXPECT_EQ(d.find_user("root")->admin_level, "Administrator");
  EXPECT_EQ(d.find_user("alice")->admin_level, "None");
  ASSERT_EQ(d.qos.size(), 2u);
  EXPECT_EQ(d.qos[0].name, "normal");
  EXPECT_EQ(d.qos[0].id, 1u);
  EXPECT_EQ(d.qos[1].id, 2u);
  EXPECT_EQ(d.next_qos_id, 3u);
}

TEST(AcctData, ListsAssociationsAsSacctmgrDoes) {
  const AcctData d = acct_data_from_dump(parse_acct_dump(kSite));
  EXPECT_EQ(names(hierarchical_order(d)),
            (std::vector<std::string>{"root//", "root/root/", "chem//", "chem/alice/", "physics//",
                                      "physics/alice/", "physics/bob/gpu", "theory//"}));
}

TEST(AcctData, DumpFormParsesBackToTheSameData) {
  const AcctData d = acct_data_from_dump(parse_acct_dump(kSite));
  const std::string text = format_acct_dump(acct_dump_of(d));
  // The same records and settings (ids follow the order of the lines, which dump changes).
  const AcctData back = acct_data_from_dump(parse_acct_dump(text));
  EXPECT_EQ(back.accounts, d.accounts);
  EXPECT_EQ(back.users, d.users);
  EXPECT_EQ(format_acct_dump(acct_dump_of(back)), text);
}

TEST(AcctData, AssociationsUnderAGoneAccountAreLeftOutOfTheDump) {
  AcctData d = acct_data_from_dump(parse_acct_dump(kSite));
  std::erase_if(d.assocs,
                [](const AcctAssoc& a) { return a.account == "physics" && !a.is_user(); });
  const AcctDump dump = acct_dump_of(d);
  std::vector<std::string> lines;
  for (const auto& line : dump.assocs) lines.push_back(line.parent + "/" + line.name);
  EXPECT_EQ(lines, (std::vector<std::string>{"root/root", "root/chem", "chem/alice"}));
}

TEST(AcctData, NewClusterHasRootUserAndNormal) {
  const AcctData d = new_acct_data("oracle");
  EXPECT_EQ(names(hierarchical_order(d)), (std::vector<std::string>{"root//", "root/root/"}));
  EXPECT_EQ(d.find_user("root")->admin_level, "Administrator");
  EXPECT_EQ(d.find_account("root")->description, "default root account");
  ASSERT_NE(d.find_qos("normal"), nullptr);
  EXPECT_EQ(d.next_assoc_id, 3u);
}

TEST(AcctOptions, AssociationAndQosSettingsRoundTripAsText) {
  AcctAssocLine a;
  a.fairshare = 7;
  a.limits.grp_tres = {{"cpu", 8}, {"mem", 16384}};
  a.limits.max_wall_min = 90;
  a.qos = {"+high", "-low"};
  a.qos_set = true;
  a.default_qos = "high";
  const std::string text = format_assoc_options(a);
  EXPECT_EQ(text,
            "DefaultQOS='high':Fairshare=7:GrpTRES=cpu=8,mem=16G:MaxWallDurationPerJob=90:QOS='+"
            "high,-low'");
  AcctAssocLine back;
  parse_assoc_options(text, back, "test");
  EXPECT_EQ(back, a);

  QosLine q;
  q.name = "gpu";
  q.description = "it's #1: fast";
  q.flags = {"DenyOnLimit"};
  q.max_tres_per_user = {{"gres/gpu", 1}};
  q.usage_factor = 2;
  QosLine qb;
  qb.name = "gpu";
  parse_qos_options(format_qos_options(q), qb, "test");
  EXPECT_EQ(qb, q);
  try {
    parse_assoc_options("MaxJobs=lots", back, "acct_assocs id 3");
    FAIL();
  } catch (const ParseError& e) {
    EXPECT_STREQ(e.what(), "acct_assocs id 3: MaxJobs=lots: not a whole number (or -1)");
  }
}
