// scontrol update: the values scontrol refuses itself, with Slurm 22.05's words and exit
// statuses (taken from real scontrol), and the partition request it sends.
#include <gtest/gtest.h>

#include "cli/scontrol_partition.hpp"

using namespace drover::cli;

namespace {

CommandResult refused(std::vector<std::string> args) {
  PartitionUpdate u = parse_partition_update(args);
  EXPECT_FALSE(u.request) << u.request->to_json().dump();
  return u.result;
}

TEST(ScontrolPartitionUpdate, TypedRequest) {
  PartitionUpdate u = parse_partition_update(
      {"PartitionName=debug", "State=drain", "MaxTime=1:00:00", "DefaultTime=5", "MaxNodes=4",
       "MinNodes=1", "Priority=5", "Default=yes", "Hidden=NO", "Nodes=node[1-2]"});
  ASSERT_TRUE(u.request);
  const json request = u.request->to_json();
  EXPECT_EQ(request["op"], "partition_update");
  EXPECT_EQ(request["name"], "debug");
  const json& s = request["set"];
  EXPECT_EQ(s["state"], "DRAIN");
  EXPECT_EQ(s["max_time_min"], 60);
  EXPECT_EQ(s["default_time_min"], 5);
  EXPECT_EQ(s["max_nodes"], 4);
  EXPECT_EQ(s["min_nodes"], 1);
  EXPECT_EQ(s["priority_tier"], 5);  // Priority= sets both, as in Slurm 22.05
  EXPECT_EQ(s["priority_job_factor"], 5);
  EXPECT_EQ(s["is_default"], true);
  EXPECT_EQ(s["hidden"], false);
  EXPECT_EQ(s["nodes"], json({"node1", "node2"}));
  u = parse_partition_update({"PartitionName=debug", "MaxTime=INFINITE", "MaxNodes=UNLIMITED"});
  ASSERT_TRUE(u.request);
  EXPECT_EQ(u.request->set.max_time_min, -1);
  EXPECT_EQ(u.request->set.max_nodes, -1);
}

TEST(ScontrolPartitionUpdate, SlurmsMessages) {
  const std::string no_error = "slurm_update error: No error\n";
  CommandResult r = refused({"PartitionName=debug", "Foo=bar"});
  EXPECT_EQ(r.err,
            "scontrol: error: Update of this parameter is not supported: Foo=bar\n\n"
            "scontrol: error: Request aborted\n" +
                no_error);
  EXPECT_EQ(r.rc, 1);
  r = refused({"PartitionName=debug", "State=BOGUS"});
  EXPECT_EQ(r.err,
            "scontrol: error: Invalid input: State=BOGUS\n"
            "scontrol: error: Acceptable State values are UP, DOWN, DRAIN and INACTIVE\n" +
                no_error);
  EXPECT_EQ(refused({"PartitionName=debug", "MaxTime=abc"}).err,
            "scontrol: error: Invalid input MaxTime=abc\n" + no_error);
  EXPECT_EQ(refused({"PartitionName=debug", "MaxNodes=abc"}).err,
            "scontrol: error: Invalid numeric value \"abc\" for MaxNodes.\n");
  EXPECT_EQ(refused({"PartitionName=debug", "MaxNodes=-5"}).err,
            "scontrol: error: Invalid numeric value \"-5\" for MaxNodes.\n");
  EXPECT_EQ(refused({"PartitionName=debug", "MaxNodes=99999999999"}).err,
            "scontrol: error: Numeric argument (99999999999) to big for MaxNodes.\n");
  EXPECT_EQ(refused({"PartitionName=debug", "Priority=99999999"}).err,
            "scontrol: error: Invalid Priority value: 99999999\n" + no_error);
  EXPECT_EQ(refused({"PartitionName=debug", "PriorityTier=abc"}).err,
            "scontrol: error: Invalid PriorityTier value: abc\n" + no_error);
  EXPECT_EQ(refused({"PartitionName=debug", "Hidden=maybe"}).err,
            "scontrol: error: Invalid input: Hidden=maybe\n"
            "scontrol: error: Acceptable Hidden values are YES and NO\n" +
                no_error);
  r = refused({"PartitionName=debug"});
  EXPECT_EQ(r.err, "scontrol: error: No changes specified\n");
  EXPECT_EQ(r.rc, 1);
  // Slurm says this and exits 0; drover sends nothing.
  r = refused({"PartitionName=debug", "MinNodes=abc"});
  EXPECT_EQ(r.err, "scontrol: error: \"abc\" is not a valid node count\n");
  EXPECT_EQ(r.rc, 0);
}

TEST(ScontrolJobUpdate, NumbersScontrolRefuses) {
  auto err = [](const std::string& k, const std::string& v) {
    auto r = job_update_number_error(k, v);
    return r ? r->err + "rc=" + std::to_string(r->rc) : std::string("sent");
  };
  EXPECT_EQ(err("Priority", "99999999999999"),
            "scontrol: error: Invalid Priority value: 99999999999999\nrc=1");
  EXPECT_EQ(err("priority", "4294967294"),
            "scontrol: error: Invalid Priority value: 4294967294\nrc=1");
  EXPECT_EQ(err("Priority", "-1"), "scontrol: error: Invalid Priority value: -1\nrc=1");
  EXPECT_EQ(err("Priority", "5x"), "scontrol: error: Invalid Priority value: 5x\nrc=1");
  EXPECT_EQ(err("Priority", "4294967293"), "sent");
  EXPECT_EQ(err("Nice", "99999999999"),
            "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\nrc=1");
  EXPECT_EQ(err("Nice", "-2147483646"),
            "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\nrc=1");
  EXPECT_EQ(err("Nice", "-2147483645"), "sent");
  EXPECT_EQ(err("Nice", "-9223372036854775808"),
            "scontrol: error: Nice value out of range (+/- 2147483645). Value ignored\nrc=1");
  EXPECT_EQ(err("NumNodes", "99999999999"),
            "scontrol: error: Numeric argument (99999999999) to big for requested node "
            "count.\nrc=0");
  EXPECT_EQ(err("NumNodes", "5x"),
            "scontrol: error: Invalid numeric value \"5x\" for requested node count.\nrc=0");
  EXPECT_EQ(err("NumNodes", "1-2"), "sent");
  EXPECT_EQ(err("NumTasks", "99999999999"),
            "scontrol: error: Invalid NumTasks value: 99999999999\nrc=1");
  EXPECT_EQ(err("MinCPUsNode", "abc"), "scontrol: error: Invalid MinCPUsNode value: abc\nrc=1");
  EXPECT_EQ(err("TimeLimit", "99999999999"), "sent");  // the time parser bounds it
}

}  // namespace
