#include "core/acct_dump.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;

namespace {

// What `sacctmgr dump` writes for a small site, plus drover's QOS lines.
const char* kSite = R"(# To edit this file start with a cluster line for the new cluster
Cluster - 'lab':Fairshare=1:QOS='normal,high'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'physics':Description='physics dept':Organization='sci':Fairshare=10:GrpTRES=cpu=8,mem=16G:GrpJobs=4
Account - 'chem':Description='chem':Organization='sci':Fairshare=5:MaxJobs=3:MaxWallDurationPerJob=120
Parent - 'physics'
User - 'alice':DefaultAccount='physics':Fairshare=1:MaxJobs=2
Account - 'theory':Description='theory':Organization='sci':Fairshare=parent:GrpSubmitJobs=10
Parent - 'chem'
User - 'alice':DefaultAccount='physics':Fairshare=2
User - 'bob':DefaultAccount='chem':Fairshare=1:QOS='+high':DefaultQOS='high'
QOS - 'high':Priority=100:MaxWall='1:00:00':MaxJobsPerUser=2:MaxTRESPerUser=cpu=4:Flags=DenyOnLimit,OverPartQOS:Preempt='normal':PreemptMode=requeue:GraceTime=30
)";

}  // namespace

TEST(AcctDump, ParsesClusterAccountsUsersAndQos) {
  AcctDump d = parse_acct_dump(kSite, "lab.cfg");
  EXPECT_EQ(d.cluster.name, "lab");
  EXPECT_EQ(d.cluster.fairshare, 1);
  EXPECT_EQ(d.cluster.qos, (std::vector<std::string>{"normal", "high"}));
  ASSERT_EQ(d.assocs.size(), 7u);

  const AcctAssocLine& physics = d.assocs[1];
  EXPECT_EQ(physics.kind, AcctAssocLine::Kind::Account);
  EXPECT_EQ(physics.name, "physics");
  EXPECT_EQ(physics.parent, "root");
  EXPECT_EQ(physics.description, "physics dept");
  EXPECT_EQ(physics.fairshare, 10);
  EXPECT_EQ(physics.limits.grp_tres, (TresCounts{{"cpu", 8}, {"mem", 16384}}));
  EXPECT_EQ(physics.limits.grp_jobs, 4);
  EXPECT_EQ(physics.line, 5);

  EXPECT_EQ(d.assocs[2].limits.max_wall_min, 120);

  const AcctAssocLine& alice = d.assocs[3];
  EXPECT_EQ(alice.kind, AcctAssocLine::Kind::User);
  EXPECT_EQ(alice.name, "alice");
  EXPECT_EQ(alice.parent, "physics");
  EXPECT_EQ(alice.default_account, "physics");
  EXPECT_EQ(alice.limits.max_jobs, 2);

  EXPECT_TRUE(d.assocs[4].fairshare_parent);
  EXPECT_EQ(d.assocs[4].parent, "physics");
  EXPECT_EQ(d.assocs[4].limits.grp_submit_jobs, 10);

  EXPECT_EQ(d.assocs[5].parent, "chem");  // alice's second association
  const AcctAssocLine& bob = d.assocs[6];
  EXPECT_EQ(bob.qos, (std::vector<std::string>{"+high"}));
  EXPECT_EQ(bob.default_qos, "high");

  ASSERT_EQ(d.qos.size(), 2u);  // "normal" is added
  EXPECT_EQ(d.qos[0].name, "normal");
  const QosLine* high = d.find_qos("high");
  ASSERT_NE(high, nullptr);
  EXPECT_EQ(high->priority, 100);
  EXPECT_EQ(high->max_wall_min, 60);
  EXPECT_EQ(high->max_jobs_per_user, 2);
  EXPECT_EQ(high->max_tres_per_user, (TresCounts{{"cpu", 4}}));
  EXPECT_TRUE(high->has_flag("denyonlimit"));
  EXPECT_TRUE(high->has_flag("OverPartQOS"));
  EXPECT_EQ(high->preempt, (std::vector<std::string>{"normal"}));
  EXPECT_EQ(high->preempt_mode, (std::vector<std::string>{"requeue"}));
  EXPECT_EQ(high->grace_time_s, 30);
}

TEST(AcctDump, ShortKeysOldNamesAndUnlimited) {
  AcctDump d = parse_acct_dump(
      "Cluster - c\n"
      "Account - a:MaxWall=2-0:GrpCPUs=16:GrpNodes=2:MaxCPUsPerJob=4:GrpJ=3:MaxSubmit=9\n"
      "Parent - a\n"
      "User - u:MaxJobs=-1:GrpTRES=cpu=-1,node=1:Fairs=7:MaxNodesPerJob=1\n"
      "QOS - q:MaxJobs=5:MaxSubmit=6:MaxCPUsPerUser=8:MaxNodesPU=2:MaxTRESPA=gres/gpu=4"
      ":MinCPUsPerJob=2:PreemptExemptTime='1:30':UsageFactor=0.5\n");
  const AssocLimits& a = d.assocs[0].limits;
  EXPECT_EQ(a.max_wall_min, 2 * 24 * 60);
  EXPECT_EQ(a.grp_tres, (TresCounts{{"cpu", 16}, {"node", 2}}));
  EXPECT_EQ(a.max_tres_per_job, (TresCounts{{"cpu", 4}}));
  EXPECT_EQ(a.grp_jobs, 3);
  EXPECT_EQ(a.max_submit_jobs, 9);
  const AcctAssocLine& u = d.assocs[1];
  EXPECT_EQ(u.limits.max_jobs, kNoLimit);
  EXPECT_EQ(u.limits.grp_tres, (TresCounts{{"node", 1}}));
  EXPECT_EQ(u.fairshare, 7);
  EXPECT_EQ(u.limits.max_tres_per_job, (TresCounts{{"node", 1}}));
  EXPECT_EQ(u.default_account, "a");  // the account of its first line
  const QosLine& q = *d.find_qos("q");
  EXPECT_EQ(q.max_jobs_per_user, 5);
  EXPECT_EQ(q.max_submit_jobs_per_user, 6);
  EXPECT_EQ(q.max_tres_per_user, (TresCounts{{"cpu", 8}, {"node", 2}}));
  EXPECT_EQ(q.max_tres_per_account, (TresCounts{{"gres/gpu", 4}}));
  EXPECT_EQ(q.min_tres_per_job, (TresCounts{{"cpu", 2}}));
  EXPECT_EQ(q.preempt_exempt_time_s, 90);  // "M:S"
  EXPECT_DOUBLE_EQ(q.usage_factor, 0.5);
  const AcctDump again = parse_acct_dump(format_acct_dump(d));
  EXPECT_EQ(again.find_qos("q")->preempt_exempt_time_s, 90);
  EXPECT_DOUBLE_EQ(again.find_qos("q")->usage_factor, 0.5);
}

TEST(AcctDump, CommentsEscapesContinuationsAndQuotes) {
  AcctDump d = parse_acct_dump(
      "  # comment\n"
      "Cluster - \"c\"   # trailing comment\n"
      "\n"
      "Account - 'a':Description='room \\#5: lab':\\\n"
      "  Fairshare=3\n"
      "Account - b:Description=\"it's\"\n");
  EXPECT_EQ(d.assocs[0].description, "room #5: lab");
  EXPECT_EQ(d.assocs[0].fairshare, 3);
  EXPECT_EQ(d.assocs[1].description, "it's");
  EXPECT_EQ(d.assocs[1].line, 6);
}

TEST(AcctDump, TresCounts) {
  EXPECT_EQ(parse_tres_counts("CPU=4,mem=2G,gres/gpu:a100=2,license/matlab=1,billing=10"),
            (TresCounts{{"cpu", 4},
                        {"mem", 2048},
                        {"gres/gpu:a100", 2},
                        {"license/matlab", 1},
                        {"billing", 10}}));
  EXPECT_EQ(parse_tres_counts("mem=1500"), (TresCounts{{"mem", 1500}}));
  EXPECT_EQ(format_tres_counts({{"gres/gpu", 2}, {"node", 1}, {"mem", 16384}, {"cpu", 8}}),
            "cpu=8,mem=16G,node=1,gres/gpu=2");
  EXPECT_EQ(format_tres_counts({{"mem", 1500}}), "mem=1500M");
  EXPECT_THROW(parse_tres_counts("cpus=4"), ParseError);
  EXPECT_THROW(parse_tres_counts("cpu=4G"), ParseError);
  EXPECT_THROW(parse_tres_counts("cpu"), ParseError);
  EXPECT_THROW(parse_tres_counts("gres/=1"), ParseError);
  EXPECT_THROW(parse_tres_counts("cpu=-2"), ParseError);
}

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_acct_dump(text, "accounts.cfg");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(AcctDump, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("Account - a\n"),
            "accounts.cfg:1: the file must start with its Cluster line ('Cluster - name')");
  EXPECT_EQ(error_of(""), "accounts.cfg: no Cluster line ('Cluster - name' must come first)");
  EXPECT_EQ(error_of("Cluster - c\nParent - 'nope'\n"),
            "accounts.cfg:2: Parent 'nope' is not an account defined above");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a\nAccount - 'A'\n"),
            "accounts.cfg:3: account 'a' is defined twice (first on line 2)");
  EXPECT_EQ(error_of("Cluster - c\nAccount - root\n"),
            "accounts.cfg:2: account 'root' always exists");
  EXPECT_EQ(error_of("Cluster - c\nUser - u\nUser - u\n"),
            "accounts.cfg:3: user 'u' is already in account 'root'");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a:MaxWall=1:00:00\n"),
            "accounts.cfg:2: '00' is not Key=Value (quote values holding ':', e.g. "
            "MaxWall='1:00:00')");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a:Bogus=1\n"),
            "accounts.cfg:2: unknown option 'Bogus'");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a:MaxJobs=two\n"),
            "accounts.cfg:2: MaxJobs=two: not a whole number (or -1)");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a:GrpTRES=cpu=x\n"),
            "accounts.cfg:2: GrpTRES: invalid count in TRES 'cpu=x'");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a:DefaultAccount=b\n"),
            "accounts.cfg:2: DefaultAccount is an option of User lines only");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a:QOS=gold\n"),
            "accounts.cfg:2: QOS= names QOS 'gold', which is not defined (add a 'QOS - gold' "
            "line)");
  EXPECT_EQ(error_of("Cluster - c\nQOS - q:Flags=Fast\n"),
            "accounts.cfg:2: unknown QOS flag 'Fast'");
  EXPECT_EQ(error_of("Cluster - c\nQOS - q\nQOS - Q\n"),
            "accounts.cfg:3: QOS 'q' is defined twice (first on line 2)");
  EXPECT_EQ(error_of("Cluster - c\nQOS - q:MaxTRESPerUser=cpu=1:Nope=2\n"),
            "accounts.cfg:2: unknown QOS option 'Nope'");
  EXPECT_EQ(error_of("Cluster - c\nAccount - a\nUser - u:DefaultAccount=a\n"),
            "accounts.cfg:3: user 'u' has DefaultAccount 'a' but no line in that account");
  EXPECT_EQ(error_of("Cluster - c\nAccount - 'a\n"), "accounts.cfg:2: unterminated quote");
  EXPECT_EQ(error_of("Cluster - c\nWidget - w\n"),
            "accounts.cfg:2: unknown record type 'Widget' (Cluster, Parent, Account, User or "
            "QOS)");
  EXPECT_EQ(error_of("Cluster - c\nno dash here\n"),
            "accounts.cfg:2: expected 'Cluster|Parent|Account|User|QOS - name[:Key=Value...]'");
  EXPECT_EQ(error_of("Cluster - c\nCluster - d\n"),
            "accounts.cfg:2: only one Cluster line may be given");
}

TEST(AcctDump, FormatIsWhatSacctmgrDumpWritesAndParsesBack) {
  const AcctDump d = parse_acct_dump(kSite, "lab.cfg");
  const std::string text = format_acct_dump(d);
  EXPECT_EQ(text,
            "Cluster - 'lab':Fairshare=1:QOS='normal,high'\n"
            "Parent - 'root'\n"
            "User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1\n"
            "Account - 'chem':Description='chem':Organization='sci':Fairshare=5:MaxJobs=3"
            ":MaxWallDurationPerJob=120\n"
            "Account - 'physics':Description='physics dept':Organization='sci':Fairshare=10"
            ":GrpTRES=cpu=8,mem=16G:GrpJobs=4\n"
            "Parent - 'chem'\n"
            "User - 'alice':DefaultAccount='physics':Fairshare=2\n"
            "User - 'bob':DefaultAccount='chem':DefaultQOS='high':Fairshare=1:QOS='+high'\n"
            "Parent - 'physics'\n"
            "User - 'alice':DefaultAccount='physics':Fairshare=1:MaxJobs=2\n"
            "Account - 'theory':Description='theory':Organization='sci':Fairshare=parent"
            ":GrpSubmitJobs=10\n"
            "QOS - 'normal':Description='Normal QOS default'\n"
            "QOS - 'high':Flags=DenyOnLimit,OverPartQOS:GraceTime=30:MaxJobsPerUser=2"
            ":MaxTRESPerUser=cpu=4:MaxWallDurationPerJob=60:Preempt='normal'"
            ":PreemptMode=requeue:Priority=100\n");
  const AcctDump again = parse_acct_dump(text, "lab.cfg");
  EXPECT_EQ(format_acct_dump(again), text);
  EXPECT_EQ(again.qos, [&] {
    auto q = d.qos;
    for (size_t i = 0; i < q.size(); ++i) q[i].line = again.qos[i].line;
    return q;
  }());
}
