// sprio against canned controller replies. The expected texts are real sprio 22.05's output for
// the same factors (tests/compat/oracle with PriorityWeightAge=1000 PriorityWeightFairshare=10000
// PriorityWeightJobSize=100 PriorityWeightPartition=500; two 2-CPU nodes).
#include <gtest/gtest.h>

#include "cli/client.hpp"
#include "cli/report_cmds.hpp"

using namespace drover::cli;

namespace {

json factors(double job_size, double partition, int nice = 0) {
  return {{"age", 0.0},
          {"assoc", 0.0},
          {"fairshare", 0.0},
          {"job_size", job_size},
          {"partition", partition},
          {"qos", 0.0},
          {"tres", json::object()},
          {"site", 0},
          {"nice", nice}};
}

json oracle_reply() {
  return {{"ok", true},
          {"priority_type", "priority/multifactor"},
          {"weights",
           {{"age", 1000},
            {"assoc", 0},
            {"fairshare", 10000},
            {"job_size", 100},
            {"partition", 500},
            {"qos", 0}}},
          {"weight_tres", ""},
          {"rows",
           {{{"job_id", 2},
             {"partition", "debug"},
             {"user", "root"},
             {"uid", 0},
             {"factors", factors(0.375, 1.0)}},
            {{"job_id", 3},
             {"partition", "debug"},
             {"user", "root"},
             {"uid", 0},
             {"factors", factors(0.625, 1.0, 50)}},
            {{"job_id", 4},
             {"partition", "debug"},
             {"user", "drovertest"},
             {"uid", 1001},
             {"factors", factors(0.5, 1.0)}}}}};
}

struct Fake {
  json reply = oracle_reply();
  json last_request;
  bool unreachable = false;
  CommandEnv env() {
    CommandEnv e;
    e.call = [this](const json& req) -> json {
      last_request = req;
      if (unreachable) throw ControllerUnreachable("connect");
      // The controller filters by job id, uid and partition; do the same here.
      json out = reply;
      json rows = json::array();
      for (const auto& r : reply["rows"]) {
        auto in = [&](const char* key, const json& v) {
          if (!req.contains(key)) return true;
          for (const auto& x : req[key])
            if (x == v) return true;
          return false;
        };
        if (in("job_ids", r["job_id"]) && in("uids", r["uid"]) && in("partitions", r["partition"]))
          rows.push_back(r);
      }
      out["rows"] = rows;
      return out;
    };
    e.uid_of = [](const std::string& n) -> std::optional<uint32_t> {
      if (n == "root" || n == "0") return 0;
      if (n == "drovertest" || n == "1001") return 1001;
      return std::nullopt;
    };
    e.name_of = [](uint32_t) { return std::optional<std::string>(); };
    e.user = "root";
    return e;
  }
  CommandResult run(std::vector<std::string> args) { return run_sprio(args, env()); }
};

const char* kHeader =
    "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION\n";

}  // namespace

TEST(SprioCmd, DefaultOutputLikeSlurm) {
  Fake f;
  auto r = f.run({});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, std::string(kHeader) +
                       "              2 debug            537          0          0          0     "
                       "    38        500\n"
                       "              3 debug            512          0          0          0     "
                       "    62        500\n"
                       "              4 debug            550          0          0          0     "
                       "    50        500\n");
  EXPECT_EQ(f.last_request, (json{{"op", "query"}, {"what", "priority_factors"}}));
}

TEST(SprioCmd, LongNormalizedWeights) {
  Fake f;
  EXPECT_EQ(f.run({"-l"}).out,
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  "
            "FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "              2 debug         root        537          0          0          0      "
            "    0         38        500          0           0                     \n"
            "              3 debug         root        512          0          0          0      "
            "    0         62        500          0          50                     \n"
            "              4 debug     droverte        550          0          0          0      "
            "    0         50        500          0           0                     \n");
  EXPECT_EQ(f.run({"-n"}).out,
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION \n"
            "              2 debug     0.00000012 0.0000000  0.0000000  0.3750000  1.0000000 \n"
            "              3 debug     0.00000011 0.0000000  0.0000000  0.6250000  1.0000000 \n"
            "              4 debug     0.00000012 0.0000000  0.0000000  0.5000000  1.0000000 \n");
  EXPECT_EQ(f.run({"-w"}).out, std::string(kHeader) +
                                   "        Weights                               1       1000  "
                                   "    10000        100        500\n");
  EXPECT_EQ(f.run({"-w", "-n"}).out,
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION \n"
            "        Weights                      1000       10000      100        500       \n");
  EXPECT_EQ(f.run({"-wl"}).out,
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  "
            "FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "        Weights                                        1       1000          0      "
            "10000        100        500          0                           (null)\n");
  EXPECT_EQ(f.run({"-h", "-w"}).out,
            "        Weights                               1       1000      10000        100     "
            "   500\n");
}

TEST(SprioCmd, FiltersGoToTheController) {
  Fake f;
  auto r = f.run({"-u", "drovertest"});
  EXPECT_EQ(f.last_request["uids"], json::array({1001}));
  EXPECT_EQ(r.out,
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE  FAIRSHARE    "
            "JOBSIZE  PARTITION\n"
            "              4 debug     droverte        550          0          0          0      "
            "   50        500\n");
  r = f.run({"-j2,4"});
  EXPECT_EQ(f.last_request["job_ids"], json::array({2, 4}));
  EXPECT_EQ(r.out.substr(r.out.find('\n') + 1),
            "              2 debug            537          0          0          0         38     "
            "   500\n"
            "              4 debug            550          0          0          0         50     "
            "   500\n");
  // -j's argument is optional: a separate word is taken as the list only as an operand.
  r = f.run({"-j", "-l", "3"});
  EXPECT_EQ(f.last_request["job_ids"], json::array({3}));
  EXPECT_NE(r.out.find("USER"), std::string::npos);
  r = f.run({"--jobs=2+1"});  // a het job component: job 2 + offset 1
  EXPECT_EQ(f.last_request["job_ids"], json::array({3}));
  f.run({"-p", "debug,other"});
  EXPECT_EQ(f.last_request["partitions"], json::array({"debug", "other"}));
  // Last -u wins; an unknown user is an error on its own line, the rest goes on.
  r = f.run({"-u", "root", "-u", "root,,nosuch"});
  EXPECT_EQ(r.err, "sprio: error: Invalid user: nosuch\n\n");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(f.last_request["uids"], json::array({0}));
}

TEST(SprioCmd, NoMatchingJobs) {
  Fake f;
  auto r = f.run({"-j99"});
  EXPECT_EQ(r.out, "Unable to find jobs matching user/id(s) specified\n");
  EXPECT_EQ(r.rc, 0);
  // Without -j an empty selection is just the header.
  r = f.run({"-p", "nosuch"});
  EXPECT_EQ(r.out, kHeader);
  r = f.run({"-u", "nosuchuser"});
  EXPECT_EQ(r.err, "sprio: error: Invalid user: nosuchuser\n\n");
  EXPECT_EQ(r.out,
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE  FAIRSHARE    "
            "JOBSIZE  PARTITION\n");
}

TEST(SprioCmd, FormatFields) {
  Fake f;
  auto r = f.run({"-o", "%i|%u|%Y|%y|%A|%a|%F|%f|%J|%j|%P|%p|%Q|%q|%N|%n|%T|%t|%r|%c|%S|%o|%b|%B"});
  EXPECT_EQ(r.err,
            "sprio: error: Invalid job format specification: n\n"
            "sprio: error: Invalid job format specification: o\n");
  EXPECT_EQ(r.out,
            "JOBID|USER|PRIORITY|PRIORITY|AGE|AGE|FAIRSHARE|FAIRSHARE|JOBSIZE|JOBSIZE|PARTITION|"
            "PARTITION|QOS|QOS|NICE|TRES|TRES|PARTITION|CLUSTER|SITE|ASSOC|ASSOC\n"
            "2|root|537|0.00000012514647|0|0.0000000|0|0.0000000|38|0.3750000|500|1.0000000|0|0."
            "0000000|0|||debug|(null)|0|0.0000000|0\n"
            "3|root|512|0.00000011932570|0|0.0000000|0|0.0000000|62|0.6250000|500|1.0000000|0|0."
            "0000000|50|||debug|(null)|0|0.0000000|0\n"
            "4|drovertest|550|0.00000012805685|0|0.0000000|0|0.0000000|50|0.5000000|500|1.0000000|"
            "0|0.0000000|0|||debug|(null)|0|0.0000000|0\n");
  EXPECT_EQ(f.run({"-o", "%.5i%10u"}).out,
            "JOBIDUSER      \n    2root      \n    3root      \n    4drovertest\n");
  EXPECT_EQ(f.run({"-o", "x%iy"}).out, "xJOBIDy\nx2y\nx3y\nx4y\n");
  EXPECT_EQ(f.run({"-o", "%.3i|%3r|%.3Y", "-j2"}).out, "JOB|PAR|PRI\n  2|deb|537\n");
  r = f.run({"-o", "%20i%-5Y", "-h"});
  EXPECT_EQ(r.err, "sprio: error: Invalid job format specification: -\n");
  EXPECT_EQ(r.out, "2                   \n3                   \n4                   \n");
  // SPRIO_FORMAT when neither -o nor -l is given.
  CommandEnv e = f.env();
  e.env["SPRIO_FORMAT"] = "%i";
  EXPECT_EQ(run_sprio({"-h"}, e).out, "2\n3\n4\n");
  EXPECT_EQ(run_sprio({"-h", "-o", "%r"}, e).out, "debug\ndebug\ndebug\n");
}

TEST(SprioCmd, Sort) {
  Fake f;
  auto r = f.run({"-S", "-Y", "-o", "%i", "-h"});
  EXPECT_EQ(r.out, "4\n2\n3\n");
  r = f.run({"-S", "u,i", "-o", "%i", "-h"});
  EXPECT_EQ(r.out, "4\n2\n3\n");
  r = f.run({"-S", "b"});
  EXPECT_EQ(r.out, kHeader);  // sprio prints the header before it sorts
  EXPECT_EQ(r.err, "sprio: error: Invalid sort specification: b\n");
  EXPECT_EQ(r.rc, 1);
}

TEST(SprioCmd, Errors) {
  Fake f;
  auto r = f.run({"-Z"});
  EXPECT_EQ(r.err, "sprio: invalid option -- 'Z'\nTry \"sprio --help\" for more information\n");
  EXPECT_EQ(r.rc, 1);
  r = f.run({"-p"});
  EXPECT_EQ(r.err,
            "sprio: option requires an argument -- 'p'\nTry \"sprio --help\" for more "
            "information\n");
  r = f.run({"-o", "%i", "-l"});
  EXPECT_EQ(r.err,
            "sprio: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
            "remove one and retry.\n");
  EXPECT_EQ(r.rc, 1);
  r = f.run({"-j2,x"});
  EXPECT_EQ(r.err, "sprio: error: Invalid job id: x\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(f.run({"-j", "2_1"}).err, "sprio: error: Invalid job id: 2_1\n");
  EXPECT_EQ(f.run({"-j2.batch"}).err, "sprio: error: Invalid job id: 2.batch\n");
  r = f.run({"extra"});
  EXPECT_EQ(r.err,
            "sprio: error: Unrecognized option: extra\n"
            "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
            "   [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n");
  EXPECT_EQ(r.rc, 1);
  r = f.run({"--usage", "extra"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("Usage: sprio [-j jid[s]]", 0), 0u);
  EXPECT_EQ(f.run({"--help"}).out.rfind("Usage: sprio [OPTIONS]\n", 0), 0u);
  r = f.run({"-M", "foo"});
  EXPECT_EQ(r.err,
            "sprio: error: Problem talking to database\n"
            "sprio: error: 'foo' can't be reached now, or it is an invalid entry for --cluster.  "
            "Use 'sacctmgr list clusters' to see available clusters.\n");
  EXPECT_EQ(r.rc, 1);
}

TEST(SprioCmd, BasicPluginAndUnreachableController) {
  Fake f;
  f.reply["priority_type"] = "priority/basic";
  auto r = f.run({"-w"});
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "You are not running a supported priority plugin\n(priority/basic).\n"
            "Only 'priority/multifactor' is supported.\n");
  EXPECT_EQ(r.rc, 1);
  f.unreachable = true;
  r = f.run({});
  EXPECT_EQ(r.err,
            "Couldn't get priority factors from controller: Unable to contact slurm controller "
            "(connect failure)\n");
  EXPECT_EQ(r.rc, 255);
}

TEST(SprioCmd, VerboseShowsTheOptions) {
  Fake f;
  auto r = f.run({"-v", "-h", "-j2", "-o", "%i"});
  EXPECT_EQ(r.out,
            "-----------------------------\n"
            "format     = %i\n"
            "job_flag   = 1\n"
            "jobs       = 2\n"
            "partition  = (null)\n"
            "users      = (null)\n"
            "verbose    = 1\n"
            "-----------------------------\n\n\n"
            "2\n");
}

TEST(SprioCmd, TresColumns) {
  Fake f;
  f.reply["weight_tres"] = "CPU=2000,Mem=1000";
  f.reply["rows"] = json::array({{{"job_id", 2},
                                  {"partition", "short"},
                                  {"user", "root"},
                                  {"uid", 0},
                                  {"factors", factors(0.375, 1.0)}},
                                 {{"job_id", 2},
                                  {"partition", "debug"},
                                  {"user", "root"},
                                  {"uid", 0},
                                  {"factors", factors(0.375, 1.0 / 3)}}});
  f.reply["rows"][0]["factors"]["tres"] = {{"cpu", 0.5}, {"mem", 1.0}};
  f.reply["rows"][1]["factors"]["tres"] = {{"cpu", 0.25}, {"mem", 0.5}};
  f.reply["weights"]["partition"] = 500;
  // As real sprio shows a job queued in two partitions (short has PriorityJobFactor=3).
  EXPECT_EQ(f.run({}).out,
            "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
            "PARTITION                 TRES\n"
            "              2 short           2537          0          0          0         38     "
            "   500    cpu=1000,mem=1000\n"
            "              2 debug           1204          0          0          0         38     "
            "   167      cpu=500,mem=500\n");
  EXPECT_EQ(f.run({"-o", "%r|%T|%t", "-h"}).out,
            "short|cpu=1000,mem=1000|cpu=0.50,mem=1.00\ndebug|cpu=500,mem=500|cpu=0.25,mem=0.50\n");
  EXPECT_EQ(f.run({"-w", "-h"}).out,
            "        Weights                               1       1000      10000        100     "
            "   500    CPU=2000,Mem=1000\n");
}
