// What the controller tells sprio and sshare (query what="priority_factors" / "shares").
#include <cmath>

#include "ctld/tests/harness.hpp"

namespace drover::ctld::testing {
namespace {

Config multifactor_config() {
  Config c = two_node_config();
  c.priority.type = sched::PriorityType::Multifactor;
  c.priority.weight_age = 1000;
  c.priority.weight_fairshare = 10000;
  c.priority.weight_job_size = 100;
  c.priority.weight_partition = 500;
  c.priority.decay_half_life_s = 3600;
  core::PartitionConf shortp;
  shortp.name = "short";
  shortp.nodes = {"node1"};
  shortp.priority_job_factor = 3;
  c.conf.partitions.push_back(shortp);
  return c;
}

json factors_query(Harness& h, json extra = json::object()) {
  json req = {{"op", "query"}, {"what", "priority_factors"}};
  req.update(extra);
  json r = h.sm.query(proto::QueryRequest::from_json(req), h.now);
  EXPECT_TRUE(r.value("ok", false)) << r.dump();
  return r;
}

json shares_query(Harness& h, json extra = json::object()) {
  json req = {{"op", "query"}, {"what", "shares"}};
  req.update(extra);
  json r = h.sm.query(proto::QueryRequest::from_json(req), h.now);
  EXPECT_TRUE(r.value("ok", false)) << r.dump();
  return r;
}

std::vector<uint64_t> ids(const json& reply) {
  std::vector<uint64_t> out;
  for (const auto& r : reply["rows"]) out.push_back(r["job_id"].get<uint64_t>());
  return out;
}

const json* share_row(const json& reply, const std::string& account, const std::string& user) {
  for (const auto& r : reply["rows"])
    if (r["account"] == account && r["user"] == user) return &r;
  return nullptr;
}

}  // namespace

TEST(PriorityReport, BasicHasNoFactorsOrAssociations) {
  Harness h;
  Effects fx;
  h.submit(h.alice, h.spec(), fx);
  json r = factors_query(h);
  EXPECT_EQ(r["priority_type"], "priority/basic");
  EXPECT_TRUE(r["rows"].empty());
  json s = shares_query(h);
  EXPECT_EQ(s["priority_type"], "priority/basic");
  EXPECT_TRUE(s["rows"].empty());
}

TEST(PriorityReport, PendingEligibleJobsWithTheirFactors) {
  Harness h(multifactor_config());
  Effects fx;
  const uint64_t running = h.submit(h.alice, h.spec(4, 1), fx);  // both nodes
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(running)->state, core::JobState::Running);
  const uint64_t waiting = h.submit(h.alice, h.spec(1, 1), fx);
  json nice = h.spec(2, 1);
  nice["nice"] = 50;
  const uint64_t niced = h.submit(h.bob, nice, fx);
  json held = h.spec();
  held["hold"] = true;
  h.submit(h.alice, held, fx);
  json later = h.spec();
  later["begin_time"] = h.now + 3600;
  h.submit(h.alice, later, fx);
  json dep = h.spec();
  dep["dependency"] = "afterok:" + std::to_string(running);
  h.submit(h.alice, dep, fx);
  json both = h.spec();
  both["partitions"] = json::array({"short", "debug"});
  const uint64_t two_parts = h.submit(h.bob, both, fx);
  h.sm.schedule(h.now, fx);

  json r = factors_query(h);
  EXPECT_EQ(r["priority_type"], "priority/multifactor");
  EXPECT_EQ(r["weights"]["age"], 1000);
  EXPECT_EQ(r["weights"]["job_size"], 100);
  // Not the running, held, future or dependent jobs; the job in two partitions twice.
  EXPECT_EQ(ids(r), (std::vector<uint64_t>{waiting, niced, two_parts, two_parts}));
  const json& w = r["rows"][0];
  EXPECT_EQ(w["user"], "alice");
  EXPECT_EQ(w["uid"], 1000);
  EXPECT_EQ(w["partition"], "debug");
  // 1 CPU of 4 on 1 node of 2: (1/2 + 1/4) / 2; debug's factor 1 of the largest 3.
  EXPECT_DOUBLE_EQ(w["factors"]["job_size"].get<double>(), 0.375);
  EXPECT_DOUBLE_EQ(w["factors"]["partition"].get<double>(), 1.0 / 3);
  EXPECT_EQ(r["rows"][1]["factors"]["nice"], 50);
  // Alice has used nothing yet, so her fair share is not below Bob's.
  EXPECT_GT(w["factors"]["fairshare"].get<double>(), 0);
  EXPECT_EQ(r["rows"][2]["partition"], "short");
  EXPECT_DOUBLE_EQ(r["rows"][2]["factors"]["partition"].get<double>(), 1.0);
  EXPECT_EQ(r["rows"][3]["partition"], "debug");

  // Age grows with time: after an hour of a 7-day maximum.
  h.now += 3600;
  r = factors_query(h);
  EXPECT_NEAR(r["rows"][0]["factors"]["age"].get<double>(), 3600.0 / (7 * 86400), 1e-9);

  // Filters: job ids, uids, partitions (a partition filter keeps the job's other row out).
  EXPECT_EQ(ids(factors_query(h, {{"job_ids", {niced, 999}}})), std::vector<uint64_t>{niced});
  EXPECT_EQ(ids(factors_query(h, {{"uids", {1001}}})),
            (std::vector<uint64_t>{niced, two_parts, two_parts}));
  EXPECT_TRUE(ids(factors_query(h, {{"uids", json::array()}})).empty());
  r = factors_query(h, {{"partitions", {"short"}}});
  ASSERT_EQ(ids(r), std::vector<uint64_t>{two_parts});
  EXPECT_EQ(r["rows"][0]["partition"], "short");
}

TEST(PriorityReport, SharesDecayAtQueryTime) {
  Harness h(multifactor_config());
  Effects fx;
  const uint64_t job = h.submit(h.alice, h.spec(2, 1), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(job)->state, core::JobState::Running);
  h.submit(h.bob, h.spec(4, 1), fx);  // Bob waits: he gets an association too
  h.sm.tick(h.now, fx);
  h.sm.schedule(h.now, fx);

  // While Alice's job runs: nothing charged yet, but its CPUs times the rest of its limit
  // (unlimited: Slurm's INFINITE minutes) show as TRESRunMins up to the root.
  json s = shares_query(h);
  EXPECT_EQ(s["tres_names"][0], "cpu");
  const json* alice = share_row(s, "root", "alice");
  ASSERT_NE(alice, nullptr) << s.dump();
  EXPECT_EQ((*alice)["raw_usage"], 0);
  EXPECT_EQ((*alice)["tres_run_mins"][0], uint64_t{2} * 0xffffffffULL);
  EXPECT_EQ((*share_row(s, "root", ""))["tres_run_mins"][0], uint64_t{2} * 0xffffffffULL);
  EXPECT_EQ((*alice)["level_fs"], "inf");  // no usage
  EXPECT_TRUE((*share_row(s, "root", ""))["raw_shares"].is_null());

  // 2 CPUs for 1000 s: 2000 CPU-seconds, decayed by the hour's half life as time passes.
  h.now += 1000;
  for (const char* n : {"node1", "node2"}) h.sm.agent_heartbeat(n, {}, h.now);
  h.sm.agent_exited(h.sm.find_job(job)->batch_host, exit_report({{"job_id", job}, {"status", 0}}),
                    h.now, fx);
  s = shares_query(h);
  alice = share_row(s, "root", "alice");
  ASSERT_NE(alice, nullptr);
  const double charged = (*alice)["raw_usage"].get<double>();
  EXPECT_NEAR(charged, 2000, 400);  // charged decayed over the run
  EXPECT_EQ((*alice)["tres_run_mins"][0], 0);
  EXPECT_EQ((*alice)["grp_tres_raw"][0], static_cast<uint64_t>(charged) / 60);
  EXPECT_EQ((*alice)["norm_usage"], 1.0);
  const json* bob = share_row(s, "root", "bob");
  ASSERT_NE(bob, nullptr);
  EXPECT_GT((*bob)["fairshare"].get<double>(), (*alice)["fairshare"].get<double>());

  h.now += 3600;  // one half life later, no event in between
  s = shares_query(h);
  EXPECT_NEAR((*share_row(s, "root", "alice"))["raw_usage"].get<double>(), charged / 2, 1);
  EXPECT_NEAR((*share_row(s, "root", ""))["raw_usage"].get<double>(), charged / 2, 1);

  // Filters: users (account rows stay), accounts (users by their account).
  s = shares_query(h, {{"users", {"BOB"}}});
  ASSERT_EQ(s["rows"].size(), 2u);
  EXPECT_EQ(s["rows"][0]["user"], "");
  EXPECT_EQ(s["rows"][1]["user"], "bob");
  EXPECT_EQ(s["rows"][1]["parent"], "root");
  s = shares_query(h, {{"accounts", {"nosuch"}}});
  EXPECT_TRUE(s["rows"].empty());
}

// With an accounting file the tree has accounts: sshare shows them with their users, sprio the
// QOS factor of each job.
TEST(PriorityReport, AccountsFromTheAccountingFile) {
  Config c = multifactor_config();
  c.priority.weight_qos = 1000;
  load_accounting(c,
                  "Cluster - test:QOS='normal,high'\n"
                  "Account - physics:Fairshare=2\n"
                  "Account - chem:Fairshare=1\n"
                  "Parent - physics\n"
                  "User - alice\n"
                  "User - bob\n"
                  "Parent - chem\n"
                  "User - alice\n"
                  "QOS - high:Priority=100\n",
                  "accounts.cfg");
  Harness h(c);
  Effects fx;
  const uint64_t running = h.submit(h.bob, h.spec(4, 1), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(running)->state, core::JobState::Running);
  json s = h.spec();
  s["qos"] = "high";
  s["account"] = "chem";
  const uint64_t high = h.submit(h.alice, s, fx);
  const uint64_t normal = h.submit(h.alice, h.spec(), fx);
  h.sm.tick(h.now, fx);
  h.sm.schedule(h.now, fx);

  json r = factors_query(h);
  ASSERT_EQ(ids(r), (std::vector<uint64_t>{high, normal}));
  EXPECT_DOUBLE_EQ(r["rows"][0]["factors"]["qos"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r["rows"][1]["factors"]["qos"].get<double>(), 0.0);

  json sh = shares_query(h);
  std::vector<std::string> order;
  for (const auto& row : sh["rows"])
    order.push_back(row["account"].get<std::string>() + "/" + row["user"].get<std::string>() + "<" +
                    row["parent"].get<std::string>());
  EXPECT_EQ(order,
            (std::vector<std::string>{"root/<", "chem/<root", "chem/alice<chem", "physics/<root",
                                      "physics/alice<physics", "physics/bob<physics"}));
  EXPECT_EQ((*share_row(sh, "physics", ""))["raw_shares"], 2);
  // Bob's running job: its CPUs for the rest of an unlimited limit, up to physics and root.
  EXPECT_EQ((*share_row(sh, "physics", "bob"))["tres_run_mins"][0], uint64_t{4} * 0xffffffffULL);
  EXPECT_EQ((*share_row(sh, "physics", ""))["tres_run_mins"][0], uint64_t{4} * 0xffffffffULL);
  EXPECT_EQ((*share_row(sh, "chem", ""))["tres_run_mins"][0], 0);
  EXPECT_EQ(shares_query(h, {{"accounts", {"chem"}}})["rows"].size(), 2u);
}

}  // namespace drover::ctld::testing
