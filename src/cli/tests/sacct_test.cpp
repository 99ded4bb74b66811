// sacct against canned controller replies: the requests it makes and how it prints records
// (layout from man sacct and slurm_compat.md 3.3; sacct_golden_test compares it with real Slurm).
#include "cli/sacct.hpp"

#include <gtest/gtest.h>

#include "cli/client.hpp"

using namespace drover::cli;

namespace {

constexpr int64_t kNow = 1'800'000'000;

json step(const std::string& state, int code, int sig) {
  return {{"name", "batch"},     {"state", state},
          {"exit_code", code},   {"exit_signal", sig},
          {"start_time", 1000},  {"end_time", 1010},
          {"nodelist", "node1"}, {"nnodes", 1},
          {"ncpus", 2},          {"alloc_tres", "billing=2,cpu=2,mem=1G,node=1"}};
}

// steps as a vector: a one-element braced list passed as `json` is an array under gcc but a
// copy of the element under clang.
json job(uint64_t id, const std::string& name, const std::string& state, int code,
         std::vector<json> steps) {
  return {{"job_id", id},
          {"array_job_id", 0},
          {"array_task_id", 0xfffffffe},
          {"name", name},
          {"user", "alice"},
          {"group", "users"},
          {"uid", 1000},
          {"gid", 100},
          {"account", "physics"},
          {"qos", "normal"},
          {"partition", "debug"},
          {"submit_time", 990},
          {"eligible_time", 990},
          {"start_time", 1000},
          {"end_time", 1010},
          {"state", state},
          {"reason", "None"},
          {"exit_code", code},
          {"exit_signal", 0},
          {"cancelled_by", -1},
          {"req_cpus", 2},
          {"req_mem_mb", 1024},
          {"req_nodes", 1},
          {"req_tres", "billing=2,cpu=2,mem=1G,node=1"},
          {"alloc_tres", "billing=2,cpu=2,mem=1G,node=1"},
          {"alloc_cpus", 2},
          {"nnodes", 1},
          {"nodelist", "node1"},
          {"workdir", "/home/alice"},
          {"time_limit_min", 60},
          {"restarts", 0},
          {"priority", 1},
          {"steps", std::move(steps)}};
}

struct Fixture {
  json reply;
  std::vector<json> requests;
  uint32_t caller_uid = 1000;
  CommandEnv env() {
    CommandEnv e;
    e.call = [this](const json& req) {
      requests.push_back(req);
      return reply;
    };
    e.uid_of = [this](const std::string& n) -> std::optional<uint32_t> {
      if (n == "alice") return 1000u;
      if (n == "root") return 0u;
      if (n == "me") return caller_uid;
      return std::nullopt;
    };
    e.name_of = [](uint32_t) -> std::optional<std::string> { return std::nullopt; };
    e.user = "me";
    return e;
  }
  CommandResult run(std::vector<std::string> args) { return run_sacct(args, env(), kNow); }
};

Fixture with_jobs() {
  Fixture f;
  json cancelled = job(8, "a-very-long-job-name", "CANCELLED", 0, {step("CANCELLED", 0, 15)});
  cancelled["cancelled_by"] = 1000;
  f.reply = {{"ok", true},
             {"cluster_name", "c1"},
             {"jobs", {job(7, "wrap", "COMPLETED", 0, {step("COMPLETED", 0, 0)}), cancelled}}};
  return f;
}

}  // namespace

TEST(Sacct, DefaultLayout) {
  auto f = with_jobs();
  auto r = f.run({});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "7                  wrap      debug    physics          2  COMPLETED      0:0 \n"
            "7.batch           batch               physics          2  COMPLETED      0:0 \n"
            "8            a-very-lo+      debug    physics          2 CANCELLED+      0:0 \n"
            "8.batch           batch               physics          2  CANCELLED     0:15 \n");
}

TEST(Sacct, RequestCarriesWindowAndCaller) {
  auto f = with_jobs();
  f.run({});
  ASSERT_EQ(f.requests.size(), 1u);
  const json& q = f.requests[0];
  EXPECT_EQ(q["what"], "acct_jobs");
  EXPECT_EQ(q["uids"], json({1000}));
  EXPECT_EQ(q["end"], kNow);
  EXPECT_EQ(q["start"], local_midnight(kNow));
  EXPECT_FALSE(q.contains("include_ineligible"));

  f.requests.clear();
  f.run({"-j", "7,8_2", "-a"});
  const json& j = f.requests[0];
  EXPECT_EQ(j["start"], 0);
  EXPECT_EQ(j["job_ids"], json({7, 8}));
  EXPECT_EQ(j["all_users"], true);
  EXPECT_FALSE(j.contains("uids"));
  EXPECT_EQ(j["include_ineligible"], true);

  f.requests.clear();
  f.run({"-s", "CD,f", "-u", "alice"});
  const json& s = f.requests[0];
  EXPECT_EQ(s["states"], json({"COMPLETED", "FAILED"}));
  EXPECT_EQ(s["start"], kNow);
  EXPECT_EQ(s["end"], kNow);
  EXPECT_EQ(s["uids"], json({1000}));

  // root sees everyone's jobs without -a.
  f.requests.clear();
  f.caller_uid = 0;
  f.run({"-S", "2020-01-01", "-E", "now"});
  EXPECT_EQ(f.requests[0]["all_users"], true);
  EXPECT_EQ(f.requests[0]["end"], kNow);
}

TEST(Sacct, FormatsAndFlags) {
  auto f = with_jobs();
  auto r = f.run({"-X", "-n", "-o", "jobid%5,state%-20,User,uid,elapsed,exitcode"});
  EXPECT_EQ(r.out,
            "    7 COMPLETED                alice   1000   00:00:10      0:0 \n"
            "    8 CANCELLED by 1000        alice   1000   00:00:10      0:0 \n");
  r = f.run({"-P", "-b"});
  EXPECT_EQ(r.out,
            "JobID|State|ExitCode\n"
            "7|COMPLETED|0:0\n"
            "7.batch|COMPLETED|0:0\n"
            "8|CANCELLED by 1000|0:0\n"
            "8.batch|CANCELLED|0:15\n");
  r = f.run({"-p", "-X", "--format=JobIDRaw,NodeList,AllocTRES,ReqMem,Timelimit,CPUTimeRAW"});
  EXPECT_EQ(r.out,
            "JobIDRaw|NodeList|AllocTRES|ReqMem|Timelimit|CPUTimeRAW|\n"
            "7|node1|billing=2,cpu=2,mem=1G,node=1|1G|01:00:00|20|\n"
            "8|node1|billing=2,cpu=2,mem=1G,node=1|1G|01:00:00|20|\n");
  f.env();
  CommandEnv e = f.env();
  e.env["SACCT_FORMAT"] = "jobid,jobname%4";
  r = run_sacct({"-X"}, e, kNow);
  EXPECT_EQ(r.out,
            "JobID        JobN \n"
            "------------ ---- \n"
            "7            wrap \n"
            "8            a-v+ \n");
  // -j N_M keeps only that task.
  json t = job(9, "arr", "COMPLETED", 0, {});
  t["array_job_id"] = 9;
  t["array_task_id"] = 2;
  json t3 = t;
  t3["job_id"] = 10;
  t3["array_task_id"] = 3;
  f.reply["jobs"] = {t, t3};
  r = f.run({"-X", "-n", "-P", "-o", "jobid,jobidraw", "-j", "9_3"});
  EXPECT_EQ(r.out, "9_3|10\n");
}

TEST(Sacct, Errors) {
  auto f = with_jobs();
  auto r = f.run({"-o", "jobid,bogus"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "sacct: error: Invalid field requested: \"bogus\"\n");
  EXPECT_TRUE(f.requests.empty());
  r = f.run({"-S", "now+5min"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Invalid time specification (pos=4): now+5min\n");
  r = f.run({"-u", "nosuchuser"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "sacct: error: Invalid user id: nosuchuser\n");
  f.reply = {{"ok", false}, {"error", "boom"}};
  r = f.run({});
  EXPECT_EQ(r.rc, 255);
  EXPECT_EQ(r.out, "");
  auto down = with_jobs();
  CommandEnv e = down.env();
  e.call = [](const json&) -> json { throw ControllerUnreachable("x"); };
  r = run_sacct({}, e, kNow);
  EXPECT_EQ(r.rc, 255);
  EXPECT_NE(r.err.find("Unable to contact slurm controller"), std::string::npos);
}

TEST(Sacct, HelpFormatAndPastTimes) {
  auto f = with_jobs();
  auto r = f.run({"--helpformat"});
  EXPECT_EQ(r.out.substr(0, 20), "Account             ");
  EXPECT_NE(r.out.find("JobIDRaw"), std::string::npos);
  // A time of day later than now means yesterday's.
  const int64_t mid = local_midnight(kNow);
  const int64_t t = parse_past_time("23:59:59", kNow);
  EXPECT_LE(t, kNow);
  EXPECT_GT(t, kNow - 86400);
  EXPECT_EQ(parse_past_time("midnight", kNow), mid);
}

TEST(Sacct, SrunStepRows) {
  Fixture f;
  json s0 = step("COMPLETED", 0, 0);
  s0["name"] = "0";
  s0["job_name"] = "hostname";
  s0["ntasks"] = 4;
  s0["ncpus"] = 4;
  s0["nnodes"] = 2;
  s0["nodelist"] = "node[1-2]";
  json s1 = step("FAILED", 3, 0);
  s1["name"] = "1";
  s1["job_name"] = "false";
  json batch = step("COMPLETED", 0, 0);
  batch["job_name"] = "batch";
  // srun outside an allocation: no batch step.
  json alloc = job(10, "sleep", "CANCELLED", 0, {step("CANCELLED", 0, 9)});
  alloc["steps"][0]["name"] = "0";
  alloc["steps"][0]["job_name"] = "sleep";
  f.reply = {{"ok", true},
             {"cluster_name", "c1"},
             {"jobs", {job(9, "wrap", "FAILED", 3, {batch, s0, s1}), alloc}}};
  auto r = f.run({"-o", "JobID,JobName,State,ExitCode,NNodes,NodeList,NTasks,AllocCPUS"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(
      r.out,
      "JobID           JobName      State ExitCode   NNodes        NodeList   NTasks  AllocCPUS \n"
      "------------ ---------- ---------- -------- -------- --------------- -------- ---------- \n"
      "9                  wrap     FAILED      3:0        1           node1                   2 \n"
      "9.batch           batch  COMPLETED      0:0        1           node1        1          2 \n"
      "9.0            hostname  COMPLETED      0:0        2       node[1-2]        4          4 \n"
      "9.1               false     FAILED      3:0        1           node1        1          2 \n"
      "10                sleep  CANCELLED      0:0        1           node1                   2 \n"
      "10.0              sleep  CANCELLED      0:9        1           node1        1          2 "
      "\n");
  // -j N.S: that step alone, unless the job is named whole too.
  f.reply["jobs"].erase(1);  // what the controller answers for -j 9
  r = f.run({"-j", "9.0", "-o", "JobID,JobName"});
  EXPECT_EQ(r.out,
            "JobID           JobName \n"
            "------------ ---------- \n"
            "9.0            hostname \n");
  r = f.run({"-j", "9.1,9", "-o", "JobID", "-n"});
  EXPECT_EQ(r.out, "9            \n9.batch      \n9.0          \n9.1          \n");
}

// MaxRSS as the agent measured it (the batch step's cgroup peak), in sacct's units: the largest
// that divides the KB exactly; blank on the job's line and where nothing was measured.
TEST(Sacct, MaxRssOfMeasuredSteps) {
  Fixture f;
  json oom = step("OUT_OF_MEMORY", 0, 125);
  oom["max_rss_kb"] = 102400;
  json done = step("COMPLETED", 0, 0);
  done["max_rss_kb"] = 61452;
  f.reply = {{"ok", true},
             {"cluster_name", "c1"},
             {"jobs",
              {job(7, "oom", "OUT_OF_MEMORY", 0, {oom}), job(8, "fine", "COMPLETED", 0, {done}),
               job(9, "old", "COMPLETED", 0, {step("COMPLETED", 0, 0)})}}};
  auto r = f.run({"-n", "-P", "-o", "JobID,MaxRSS,State,ExitCode"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "7||OUT_OF_MEMORY|0:0\n"
            "7.batch|100M|OUT_OF_MEMORY|0:125\n"
            "8||COMPLETED|0:0\n"
            "8.batch|61452K|COMPLETED|0:0\n"
            "9||COMPLETED|0:0\n"
            "9.batch||COMPLETED|0:0\n");
}
