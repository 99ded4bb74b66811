// sinfo's text output against canned controller replies: -o letters and -O names from one
// table, sizes, suffixes and justification, how nodes group into lines (ranges such as "2+",
// -e/--exact), SINFO_FORMAT's place among -o, -O, -N, -s and -R, and -i/--iterate.
#include "cli/sinfo.hpp"

#include <gtest/gtest.h>

#include "cli/format.hpp"
#include "cli/iterate.hpp"
#include "cli/sinfo_fields.hpp"

namespace drover::cli {
namespace {

json node(const std::string& name, int cpus, int64_t mem, const std::string& state_short,
          const std::string& state_long) {
  return {{"name", name},
          {"hostname", name},
          {"address", "10.0.0.1"},
          {"cpus", cpus},
          {"sockets", cpus},
          {"cores_per_socket", 1},
          {"threads_per_core", 1},
          {"real_memory_mb", mem},
          {"tmp_disk_mb", 0},
          {"weight", 1},
          {"features", json::array()},
          {"gres", ""},
          {"state_short", state_short},
          {"state_long", state_long},
          {"alloc_cpus", 0},
          {"alloc_mem_mb", 0},
          {"reason", ""},
          {"version", "22.05.8"},
          {"port", 6818}};
}

// node1: 2 CPUs, 1000 MB; node2: 4 CPUs (2 sockets), 2000 MB, weight 5; node3: like node1 with
// the feature "big", drained by root for "disk". Partitions debug (default, all) and short
// (node1, 10 minutes).
json nodes_reply() {
  json n1 = node("node1", 2, 1000, "idle", "IDLE");
  json n2 = node("node2", 4, 2000, "idle", "IDLE");
  n2["sockets"] = 2;
  n2["cores_per_socket"] = 2;
  n2["weight"] = 5;
  n2["tmp_disk_mb"] = 100;
  json n3 = node("node3", 2, 1000, "drain", "IDLE+DRAIN");
  n3["features"] = {"big"};
  n3["drain"] = true;
  n3["reason"] = "disk";
  n3["reason_uid"] = 0;
  n3["reason_time"] = 0;
  return {{"ok", true}, {"now", 1700000000}, {"nodes", {n1, n2, n3}}};
}

json partition(const std::string& name, const std::vector<std::string>& nodes, bool dflt,
               int64_t max_time_min) {
  return {{"name", name},
          {"nodes", nodes},
          {"is_default", dflt},
          {"state", "UP"},
          {"max_time_min", max_time_min},
          {"default_time_min", -1},
          {"max_nodes", -1},
          {"min_nodes", 0},
          {"priority_tier", 1},
          {"priority_job_factor", 1},
          {"over_subscribe", "NO"},
          {"root_only", false},
          {"preempt_mode", "OFF"}};
}

json partitions_reply() {
  return {{"ok", true},
          {"partitions",
           {partition("debug", {"node1", "node2", "node3"}, true, -1),
            partition("short", {"node1"}, false, 10)}}};
}

CommandEnv canned_env(std::map<std::string, std::string> vars = {}) {
  CommandEnv e;
  e.call = [](const json& req) {
    return req.value("what", "") == "nodes" ? nodes_reply() : partitions_reply();
  };
  e.name_of = [](uint32_t uid) -> std::optional<std::string> {
    if (uid == 0) return std::string("root");
    return std::nullopt;
  };
  e.env = std::move(vars);
  return e;
}

std::string out(const std::vector<std::string>& args,
                std::map<std::string, std::string> vars = {}) {
  const CommandResult r = run_sinfo(args, canned_env(std::move(vars)));
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.out;
}

TEST(Sinfo, UnlikeNodesShareALineWithTheSmallestSizeAndAPlus) {
  // Without a state or feature field the drained node joins too; sizes show "2+".
  EXPECT_EQ(out({"-o", "%P|%c|%m|%d|%w|%z|%X|%Y|%Z|%D|%N"}),
            "PARTITION|CPUS|MEMORY|TMP_DISK|WEIGHT|S:C:T|SOCKETS|CORES|THREADS|NODES|NODELIST\n"
            "debug*|2+|1000+|0+|1+|2:1+:1|2|1+|1|3|node[1-3]\n"
            "short|2|1000|0|1|2:1:1|2|1|1|1|node1\n");
  // Features and states tell nodes apart; lines are ordered by partition, then by the state
  // of their first node (drained first).
  EXPECT_EQ(out({"-h", "-o", "%P|%c|%f|%t|%N"}),
            "debug*|2|big|drain|node3\n"
            "debug*|2+|(null)|idle|node[1-2]\n"
            "short|2|(null)|idle|node1\n");
}

TEST(Sinfo, ExactSplitsNodesOfUnlikeSizes) {
  EXPECT_EQ(out({"-e", "-h", "-o", "%P|%c|%m|%z|%N"}),
            "debug*|2|1000|2:1:1|node[1,3]\n"
            "debug*|4|2000|2:2:1|node2\n"
            "short|2|1000|2:1:1|node1\n");
  // Only the sizes the format shows count: equal CPU counts share a line.
  EXPECT_EQ(out({"--exact", "-h", "-o", "%R %X %N"}), "debug 2 node[1-3]\nshort 2 node1\n");
}

TEST(Sinfo, FormatsWithoutPartitionFieldsJoinPartitions) {
  // A node in two partitions counts once; time limits keep partitions apart, AVAIL does not.
  EXPECT_EQ(out({"-o", "%D|%C|%N"}), "NODES|CPUS(A/I/O/T)|NODELIST\n3|0/6/2/8|node[1-3]\n");
  EXPECT_EQ(out({"-h", "-o", "%a|%D|%N"}), "up|3|node[1-3]\n");
  EXPECT_EQ(out({"-h", "-o", "%l|%D|%N"}), "infinite|3|node[1-3]\n10:00|1|node1\n");
}

TEST(Sinfo, NamedFieldsWithSizesSuffixesAndJustification) {
  EXPECT_EQ(out({"-p", "short", "-O", "partition,cpus,nodelist"}),
            "PARTITION           CPUS                NODELIST            \n"
            "short               2                   node1               \n");
  // ":N" cuts or pads, ":.N" right-justifies, what follows the size is printed after the
  // field, ":" alone is the value's own width, a negative size prints only the suffix.
  EXPECT_EQ(out({"-p", "short", "-O", "NodeList:3,CPUs:.6|,Memory:,Nodes:-5x,Weight:.x"}),
            "NOD  CPUS|MEMORYxWEIGHTx\n"
            "nod     2|1000x1x\n");
  // A default partition cut short keeps its '*'.
  EXPECT_EQ(out({"-p", "debug", "-o", "%3P|%.2P|%1P|%R"}), "PAR|PA|P|PARTITION\nde*|d*|*|debug\n");
}

TEST(Sinfo, EveryNamedFieldHasItsTitle) {
  EXPECT_EQ(out({"-h", "-p", "short", "-O",
                 "available:0,allocnodes:0,cluster:0,groups:0,maxcpuspernode:0,defaulttime:0,"
                 "time:0,size:0,root:0,oversubscribe:0,preemptmode:0,prioritytier:0,"
                 "priorityjobfactor:0,statecompact:0,statelong:0,statecomplete:0,reason:0,"
                 "user:0,userlong:0,timestamp:0,features:0,features_act:0,gres:0,gresused:0,"
                 "allocmem:0,nodeai:0,nodeaiot:0,cpusstate:0,nodehost:0,nodeaddr:0,version:0,"
                 "port:0,comment:0,extra:0,disk:0,sockets:0,cores:0,threads:0,"
                 "socketcorethread:0",
                 "-O", "Partition:0"}),
            "short\n");  // the last -O wins
  const std::string line =
      out({"-h", "-p", "short", "-O",
           "available:0|,allocnodes:0|,cluster:0|,groups:0|,maxcpuspernode:0|,defaulttime:0|,"
           "time:0|,size:0|,root:0|,oversubscribe:0|,preemptmode:0|,prioritytier:0|,"
           "priorityjobfactor:0|,statecompact:0|,statelong:0|,statecomplete:0|,reason:0|,"
           "user:0|,userlong:0|,timestamp:0|,features:0|,features_act:0|,gres:0|,gresused:0|,"
           "allocmem:0|,nodeai:0|,nodeaiot:0|,cpusstate:0|,nodehost:0|,nodeaddr:0|,version:0|,"
           "port:0|,comment:0|,extra:0"});
  EXPECT_EQ(line,
            "up|all|N/A|all|UNLIMITED|n/a|10:00|1-infinite|no|NO|OFF|1|1|idle|idle|idle|none|"
            "Unknown|Unknown|Unknown|(null)|(null)|(null)|(null)|0|0/1|0/1/0/1|0/2/0/2|node1|"
            "10.0.0.1|22.05.8|6818|(null)|(null)\n");
  for (const char* name : {"Priority", "nodel", "cpusx", "ExcNodes"})
    EXPECT_EQ(sinfo::field_by_name(name), nullptr) << name;
  EXPECT_EQ(sinfo::field_by_name("NODELIST")->code, 'N');
  EXPECT_EQ(sinfo::field_by_name("UserLong")->code, 'U');
}

TEST(Sinfo, UnknownFieldsAreReportedAndSkipped) {
  CommandResult r = run_sinfo({"-p", "short", "-O", "nodelist:6,bogus,cpus:2"}, canned_env());
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "sinfo: error: Invalid job format specification: bogus\n");
  EXPECT_EQ(r.out, "NODELICP\nnode1 2 \n");
  // -o: the unknown letter stays in the text as written; '#' is sinfo's own.
  r = run_sinfo({"-p", "short", "-o", "%x|%#P|%R"}, canned_env());
  EXPECT_EQ(r.err, "Invalid node format specification: x\nInvalid node format specification: #\n");
  EXPECT_EQ(r.out, "%x|%#P|PARTITION\n%x|%#P|short\n");
}

TEST(Sinfo, SinfoFormatYieldsToOptionsAndToNodeSummaryAndReasonListings) {
  const std::map<std::string, std::string> env = {{"SINFO_FORMAT", "%R %D"}};
  EXPECT_EQ(out({"-h"}, env), "debug 3\nshort 1\n");
  EXPECT_EQ(out({"-h", "-o", "%R"}, env), "debug\nshort\n");
  EXPECT_EQ(out({"-h", "-O", "partitionname:6"}, env), "debug \nshort \n");
  EXPECT_EQ(out({"-h", "-s", "-p", "short"}, env),
            "short        up      10:00          0/1/0/1 node1\n");
  EXPECT_EQ(out({"-h", "-N", "-p", "short"}, env), "node1          1     short idle  \n");
  EXPECT_EQ(out({"-h", "-R"}, env), "disk                 root      Unknown             node3\n");
  // -l keeps SINFO_FORMAT (and dates it) but refuses -o and -O.
  const CommandResult l = run_sinfo({"-l", "-h"}, canned_env(env));
  EXPECT_EQ(l.out, "debug 3\nshort 1\n");
  for (const char* opt : {"-o", "-O"}) {
    const CommandResult r = run_sinfo({"-l", opt, "%R"}, canned_env());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err,
              "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
              "remove one and retry.\n");
  }
}

TEST(Sinfo, FilteredPartitionsWithoutNodesStillGetALineWhenNamed) {
  EXPECT_EQ(out({"-h", "-t", "drain", "-o", "%P|%D|%c|%t|%N|%E"}),
            "debug*|1|2|drain|node3|disk\nshort|0|0|n/a||none\n");
  EXPECT_EQ(out({"-h", "-t", "drain", "-o", "%D|%N"}), "1|node3\n");
  EXPECT_EQ(out({"-h", "-R", "-o", "%P %N"}), "debug* node3\nshort \n");
  // -R lists a node once, under the first partition that holds it; other filters do not.
  CommandEnv both = canned_env();
  both.call = [](const json& req) {
    if (req.value("what", "") == "nodes") return nodes_reply();
    json p = partitions_reply();
    p["partitions"][1]["nodes"] = {"node1", "node3"};
    return p;
  };
  EXPECT_EQ(run_sinfo({"-h", "-R", "-o", "%P %N"}, both).out, "debug* node3\nshort \n");
  EXPECT_EQ(run_sinfo({"-h", "-t", "drain", "-o", "%P %N"}, both).out,
            "debug* node3\nshort node3\n");
}

TEST(Sinfo, IterateRepeatsDatedReportsWithABlankLineAfterEach) {
  std::string written;
  int pauses = 0;
  IterateIo io;
  io.now = [] { return int64_t{0}; };
  io.write = [&](const std::string& o, const std::string& e) { written += e + o; };
  io.pause = [&](int seconds) {
    EXPECT_EQ(seconds, 5);
    return ++pauses < 2;  // interrupted during the second pause
  };
  const CommandResult r = run_sinfo({"-i", "5", "-p", "short", "-o", "%R %D"}, canned_env(), io);
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(pauses, 2);
  const std::string report = date_line(0) + "\nPARTITION NODES\nshort 1\n\n";
  EXPECT_EQ(written, report + report);
  // -h: no date and no header, still the blank line.
  written.clear();
  pauses = 0;
  run_sinfo({"--iterate=5", "-h", "-p", "short", "-o", "%R"}, canned_env(), io);
  EXPECT_EQ(written, "short\n\nshort\n\n");
  for (const char* bad : {"0", "-1", "abc", "", "2147483648"}) {
    const CommandResult e = run_sinfo({"-i", bad}, canned_env(), io);
    EXPECT_EQ(e.rc, 1);
    EXPECT_EQ(e.err, "sinfo: error: Error: invalid entry for --iterate=" + std::string(bad) + "\n");
  }
}

}  // namespace
}  // namespace drover::cli
