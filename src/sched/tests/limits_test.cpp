// Association and QOS limits: each limit kind and the precedence between QOS and
// associations, computed by hand, then the engine honouring them in a pass.
#include "sched/limits.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sched/tests/cluster_fixture.hpp"

using namespace drover;
using namespace drover::sched;
using namespace drover::sched::test_cluster;

namespace {

Enforce all() { return parse_enforce("associations,limits,qos"); }

Limits make(const std::string& text, Enforce e = all(),
            const std::map<std::string, std::string>& part_qos = {}) {
  return Limits(core::parse_acct_dump(text, "test.cfg"), e, part_qos);
}

// Two accounts under root; alice is in both, bob in physics, carol in chem.
const char* kTree = R"(Cluster - c:QOS='normal,high,low,part'
Account - physics:Fairshare=10
Account - chem:Fairshare=5
Parent - physics
User - alice:DefaultAccount=physics
User - bob
Parent - chem
User - alice
User - carol
QOS - high:Priority=100
QOS - low
QOS - part
)";

JobTres cpus(int64_t n, int64_t nodes = 1) {
  JobTres t;
  t.cpu = t.billing = n;
  t.node = nodes;
  return t;
}

JobTres on(const std::vector<std::string>& node_names, int64_t cpu) {
  JobTres t = cpus(cpu, static_cast<int64_t>(node_names.size()));
  t.nodes = node_names;
  return t;
}

// `n` running jobs of `tres` each for (user, account, qos).
void run(const Limits& l, Limits::Usage& u, const std::string& user, const std::string& account,
         const std::string& qos, int n, const JobTres& tres, const std::string& part = "batch") {
  for (int i = 0; i < n; ++i) l.add_running(u, l.key(user, account, qos, part), tres);
}

std::string start(const Limits& l, const Limits::Usage& u, const std::string& user,
                  const std::string& account, const std::string& qos, const JobTres& tres,
                  int64_t minutes = 10, const std::string& part = "batch") {
  return l.check_start(l.key(user, account, qos, part), tres, minutes, u);
}

std::string with(std::string text, const std::string& line_prefix, const std::string& extra) {
  const auto at = text.find(line_prefix);
  const auto eol = text.find('\n', at);
  text.insert(eol, extra);
  return text;
}

}  // namespace

TEST(Limits, EnforceKeywords) {
  Enforce e = parse_enforce("limits");
  EXPECT_TRUE(e.associations && e.limits && !e.qos);
  e = parse_enforce("QOS,safe");
  EXPECT_TRUE(e.associations && e.limits && e.qos && e.safe);
  e = parse_enforce("all,nojobs");
  EXPECT_TRUE(e.associations && e.limits && e.qos && e.safe && e.wckeys);
  EXPECT_FALSE(parse_enforce("nosteps").any());
  EXPECT_FALSE(parse_enforce("none").any());
  EXPECT_TRUE(parse_enforce("1").associations);
  try {
    parse_enforce("associations,bogus");
    FAIL();
  } catch (const core::ParseError& err) {
    EXPECT_STREQ(err.what(), "Invalid parameter for AccountingStorageEnforce: bogus");
  }
}

TEST(Limits, AssociationsDefaultsAndQosAccess) {
  const Limits l = make(with(with(kTree, "User - bob", ":QOS=low:DefaultQOS=low"), "Account - chem",
                             ":QOS=-high:DefaultQOS=part"));
  EXPECT_EQ(l.default_account("alice"), "physics");
  EXPECT_EQ(l.default_account("carol"), "chem");
  EXPECT_EQ(l.default_account("dave"), std::nullopt);
  EXPECT_NE(l.find_assoc("alice", "chem", "batch"), Limits::kNone);
  EXPECT_EQ(l.find_assoc("bob", "chem", "batch"), Limits::kNone);
  const int alice = l.find_assoc("alice", "physics", "");
  const int bob = l.find_assoc("bob", "physics", "");
  const int carol = l.find_assoc("carol", "chem", "");
  // Several QOS and no DefaultQOS: "normal"; a DefaultQOS is inherited.
  EXPECT_EQ(l.default_qos(alice), "normal");
  EXPECT_EQ(l.default_qos(bob), "low");
  EXPECT_EQ(l.default_qos(carol), "part");
  EXPECT_TRUE(l.qos_allowed(alice, l.find_qos("high")));
  EXPECT_FALSE(l.qos_allowed(bob, l.find_qos("high")));    // QOS=low replaces the list
  EXPECT_FALSE(l.qos_allowed(carol, l.find_qos("high")));  // -high takes it away
  EXPECT_TRUE(l.qos_allowed(carol, l.find_qos("low")));

  auto u = l.empty_usage();
  EXPECT_EQ(start(l, u, "dave", "physics", "normal", cpus(1)), "InvalidAccount");
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1)), "InvalidQOS");
  EXPECT_EQ(start(l, u, "bob", "physics", "gold", cpus(1)), "InvalidQOS");
  EXPECT_EQ(start(l, u, "bob", "physics", "low", cpus(1)), "");
  // Without enforcement nothing is checked.
  const Limits off = make(kTree, Enforce{});
  EXPECT_EQ(start(off, off.empty_usage(), "dave", "x", "gold", cpus(1)), "");

  try {
    make(with(kTree, "User - bob", ":DefaultQOS=high:QOS=low"));
    FAIL();
  } catch (const core::ParseError& e) {
    EXPECT_STREQ(e.what(),
                 "test.cfg:6: DefaultQOS 'high' is not among the QOS this association may use "
                 "(QOS=)");
  }
  try {
    make(kTree, all(), {{"batch", "gold"}});
    FAIL();
  } catch (const core::ParseError& e) {
    EXPECT_STREQ(e.what(), "partition batch: QOS=gold is not defined in test.cfg");
  }
}

TEST(Limits, QosMaxJobsPerUserCountsOnlyThatUser) {
  const Limits l = make(with(kTree, "QOS - high", ":MaxJobsPerUser=2"));
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "high", 2, cpus(1));
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(1)), "QOSMaxJobsPerUserLimit");
  // In another account, still the same user of the QOS.
  EXPECT_EQ(start(l, u, "alice", "chem", "high", cpus(1)), "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1)), "");
  EXPECT_EQ(start(l, u, "alice", "physics", "normal", cpus(1)), "");
}

TEST(Limits, QosGroupJobsAndPerAccountJobs) {
  const Limits l = make(with(kTree, "QOS - high", ":GrpJobs=3:MaxJobsPerAccount=2"));
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "high", 1, cpus(1));
  run(l, u, "bob", "physics", "high", 1, cpus(1));
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1)), "MaxJobsPerAccount");
  EXPECT_EQ(start(l, u, "carol", "chem", "high", cpus(1)), "");
  run(l, u, "carol", "chem", "high", 1, cpus(1));
  EXPECT_EQ(start(l, u, "alice", "chem", "high", cpus(1)), "QOSGrpJobsLimit");
}

TEST(Limits, AccountGroupLimitsCountEveryoneBelow) {
  const Limits l = make(with(kTree, "Account - physics", ":GrpTRES=cpu=8,mem=1000:GrpJobs=3"));
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "normal", 1, cpus(6));
  // 6 + 4 > 8; 6 + 2 fits.
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(4)), "AssocGrpCpuLimit");
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(2)), "");
  EXPECT_EQ(start(l, u, "carol", "chem", "normal", cpus(4)), "");
  JobTres mem = cpus(1);
  mem.mem_mb = 1001;
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", mem), "AssocGrpMemLimit");
  run(l, u, "bob", "physics", "normal", 2, cpus(1));
  EXPECT_EQ(start(l, u, "alice", "physics", "normal", cpus(1)), "AssocGrpJobsLimit");
  // A request larger than the limit on its own waits with the same reason.
  const auto empty = l.empty_usage();
  EXPECT_EQ(start(l, empty, "bob", "physics", "normal", cpus(9)), "AssocGrpCpuLimit");
}

TEST(Limits, RootGroupLimitCoversTheCluster) {
  const Limits l = make(with(kTree, "Cluster - c", ":GrpJobs=2"));
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "normal", 1, cpus(1));
  run(l, u, "carol", "chem", "normal", 1, cpus(1));
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(1)), "AssocGrpJobsLimit");
}

TEST(Limits, MaxJobsOnAnAccountAppliesToEachUser) {
  // As in Slurm: an account's MaxJobs is inherited by each user association.
  const Limits l = make(with(kTree, "Account - chem", ":MaxJobs=1:MaxWall=60"));
  auto u = l.empty_usage();
  run(l, u, "alice", "chem", "normal", 1, cpus(1));
  EXPECT_EQ(start(l, u, "alice", "chem", "normal", cpus(1)), "AssocMaxJobsLimit");
  EXPECT_EQ(start(l, u, "carol", "chem", "normal", cpus(1)), "");
  EXPECT_EQ(start(l, u, "alice", "physics", "normal", cpus(1)), "");
  EXPECT_EQ(start(l, u, "carol", "chem", "normal", cpus(1), 61), "AssocMaxWallDurationPerJobLimit");
  EXPECT_EQ(start(l, u, "carol", "chem", "normal", cpus(1), core::kInfinite),
            "AssocMaxWallDurationPerJobLimit");
  EXPECT_EQ(start(l, u, "carol", "chem", "normal", cpus(1), 60), "");
  // A user's own value wins over the account's.
  const Limits own =
      make(with(with(kTree, "Account - chem", ":MaxJobs=1"), "User - carol", ":MaxJobs=3"));
  auto v = own.empty_usage();
  run(own, v, "carol", "chem", "normal", 2, cpus(1));
  EXPECT_EQ(start(own, v, "carol", "chem", "normal", cpus(1)), "");
}

TEST(Limits, QosLimitHidesTheAssociationsLimitOfTheSameKind) {
  // QOS MaxJobsPerUser=5 replaces the association's MaxJobs=1 for jobs of that QOS.
  const Limits l = make(with(with(kTree, "QOS - high", ":MaxJobsPerUser=5:MaxWall=600"),
                             "User - bob", ":MaxJobs=1:MaxWall=10"));
  auto u = l.empty_usage();
  run(l, u, "bob", "physics", "high", 1, cpus(1));
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1), 300), "");
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(1)), "AssocMaxJobsLimit");
  run(l, u, "bob", "physics", "high", 4, cpus(1));
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1)), "QOSMaxJobsPerUserLimit");

  // Per TRES: a QOS GrpTRES on cpu hides the account's cpu limit, not its mem limit.
  const Limits t = make(with(with(kTree, "QOS - high", ":GrpTRES=cpu=100"), "Account - physics",
                             ":GrpTRES=cpu=4,mem=100"));
  auto w = t.empty_usage();
  EXPECT_EQ(start(t, w, "bob", "physics", "high", cpus(8)), "");
  EXPECT_EQ(start(t, w, "bob", "physics", "normal", cpus(8)), "AssocGrpCpuLimit");
  JobTres big = cpus(8);
  big.mem_mb = 200;
  EXPECT_EQ(start(t, w, "bob", "physics", "high", big), "AssocGrpMemLimit");
}

TEST(Limits, PartitionQosComesFirstUnlessTheJobsQosOverridesIt) {
  const std::string text =
      with(with(kTree, "QOS - part", ":GrpJobs=1"), "QOS - high", ":GrpJobs=10");
  const Limits l = make(text, all(), {{"batch", "part"}});
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "normal", 1, cpus(1));  // counts in the partition's QOS
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1)), "QOSGrpJobsLimit");
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(1), 10, "other"), "");

  const Limits over =
      make(with(text, "QOS - high", ":Flags=OverPartQOS"), all(), {{"batch", "part"}});
  auto v = over.empty_usage();
  run(over, v, "alice", "physics", "normal", 1, cpus(1));
  EXPECT_EQ(start(over, v, "bob", "physics", "high", cpus(1)), "");
  EXPECT_EQ(start(over, v, "bob", "physics", "normal", cpus(1)), "QOSGrpJobsLimit");
}

TEST(Limits, QosPerUserTres) {
  const Limits l =
      make(with(kTree, "QOS - high", ":MaxTRESPerUser=cpu=4,mem=1G,gres/gpu=2,node=1"));
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "high", 1, on({"n1"}, 3));
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(2)), "QOSMaxCpuPerUserLimit");
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(1)), "");
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(4)), "");
  JobTres gpu = cpus(1);
  gpu.other["gres/gpu"] = 3;
  EXPECT_EQ(start(l, u, "bob", "physics", "high", gpu), "QOSMaxGRESPerUser");
  JobTres mem = cpus(1);
  mem.mem_mb = 1025;
  EXPECT_EQ(start(l, u, "bob", "physics", "high", mem), "QOSMaxMemoryPerUser");
  // Nodes count once per node the user has: n1 again is fine, n2 is a second node.
  EXPECT_EQ(start(l, u, "alice", "physics", "high", on({"n1"}, 1)), "");
  EXPECT_EQ(start(l, u, "alice", "physics", "high", on({"n2"}, 1)), "QOSMaxNodePerUserLimit");
}

TEST(Limits, PerJobSizeLimits) {
  const Limits l = make(with(with(kTree, "QOS - high",
                                  ":MaxTRESPerJob=cpu=4:MaxTRESPerNode=cpu=2:MinTRESPerJob=cpu=2"
                                  ":MaxTRESMinsPerJob=cpu=100"),
                             "User - bob", ":MaxTRESPerJob=node=1,cpu=1"));
  const auto u = l.empty_usage();
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(5, 3)), "QOSMaxCpuPerJobLimit");
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(4, 1)), "QOSMaxCpuPerNode");
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(1)), "QOSMinCpuNotSatisfied");
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(4, 2), 26), "QOSMaxCpuMinutesPerJobLimit");
  EXPECT_EQ(start(l, u, "alice", "physics", "high", cpus(4, 2), 25), "");
  // The QOS's cpu limit hides bob's; his node limit still holds.
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(2, 1)), "");
  EXPECT_EQ(start(l, u, "bob", "physics", "high", cpus(2, 2)), "AssocMaxNodePerJobLimit");
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(2, 1)), "AssocMaxCpuPerJobLimit");
}

TEST(Limits, GroupNodeLimitCountsDistinctNodes) {
  const Limits l = make(with(kTree, "Account - physics", ":GrpTRES=node=1"));
  auto u = l.empty_usage();
  run(l, u, "alice", "physics", "normal", 1, on({"n1"}, 1));
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", on({"n1"}, 1)), "");
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", on({"n2"}, 1)), "AssocGrpNodeLimit");
  // A request (nodes not chosen yet) may still land on n1.
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(1, 1)), "");
  EXPECT_EQ(start(l, u, "bob", "physics", "normal", cpus(2, 2)), "AssocGrpNodeLimit");
}

TEST(Limits, SubmitCountLimitsRefuseSubmissions) {
  const Limits l = make(with(with(with(kTree, "QOS - high", ":MaxSubmitJobsPerUser=2"),
                                  "Account - chem", ":GrpSubmitJobs=3"),
                             "User - bob", ":MaxSubmitJobs=1"));
  auto u = l.empty_usage();
  auto submit = [&](const std::string& user, const std::string& acct, const std::string& qos,
                    int64_t count = 1) {
    return l.check_submit(l.key(user, acct, qos, "batch"), cpus(1), 10, count, u);
  };
  EXPECT_EQ(submit("alice", "physics", "high", 3), "QOSMaxSubmitJobPerUserLimit");  // an array
  l.add_submitted(u, l.key("alice", "physics", "high", "batch"), 2);
  EXPECT_EQ(submit("alice", "physics", "high"), "QOSMaxSubmitJobPerUserLimit");
  EXPECT_EQ(submit("alice", "physics", "normal"), "");
  l.add_submitted(u, l.key("bob", "physics", "normal", "batch"), 1);
  EXPECT_EQ(submit("bob", "physics", "normal"), "AssocMaxSubmitJobLimit");
  // The QOS's per-user submit limit hides bob's MaxSubmitJobs.
  EXPECT_EQ(submit("bob", "physics", "high"), "");
  l.add_submitted(u, l.key("carol", "chem", "normal", "batch"), 2);
  l.add_submitted(u, l.key("alice", "chem", "normal", "batch"), 1);
  EXPECT_EQ(submit("carol", "chem", "normal"), "AssocGrpSubmitJobsLimit");
  // Running jobs are not submissions: only add_submitted counts.
  EXPECT_EQ(submit("alice", "physics", "normal"), "");
}

TEST(Limits, SizeAndTimeLimitsRefuseSubmissionsOnlyWithDenyOnLimit) {
  const std::string text = with(with(kTree, "QOS - high", ":MaxWall=60:MaxTRESPerUser=cpu=4"),
                                "Account - physics", ":GrpTRES=cpu=6");
  const Limits waits = make(text);
  const auto u = waits.empty_usage();
  const auto key = waits.key("bob", "physics", "high", "batch");
  EXPECT_EQ(waits.check_submit(key, cpus(1), 120, 1, u), "");
  EXPECT_EQ(waits.check_start(key, cpus(1), 120, u), "QOSMaxWallDurationPerJobLimit");
  EXPECT_EQ(waits.check_submit(key, cpus(8), 10, 1, u), "");

  const Limits deny = make(with(text, "QOS - high", ":Flags=DenyOnLimit"));
  EXPECT_EQ(deny.check_submit(key, cpus(1), 120, 1, u), "QOSMaxWallDurationPerJobLimit");
  EXPECT_EQ(deny.check_submit(key, cpus(5), 10, 1, u), "QOSMaxCpuPerUserLimit");
  EXPECT_EQ(deny.check_submit(key, cpus(4), 10, 1, u), "");
  // The account's group limit is a size limit for one job at submission.
  const Limits deny_grp = make(
      with(with(kTree, "QOS - high", ":Flags=DenyOnLimit"), "Account - physics", ":GrpTRES=cpu=6"));
  EXPECT_EQ(deny_grp.check_submit(key, cpus(7), 10, 1, u), "AssocGrpCpuLimit");
}

TEST(Limits, MaxWallGivesJobsWithoutATimeTheirLimit) {
  const Limits l =
      make(with(with(kTree, "QOS - high", ":MaxWall=30"), "Account - physics", ":MaxWall=90"));
  EXPECT_EQ(l.max_wall_min(l.key("bob", "physics", "high", "batch")), 30);
  EXPECT_EQ(l.max_wall_min(l.key("bob", "physics", "normal", "batch")), 90);
  EXPECT_EQ(l.max_wall_min(l.key("carol", "chem", "normal", "batch")), core::kNoLimit);
}

TEST(Limits, FairshareTreeFromTheFile) {
  const Limits l = make(kTree);
  const AssocTree t = l.fairshare_tree();
  auto physics = t.find_account("physics");
  ASSERT_TRUE(physics);
  EXPECT_EQ(t.at(*physics).shares.value, 10u);
  EXPECT_TRUE(t.find_user("alice", "physics"));
  EXPECT_TRUE(t.find_user("alice", "chem"));
  EXPECT_FALSE(t.find_user("bob", "chem"));
}

TEST(Limits, RequestedAndAllocatedTres) {
  core::JobSpec s;
  s.ntasks = 4;
  s.cpus_per_task = 2;
  s.nodes_min = 2;
  s.mem_per_cpu_mb = 100;
  s.gres = "gpu:a100:1";
  s.gpus_per_task = "1";
  JobTres t = requested_tres(s, 0, 0);
  EXPECT_EQ(t.cpu, 8);
  EXPECT_EQ(t.node, 2);
  EXPECT_EQ(t.mem_mb, 800);
  EXPECT_EQ(t.billing, 8);
  EXPECT_EQ(t.get("gres/gpu"), 6);  // 1 per node on 2 nodes, 1 per task for 4 tasks
  EXPECT_EQ(t.get("gres/gpu:a100"), 2);
  s.mem_per_cpu_mb = -1;
  EXPECT_EQ(requested_tres(s, 0, 500).mem_mb, 1000);  // DefMemPerNode
  s.exclusive = true;
  EXPECT_EQ(requested_tres(s, 0, 500).mem_mb, 0);  // whole nodes: known once placed

  std::vector<core::NodeAlloc> alloc = {{"n1", 4, 1000, 2, {{"gpu", "a100", 1}}},
                                        {"n2", 2, 500, 1, {}}};
  t = allocated_tres(alloc);
  EXPECT_EQ(t.cpu, 6);
  EXPECT_EQ(t.mem_mb, 1500);
  EXPECT_EQ(t.node, 2);
  EXPECT_EQ(t.get("gres/gpu"), 1);
  EXPECT_EQ(t.get("gres/gpu:a100"), 1);
  EXPECT_EQ(t.nodes, (std::vector<std::string>{"n1", "n2"}));
}

// ---- the engine ----

namespace {

Decisions limited_pass(Cluster& c, const Limits& l, int64_t now) {
  ClusterView v = c.view();
  v.limits = &l;
  auto d = make_scheduler()->schedule(v, now);
  for (const auto& s : d.starts) c.run(c.jobs[s.job_id - 1], now, s.alloc);
  return d;
}

core::Job& job_of(Cluster& c, const std::string& user, const std::string& account,
                  const std::string& qos, int ntasks, int64_t minutes = 10) {
  core::Job& j = c.add_job(ntasks, minutes);
  j.user = user;
  j.spec.account = account;
  j.spec.qos = qos;
  return j;
}

}  // namespace

// Two 4-CPU nodes. Alice may run one job of QOS high at a time: her second waits for the
// limit with no reservation, and does not hold up the jobs behind it, which start.
TEST(LimitsEngine, LimitedJobWaitsWithoutHoldingUpOthers) {
  Cluster c;
  c.add_nodes(2, 4, 1000);
  c.one_partition();
  const Limits l = make(with(kTree, "QOS - high", ":MaxJobsPerUser=1"));
  job_of(c, "alice", "physics", "high", 1);
  job_of(c, "alice", "physics", "high", 1);
  job_of(c, "bob", "physics", "high", 1);
  job_of(c, "alice", "physics", "normal", 1);
  auto d = limited_pass(c, l, 0);
  EXPECT_EQ(started(d), (std::vector<uint64_t>{1, 3, 4}));
  EXPECT_EQ(reasons(d)[2], "QOSMaxJobsPerUserLimit");
  EXPECT_EQ(planned(d).count(2), 0u);
  // Once alice's first job ends, the next pass starts the second.
  c.finish(c.jobs[0]);
  d = limited_pass(c, l, 60);
  EXPECT_EQ(started(d), (std::vector<uint64_t>{2}));
}

// An account with GrpTRES=cpu=4: jobs of 2 CPUs each, two fit; the third waits for
// AssocGrpCpuLimit while a job of another account behind it starts; FIFO is not blocked by it.
TEST(LimitsEngine, GroupCpuLimitAcrossThePass) {
  for (Policy policy : {Policy::Conservative, Policy::Easy, Policy::Fifo}) {
    Cluster c;
    c.add_nodes(2, 4, 1000);
    c.one_partition();
    c.params.policy = policy;
    const Limits l = make(with(kTree, "Account - physics", ":GrpTRES=cpu=4"));
    job_of(c, "alice", "physics", "normal", 2);
    job_of(c, "bob", "physics", "normal", 2);
    job_of(c, "bob", "physics", "normal", 2);
    job_of(c, "carol", "chem", "normal", 2);
    auto d = limited_pass(c, l, 0);
    EXPECT_EQ(started(d), (std::vector<uint64_t>{1, 2, 4}));
    EXPECT_EQ(reasons(d)[3], "AssocGrpCpuLimit");
    EXPECT_TRUE(planned(d).empty());
  }
}

// The limit is checked again against what the placement holds: an exclusive job asking for
// one task holds the whole 4-CPU node, beyond the account's 2 CPUs.
TEST(LimitsEngine, PlacementIsCheckedAgainstTheLimit) {
  Cluster c;
  c.add_nodes(1, 4, 1000);
  c.one_partition();
  const Limits l = make(with(kTree, "Account - physics", ":GrpTRES=cpu=2"));
  job_of(c, "bob", "physics", "normal", 1).spec.exclusive = true;
  auto d = limited_pass(c, l, 0);
  EXPECT_TRUE(started(d).empty());
  EXPECT_EQ(reasons(d)[1], "AssocGrpCpuLimit");
}

// Array tasks each count: with MaxJobsPerUser=2 two tasks of four start.
TEST(LimitsEngine, ArrayTasksCountOneByOne) {
  Cluster c;
  c.add_nodes(2, 4, 1000);
  c.one_partition();
  const Limits l = make(with(kTree, "QOS - high", ":MaxJobsPerUser=2"));
  job_of(c, "alice", "physics", "high", 1);
  ClusterView v = c.view();
  v.limits = &l;
  v.start_limit[1] = 4;
  auto d = make_scheduler()->schedule(v, 0);
  EXPECT_EQ(d.starts.size(), 2u);
  EXPECT_EQ(reasons(d)[1], "QOSMaxJobsPerUserLimit");
}

// Running jobs count: MaxJobs=1 with one running leaves the pending one waiting.
TEST(LimitsEngine, RunningJobsCount) {
  Cluster c;
  c.add_nodes(1, 4, 1000);
  c.one_partition();
  const Limits l = make(with(kTree, "User - carol", ":MaxJobs=1"));
  core::Job& first = job_of(c, "carol", "chem", "normal", 1);
  c.run(first, 0, {{"n1", 1, 1, 1}});
  job_of(c, "carol", "chem", "normal", 1);
  auto d = limited_pass(c, l, 0);
  EXPECT_TRUE(started(d).empty());
  EXPECT_EQ(reasons(d)[2], "AssocMaxJobsLimit");
}
