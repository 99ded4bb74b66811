#include "core/slurm_conf.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

using namespace drover::core;
using V = std::vector<std::string>;

namespace {

std::string error_of(std::string_view text) {
  try {
    parse_slurm_conf(text);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

constexpr std::string_view kSample = R"(# Example cluster
ClusterName=drover-test
SlurmctldHost=ctl1
SlurmctldPort=6817 SlurmdPort=6818   # two on one line
killwait=30
SchedulerParameters="bf_continue,bf_interval=30"
NodeName=DEFAULT CPUs=8 RealMemory=16000 State=UNKNOWN
NodeName=node[1-4] Features=intel,avx2
NodeName=gpu[01-02] CPUs=32 Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 RealMemory=256000 \
    Gres=gpu:a100:4,gpu:1g.10gb:2 Weight=10
PartitionName=DEFAULT MaxTime=1-00:00:00 State=UP
PartitionName=debug Nodes=node[1-2] Default=YES MaxTime=30 DefaultTime=10
PartitionName=batch Nodes=ALL MaxNodes=UNLIMITED AllowAccounts=phys,chem OverSubscribe=FORCE:4
PartitionName=gpu Nodes=gpu[01-02] MaxTime=UNLIMITED PriorityTier=10 Hidden=yes AllowGroups=ml
)";

}  // namespace

TEST(SlurmConf, GlobalOptions) {
  SlurmConf c = parse_slurm_conf(kSample);
  EXPECT_EQ(c.cluster_name, "drover-test");
  EXPECT_EQ(c.get("SlurmctldHost", ""), "ctl1");
  EXPECT_EQ(c.get_int("SlurmctldPort", 0), 6817);
  EXPECT_EQ(c.get_int("SlurmdPort", 0), 6818);
  EXPECT_EQ(c.options.at("KillWait"), "30");  // canonical spelling
  EXPECT_EQ(c.get_int("killwait", 0), 30);    // lookups are case-insensitive
  EXPECT_EQ(c.get("SchedulerParameters", ""), "bf_continue,bf_interval=30");
  EXPECT_EQ(c.get_int("MinJobAge", 300), 300);
  EXPECT_EQ(c.get("SlurmUser", "root"), "root");
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  EXPECT_THROW(c.get_int("SlurmctldHost", 0), ParseError);
}

TEST(SlurmConf, Nodes) {
  SlurmConf c = parse_slurm_conf(kSample);
  ASSERT_EQ(c.nodes.size(), 6u);
  EXPECT_EQ(c.nodes[0].name, "node1");
  EXPECT_EQ(c.nodes[3].name, "node4");
  const NodeConf* n = c.find_node("node3");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->cpus, 8);
  EXPECT_EQ(n->sockets, 8);  // inferred from CPUs with 1 core and 1 thread
  EXPECT_EQ(n->real_memory_mb, 16000);
  EXPECT_EQ(n->features, (V{"intel", "avx2"}));
  EXPECT_EQ(n->state, "UNKNOWN");
  EXPECT_EQ(n->node_addr, "node3");
  EXPECT_EQ(n->node_hostname, "node3");
  EXPECT_EQ(n->weight, 1);
  const NodeConf* g = c.find_node("gpu02");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->cpus, 32);
  EXPECT_EQ(g->sockets, 2);
  EXPECT_EQ(g->cores_per_socket, 8);
  EXPECT_EQ(g->threads_per_core, 2);
  EXPECT_EQ(g->real_memory_mb, 256000);
  EXPECT_EQ(g->gres, "gpu:a100:4,gpu:1g.10gb:2");
  EXPECT_EQ(g->weight, 10);
  EXPECT_TRUE(g->features.empty());
  EXPECT_EQ(c.find_node("nope"), nullptr);
}

TEST(SlurmConf, Partitions) {
  SlurmConf c = parse_slurm_conf(kSample);
  ASSERT_EQ(c.partitions.size(), 3u);
  const PartitionConf* d = c.default_partition();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->name, "debug");
  EXPECT_EQ(d->nodes, (V{"node1", "node2"}));
  EXPECT_EQ(d->max_time_min, 30);
  EXPECT_EQ(d->default_time_min, 10);
  EXPECT_EQ(d->state, "UP");
  const PartitionConf* b = c.find_partition("batch");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->is_default);
  EXPECT_EQ(b->nodes.size(), 6u);    // ALL
  EXPECT_EQ(b->max_time_min, 1440);  // from PartitionName=DEFAULT
  EXPECT_EQ(b->default_time_min, kInfinite);
  EXPECT_EQ(b->max_nodes, -1);
  EXPECT_EQ(b->allow_accounts, (V{"phys", "chem"}));
  EXPECT_TRUE(b->allow_qos.empty());
  EXPECT_EQ(b->over_subscribe, "FORCE:4");
  const PartitionConf* g = c.find_partition("gpu");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->max_time_min, kInfinite);
  EXPECT_EQ(g->priority_tier, 10);
  EXPECT_TRUE(g->hidden);
  EXPECT_FALSE(g->root_only);
  EXPECT_EQ(g->other.at("AllowGroups"), "ml");
  EXPECT_EQ(c.find_partition("GPU"), nullptr);  // partition names are case-sensitive
}

TEST(SlurmConf, CommentsQuotesAndContinuations) {
  SlurmConf c = parse_slurm_conf(
      "ClusterName=a\\#b # comment\n"
      "   # indented comment\n"
      "\n"
      "SlurmctldLogFile=\"/var/log/slurm ctld.log\"\n"
      "NodeName=n1 Reason=\"disk #3 failed\" State=down\n"
      "SchedulerParameters=bf_continue,\\\n"
      "bf_interval=30\r\n");
  EXPECT_EQ(c.cluster_name, "a#b");
  EXPECT_EQ(c.get("SlurmctldLogFile", ""), "/var/log/slurm ctld.log");
  EXPECT_EQ(c.nodes.at(0).other.at("Reason"), "disk #3 failed");
  EXPECT_EQ(c.nodes.at(0).state, "DOWN");
  EXPECT_EQ(c.get("SchedulerParameters", ""), "bf_continue,bf_interval=30");
}

TEST(SlurmConf, ErrorLineNumbersFollowContinuations) {
  EXPECT_EQ(error_of("A=1 \\\n B=2\nbogus\n"), "slurm.conf:3: expected Key=Value, got 'bogus'");
  EXPECT_EQ(error_of("NodeName=n1 CPUs=x"), "slurm.conf:1: invalid value 'x' for CPUs");
}

TEST(SlurmConf, UnknownKeysWarn) {
  SlurmConf c = parse_slurm_conf(
      "Foo=1\nNodeName=n1 Bar=2\nPartitionName=p Nodes=n1 Baz=3\nCPUs=4\n", "my.conf");
  ASSERT_EQ(c.warnings.size(), 4u);
  EXPECT_EQ(c.warnings[0], "my.conf:1: unknown key 'Foo'");
  EXPECT_EQ(c.warnings[1], "my.conf:2: unknown node attribute 'Bar'");
  EXPECT_EQ(c.warnings[2], "my.conf:3: unknown partition attribute 'Baz'");
  EXPECT_EQ(c.warnings[3], "my.conf:4: unknown key 'CPUs'");  // node attribute, not global
  EXPECT_EQ(c.options.count("Foo"), 0u);
}

TEST(SlurmConf, DocumentedKeysAreKnown) {
  SlurmConf c = parse_slurm_conf(
      "AccountingStorageType=accounting_storage/none\nProctrackType=proctrack/linuxproc\n"
      "SelectType=select/cons_tres SelectTypeParameters=CR_Core_Memory\n"
      "TaskPlugin=task/affinity ReturnToService=2 GresTypes=gpu MpiDefault=none\n"
      "JobCompType=jobcomp/none X11Parameters=home_xauthority SlurmdSpoolDir=/var/spool\n");
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(canonical_slurm_conf_key("slurmctldport"), "SlurmctldPort");
  EXPECT_EQ(canonical_slurm_conf_key("NotAKey"), std::nullopt);
}

TEST(SlurmConf, DuplicateGlobalKeyWarnsAndKeepsLast) {
  SlurmConf c = parse_slurm_conf("KillWait=30\nKILLWAIT=60\n");
  EXPECT_EQ(c.get_int("KillWait", 0), 60);
  ASSERT_EQ(c.warnings.size(), 1u);
}

TEST(SlurmConf, Errors) {
  EXPECT_EQ(error_of("NodeName=n1\nNodeName=n[0-1]\n"), "slurm.conf:2: duplicate node 'n1'");
  EXPECT_EQ(error_of("NodeName=n1\nPartitionName=p Nodes=n[1-2]\n"),
            "slurm.conf:2: partition 'p' names undefined node 'n2'");
  EXPECT_EQ(error_of("ClusterName"), "slurm.conf:1: expected Key=Value, got 'ClusterName'");
  EXPECT_EQ(error_of("ClusterName = x"), "slurm.conf:1: expected Key=Value, got 'ClusterName'");
  EXPECT_EQ(error_of("=x"), "slurm.conf:1: missing key before '='");
  EXPECT_EQ(error_of("A=\"x"), "slurm.conf:1: unterminated quote in A");
  EXPECT_EQ(error_of("NodeName=n1 RealMemory=-5"),
            "slurm.conf:1: invalid value '-5' for RealMemory");
  EXPECT_EQ(error_of("NodeName=n[2-1]"), "slurm.conf:1: NodeName: Invalid hostlist: n[2-1]");
  EXPECT_EQ(error_of("PartitionName=p MaxTime=soon"),
            "slurm.conf:1: invalid time 'soon' for MaxTime");
  EXPECT_EQ(error_of("PartitionName=p Default=maybe"),
            "slurm.conf:1: invalid value 'maybe' for Default (expected YES or NO)");
  EXPECT_EQ(error_of("PartitionName=p State=SIDEWAYS"),
            "slurm.conf:1: invalid partition State 'SIDEWAYS'");
  EXPECT_EQ(error_of("PartitionName=p OverSubscribe=sometimes"),
            "slurm.conf:1: invalid value 'sometimes' for OverSubscribe");
}

TEST(SlurmConf, NodeDefaultsAccumulate) {
  SlurmConf c = parse_slurm_conf(
      "NodeName=DEFAULT CPUs=4\nNodeName=DEFAULT RealMemory=1000\nNodeName=a1\n"
      "NodeName=DEFAULT CPUs=2\nNodeName=a2 RealMemory=5\n");
  EXPECT_EQ(c.nodes[0].cpus, 4);
  EXPECT_EQ(c.nodes[0].real_memory_mb, 1000);
  EXPECT_EQ(c.nodes[1].cpus, 2);
  EXPECT_EQ(c.nodes[1].real_memory_mb, 5);
}

TEST(SlurmConf, NodeTopologyDefaults) {
  SlurmConf c = parse_slurm_conf(
      "NodeName=a Sockets=2 CoresPerSocket=4 ThreadsPerCore=2\n"
      "NodeName=b Boards=2 SocketsPerBoard=2 CoresPerSocket=2\n"
      "NodeName=c\n"
      "NodeName=d Procs=6 CoresPerSocket=3\n");
  EXPECT_EQ(c.find_node("a")->cpus, 16);
  EXPECT_EQ(c.find_node("b")->cpus, 8);
  EXPECT_EQ(c.find_node("b")->sockets, 4);
  EXPECT_EQ(c.find_node("b")->boards, 2);
  EXPECT_EQ(c.find_node("c")->cpus, 1);
  EXPECT_EQ(c.find_node("c")->real_memory_mb, 1);
  EXPECT_EQ(c.find_node("d")->cpus, 6);
  EXPECT_EQ(c.find_node("d")->sockets, 2);
}

TEST(SlurmConf, PerNodeAddressesAndPorts) {
  SlurmConf c = parse_slurm_conf(
      "NodeName=n[1-3] NodeAddr=10.0.0.[1-3] NodeHostname=h[1-3] Port=[17001-17003]\n"
      "NodeName=m[1-2] Port=7000\n");
  EXPECT_EQ(c.find_node("n2")->node_addr, "10.0.0.2");
  EXPECT_EQ(c.find_node("n3")->node_hostname, "h3");
  EXPECT_EQ(c.find_node("n3")->port, 17003);
  EXPECT_EQ(c.find_node("m2")->port, 7000);
}

// Debian's Slurm 22.05 (multiple-slurmd): one address for a node range, a port per node.
TEST(SlurmConf, OneAddressForANodeRange) {
  SlurmConf c = parse_slurm_conf(
      "NodeName=node[1-9] NodeAddr=127.0.0.1 Port=[17001-17009]\n"
      "NodeName=m[1-3] NodeHostname=box Port=[7001,7003-7004]\n"
      "NodeName=k[1-2] NodeHostname=h[1-2] NodeAddr=10.0.0.9\n");
  ASSERT_EQ(c.nodes.size(), 14u);
  for (int i = 1; i <= 9; ++i) {
    const NodeConf* n = c.find_node("node" + std::to_string(i));
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->node_addr, "127.0.0.1");
    EXPECT_EQ(n->node_hostname, n->name);
    EXPECT_EQ(n->port, 17000 + i);
  }
  EXPECT_EQ(c.find_node("m2")->node_hostname, "box");
  EXPECT_EQ(c.find_node("m2")->node_addr, "box");  // NodeAddr defaults to NodeHostname
  EXPECT_EQ(c.find_node("m1")->port, 7001);
  EXPECT_EQ(c.find_node("m2")->port, 7003);
  EXPECT_EQ(c.find_node("m3")->port, 7004);
  EXPECT_EQ(c.find_node("k2")->node_hostname, "h2");
  EXPECT_EQ(c.find_node("k2")->node_addr, "10.0.0.9");
}

// The messages are slurmctld 22.05's, checked against it (its typo "of there" included).
TEST(SlurmConf, AddressAndPortCountsRefusedInSlurmsWords) {
  const std::string addr =
      "slurm.conf:1: NodeAddr count must equal that of NodeName records of there must be no "
      "more than one";
  EXPECT_EQ(error_of("NodeName=n[1-3] NodeAddr=10.0.0.[1-2]"), addr);
  EXPECT_EQ(error_of("NodeName=n[1-3] NodeAddr=10.0.0.[1-4]"), addr);
  EXPECT_EQ(error_of("NodeName=n[1-3] NodeHostname=h[1-2]"), addr);
  EXPECT_EQ(error_of("NodeName=n[1-3] NodeHostname=h[1-4] NodeAddr=a[1-3]"),
            "slurm.conf:1: NodeHostname count must equal that of NodeName records of there must "
            "be no more than one");
  EXPECT_EQ(error_of("NodeName=n[1-3] Port=[17001-17002]"),
            "slurm.conf:1: Port count must equal that of NodeName records or there must be no "
            "more than one (2 != 3)");
  EXPECT_EQ(error_of("NodeName=n[1-3] Port=[17001-17004]"),
            "slurm.conf:1: Port count must equal that of NodeName records or there must be no "
            "more than one (4 != 3)");
  EXPECT_EQ(error_of("NodeName=n1 Port=70000"), "slurm.conf:1: invalid value '70000' for Port");
}

// Other forms Debian's Slurm takes: defaults lines, keys in any case, comments after values,
// quoted values, Include.
TEST(SlurmConf, DebianForms) {
  IncludeResolver files = [](std::string_view path) -> std::optional<std::string> {
    if (path == "/etc/slurm/nodes.conf") return "nodename=n[1-2] port=\"[7001-7002]\"\n";
    return std::nullopt;
  };
  SlurmConf c = parse_slurm_conf(
      "NODENAME=DEFAULT cpus=4 RealMemory=\"2000\" # defaults\n"
      "partitionname=DEFAULT maxtime=30 # default limit\n"
      "include /etc/slurm/nodes.conf\n"
      "PartitionName=\"p\" Nodes=\"n[1-2]\" Default=YES   # the only one\n",
      "slurm.conf", files);
  ASSERT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.nodes[1].cpus, 4);
  EXPECT_EQ(c.nodes[1].real_memory_mb, 2000);
  EXPECT_EQ(c.nodes[1].port, 7002);
  ASSERT_EQ(c.partitions.size(), 1u);
  EXPECT_EQ(c.partitions[0].name, "p");
  EXPECT_EQ(c.partitions[0].max_time_min, 30);
  EXPECT_EQ(c.partitions[0].nodes, (V{"n1", "n2"}));
  EXPECT_TRUE(c.warnings.empty());
}

TEST(SlurmConf, PartitionDetails) {
  SlurmConf c = parse_slurm_conf(
      "NodeName=n[1-4] Feature=big\n"
      "NodeSet=bigs Feature=big\n"
      "PartitionName=a Nodes=n[1-2],n2 Default=YES\n"
      "PartitionName=b Nodes=bigs Default=YES Shared=EXCLUSIVE RootOnly=YES AllowQos=normal\n"
      "PartitionName=a Nodes=n3\n"
      "PartitionName=c State=drain MaxNodes=3 MinNodes=2 PriorityJobFactor=5\n");
  ASSERT_EQ(c.partitions.size(), 3u);
  EXPECT_EQ(c.partitions[0].nodes, (V{"n1", "n2"}));  // duplicates dropped
  EXPECT_FALSE(c.partitions[0].is_default);           // the last Default=YES wins
  EXPECT_EQ(c.default_partition()->name, "b");
  EXPECT_EQ(c.partitions[1].nodes.size(), 4u);
  EXPECT_EQ(c.partitions[1].over_subscribe, "EXCLUSIVE");
  EXPECT_TRUE(c.partitions[1].root_only);
  EXPECT_EQ(c.partitions[1].allow_qos, V{"normal"});
  EXPECT_TRUE(c.partitions[2].nodes.empty());
  EXPECT_EQ(c.partitions[2].state, "DRAIN");
  EXPECT_EQ(c.partitions[2].max_nodes, 3);
  EXPECT_EQ(c.partitions[2].min_nodes, 2);
  EXPECT_EQ(c.partitions[2].priority_job_factor, 5);
  EXPECT_EQ(c.warnings.size(), 2u);  // default moved, duplicate partition ignored
}

// Which nodes that join later a partition takes: all with Nodes=ALL, those with a NodeSet's
// feature when Nodes= names that NodeSet (also when no node has it yet).
TEST(SlurmConf, PartitionsRecordWhatDynamicNodesTheyTake) {
  SlurmConf c = parse_slurm_conf(
      "NodeName=n[1-2] Feature=big\n"
      "NodeSet=bigs Feature=big\n"
      "NodeSet=gpus Feature=gpu\n"
      "NodeSet=listed Nodes=n1\n"
      "PartitionName=a Nodes=ALL\n"
      "PartitionName=b Nodes=bigs,gpus,n2\n"
      "PartitionName=c Nodes=listed\n"
      "PartitionName=d Nodes=n1\n");
  ASSERT_EQ(c.partitions.size(), 4u);
  EXPECT_TRUE(c.partitions[0].all_nodes);
  EXPECT_EQ(c.partitions[0].nodes, (V{"n1", "n2"}));
  EXPECT_FALSE(c.partitions[1].all_nodes);
  EXPECT_EQ(c.partitions[1].node_set_features, (V{"big", "gpu"}));
  EXPECT_EQ(c.partitions[1].nodes, (V{"n1", "n2"}));
  EXPECT_TRUE(c.partitions[2].node_set_features.empty());
  EXPECT_FALSE(c.partitions[3].all_nodes);
  EXPECT_TRUE(c.partitions[3].node_set_features.empty());
}

TEST(SlurmConf, DownNodes) {
  SlurmConf c =
      parse_slurm_conf("NodeName=n[1-3]\nDownNodes=n[2-3] State=DRAIN Reason=\"bad fan\"\n");
  EXPECT_EQ(c.find_node("n1")->state, "UNKNOWN");
  EXPECT_EQ(c.find_node("n2")->state, "DRAIN");
  EXPECT_EQ(c.find_node("n3")->other.at("Reason"), "bad fan");
  EXPECT_EQ(error_of("DownNodes=x1\n"), "slurm.conf:1: DownNodes names undefined node 'x1'");
}

TEST(SlurmConf, Include) {
  SlurmConf c = parse_slurm_conf("ClusterName=x\nInclude /etc/slurm/nodes.conf\n");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "slurm.conf:2: Include '/etc/slurm/nodes.conf' not followed");

  IncludeResolver files = [](std::string_view path) -> std::optional<std::string> {
    if (path == "/etc/alpha_nodes.conf") return "NodeName=n[1-2]\ninclude parts.conf\n";
    if (path == "parts.conf") return "PartitionName=p Nodes=ALL\nBogus=1\n";
    if (path == "loop.conf") return "Include loop.conf\n";
    return std::nullopt;
  };
  c = parse_slurm_conf("ClusterName=alpha\nInclude /etc/%c_nodes.conf\n", "slurm.conf", files);
  EXPECT_EQ(c.nodes.size(), 2u);
  EXPECT_EQ(c.partitions.at(0).nodes.size(), 2u);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], "parts.conf:2: unknown key 'Bogus'");
  EXPECT_THROW(parse_slurm_conf("Include missing.conf\n", "slurm.conf", files), ParseError);
  EXPECT_THROW(parse_slurm_conf("Include loop.conf\n", "slurm.conf", files), ParseError);
}

TEST(SlurmConf, EmptyInput) {
  SlurmConf c = parse_slurm_conf("");
  EXPECT_TRUE(c.nodes.empty());
  EXPECT_EQ(c.default_partition(), nullptr);
  EXPECT_EQ(c.get_int("KillWait", 30), 30);
}
