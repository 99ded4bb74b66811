// scontrol reconfigure: slurm.conf read again takes effect at once (partitions, scheduling
// parameters) while jobs stay as they are; what needs a restart is refused and leaves the
// configuration in force; scontrol update's partition changes go unless ReconfigFlags keeps them.
#include <gtest/gtest.h>

#include "ctld/tests/harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

const std::string kBase =
    "ClusterName=test\n"
    "SchedulerParameters=bf_interval=30\n"
    "NodeName=node[1-2] CPUs=2 RealMemory=1000\n"
    "PartitionName=debug Nodes=node[1-2] Default=YES MaxTime=60\n";

Config conf(const std::string& text) { return load_config_text(text, "slurm.conf"); }

// Where a job runs: "node:cpus" per node.
std::string where(const core::Job& job) {
  std::string out;
  for (const auto& a : job.alloc) out += a.node + ":" + std::to_string(a.cpus) + " ";
  return out;
}

json partition(Harness& h, const std::string& name) {
  const json all = h.sm.query(proto::QueryRequest::from_json({{"what", "partitions"}}), h.now);
  for (const auto& p : all["partitions"])
    if (p["name"] == name) return p;
  return nullptr;
}

TEST(Reconfigure, AppliesPartitionsAndSchedulingAndKeepsJobs) {
  Harness h(conf(kBase));
  Effects fx;
  const uint64_t running = h.submit(h.alice, h.spec(4), fx);  // every CPU
  const uint64_t pending = h.submit(h.alice, h.spec(1), fx);
  h.sm.schedule(h.now, fx);
  ASSERT_EQ(h.sm.find_job(running)->state, core::JobState::Running);
  ASSERT_EQ(h.sm.find_job(pending)->state, core::JobState::Pending);
  const std::string alloc = where(*h.sm.find_job(running));
  const int64_t pending_limit = h.sm.find_job(pending)->time_limit_min;

  Effects re;
  const std::string next =
      "ClusterName=test\n"
      "SchedulerParameters=bf_interval=7\n"
      "NodeName=node[1-2] CPUs=2 RealMemory=1000\n"
      "PartitionName=debug Nodes=node1 Default=YES MaxTime=30\n"
      "PartitionName=extra Nodes=node2 MaxTime=5\n";
  ASSERT_EQ(h.sm.reconfigure(conf(next), h.now, re), "");
  EXPECT_TRUE(re.reschedule());
  EXPECT_EQ(h.sm.config().bf_interval_s, 7);
  EXPECT_EQ(partition(h, "debug")["max_time_min"], 30);
  EXPECT_EQ(partition(h, "debug")["nodelist"], "node1");
  EXPECT_EQ(partition(h, "extra")["nodelist"], "node2");
  // The jobs are as they were: the running one keeps its nodes, the pending one its limit.
  EXPECT_EQ(h.sm.find_job(running)->state, core::JobState::Running);
  EXPECT_EQ(where(*h.sm.find_job(running)), alloc);
  EXPECT_EQ(h.sm.find_job(pending)->state, core::JobState::Pending);
  EXPECT_EQ(h.sm.find_job(pending)->time_limit_min, pending_limit);
  // A new job gets the new MaxTime, and may go to the new partition.
  const uint64_t fresh = h.submit(h.alice, h.spec(1), re);
  EXPECT_EQ(h.sm.find_job(fresh)->time_limit_min, 30);
  json s = h.spec(1);
  s["partitions"] = {"extra"};
  EXPECT_EQ(h.sm.find_job(h.submit(h.alice, s, re))->time_limit_min, 5);
}

TEST(Reconfigure, RefusesWhatNeedsARestartAndKeepsTheConfiguration) {
  Harness h(conf(kBase));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"ClusterName=other\n" + kBase.substr(kBase.find('\n') + 1), "ClusterName changed"},
      {kBase + "SchedulerType=sched/builtin\n", "SchedulerType changed"},
      {kBase + "AccountingStorageType=accounting_storage/pgsql\n", "AccountingStorageType"},
      {kBase + "NodeName=node3 CPUs=2\n", "nodes were added to or removed from slurm.conf"},
      {"ClusterName=test\nNodeName=node[1-2] CPUs=4 RealMemory=1000\n"
       "PartitionName=debug Nodes=node[1-2] Default=YES MaxTime=60\n",
       "NodeName=node1 changed"},
  };
  for (const auto& [text, why] : cases) {
    Effects fx;
    Config next = conf(text);
    next.conf.partitions.front().max_time_min = 1;
    const std::string error = h.sm.reconfigure(std::move(next), h.now, fx);
    EXPECT_NE(error.find(why), std::string::npos) << error;
    EXPECT_NE(error.find("restart"), std::string::npos) << error;
    EXPECT_FALSE(fx.reschedule());
    EXPECT_EQ(partition(h, "debug")["max_time_min"], 60) << text;
    EXPECT_EQ(h.sm.config().cluster_name, "test");
  }
}

TEST(Reconfigure, RefusesRemovingAPartitionThatHasJobs) {
  Harness h(conf(kBase + "PartitionName=extra Nodes=node2\n"));
  Effects fx;
  json s = h.spec(1);
  s["partitions"] = {"extra"};
  const uint64_t id = h.submit(h.alice, s, fx);
  std::string error = h.sm.reconfigure(conf(kBase), h.now, fx);
  EXPECT_EQ(error, "partition extra has job " + std::to_string(id) +
                       ": it cannot be removed while it "
                       "has jobs");
  EXPECT_NE(partition(h, "extra"), nullptr);
  ASSERT_TRUE(h.sm.cancel(proto::CancelRequest::from_json({{"jobs", {std::to_string(id)}}}),
                          h.alice, h.now, fx)["ok"]);
  EXPECT_EQ(h.sm.reconfigure(conf(kBase), h.now, fx), "");
  EXPECT_EQ(partition(h, "extra"), nullptr);
}

json update(Harness& h, json set, Effects& fx) {
  return h.sm.partition_update(
      proto::PartitionUpdateRequest::from_json({{"name", "debug"}, {"set", std::move(set)}}),
      h.root, fx);
}

TEST(Reconfigure, ScontrolPartitionChangesFollowReconfigFlags) {
  {  // Default: slurm.conf's settings again, and the journaled change goes.
    Harness h(conf(kBase));
    Effects fx;
    ASSERT_TRUE(update(h, {{"state", "DOWN"}, {"max_time_min", 10}}, fx)["ok"]);
    Effects re;
    ASSERT_EQ(h.sm.reconfigure(conf(kBase), h.now, re), "");
    EXPECT_EQ(partition(h, "debug")["state"], "UP");
    EXPECT_EQ(partition(h, "debug")["max_time_min"], 60);
    EXPECT_TRUE(re.journals(journal::Partition{"debug"}));
    EXPECT_EQ(h.sm.partition_admin_record("debug"), json::object());
  }
  {  // KeepPartState: only the state stays.
    const std::string text = kBase + "ReconfigFlags=KeepPartState\n";
    Harness h(conf(text));
    Effects fx;
    ASSERT_TRUE(update(h, {{"state", "DOWN"}, {"max_time_min", 10}}, fx)["ok"]);
    Effects re;
    ASSERT_EQ(h.sm.reconfigure(conf(text), h.now, re), "");
    EXPECT_EQ(partition(h, "debug")["state"], "DOWN");
    EXPECT_EQ(partition(h, "debug")["max_time_min"], 60);
    EXPECT_EQ(h.sm.partition_admin_record("debug"), (json{{"state", "DOWN"}}));
    // A job waits: the partition is still down.
    const uint64_t id = h.submit(h.alice, h.spec(1), re);
    h.sm.schedule(h.now, re);
    EXPECT_EQ(h.sm.find_job(id)->reason, "PartitionDown");
  }
  {  // KeepPartInfo: everything scontrol changed stays.
    const std::string text = kBase + "ReconfigFlags=KeepPartInfo\n";
    Harness h(conf(text));
    Effects fx;
    ASSERT_TRUE(update(h, {{"state", "DOWN"}, {"max_time_min", 10}}, fx)["ok"]);
    Effects re;
    ASSERT_EQ(h.sm.reconfigure(conf(text), h.now, re), "");
    EXPECT_EQ(partition(h, "debug")["state"], "DOWN");
    EXPECT_EQ(partition(h, "debug")["max_time_min"], 10);
    EXPECT_FALSE(re.journals(journal::Partition{"debug"}));
  }
}

TEST(Reconfigure, NodeStatesSetByScontrolStay) {
  Harness h(conf(kBase));
  Effects fx;
  ASSERT_TRUE(h.sm.node_update(proto::NodeUpdateRequest::from_json(
                                   {{"nodes", "node1"}, {"state", "DRAIN"}, {"reason", "fix"}}),
                               h.root, h.now, fx)["ok"]);
  ASSERT_EQ(h.sm.reconfigure(conf(kBase), h.now, fx), "");
  EXPECT_TRUE(h.sm.find_node("node1")->drain);
}

}  // namespace

namespace {

TEST(Reconfigure, DynamicNodesStayInThePartitionsThatTakeThem) {
  const std::string text =
      "ClusterName=test\nMaxNodeCount=4\n"
      "NodeName=node[1-2] CPUs=2 RealMemory=1000\n"
      "PartitionName=all Nodes=ALL Default=YES\n"
      "PartitionName=fixed Nodes=node1\n";
  Harness h(conf(text));
  Effects fx;
  ASSERT_TRUE(h.sm.node_create(
      proto::NodeCreateRequest::from_json({{"line", "NodeName=dyn1 CPUs=2 State=FUTURE"}}), h.root,
      fx)["ok"]);
  const json before = partition(h, "all")["nodes"];
  ASSERT_EQ(before.size(), 3u);
  // The file's partitions again, and a new Nodes=ALL one: the dynamic node is in both.
  ASSERT_EQ(h.sm.reconfigure(conf(text + "PartitionName=more Nodes=ALL\n"), h.now, fx), "");
  EXPECT_EQ(partition(h, "all")["nodes"], before);
  EXPECT_EQ(partition(h, "more")["nodes"], before);
  EXPECT_EQ(partition(h, "fixed")["nodes"], json::array({"node1"}));
  EXPECT_TRUE(h.sm.knows_node("dyn1"));
}

}  // namespace

namespace {

TEST(Reconfigure, AccountingDataStaysAndLimitsFollowPartitionQos) {
  const std::string text =
      "ClusterName=test\nAccountingStorageEnforce=associations,limits,qos\n"
      "NodeName=node[1-2] CPUs=2 RealMemory=1000\n";
  const std::string part = "PartitionName=debug Nodes=node[1-2] Default=YES";
  Config c = conf(text + part + "\n");
  load_accounting(c,
                  "Cluster - test:QOS='normal,high'\nAccount - physics\nParent - physics\n"
                  "User - alice\nQOS - high:Priority=100\n",
                  "accounts.cfg");
  Harness h(std::move(c));
  ASSERT_TRUE(h.sm.acct_data().has_value());
  Effects fx;
  // A partition QOS the accounting data lacks: refused, nothing changes.
  EXPECT_NE(h.sm.reconfigure(conf(text + part + " QOS=nosuch MaxTime=5\n"), h.now, fx), "");
  EXPECT_EQ(partition(h, "debug")["max_time_min"], -1);
  // One it has: the limits are rebuilt over it, the accounts stay and still admit alice only.
  ASSERT_EQ(h.sm.reconfigure(conf(text + part + " QOS=high MaxTime=5\n"), h.now, fx), "");
  ASSERT_NE(h.sm.config().limits, nullptr);
  EXPECT_TRUE(h.sm.acct_data().has_value());
  EXPECT_EQ(partition(h, "debug")["max_time_min"], 5);
  h.submit(h.alice, h.spec(), fx);
  EXPECT_FALSE(h.sm.submit(proto::SubmitRequest::from_json({{"spec", h.spec()}}), h.bob, h.now, fx)
                   .value("ok", true));
}

}  // namespace

namespace {

TEST(Reconfigure, ABadValueIsNamedWithItsLine) {
  try {
    load_config_text(kBase + "# KillWait=30 in a comment\nkillwait=soon\n", "/etc/slurm.conf");
    FAIL() << "not refused";
  } catch (const core::ParseError& e) {
    EXPECT_STREQ(e.what(), "/etc/slurm.conf:6: KillWait=soon is not a number");
  }
}

}  // namespace
