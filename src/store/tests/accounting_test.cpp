#include "store/accounting.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

using namespace drover::store;

namespace {
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("drover-acct-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file() const { return (path / "accounting.db").string(); }
};

JobRecord rec(uint64_t id, uint32_t uid, const std::string& state, int64_t submit, int64_t end) {
  JobRecord j;
  j.job_id = id;
  j.name = "job" + std::to_string(id);
  j.user = "u" + std::to_string(uid);
  j.group = "g";
  j.uid = uid;
  j.gid = 100;
  j.account = "acct";
  j.qos = "normal";
  j.partition = "debug";
  j.submit_time = j.eligible_time = submit;
  j.start_time = end ? submit + 1 : 0;
  j.end_time = end;
  j.state = state;
  j.alloc_cpus = 2;
  j.alloc_tres = "cpu=2,mem=1G,node=1,billing=2";
  j.nodelist = "node[1-2]";
  j.nnodes = 2;
  if (end) {
    StepRecord s;
    s.name = "batch";
    s.state = state;
    s.start_time = j.start_time;
    s.end_time = end;
    s.nodelist = "node1";
    s.nnodes = 1;
    s.ncpus = 2;
    j.steps.push_back(s);
  }
  return j;
}

std::vector<uint64_t> ids(const std::vector<JobRecord>& v) {
  std::vector<uint64_t> out;
  for (const auto& j : v) out.push_back(j.job_id);
  return out;
}
}  // namespace

TEST(Accounting, RoundTripAndUpsertSurviveReopen) {
  TempDir dir;
  JobRecord a = rec(1, 1000, "RUNNING", 100, 0);
  a.array_job_id = 7;
  a.array_task_id = 3;
  a.cancelled_by = 0;
  a.exit_code = 2;
  a.exit_signal = 9;
  a.workdir = "/home/x";
  a.time_limit_min = 60;
  {
    auto store = open_sqlite_accounting(dir.file());
    store->upsert({a, rec(2, 1001, "COMPLETED", 110, 120)});
    a.state = "FAILED";
    a.end_time = 200;
    a.steps.push_back({"batch", "FAILED", 2, 0, 101, 200, "node1", 1, 2, "cpu=2", "batch", 1});
    store->upsert({a});
  }
  auto store = open_sqlite_accounting(dir.file());
  auto all = store->query({});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], a);
  EXPECT_EQ(all[1].steps.size(), 1u);
  EXPECT_EQ(all[1].steps[0].name, "batch");
}

TEST(Accounting, Filters) {
  TempDir dir;
  auto store = open_sqlite_accounting(dir.file());
  JobRecord task = rec(5, 1000, "COMPLETED", 150, 160);
  task.array_job_id = 4;
  task.array_task_id = 1;
  JobRecord other = rec(6, 1000, "CANCELLED", 170, 180);
  other.partition = "gpu";
  other.account = "phys";
  other.nodelist = "node7";
  JobRecord held = rec(8, 1000, "PENDING", 300, 0);
  held.eligible_time = 0;
  store->upsert(
      {rec(3, 1001, "COMPLETED", 100, 110), rec(4, 1000, "RUNNING", 140, 0), task, other, held});

  EXPECT_EQ(ids(store->query({})), (std::vector<uint64_t>{3, 4, 5, 6}));
  JobFilter f;
  f.include_ineligible = true;
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{3, 4, 5, 6, 8}));
  f = {};
  f.job_ids = {4};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{4, 5}));  // the array's tasks too
  f = {};
  f.uids = {1001};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{3}));
  f = {};
  f.states = {"CANCELLED", "RUNNING"};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{4, 6}));
  f = {};
  f.partitions = {"gpu"};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{6}));
  f = {};
  f.accounts = {"phys"};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{6}));
  f = {};
  f.nodes = {"node2"};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{3, 4, 5}));
  // The window: ended at or after its start, eligible at or before its end; running jobs
  // overlap every window after their eligibility.
  f = {};
  f.window_start = 165;
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{4, 6}));
  f.window_end = 160;
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{4}));
  f = {};
  f.window_end = 120;
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{3}));
}

TEST(Accounting, BatchIsOneTransaction) {
  TempDir dir;
  auto store = open_sqlite_accounting(dir.file());
  std::vector<JobRecord> many;
  for (uint64_t i = 1; i <= 2000; ++i) many.push_back(rec(i, 1000, "COMPLETED", int64_t(i), 5000));
  store->upsert(many);
  EXPECT_EQ(store->query({}).size(), 2000u);
}

TEST(Accounting, StepsKeepTheirNamesAndTasksInSacctOrder) {
  TempDir dir;
  JobRecord j = rec(9, 1000, "COMPLETED", 100, 200);  // has its batch step
  j.steps[0].job_name = "batch";
  j.steps.push_back({"10", "COMPLETED", 0, 0, 150, 160, "node1", 1, 1, "cpu=1", "late", 1});
  j.steps.push_back({"2", "FAILED", 3, 0, 101, 140, "node[1-2]", 2, 4, "cpu=4", "hostname", 4});
  j.steps.push_back({"0", "CANCELLED", 0, 9, 101, 120, "node1", 1, 2, "cpu=2", "sleep", 2});
  {
    auto store = open_sqlite_accounting(dir.file());
    store->upsert({j});
  }
  auto store = open_sqlite_accounting(dir.file());
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  std::vector<std::string> order;
  for (const auto& s : got[0].steps) order.push_back(s.name);
  EXPECT_EQ(order, (std::vector<std::string>{"batch", "0", "2", "10"}));
  EXPECT_EQ(got[0].steps[0].job_name, "batch");
  EXPECT_EQ(got[0].steps[2].job_name, "hostname");
  EXPECT_EQ(got[0].steps[2].ntasks, 4);
  EXPECT_EQ(got[0].steps[2].exit_code, 3);
  EXPECT_EQ(got[0].steps[1].exit_signal, 9);
}

TEST(Accounting, OlderStepTablesGainTheNewColumns) {
  TempDir dir;
  {
    // The first version's tables, holding a job and its batch step.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file().c_str(), &db), SQLITE_OK);
    const char* sql =
        "CREATE TABLE acct_steps (job_id BIGINT NOT NULL, step_name TEXT NOT NULL,"
        " state TEXT NOT NULL, exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL,"
        " start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, nodelist TEXT NOT NULL,"
        " nnodes INTEGER NOT NULL, ncpus INTEGER NOT NULL, alloc_tres TEXT NOT NULL,"
        " PRIMARY KEY (job_id, step_name));"
        "INSERT INTO acct_steps VALUES (1, 'batch', 'COMPLETED', 0, 0, 101, 110, 'node1', 1, 2,"
        " 'cpu=2');";
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
  for (int open = 0; open < 2; ++open) open_sqlite_accounting(dir.file());  // twice: idempotent
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir.file().c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT job_name, ntasks FROM acct_steps WHERE job_id = 1", -1,
                                 &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), "batch");
    EXPECT_EQ(sqlite3_column_int(st, 1), 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  // New rows carry both.
  auto store = open_sqlite_accounting(dir.file());
  JobRecord j = rec(2, 1000, "COMPLETED", 120, 130);
  j.steps[0].job_name = "batch";
  j.steps.push_back({"0", "COMPLETED", 0, 0, 121, 125, "node1", 1, 1, "cpu=1", "true", 1});
  store->upsert({j});
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], j);
}
