#include "ctld/rest_api.hpp"

#include "ctld/rest_auth.hpp"
#include "harness.hpp"
#include "net/jwt.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

// The controller's requests straight on a state machine, as the server runs them.
struct Backend : RestBackend {
  Harness& h;
  Effects fx;
  std::vector<store::JobRecord> records;
  explicit Backend(Harness& harness) : h(harness) {}
  json query(const proto::QueryRequest& req) override { return h.sm.query(req, h.now); }
  json submit(const proto::SubmitRequest& req, const Caller& who) override {
    return h.sm.submit(req, who, h.now, fx);
  }
  json cancel(const proto::CancelRequest& req, const Caller& who) override {
    return h.sm.cancel(req, who, h.now, fx);
  }
  std::vector<store::JobRecord> acct_jobs(const store::JobFilter& f) override {
    std::vector<store::JobRecord> out;
    for (const auto& r : records)
      if (f.job_ids.empty() || r.job_id == f.job_ids.front()) out.push_back(r);
    return out;
  }
  SchedStats sched_stats() override { return {}; }
};

struct Api {
  Harness h;
  Backend backend{h};
  RestResponse call(const std::string& method, const std::string& path, const Caller& who,
                    const std::string& body = "", const std::string& query = "") {
    RestContext ctx{h.sm.config(), backend, who, h.now, 900, h.now, h.now};
    return rest_handle({method, path, parse_query_string(query), body, "127.0.0.1:5000"}, ctx);
  }
  RestResponse get(const std::string& path, const std::string& query = "") {
    return call("GET", path, h.alice, "", query);
  }
};

const std::string kSlurm = "/slurm/v0.0.44/";
const std::string kDb = "/slurmdb/v0.0.44/";

json submit_body(const std::string& name = "rest") {
  return {{"script", "#!/bin/sh\ntrue\n"},
          {"job",
           {{"name", name},
            {"tasks", 2},
            {"current_working_directory", "/tmp"},
            {"environment", {"PATH=/bin:/usr/bin"}},
            {"time_limit", {{"set", true}, {"infinite", false}, {"number", 10}}}}}};
}

void expect_envelope(const json& body, const std::string& plugin) {
  ASSERT_TRUE(body.contains("meta")) << body.dump();
  EXPECT_EQ(body["meta"]["plugin"]["type"], plugin);
  EXPECT_EQ(body["meta"]["plugin"]["data_parser"], "data_parser/v0.0.44");
  EXPECT_EQ(body["meta"]["slurm"]["cluster"], "test");
  EXPECT_EQ(body["meta"]["slurm"]["version"]["major"], "25");
  EXPECT_EQ(body["meta"]["client"]["user"], "alice");
  EXPECT_TRUE(body["errors"].is_array());
  EXPECT_TRUE(body["warnings"].is_array());
}

}  // namespace

TEST(RestApi, SubmitThenGetShowsJobInfoInV0044Shapes) {
  Api api;
  auto r = api.call("POST", kSlurm + "job/submit", api.h.alice, submit_body().dump());
  ASSERT_EQ(r.status, 200) << r.body.dump(2);
  expect_envelope(r.body, "openapi/slurmctld");
  const uint64_t id = r.body["job_id"];
  EXPECT_GT(id, 0u);
  EXPECT_EQ(r.body["step_id"], "batch");
  EXPECT_EQ(r.body["job_submit_user_msg"], "");

  r = api.get(kSlurm + "job/" + std::to_string(id));
  ASSERT_EQ(r.status, 200) << r.body.dump(2);
  ASSERT_EQ(r.body["jobs"].size(), 1u);
  const json& job = r.body["jobs"][0];
  EXPECT_EQ(job["job_id"], id);
  EXPECT_EQ(job["name"], "rest");
  EXPECT_EQ(job["user_name"], "alice");
  EXPECT_EQ(job["user_id"], 1000);
  EXPECT_EQ(job["partition"], "debug");
  EXPECT_EQ(job["job_state"], json::array({"PENDING"}));
  EXPECT_EQ(job["tasks"], (json{{"set", true}, {"infinite", false}, {"number", 2}}));
  EXPECT_EQ(job["time_limit"]["number"], 10);
  EXPECT_EQ(job["submit_time"]["number"], api.h.now);
  EXPECT_EQ(job["current_working_directory"], "/tmp");
  EXPECT_EQ(job["exit_code"]["status"], json::array({"PENDING"}));
  for (const char* key : {"last_backfill", "last_update"})
    EXPECT_TRUE(r.body[key].contains("set")) << key;

  // Once it runs, its state and resources show.
  api.h.sm.schedule(api.h.now, api.backend.fx);
  r = api.get(kSlurm + "jobs");
  ASSERT_EQ(r.body["jobs"].size(), 1u);
  EXPECT_EQ(r.body["jobs"][0]["job_state"], json::array({"RUNNING"}));
  EXPECT_EQ(r.body["jobs"][0]["job_resources"]["cpus"], 2);
  EXPECT_FALSE(r.body["jobs"][0]["nodes"].get<std::string>().empty());
}

// A submission retried with its request_id gets the same job.
TEST(RestApi, SubmitWithARequestIdIsIdempotent) {
  Api api;
  json body = submit_body();
  body["request_id"] = "rest-1";
  auto first = api.call("POST", kSlurm + "job/submit", api.h.alice, body.dump());
  auto again = api.call("POST", kSlurm + "job/submit", api.h.alice, body.dump());
  ASSERT_EQ(first.status, 200) << first.body.dump(2);
  ASSERT_EQ(again.status, 200) << again.body.dump(2);
  EXPECT_EQ(again.body["job_id"], first.body["job_id"]);
  EXPECT_EQ(api.h.sm.job_count(), 1u);
  auto other = api.call("POST", kSlurm + "job/submit", api.h.alice, submit_body().dump());
  EXPECT_NE(other.body["job_id"], first.body["job_id"]);
}

TEST(RestApi, SubmitErrorsComeInTheEnvelope) {
  Api api;
  auto r = api.call("POST", kSlurm + "job/submit", api.h.alice, "not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["errors"][0]["error_number"], 9001);

  json body = submit_body();
  body.erase("script");
  r = api.call("POST", kSlurm + "job/submit", api.h.alice, body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["errors"][0]["error"], "Job script not specified");

  body = submit_body();
  body["job"].erase("environment");
  r = api.call("POST", kSlurm + "job/submit", api.h.alice, body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["errors"][0]["error"], "Environment is missing in job");

  body = submit_body();
  body["job"]["partition"] = "nope";
  r = api.call("POST", kSlurm + "job/submit", api.h.alice, body.dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["errors"][0]["error_number"], 2000);
  EXPECT_EQ(api.h.sm.job_count(), 0u);
}

TEST(RestApi, DeleteCancelsOwnJobsOnly) {
  Api api;
  auto r = api.call("POST", kSlurm + "job/submit", api.h.alice, submit_body().dump());
  const std::string id = std::to_string(r.body["job_id"].get<uint64_t>());
  r = api.call("DELETE", kSlurm + "job/" + id, api.h.bob);
  EXPECT_EQ(r.status, 403) << r.body.dump(2);
  EXPECT_EQ(r.body["errors"][0]["error"], "Access/permission denied");
  EXPECT_EQ(r.body["status"][0]["error"]["code"], 2002);
  EXPECT_EQ(api.h.sm.find_job(std::stoull(id))->state, core::JobState::Pending);

  r = api.call("DELETE", kSlurm + "job/" + id, api.h.alice);
  EXPECT_EQ(r.status, 200) << r.body.dump(2);
  EXPECT_EQ(r.body["status"], json::array());
  EXPECT_EQ(api.h.sm.find_job(std::stoull(id))->state, core::JobState::Cancelled);
  // Again: already done is a warning, as slurmrestd says.
  r = api.call("DELETE", kSlurm + "job/" + id, api.h.alice);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["warnings"].size(), 1u);

  r = api.call("DELETE", kSlurm + "job/999", api.h.alice);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body["errors"][0]["error_number"], 2017);
  r = api.call("DELETE", kSlurm + "job/" + id, api.h.alice, "", "signal=NOPE");
  EXPECT_EQ(r.status, 400);
}

TEST(RestApi, UnknownThingsAre404AndWrongMethods405) {
  Api api;
  EXPECT_EQ(api.get(kSlurm + "job/12345").status, 404);
  EXPECT_EQ(api.get(kSlurm + "job/abc").status, 400);
  EXPECT_EQ(api.get(kSlurm + "node/nope").status, 404);
  EXPECT_EQ(api.get(kSlurm + "partition/nope").status, 404);
  EXPECT_EQ(api.get(kSlurm + "nothing").status, 404);
  EXPECT_EQ(api.get("/slurm/v0.0.39/jobs").status, 404);
  auto r = api.call("POST", kSlurm + "jobs", api.h.alice);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.body["errors"][0]["error_number"], 9007);
  EXPECT_EQ(api.get(kDb + "job/77").status, 404);
}

TEST(RestApi, JobsUpdateTimeAnswersNothingWhenNothingChanged) {
  Api api;
  api.call("POST", kSlurm + "job/submit", api.h.alice, submit_body().dump());
  auto r = api.get(kSlurm + "jobs", "update_time=" + std::to_string(api.h.now - 1));
  EXPECT_EQ(r.body["jobs"].size(), 1u);
  r = api.get(kSlurm + "jobs", "update_time=" + std::to_string(api.h.now));
  EXPECT_EQ(r.body["jobs"].size(), 0u);
  EXPECT_EQ(r.body["warnings"].size(), 1u);
}

TEST(RestApi, NodesPartitionsPingDiagShares) {
  Api api;
  auto r = api.get(kSlurm + "nodes");
  ASSERT_EQ(r.body["nodes"].size(), 2u);
  const json& n = r.body["nodes"][0];
  EXPECT_EQ(n["name"], "node1");
  EXPECT_EQ(n["cpus"], 2);
  EXPECT_EQ(n["real_memory"], 1000);
  EXPECT_EQ(n["state"], json::array({"IDLE"}));
  EXPECT_EQ(n["partitions"], json::array({"debug"}));
  EXPECT_EQ(api.get(kSlurm + "node/node2").body["nodes"][0]["name"], "node2");

  r = api.get(kSlurm + "partitions");
  ASSERT_EQ(r.body["partitions"].size(), 1u);
  const json& p = r.body["partitions"][0];
  EXPECT_EQ(p["name"], "debug");
  EXPECT_EQ(p["nodes"]["configured"], "node[1-2]");
  EXPECT_EQ(p["nodes"]["total"], 2);
  EXPECT_EQ(p["cpus"]["total"], 4);
  EXPECT_EQ(p["partition"]["state"], json::array({"UP"}));
  EXPECT_TRUE(p["maximums"]["time"]["infinite"]);

  r = api.get(kSlurm + "ping");
  EXPECT_EQ(r.body["pings"][0]["responding"], true);
  r = api.get(kSlurm + "diag");
  EXPECT_EQ(r.body["statistics"]["req_time_start"]["number"], 900);
  EXPECT_TRUE(r.body["statistics"].contains("jobs_pending"));
  r = api.get(kSlurm + "reservations");
  EXPECT_EQ(r.body["reservations"], json::array());
  r = api.get(kSlurm + "shares");
  EXPECT_TRUE(r.body["shares"].contains("shares"));
  EXPECT_TRUE(r.body["shares"].contains("total_shares"));
}

TEST(RestApi, SlurmdbJobsFromAccountingRecords) {
  Api api;
  store::JobRecord rec;
  rec.job_id = 5;
  rec.name = "done";
  rec.user = "alice";
  rec.state = "COMPLETED";
  rec.submit_time = 100;
  rec.start_time = 110;
  rec.end_time = 170;
  rec.alloc_tres = "cpu=2,mem=200M,node=1,billing=2";
  rec.steps.push_back({.name = "batch",
                       .state = "COMPLETED",
                       .exit_code = 0,
                       .exit_signal = 0,
                       .start_time = 110,
                       .end_time = 170,
                       .nodelist = "node1",
                       .nnodes = 1,
                       .ncpus = 2,
                       .alloc_tres = "cpu=2,mem=200M,node=1",
                       .job_name = "batch",
                       .ntasks = 1});
  api.backend.records.push_back(rec);
  auto r = api.get(kDb + "job/5");
  ASSERT_EQ(r.status, 200) << r.body.dump(2);
  expect_envelope(r.body, "openapi/slurmdbd");
  const json& j = r.body["jobs"][0];
  EXPECT_EQ(j["job_id"], 5);
  EXPECT_EQ(j["state"]["current"], json::array({"COMPLETED"}));
  EXPECT_EQ(j["time"]["elapsed"], 60);
  EXPECT_EQ(j["exit_code"]["status"], json::array({"SUCCESS"}));
  EXPECT_EQ(j["tres"]["allocated"][1],
            (json{{"type", "mem"}, {"name", ""}, {"id", 2}, {"count", 200}}));
  EXPECT_EQ(j["steps"][0]["step"]["id"], "5.batch");
  EXPECT_EQ(api.get(kDb + "jobs").body["jobs"].size(), 1u);
  // Without an accounting file: root only, and the normal QOS.
  EXPECT_EQ(api.get(kDb + "accounts").body["accounts"][0]["name"], "root");
  EXPECT_EQ(api.get(kDb + "qos").body["qos"][0]["name"], "normal");
  EXPECT_EQ(api.get(kDb + "users").body["users"], json::array());
  EXPECT_EQ(api.get(kDb + "associations").body["associations"], json::array());
}

TEST(RestApi, SlurmdbAccountsUsersAssociationsQosFromTheAccountingFile) {
  Config c = two_node_config();
  load_accounting(c,
                  "Cluster - 'test':Fairshare=1\n"
                  "Parent - 'root'\n"
                  "Account - 'physics':Description='physics dept':Organization='science'\n"
                  "Parent - 'physics'\n"
                  "User - 'alice':DefaultAccount='physics':AdminLevel='Operator'\n"
                  "QOS - 'high':Priority=100:MaxWall=60\n",
                  "accounts.cfg");
  Api api{Harness(c)};
  auto r = api.get(kDb + "accounts");
  json names = json::array();
  for (const auto& a : r.body["accounts"]) names.push_back(a["name"]);
  EXPECT_NE(std::find(names.begin(), names.end(), "physics"), names.end()) << r.body.dump(2);
  r = api.get(kDb + "users");
  ASSERT_EQ(r.body["users"].size(), 1u);
  EXPECT_EQ(r.body["users"][0]["name"], "alice");
  EXPECT_EQ(r.body["users"][0]["administrator_level"], json::array({"Operator"}));
  EXPECT_EQ(r.body["users"][0]["default"]["account"], "physics");
  r = api.get(kDb + "associations");
  bool found = false;
  for (const auto& a : r.body["associations"])
    if (a["user"] == "alice") {
      found = true;
      EXPECT_EQ(a["account"], "physics");
      EXPECT_EQ(a["lineage"], "/root/physics/0-alice/");
      EXPECT_TRUE(a["is_default"]);
    }
  EXPECT_TRUE(found);
  r = api.get(kDb + "qos");
  for (const auto& q : r.body["qos"])
    if (q["name"] == "high") {
      EXPECT_EQ(q["priority"]["number"], 100);
      EXPECT_EQ(q["limits"]["max"]["wall_clock"]["per"]["job"]["number"], 60);
    }
}

TEST(RestAuth, TokensNameTheirUserAndExpire) {
  const std::string key = token_key("cluster-key-0123456789");
  EXPECT_NE(key, "cluster-key-0123456789");
  auto users = [](const std::string& name) -> std::optional<Caller> {
    if (name == "alice") return Caller{1000, 1000, "alice", "alice"};
    return std::nullopt;
  };
  const Caller alice{1000, 1000, "alice", "alice"};
  json reply = issue_token(proto::TokenRequest{.lifespan = 60}, alice, false, key, 1000);
  ASSERT_TRUE(reply.value("ok", false));
  const std::string token = reply["token"];
  auto auth = rest_authenticate(key, "alice", token, 1030, users);
  ASSERT_TRUE(auth.caller) << auth.error;
  EXPECT_EQ(auth.caller->uid, 1000u);
  EXPECT_FALSE(rest_authenticate(key, "alice", token, 1060, users).caller);  // expired
  EXPECT_FALSE(rest_authenticate(key, "bob", token, 1030, users).caller);    // not bob's
  EXPECT_FALSE(rest_authenticate(key, "alice", "", 1030, users).caller);
  EXPECT_FALSE(rest_authenticate(token_key("other"), "alice", token, 1030, users).caller);
  // The default lifespan is Slurm's 1800 s; others' tokens are for operators only.
  EXPECT_EQ(issue_token(proto::TokenRequest{}, alice, false, key, 1000)["lifespan"], 1800);
  EXPECT_EQ(issue_token(proto::TokenRequest{.username = "bob"}, alice, false, key, 1000)["error"],
            "Invalid user id");
  reply = issue_token(proto::TokenRequest{.username = "alice"}, Caller{0, 0, "root", "root"}, true,
                      key, 1000);
  EXPECT_TRUE(rest_authenticate(key, "alice", reply["token"], 1030, users).caller);
}
