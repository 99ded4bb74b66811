// squeue's typed rows read from a job-list reply: the same values the json readers
// (job_info.hpp) take from the tree, unknown keys skipped whatever their shape.
#include "cli/squeue_rows.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/job_info.hpp"

namespace drover::cli {
namespace {

using nlohmann::json;

const char* kReply = R"({"cluster_name":"c1","control_host":"h","jobs":[
 {"alloc":[{"cpus":2,"gres":[{"name":"gpu","count":1}],"node":"n1"},{"cpus":3,"node":"n2"}],
  "array_job_id":0,"array_max_running":0,"array_pending":"","array_task_id":4294967294,
  "completing":false,"id":7,"nodelist":"n[1-2]","partition":"debug","priority":4294967295,
  "reason":"None","run_time":65,"sched_nodes":"","spec":{"account":"a\"b","cpus_per_task":1,
  "deps":{"x":[1,{"y":null}]},"name":"caf\u00e9 \\ x","nodes_min":2,"ntasks":5,"qos":"normal"},
  "start_time":1700000000,"state":"RUNNING","steps":[{"id":0,"state":"RUNNING"}],
  "time_limit_min":-1,"uid":1001,"user":"alice","weird":[[{}],{"a":[true,1.5]}]},
 {"alloc":[],"array_job_id":40,"array_max_running":2,"array_pending":"3-9","array_task_id":3,
  "completing":true,"id":40,"nodelist":"","partition":"hold","priority":12,
  "reason":"JobArrayTaskLimit","run_time":0,"spec":{"cpus_per_task":2,"name":"arr",
  "nodes_min":1,"ntasks":3},"start_time":0,"state":"PENDING","time_limit_min":30,
  "uid":0,"user":"root"}],"last_backfill":5,"now":1700000100,"ok":true})";

TEST(SqueueRows, ReadsWhatTheTreeHolds) {
  JobList list;
  ASSERT_TRUE(read_job_list(kReply, list));
  EXPECT_TRUE(list.ok);
  EXPECT_EQ(list.now, 1700000100);
  EXPECT_EQ(list.cluster_name, "c1");
  ASSERT_EQ(list.jobs.size(), 2u);
  const json tree = json::parse(kReply);
  for (size_t i = 0; i < 2; ++i) {
    const JobRow& r = list.jobs[i];
    const json& j = tree["jobs"][i];
    EXPECT_EQ(r.id, j["id"].get<uint64_t>());
    EXPECT_EQ(r.name, j["spec"].value("name", ""));
    EXPECT_EQ(r.account, j["spec"].value("account", ""));
    EXPECT_EQ(r.qos, j["spec"].value("qos", ""));
    EXPECT_EQ(r.user, j["user"]);
    EXPECT_EQ(r.uid, j["uid"].get<uint32_t>());
    EXPECT_EQ(r.partition, j["partition"]);
    EXPECT_EQ(r.nodelist, j["nodelist"]);
    EXPECT_EQ(r.reason, j["reason"]);
    EXPECT_EQ(r.priority, j["priority"].get<uint32_t>());
    EXPECT_EQ(r.start_time, j["start_time"].get<int64_t>());
    EXPECT_EQ(r.run_time, j["run_time"].get<int64_t>());
    EXPECT_EQ(r.time_limit_min, j["time_limit_min"].get<int64_t>());
    EXPECT_EQ(job_state_long(r), job_state_long(j));
    EXPECT_EQ(job_state_short(r), job_state_short(j));
    EXPECT_EQ(job_active(r), job_active(j));
    EXPECT_EQ(job_cpu_count(r), job_cpu_count(j));
    EXPECT_EQ(job_node_count(r), job_node_count(j));
    EXPECT_EQ(job_display_id(r.array()), job_display_id(j));
    EXPECT_EQ(array_task_field(r.array()), array_task_field(j));
  }
  EXPECT_EQ(list.jobs[0].name, "caf\xc3\xa9 \\ x");
  EXPECT_EQ(list.jobs[0].alloc_nodes, 2);
  EXPECT_EQ(list.jobs[0].alloc_cpus, 5);
  EXPECT_EQ(job_display_id(list.jobs[1].array()), "40_[3-9%2]");
  EXPECT_EQ(job_state_short(list.jobs[1]), "CG");
}

// The compact form (proto/job_list.hpp) of the same two jobs reads into the same rows; columns
// the reader does not know are skipped whatever their values, and missing ones keep the defaults.
const char* kRowsReply = R"({"cluster_name":"c1","control_host":"h","columns":["id",
 "array_job_id","array_task_id","array_max_running","array_pending","state","completing",
 "reason","partition","user","nodelist","sched_nodes","priority","uid","start_time","run_time",
 "time_limit_min","alloc_nodes","alloc_cpus","name","account","qos","ntasks","nodes_min",
 "cpus_per_task","weird"],"rows":[
 [7,0,4294967294,0,"","RUNNING",false,"None","debug","alice","n[1-2]","",4294967295,1001,
  1700000000,65,-1,2,5,"caf\u00e9 \\ x","a\"b","normal",5,2,1,[[{}],{"a":[true,1.5]}]],
 [40,40,3,2,"3-9","PENDING",true,"JobArrayTaskLimit","hold","root","","",12,0,0,0,30,0,0,"arr",
  "","",3,1,2,null]],"last_backfill":5,"now":1700000100,"ok":true})";

TEST(SqueueRows, CompactRowsReadAsTheObjects) {
  JobList objects, rows;
  ASSERT_TRUE(read_job_list(kReply, objects));
  ASSERT_TRUE(read_job_list(kRowsReply, rows));
  EXPECT_TRUE(rows.ok);
  EXPECT_EQ(rows.now, objects.now);
  EXPECT_EQ(rows.cluster_name, objects.cluster_name);
  ASSERT_EQ(rows.jobs.size(), objects.jobs.size());
  for (size_t i = 0; i < rows.jobs.size(); ++i) {
    const JobRow& a = rows.jobs[i];
    const JobRow& b = objects.jobs[i];
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.array_job_id, b.array_job_id);
    EXPECT_EQ(a.array_task_id, b.array_task_id);
    EXPECT_EQ(a.array_max_running, b.array_max_running);
    EXPECT_EQ(a.array_pending, b.array_pending);
    EXPECT_EQ(a.state, b.state);
    EXPECT_EQ(a.completing, b.completing);
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.partition, b.partition);
    EXPECT_EQ(a.user, b.user);
    EXPECT_EQ(a.nodelist, b.nodelist);
    EXPECT_EQ(a.sched_nodes, b.sched_nodes);
    EXPECT_EQ(a.priority, b.priority);
    EXPECT_EQ(a.uid, b.uid);
    EXPECT_EQ(a.start_time, b.start_time);
    EXPECT_EQ(a.run_time, b.run_time);
    EXPECT_EQ(a.time_limit_min, b.time_limit_min);
    EXPECT_EQ(a.alloc_nodes, b.alloc_nodes);
    EXPECT_EQ(a.alloc_cpus, b.alloc_cpus);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.account, b.account);
    EXPECT_EQ(a.qos, b.qos);
    EXPECT_EQ(a.ntasks, b.ntasks);
    EXPECT_EQ(a.nodes_min, b.nodes_min);
    EXPECT_EQ(a.cpus_per_task, b.cpus_per_task);
  }
  // Fewer columns than values: the rest are skipped; a short row keeps the defaults.
  JobList few;
  ASSERT_TRUE(read_job_list(
      R"({"columns":["user","id"],"rows":[["bob",9,"x",{"y":[1]}],["eve"]],"ok":true})", few));
  ASSERT_EQ(few.jobs.size(), 2u);
  EXPECT_EQ(few.jobs[0].user, "bob");
  EXPECT_EQ(few.jobs[0].id, 9u);
  EXPECT_EQ(few.jobs[1].user, "eve");
  EXPECT_EQ(few.jobs[1].id, 0u);
  EXPECT_EQ(few.jobs[1].reason, "None");
  EXPECT_FALSE(read_job_list(R"({"columns":["id"],"rows":[[1],[2})", few));
}

TEST(SqueueRows, MissingKeysReadAsTheTreeDefaults) {
  JobList list;
  ASSERT_TRUE(read_job_list(R"({"jobs":[{"id":3,"alloc":[],"spec":{}}],"now":1,"ok":true})", list));
  ASSERT_EQ(list.jobs.size(), 1u);
  const json j = json::parse(R"({"id":3,"alloc":[],"spec":{}})");
  const JobRow& r = list.jobs[0];
  EXPECT_EQ(job_state_long(r), job_state_long(j));
  EXPECT_EQ(job_cpu_count(r), job_cpu_count(j));
  EXPECT_EQ(job_node_count(r), job_node_count(j));
  EXPECT_EQ(r.reason, "None");
  EXPECT_EQ(job_display_id(r.array()), "3");
}

TEST(SqueueRows, ErrorsAndBadText) {
  JobList list;
  ASSERT_TRUE(read_job_list(R"({"ok":false,"error":"Invalid job id specified"})", list));
  EXPECT_FALSE(list.ok);
  EXPECT_EQ(list.error, "Invalid job id specified");
  EXPECT_FALSE(read_job_list(R"({"ok":true,"jobs":[{"id":1})", list));
  EXPECT_FALSE(read_job_list("", list));
}

// Strings decode as nlohmann decodes them (escapes, \u with surrogate pairs, raw UTF-8);
// numbers of every json form are read; what nlohmann refuses is refused.
TEST(SqueueRows, TextDecodesAsTheTreeDoes) {
  for (const char* name :
       {R"(plain)", R"(q\"uote)", R"(back\\slash\/)", R"(\b\f\n\r\t)",
        R"(caf\u00e9 \u20ac \ud83d\ude00)", "raw \xc3\xa9\xe2\x82\xac", R"()", R"(\u0001\u001f)"}) {
    const std::string text = std::string(R"({"jobs":[{"id":1,"spec":{"name":")") + name +
                             R"("},"priority":12.5e1,"run_time":-3,"uid":1e2}],"ok":true})";
    JobList list;
    ASSERT_TRUE(read_job_list(text, list)) << text;
    ASSERT_EQ(list.jobs.size(), 1u);
    EXPECT_EQ(list.jobs[0].name, json::parse(text)["jobs"][0]["spec"]["name"]) << name;
    EXPECT_EQ(list.jobs[0].priority, 125u);
    EXPECT_EQ(list.jobs[0].run_time, -3);
    EXPECT_EQ(list.jobs[0].uid, 100u);
  }
  for (const char* bad : {R"({"ok":tru})", R"({"ok":true,})", R"({"a":"\ud800"})", R"({"a":"\x"})",
                          "{\"a\":\"tab\there\"}", R"({"a":01.})", R"({"a":01})", R"({"a":[1,2})",
                          R"({"a":1} x)", R"({"a":-})"}) {
    JobList list;
    EXPECT_FALSE(read_job_list(bad, list)) << bad;
    EXPECT_FALSE(json::accept(bad)) << bad;
  }
}

// Found by fuzz_squeue_rows: a float beyond 64 bits in an integer field was undefined
// behaviour; it is clamped. A number beyond a double's range is refused, as nlohmann does.
TEST(SqueueRows, HugeNumbersAreClampedOrRefused) {
  JobList list;
  ASSERT_TRUE(read_job_list(R"({"ok":true,"jobs":[{"id":1,"run_time":-2e32,"uid":1e300}]})", list));
  ASSERT_EQ(list.jobs.size(), 1u);
  EXPECT_EQ(list.jobs[0].run_time, INT64_MIN);
  EXPECT_FALSE(read_job_list(R"({"ok":true,"jobs":[{"id":1,"run_time":2E48884088}]})", list));
  EXPECT_FALSE(json::accept(R"({"a":2E48884088})"));
}

TEST(SqueueRows, ArrayRefsMatchAsOnTheTree) {
  const json rec = json::parse(
      R"({"id":40,"array_job_id":40,"array_pending":"3-9:2","array_task_id":3,"array_max_running":0})");
  std::string pending = "3-9:2";
  const ArrayFields a{40, 40, 3, 0, pending};
  for (const char* ref : {"40", "40_5", "40_4", "40_[4-6]", "41", "40_11"}) {
    const core::JobRef r = core::parse_job_ref(ref);
    EXPECT_EQ(job_matches_ref(a, r), job_matches_ref(rec, r)) << ref;
  }
  EXPECT_EQ(job_display_id(a), job_display_id(rec));
}

}  // namespace
}  // namespace drover::cli
