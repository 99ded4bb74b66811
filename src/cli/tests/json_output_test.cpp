// --json of squeue, sinfo, sacct and scontrol show against canned controller replies: the
// data_parser v0.0.44 envelope, the list keys, and entries whose fields come from the views
// (the same mapping as the REST API's, proto/data_parser).
#include "cli/json_output.hpp"

#include <gtest/gtest.h>

#include "cli/sacct.hpp"
#include "cli/scontrol_json.hpp"
#include "cli/sinfo.hpp"
#include "cli/squeue_filter.hpp"
#include "core/array_spec.hpp"
#include "core/node.hpp"
#include "proto/json.hpp"

using namespace drover;
using namespace drover::cli;

namespace {

constexpr int64_t kNow = 1'800'000'000;

// A job view as the controller's `query jobs` answers it (job_summary_json and what the
// controller adds).
json job_view(uint64_t id, const std::string& user, const std::string& partition,
              core::JobState state, std::vector<core::NodeAlloc> alloc = {}) {
  core::Job job;
  job.id = id;
  job.user = user;
  job.group = user;
  job.uid = user == "alice" ? 1000 : 1001;
  job.gid = job.uid;
  job.partition = partition;
  job.state = state;
  job.submit_time = kNow - 100;
  job.eligible_time = kNow - 100;
  job.time_limit_min = 30;
  job.priority = 4294901759u - static_cast<uint32_t>(id);
  job.spec.name = "job" + std::to_string(id);
  job.spec.ntasks = 2;
  job.spec.account = user == "alice" ? "physics" : "chem";
  job.spec.workdir = "/home/" + user;
  job.alloc = std::move(alloc);
  if (!job.alloc.empty()) {
    job.start_time = kNow - 50;
    job.batch_host = job.alloc.front().node;
  }
  if (core::is_finished(state)) job.end_time = kNow - 10;
  json j;
  core::job_summary_json(j, job);
  std::vector<std::string> names;
  for (const auto& a : job.alloc) names.push_back(a.node);
  j["nodelist"] = names.empty() ? "" : names.size() == 1 ? names[0] : "node[1-2]";
  j["run_time"] = job.alloc.empty() ? 0 : 50;
  j["dependency_text"] = "";
  j["requeue_effective"] = 1;
  j["alloc_node"] = "localhost";
  j["std_out_path"] = "/home/" + user + "/slurm-" + std::to_string(id) + ".out";
  j["std_err_path"] = j["std_out_path"];
  j["std_in_path"] = "/dev/null";
  j["steps"] = json::array();
  return j;
}

json jobs_reply() {
  return {{"ok", true},
          {"now", kNow},
          {"cluster_name", "c1"},
          {"last_backfill", kNow - 5},
          {"last_update", kNow - 2},
          {"jobs",
           {job_view(7, "alice", "debug", core::JobState::Running, {{"node1", 2, 1000, 2}}),
            job_view(8, "bob", "debug", core::JobState::Pending),
            job_view(9, "alice", "big", core::JobState::Pending),
            job_view(5, "alice", "debug", core::JobState::Completed, {{"node2", 2, 1000, 2}})}}};
}

json node_view(const std::string& name, int alloc_cpus, bool drain = false) {
  core::Node n;
  n.name = name;
  n.cpus = 4;
  n.sockets = 1;
  n.cores_per_socket = 4;
  n.real_memory_mb = 8000;
  n.registered = true;
  n.alloc_cpus = alloc_cpus;
  n.alloc_mem_mb = alloc_cpus * 1000;
  n.drain = drain;
  n.cpu_load = 0.25;
  n.free_mem_mb = 6000;
  n.address = "10.0.0." + name.substr(4);
  if (drain) {
    n.reason = "disk";
    n.reason_uid = 0;
    n.reason_time = kNow - 300;
  }
  json j = n;
  j["state_long"] = n.state_long(true);
  j["state_short"] = n.state_short();
  j["partitions"] = {"debug"};
  return j;
}

json nodes_reply() {
  return {{"ok", true},
          {"now", kNow},
          {"cluster_name", "c1"},
          {"nodes", {node_view("node1", 2), node_view("node2", 0), node_view("node3", 0, true)}}};
}

json partitions_reply() {
  json debug = {{"name", "debug"},
                {"nodes", {"node1", "node2", "node3"}},
                {"nodelist", "node[1-3]"},
                {"is_default", true},
                {"state", "UP"},
                {"max_time_min", 60},
                {"default_time_min", -1},
                {"max_nodes", -1},
                {"min_nodes", 0},
                {"priority_tier", 1},
                {"priority_job_factor", 1},
                {"allow_accounts", json::array()},
                {"allow_qos", json::array()},
                {"over_subscribe", "NO"},
                {"root_only", false},
                {"hidden", false},
                {"def_mem_per_cpu_mb", 500},
                {"def_mem_per_node_mb", 0},
                {"total_cpus", 12},
                {"total_mem_mb", 24000},
                {"total_nodes", 3}};
  return {{"ok", true}, {"now", kNow}, {"cluster_name", "c1"}, {"partitions", {debug}}};
}

// Answers each query with the canned reply for its "what".
CommandEnv canned_env() {
  CommandEnv e;
  e.call = [](const json& req) {
    const std::string what = req.value("what", "");
    if (what == "jobs") {
      json r = jobs_reply();
      if (req.contains("job_id")) {
        json only = json::array();
        for (const auto& j : r["jobs"])
          if (j["id"] == req["job_id"]) only.push_back(j);
        if (only.empty()) return json{{"ok", false}, {"error", "Invalid job id specified"}};
        r["jobs"] = only;
      }
      return r;
    }
    if (what == "nodes") return nodes_reply();
    if (what == "partitions") return partitions_reply();
    return json{{"ok", true}, {"now", kNow}, {"cluster_name", "c1"}, {what, json::array()}};
  };
  e.uid_of = [](const std::string&) -> std::optional<uint32_t> { return 0u; };
  e.name_of = [](uint32_t uid) -> std::optional<std::string> {
    if (uid == 0) return std::string("root");
    return std::nullopt;
  };
  e.user = "root";
  return e;
}

void expect_envelope(const json& doc, const std::string& program) {
  ASSERT_TRUE(doc.contains("meta")) << doc.dump();
  const json& meta = doc["meta"];
  EXPECT_EQ(meta["plugin"]["type"], "");  // Slurm's commands name no openapi plugin
  EXPECT_EQ(meta["plugin"]["data_parser"], "data_parser/v0.0.44");
  EXPECT_EQ(meta["slurm"]["release"], "25.11.0");
  EXPECT_EQ(meta["slurm"]["cluster"], "c1");
  ASSERT_FALSE(meta["command"].empty());
  EXPECT_EQ(meta["command"][0], program);
  EXPECT_TRUE(meta["client"].contains("source"));
  EXPECT_TRUE(doc["errors"].is_array());
  EXPECT_TRUE(doc["warnings"].is_array());
}

bool no_val(const json& v, int64_t number) {
  return v == json{{"set", true}, {"infinite", false}, {"number", number}};
}

}  // namespace

TEST(JsonOutput, JobsDocumentMapsEachViewAsTheRestApi) {
  const json reply = jobs_reply();
  const json doc =
      jobs_document(command_meta("squeue", {"--json"}, "c1"), reply, {reply["jobs"][0]});
  expect_envelope(doc, "squeue");
  EXPECT_EQ(doc["meta"]["command"], json({"squeue", "--json"}));
  EXPECT_TRUE(no_val(doc["last_backfill"], kNow - 5));
  EXPECT_TRUE(no_val(doc["last_update"], kNow - 2));
  ASSERT_EQ(doc["jobs"].size(), 1u);
  const json& j = doc["jobs"][0];
  EXPECT_EQ(j["job_id"], 7);
  EXPECT_EQ(j["name"], "job7");
  EXPECT_EQ(j["user_name"], "alice");
  EXPECT_EQ(j["user_id"], 1000);
  EXPECT_EQ(j["account"], "physics");
  EXPECT_EQ(j["partition"], "debug");
  EXPECT_EQ(j["job_state"], json({"RUNNING"}));
  EXPECT_EQ(j["nodes"], "node1");
  EXPECT_EQ(j["batch_host"], "node1");
  EXPECT_TRUE(no_val(j["cpus"], 2));
  EXPECT_TRUE(no_val(j["node_count"], 1));
  EXPECT_TRUE(no_val(j["tasks"], 2));
  EXPECT_TRUE(no_val(j["time_limit"], 30));
  EXPECT_TRUE(no_val(j["start_time"], kNow - 50));
  EXPECT_EQ(j["end_time"]["set"], false);
  EXPECT_EQ(j["cluster"], "c1");
  EXPECT_EQ(j["standard_output"], "/home/alice/slurm-7.out");
  EXPECT_EQ(j["tres_alloc_str"], "cpu=2,mem=1000M,node=1,billing=2");
  EXPECT_EQ(j["exit_code"]["status"], json({"PENDING"}));  // still running
  EXPECT_EQ(j["job_resources"]["nodes"]["allocation"][0]["name"], "node1");
}

TEST(JsonOutput, SqueueFiltersAreTheTextListings) {
  const json reply = jobs_reply();
  auto shown = [&](SqueueFilter f) {
    EXPECT_EQ(f.compile(), "");
    std::vector<uint64_t> ids;
    for (const auto& j : reply["jobs"])
      if (f.matches(j)) ids.push_back(j["id"].get<uint64_t>());
    return ids;
  };
  EXPECT_EQ(shown({}), (std::vector<uint64_t>{7, 8, 9}));  // active jobs only
  SqueueFilter alice;
  alice.users = {"alice"};
  EXPECT_EQ(shown(alice), (std::vector<uint64_t>{7, 9}));
  SqueueFilter all_alice = alice;
  all_alice.states = {"all"};
  EXPECT_EQ(shown(all_alice), (std::vector<uint64_t>{7, 9, 5}));
  SqueueFilter pending;
  pending.states = {"PD"};
  pending.partitions = {"debug"};
  EXPECT_EQ(shown(pending), (std::vector<uint64_t>{8}));
  SqueueFilter on_node;
  on_node.nodes = {"node1"};
  EXPECT_EQ(shown(on_node), (std::vector<uint64_t>{7}));
  SqueueFilter named;
  named.jobs = {core::parse_job_ref("9")};
  named.accounts = {"physics"};
  EXPECT_EQ(shown(named), (std::vector<uint64_t>{9}));
  SqueueFilter bad;
  bad.states = {"bogus"};
  EXPECT_EQ(bad.compile(), "squeue: error: Invalid job state specified: bogus\n");
}

TEST(JsonOutput, ScontrolShowJob) {
  const CommandResult r =
      scontrol_show_json("job", "9", {"--json", "show", "job", "9"}, canned_env());
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  expect_envelope(doc, "scontrol");
  ASSERT_EQ(doc["jobs"].size(), 1u);
  EXPECT_EQ(doc["jobs"][0]["job_id"], 9);
  EXPECT_EQ(doc["jobs"][0]["job_state"], json({"PENDING"}));
  EXPECT_EQ(doc["jobs"][0]["partition"], "big");

  const CommandResult missing = scontrol_show_json("job", "99", {}, canned_env());
  EXPECT_EQ(missing.rc, 1);
  const json err = json::parse(missing.out);
  EXPECT_TRUE(err["jobs"].empty());
  ASSERT_EQ(err["errors"].size(), 1u);
  EXPECT_EQ(err["errors"][0]["error_number"], 2017);
  EXPECT_EQ(err["errors"][0]["error"], "Invalid job id specified");

  const CommandResult bad = scontrol_show_json("job", "x1", {}, canned_env());
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, "Invalid job id specified\n");
  EXPECT_EQ(bad.out, "");
}

TEST(JsonOutput, ScontrolShowNodeAndPartition) {
  const CommandResult r = scontrol_show_json("node", "node[1,3]", {}, canned_env());
  ASSERT_EQ(r.rc, 0);
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["nodes"].size(), 2u);
  const json& n1 = doc["nodes"][0];
  EXPECT_EQ(n1["name"], "node1");
  EXPECT_EQ(n1["cpus"], 4);
  EXPECT_EQ(n1["alloc_cpus"], 2);
  EXPECT_EQ(n1["alloc_idle_cpus"], 2);
  EXPECT_EQ(n1["real_memory"], 8000);
  EXPECT_EQ(n1["state"], json({"MIXED"}));
  EXPECT_EQ(n1["cpu_load"], 25);
  EXPECT_TRUE(no_val(n1["free_mem"], 6000));
  EXPECT_EQ(n1["partitions"], json({"debug"}));
  EXPECT_EQ(doc["nodes"][1]["state"], json({"IDLE", "DRAIN"}));
  EXPECT_EQ(doc["nodes"][1]["reason"], "disk");
  EXPECT_TRUE(no_val(doc["last_update"], kNow));

  const CommandResult missing = scontrol_show_json("node", "node9", {}, canned_env());
  EXPECT_EQ(missing.rc, 1);
  const json err = json::parse(missing.out);
  EXPECT_TRUE(err["nodes"].empty());
  EXPECT_EQ(err["errors"][0]["error_number"], 2018);
  EXPECT_EQ(err["errors"][0]["description"], "Node node9 not found");

  const CommandResult p = scontrol_show_json("partition", "", {}, canned_env());
  ASSERT_EQ(p.rc, 0);
  const json part = json::parse(p.out)["partitions"][0];
  EXPECT_EQ(part["name"], "debug");
  EXPECT_EQ(part["nodes"]["configured"], "node[1-3]");
  EXPECT_EQ(part["nodes"]["total"], 3);
  EXPECT_EQ(part["cpus"]["total"], 12);
  EXPECT_TRUE(no_val(part["maximums"]["time"], 60));
  EXPECT_TRUE(no_val(part["defaults"]["partition_memory_per_cpu"], 500));
  EXPECT_EQ(part["cluster"], "c1");
  EXPECT_EQ(part["partition"]["state"], json({"UP"}));
}

TEST(JsonOutput, SinfoLinesAsDataParserEntries) {
  const CommandResult r = run_sinfo({"--json"}, canned_env());
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  expect_envelope(doc, "sinfo");
  // The default listing's lines: drained, mixed and idle nodes of debug, apart.
  ASSERT_EQ(doc["sinfo"].size(), 3u) << doc["sinfo"].dump();
  const json& drained = doc["sinfo"][0];
  EXPECT_EQ(drained["node"]["state"], json({"IDLE", "DRAIN"}));
  EXPECT_EQ(drained["nodes"]["nodes"], json({"node3"}));
  EXPECT_EQ(drained["nodes"]["other"], 1);
  EXPECT_EQ(drained["cpus"]["other"], 4);
  EXPECT_EQ(drained["reason"]["description"], "disk");
  EXPECT_EQ(drained["reason"]["user"], "root");
  EXPECT_EQ(drained["reason"]["time"], kNow - 300);
  const json& mixed = doc["sinfo"][1];
  EXPECT_EQ(mixed["node"]["state"], json({"MIXED"}));
  EXPECT_EQ(mixed["nodes"]["allocated"], 1);
  EXPECT_EQ(mixed["cpus"]["allocated"], 2);
  EXPECT_EQ(mixed["cpus"]["idle"], 2);
  EXPECT_EQ(mixed["memory"]["allocated"], 2000);
  EXPECT_EQ(mixed["nodes"]["addresses"], json({"10.0.0.1"}));
  EXPECT_EQ(mixed["partition"]["name"], "debug");
  EXPECT_TRUE(no_val(mixed["partition"]["maximums"]["time"], 60));
  EXPECT_EQ(doc["sinfo"][2]["node"]["state"], json({"IDLE"}));

  // -s: one line per partition with the counts of all its nodes; -p picks partitions.
  const json summary = json::parse(run_sinfo({"-s", "--json"}, canned_env()).out);
  ASSERT_EQ(summary["sinfo"].size(), 1u);
  const json& all = summary["sinfo"][0];
  EXPECT_EQ(all["nodes"]["total"], 3);
  EXPECT_EQ(all["nodes"]["allocated"], 1);
  EXPECT_EQ(all["nodes"]["idle"], 1);
  EXPECT_EQ(all["nodes"]["other"], 1);
  EXPECT_EQ(all["cpus"]["total"], 12);
  EXPECT_EQ(all["cpus"]["minimum"], 4);
  EXPECT_EQ(all["memory"]["maximum"], 8000);
  EXPECT_TRUE(no_val(all["memory"]["free"]["minimum"], 6000));
  EXPECT_EQ(json::parse(run_sinfo({"-p", "other", "--json"}, canned_env()).out)["sinfo"].size(),
            0u);
  // -N: a line per node.
  EXPECT_EQ(json::parse(run_sinfo({"-N", "--json"}, canned_env()).out)["sinfo"].size(), 3u);
}

TEST(JsonOutput, SacctJobsWithTheirSteps) {
  json record = {{"job_id", 12},
                 {"array_job_id", 0},
                 {"array_task_id", 0xfffffffe},
                 {"name", "wrap"},
                 {"user", "alice"},
                 {"group", "alice"},
                 {"uid", 1000},
                 {"gid", 1000},
                 {"account", "physics"},
                 {"qos", "normal"},
                 {"partition", "debug"},
                 {"submit_time", kNow - 100},
                 {"eligible_time", kNow - 100},
                 {"start_time", kNow - 90},
                 {"end_time", kNow - 30},
                 {"state", "FAILED"},
                 {"reason", "NonZeroExitCode"},
                 {"exit_code", 3},
                 {"exit_signal", 0},
                 {"cancelled_by", -1},
                 {"req_cpus", 2},
                 {"req_mem_mb", 1000},
                 {"req_mem_per_cpu", false},
                 {"req_nodes", 1},
                 {"req_tres", "billing=2,cpu=2,mem=1000M,node=1"},
                 {"alloc_tres", "billing=2,cpu=2,mem=1000M,node=1"},
                 {"alloc_cpus", 2},
                 {"nnodes", 1},
                 {"nodelist", "node1"},
                 {"workdir", "/tmp"},
                 {"time_limit_min", -1},
                 {"restarts", 0},
                 {"priority", 100},
                 {"steps",
                  {{{"name", "batch"},
                    {"state", "FAILED"},
                    {"exit_code", 3},
                    {"exit_signal", 0},
                    {"start_time", kNow - 90},
                    {"end_time", kNow - 30},
                    {"nodelist", "node1"},
                    {"nnodes", 1},
                    {"ncpus", 2},
                    {"alloc_tres", "cpu=2,mem=1000M,node=1"},
                    {"job_name", "batch"},
                    {"ntasks", 1}}}}};
  CommandEnv env = canned_env();
  env.call = [&](const json&) {
    return json{{"ok", true}, {"cluster_name", "c1"}, {"jobs", {record}}};
  };
  const CommandResult r = run_sacct({"--json", "-j", "12"}, env, kNow);
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  expect_envelope(doc, "sacct");
  ASSERT_EQ(doc["jobs"].size(), 1u);
  const json& j = doc["jobs"][0];
  EXPECT_EQ(j["job_id"], 12);
  EXPECT_EQ(j["state"]["current"], json({"FAILED"}));
  EXPECT_EQ(j["exit_code"]["status"], json({"ERROR"}));
  EXPECT_TRUE(no_val(j["exit_code"]["return_code"], 3));
  EXPECT_EQ(j["time"]["elapsed"], 60);
  EXPECT_EQ(j["time"]["limit"]["infinite"], true);
  EXPECT_EQ(j["cluster"], "c1");
  EXPECT_EQ(j["tres"]["allocated"][0],
            json({{"type", "billing"}, {"name", ""}, {"id", 5}, {"count", 2}}));
  ASSERT_EQ(j["steps"].size(), 1u);
  EXPECT_EQ(j["steps"][0]["step"]["id"], "12.batch");
  // -X: the allocations alone.
  const json alloc = json::parse(run_sacct({"--json", "-X", "-j", "12"}, env, kNow).out);
  EXPECT_TRUE(alloc["jobs"][0]["steps"].empty());
}

TEST(JsonOutput, ParserChoiceAndYaml) {
  JsonRequest taken;
  EXPECT_FALSE(take_json_option("--jsonx", taken));
  EXPECT_FALSE(take_json_option("-j", taken));
  EXPECT_FALSE(taken.json || taken.yaml);
  EXPECT_TRUE(take_json_option("--json=v0.0.44", taken));
  EXPECT_TRUE(taken.json && taken.parser == "v0.0.44");
  EXPECT_TRUE(take_json_option("--yaml", taken));
  EXPECT_TRUE(taken.yaml);

  JsonRequest req;
  req.json = true;
  EXPECT_FALSE(json_preamble("squeue", req));
  req.parser = "v0.0.44";
  EXPECT_FALSE(json_preamble("squeue", req));
  req.parser = "data_parser/v0.0.44";
  EXPECT_FALSE(json_preamble("squeue", req));
  req.parser = "v0.0.40";
  auto done = json_preamble("squeue", req);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->rc, 1);
  EXPECT_NE(done->err.find("squeue: error: --json=v0.0.40"), std::string::npos);
  req.parser = "list";
  done = json_preamble("squeue", req);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->rc, 0);
  EXPECT_EQ(done->err, "Possible data_parser plugins:\n");
  EXPECT_EQ(done->out, "data_parser/v0.0.44\n");
  JsonRequest yaml;
  yaml.yaml = true;
  done = json_preamble("sinfo", yaml);
  ASSERT_TRUE(done);
  EXPECT_NE(done->err.find("sinfo: error: --yaml is not supported"), std::string::npos);
  const CommandResult r = run_sinfo({"--yaml"}, canned_env());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  const CommandResult s = run_sacct({"--yaml"}, canned_env(), kNow);
  EXPECT_EQ(s.rc, 1);
}
