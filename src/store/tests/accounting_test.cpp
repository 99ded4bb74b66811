// The accounting store's behaviour, run against every backend: SQLite, and PostgreSQL on a
// server of the test's own (skipped when PostgreSQL is not installed).
#include "store/accounting.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/assoc_sql.hpp"
#include "store/tests/pg_server.hpp"

using namespace drover::store;
using drover::store::testing::PgServer;

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

enum class Backend { Sqlite, Pgsql };

// Each test gets an empty store: a new file, or a new database on the shared server.
class Accounting : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::Pgsql) {
      std::string why;
      pg_ = PgServer::shared(&why);
      if (!pg_) GTEST_SKIP() << why;
      db_ = pg_->create_database();
    }
  }

  std::unique_ptr<AccountingStore> open() {
    if (GetParam() == Backend::Sqlite) return open_sqlite_accounting(dir_.file());
    return open_pgsql_accounting(pg_->location(db_));
  }

  // SQL underneath the store (statements both databases take).
  void exec(const std::string& sql) {
    if (pg_) return pg_->exec(db_, sql);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(dir_.file().c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(db);
  }
  std::vector<std::vector<std::string>> rows(const std::string& sql) {
    if (pg_) return pg_->query(db_, sql);
    std::vector<std::vector<std::string>> out;
    sqlite3* db = nullptr;
    sqlite3_open(dir_.file().c_str(), &db);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
      auto& row = out.emplace_back();
      for (int i = 0; i < sqlite3_column_count(st); ++i)
        row.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, i)));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
  }

  TempDir dir_;
  PgServer* pg_ = nullptr;
  std::string db_;
};

INSTANTIATE_TEST_SUITE_P(Backends, Accounting, ::testing::Values(Backend::Sqlite, Backend::Pgsql),
                         [](const auto& info) {
                           return info.param == Backend::Sqlite ? "SQLite" : "PostgreSQL";
                         });

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

TEST_P(Accounting, RoundTripAndUpsertSurviveReopen) {
  JobRecord a = rec(1, 1000, "RUNNING", 100, 0);
  a.array_job_id = 7;
  a.array_task_id = 3;
  a.cancelled_by = 0;
  a.exit_code = 2;
  a.exit_signal = 9;
  a.workdir = "/home/x";
  a.time_limit_min = 60;
  {
    auto store = open();
    store->upsert({a, rec(2, 1001, "COMPLETED", 110, 120)});
    a.state = "FAILED";
    a.end_time = 200;
    a.steps.push_back({"batch", "FAILED", 2, 0, 101, 200, "node1", 1, 2, "cpu=2", "batch", 1});
    store->upsert({a});
  }
  auto store = open();
  auto all = store->query({});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], a);
  EXPECT_EQ(all[1].steps.size(), 1u);
  EXPECT_EQ(all[1].steps[0].name, "batch");
}

TEST_P(Accounting, Filters) {
  auto store = open();
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
  // Ended in [110, 180): not the running job, not one that ended at the end.
  f = {};
  f.ended = {110, 180};
  EXPECT_EQ(ids(store->query(f)), (std::vector<uint64_t>{3, 5}));
}

TEST_P(Accounting, BatchIsOneTransaction) {
  auto store = open();
  std::vector<JobRecord> many;
  for (uint64_t i = 1; i <= 2000; ++i) many.push_back(rec(i, 1000, "COMPLETED", int64_t(i), 5000));
  store->upsert(many);
  EXPECT_EQ(store->query({}).size(), 2000u);
}

TEST_P(Accounting, StepsKeepTheirNamesAndTasksInSacctOrder) {
  JobRecord j = rec(9, 1000, "COMPLETED", 100, 200);  // has its batch step
  j.steps[0].job_name = "batch";
  j.steps.push_back({"10", "COMPLETED", 0, 0, 150, 160, "node1", 1, 1, "cpu=1", "late", 1});
  j.steps.push_back({"2", "FAILED", 3, 0, 101, 140, "node[1-2]", 2, 4, "cpu=4", "hostname", 4});
  j.steps.push_back({"0", "CANCELLED", 0, 9, 101, 120, "node1", 1, 2, "cpu=2", "sleep", 2});
  {
    auto store = open();
    store->upsert({j});
  }
  auto store = open();
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

TEST_P(Accounting, OlderStepTablesGainTheNewColumns) {
  // The first version's step table, holding a job's batch step.
  exec(
      "CREATE TABLE acct_steps (job_id BIGINT NOT NULL, step_name TEXT NOT NULL,"
      " state TEXT NOT NULL, exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL,"
      " start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, nodelist TEXT NOT NULL,"
      " nnodes INTEGER NOT NULL, ncpus INTEGER NOT NULL, alloc_tres TEXT NOT NULL,"
      " PRIMARY KEY (job_id, step_name));"
      "INSERT INTO acct_steps VALUES (1, 'batch', 'COMPLETED', 0, 0, 101, 110, 'node1', 1, 2,"
      " 'cpu=2');");
  for (int i = 0; i < 2; ++i) open()->query({});  // twice: migrating is idempotent
  EXPECT_EQ(rows("SELECT job_name, ntasks, max_rss_kb FROM acct_steps WHERE job_id = 1"),
            (std::vector<std::vector<std::string>>{{"batch", "1", "-1"}}));  // MaxRSS blank
  // New rows carry them all.
  auto store = open();
  JobRecord j = rec(2, 1000, "COMPLETED", 120, 130);
  j.steps[0].job_name = "batch";
  j.steps[0].max_rss_kb = 102396;
  j.steps.push_back({"0", "COMPLETED", 0, 0, 121, 125, "node1", 1, 1, "cpu=1", "true", 1});
  store->upsert({j});
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], j);
}

TEST_P(Accounting, OlderJobTablesGainTheSystemComment) {
  // The job table before system_comment, holding a finished job.
  exec(
      "CREATE TABLE acct_jobs (job_id BIGINT PRIMARY KEY, array_job_id BIGINT NOT NULL,"
      " array_task_id BIGINT NOT NULL, name TEXT NOT NULL, user_name TEXT NOT NULL,"
      " group_name TEXT NOT NULL, uid BIGINT NOT NULL, gid BIGINT NOT NULL, account TEXT NOT NULL,"
      " qos TEXT NOT NULL, partition_name TEXT NOT NULL, submit_time BIGINT NOT NULL,"
      " eligible_time BIGINT NOT NULL, start_time BIGINT NOT NULL, end_time BIGINT NOT NULL,"
      " state TEXT NOT NULL, reason TEXT NOT NULL, exit_code INTEGER NOT NULL,"
      " exit_signal INTEGER NOT NULL, cancelled_by BIGINT NOT NULL, req_cpus INTEGER NOT NULL,"
      " req_mem_mb BIGINT NOT NULL, req_mem_per_cpu INTEGER NOT NULL, req_nodes INTEGER NOT NULL,"
      " req_tres TEXT NOT NULL, alloc_tres TEXT NOT NULL, alloc_cpus INTEGER NOT NULL,"
      " nnodes INTEGER NOT NULL, nodelist TEXT NOT NULL, workdir TEXT NOT NULL,"
      " time_limit_min BIGINT NOT NULL, restarts INTEGER NOT NULL, priority BIGINT NOT NULL);"
      "INSERT INTO acct_jobs VALUES (1, 0, 4294967294, 'old', 'alice', 'users', 1000, 1000, '',"
      " 'normal', 'batch', 100, 100, 101, 110, 'COMPLETED', 'None', 0, 0, -1, 1, 0, 0, 1, '',"
      " '', 1, 1, 'node1', '/tmp', 60, 0, 1);");
  for (int i = 0; i < 2; ++i) open()->query({});  // twice: migrating is idempotent
  auto store = open();
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].name, "old");
  EXPECT_EQ(got[0].system_comment, "");
  JobRecord j = rec(2, 1000, "CANCELLED", 120, 130);
  j.system_comment = "node a-1 drained for scale-in: maxDrainTime 1h reached";
  store->upsert({j});
  JobFilter f;
  f.job_ids = {2};
  got = store->query(f);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], j);
}

TEST_P(Accounting, AFailedBatchWritesNothing) {
  auto store = open();
  store->upsert({rec(1, 1000, "RUNNING", 100, 0)});
  JobRecord bad = rec(3, 1000, "COMPLETED", 120, 130);
  bad.steps.push_back(bad.steps[0]);  // the same step twice
  JobRecord done = rec(1, 1000, "COMPLETED", 100, 150);
  EXPECT_THROW(store->upsert({done, rec(2, 1000, "COMPLETED", 110, 120), bad}), std::runtime_error);
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].state, "RUNNING");
  store->upsert({done});  // and the store goes on working
  EXPECT_EQ(store->query({})[0].state, "COMPLETED");
}

TEST_P(Accounting, TheNewestRecordOfAJobInABatchWins) {
  auto store = open();
  store->upsert({rec(1, 1000, "RUNNING", 100, 0), rec(1, 1000, "COMPLETED", 100, 150)});
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].state, "COMPLETED");
  EXPECT_EQ(got[0].steps.size(), 1u);
}

// A requeued job: each ended run (REQUEUED) is kept beside the job's latest record, found by
// the same filters, in submit order, and survives reopening.
TEST_P(Accounting, EarlierRunsOfRequeuedJobsAreKeptBesideTheLatest) {
  JobRecord first = rec(1, 1000, "REQUEUED", 100, 150);
  first.steps[0].state = "CANCELLED";
  first.steps[0].exit_signal = 15;
  JobRecord second = rec(1, 1000, "REQUEUED", 150, 200);
  {
    auto store = open();
    store->upsert({first, rec(2, 1000, "COMPLETED", 120, 130), rec(1, 1000, "RUNNING", 150, 0)});
    store->upsert({second, rec(1, 1000, "COMPLETED", 200, 260)});
  }
  auto store = open();
  auto all = store->query({});
  ASSERT_EQ(ids(all), (std::vector<uint64_t>{1, 2, 1, 1}));
  EXPECT_EQ(all[0], first);
  EXPECT_EQ(all[2], second);
  EXPECT_EQ(all[3].state, "COMPLETED");
  JobFilter window;  // 140..170: the first run (and job 2 not, it ended at 130)
  window.window_start = 140;
  window.window_end = 145;
  auto in = store->query(window);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0].state, "REQUEUED");
  EXPECT_EQ(in[0].submit_time, 100);
  JobFilter other;
  other.uids = {1001};
  EXPECT_TRUE(store->query(other).empty());
  // Requeued within the second it was submitted: the ended run still comes first.
  store->upsert({rec(3, 1000, "REQUEUED", 300, 300), rec(3, 1000, "PENDING", 300, 0)});
  JobFilter three;
  three.job_ids = {3};
  auto both = store->query(three);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].state, "REQUEUED");
}

TEST_P(Accounting, TextIsStoredAsGiven) {
  auto store = open();
  JobRecord j = rec(1, 1000, "COMPLETED", 100, 150);
  j.name = "it's \"quoted\"; DROP TABLE acct_jobs; -- \xc3\xa9t\xc3\xa9";
  j.workdir = "/home/o'brien";
  store->upsert({j});
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], j);
}

// What only a database server brings: connections that drop, servers that go away, logins.
class PgsqlAccounting : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    pg_ = PgServer::shared(&why);
    if (!pg_) GTEST_SKIP() << why;
    db_ = pg_->create_database();
  }
  // Whatever a test did, the next one finds the server up.
  void TearDown() override {
    if (pg_) pg_->start();
  }
  PgServer* pg_ = nullptr;
  std::string db_;
};

TEST_F(PgsqlAccounting, ReconnectsOnceWhenTheConnectionWasDropped) {
  auto store = open_pgsql_accounting(pg_->location(db_));
  store->upsert({rec(1, 1000, "RUNNING", 100, 0)});
  pg_->kill_sessions(db_);
  store->upsert({rec(1, 1000, "COMPLETED", 100, 150)});
  pg_->kill_sessions(db_);
  auto got = store->query({});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].state, "COMPLETED");
}

TEST_F(PgsqlAccounting, ADownServerIsAClearErrorUntilItIsBack) {
  auto store = open_pgsql_accounting(pg_->location(db_));
  store->upsert({rec(1, 1000, "RUNNING", 100, 0)});
  pg_->stop();
  try {
    store->upsert({rec(1, 1000, "COMPLETED", 100, 150)});
    FAIL() << "wrote to a stopped server";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("accounting: cannot connect to PostgreSQL at drover@127.0.0.1:"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(store->query({}), std::runtime_error);
  pg_->start();
  store->upsert({rec(1, 1000, "COMPLETED", 100, 150)});
  EXPECT_EQ(store->query({}).at(0).state, "COMPLETED");
}

TEST_F(PgsqlAccounting, AWrongPasswordSaysSo) {
  TempDir dir;
  const std::string wrong = (dir.path / "pw").string();
  std::ofstream(wrong) << "not-the-password\n";
  PgsqlLocation where = pg_->location(db_);
  where.password_file = wrong;
  try {
    open_pgsql_accounting(where)->query({});
    FAIL() << "logged in with a wrong password";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("password authentication failed"), std::string::npos)
        << e.what();
  }
  where.password_file = (dir.path / "missing").string();
  EXPECT_THROW(open_pgsql_accounting(where)->query({}), std::runtime_error);
}

TEST_F(PgsqlAccounting, ControllersOpeningAtOnceCreateTheSchemaOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      try {
        open_pgsql_accounting(pg_->location(db_))
            ->upsert({rec(i + 1, 1000, "RUNNING", 100 + i, 0)});
      } catch (...) {
        ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(open_pgsql_accounting(pg_->location(db_))->query({}).size(), 4u);
}

// The association tables (sacctmgr's accounts, users, associations and QOS).
namespace drover::store {
// Failures show the rows that differ.
void PrintTo(const StoredAssocData& s, std::ostream* os) {
  for (const auto& [table, rows] : assoc_sql::rows_of(s))
    for (const auto& [key, row] : rows) {
      *os << "\n  " << table << ":";
      for (const auto& v : row) *os << " [" << assoc_sql::key_text(v) << "]";
    }
}
}  // namespace drover::store

namespace {
StoredAssocData sample_assoc_data() {
  StoredAssocData s;
  s.data = drover::core::new_acct_data("lab");
  auto& d = s.data;
  d.accounts.insert(d.accounts.begin(), {"physics", "physics dept", "sci"});
  drover::core::AcctAssoc physics;
  physics.id = d.next_assoc_id++;
  physics.account = "physics";
  physics.parent = "root";
  physics.settings.fairshare = 10;
  physics.settings.limits.grp_jobs = 4;
  physics.settings.limits.grp_tres = {{"cpu", 64}, {"gres/gpu", 2}};
  physics.settings.limits.max_wall_min = 90;
  physics.settings.qos = {"+high"};
  physics.settings.qos_set = true;
  d.assocs.push_back(physics);
  drover::core::AcctUser alice;
  alice.name = "alice";
  alice.default_account = "physics";
  alice.admin_level = "Operator";
  d.users.insert(d.users.begin(), alice);
  drover::core::AcctAssoc a;
  a.id = d.next_assoc_id++;
  a.account = "physics";
  a.user = "alice";
  a.partition = "gpu";
  a.parent = "physics";
  a.settings.limits.max_jobs = 2;
  a.settings.fairshare_parent = true;
  d.assocs.push_back(a);
  drover::core::QosLine high;
  high.name = "high";
  high.id = d.next_qos_id++;
  high.description = "High: 'quoted' & #hashed";
  high.priority = 100;
  high.flags = {"DenyOnLimit", "OverPartQOS"};
  high.max_tres_per_user = {{"cpu", 16}};
  high.usage_factor = 0.5;
  high.preempt = {"normal"};
  d.qos.push_back(high);
  s.seeded_from = "sha256:abc";
  return s;
}
}  // namespace

TEST_P(Accounting, AssociationDataIsAbsentUntilStored) {
  auto store = open();
  EXPECT_FALSE(store->load_assoc_data().has_value());
}

TEST_P(Accounting, AssociationDataRoundTripsAndSurvivesReopen) {
  const StoredAssocData s = sample_assoc_data();
  open()->store_assoc_data(s);
  auto loaded = open()->load_assoc_data();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, s);
  // Readable rows: the settings are accounts.cfg options.
  EXPECT_EQ(
      rows("SELECT account, user_name, partition_name, settings FROM acct_assocs WHERE id = 4"),
      (std::vector<std::vector<std::string>>{
          {"physics", "alice", "gpu", "Fairshare=parent:MaxJobs=2"}}));
}

TEST_P(Accounting, AssociationChangesWriteOnlyWhatChanged) {
  StoredAssocData s = sample_assoc_data();
  auto store = open();
  store->store_assoc_data(s);
  // A row changed behind the store's back stays as it is when the data does not touch it.
  exec("UPDATE acct_accounts SET description = 'edited' WHERE name = 'root'");
  s.data.assocs.back().settings.limits.max_jobs = 5;  // alice's association
  s.data.users.erase(s.data.users.begin());           // alice's record goes
  s.data.qos.pop_back();                              // and QOS high
  store->store_assoc_data(s);
  auto loaded = open()->load_assoc_data();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->data.find_account("root")->description, "edited");
  EXPECT_EQ(loaded->data.assocs.back().settings.limits.max_jobs, 5);
  EXPECT_EQ(loaded->data.find_user("alice"), nullptr);
  EXPECT_EQ(loaded->data.find_qos("high"), nullptr);
  EXPECT_EQ(rows("SELECT COUNT(*) FROM acct_qos"), (std::vector<std::vector<std::string>>{{"1"}}));
}

TEST_P(Accounting, AFailedAssociationWriteWritesNothing) {
  StoredAssocData s = sample_assoc_data();
  auto store = open();
  store->store_assoc_data(s);
  exec("DROP TABLE acct_qos");
  s.data.accounts.insert(s.data.accounts.begin(), {"chem", "chem", "chem"});
  s.data.qos.back().priority = 7;
  EXPECT_THROW(store->store_assoc_data(s), std::runtime_error);
  EXPECT_EQ(rows("SELECT COUNT(*) FROM acct_accounts WHERE name = 'chem'"),
            (std::vector<std::vector<std::string>>{{"0"}}));
  // Once the table is back (a new open creates it), the next write puts everything right.
  auto again = open();
  again->store_assoc_data(s);
  auto loaded = open()->load_assoc_data();
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, s);
}

TEST_P(Accounting, UnreadableAssociationSettingsAreAClearError) {
  open()->store_assoc_data(sample_assoc_data());
  exec("UPDATE acct_assocs SET settings = 'MaxJobs=lots' WHERE id = 3");
  try {
    open()->load_assoc_data();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("acct_assocs id 3"), std::string::npos) << e.what();
  }
}

TEST_P(Accounting, ClusterTresAreRegisteredWhenTheyChange) {
  {
    auto store = open();
    EXPECT_TRUE(store->cluster_tres().empty());
    store->register_cluster_tres({100, "cpu=4,mem=2000M,node=2,billing=4"});
    store->register_cluster_tres({200, "cpu=4,mem=2000M,node=2,billing=4"});  // the same
    store->register_cluster_tres({300, "cpu=8,mem=4000M,node=4,billing=8,gres/gpu=2"});
  }
  EXPECT_EQ(open()->cluster_tres(),
            (std::vector<ClusterTresRecord>{{100, "cpu=4,mem=2000M,node=2,billing=4"},
                                            {300, "cpu=8,mem=4000M,node=4,billing=8,gres/gpu=2"}}));
}

TEST_P(Accounting, NodeEventsAreKeptAndFoundByTheirTime) {
  {
    auto store = open();
    store->put_node_events({{"node1", 100, 0, "DOWN", "Not responding", "cpu=2,node=1"},
                            {"node2", 150, 160, "MAINT", "", "cpu=2,node=1"}});
    // node1 comes back: the same event, ended.
    store->put_node_events({{"node1", 100, 200, "DOWN", "Not responding", "cpu=2,node=1"}});
    store->put_node_events({{"node1", 300, 0, "DOWN", "by hand", "cpu=2,node=1"}});
  }
  auto store = open();
  const auto all = store->node_events(0, 1000);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0], (NodeEventRecord{"node1", 100, 200, "DOWN", "Not responding", "cpu=2,node=1"}));
  EXPECT_EQ(all[1].node, "node2");
  EXPECT_EQ(all[2].until, 0);
  // Those overlapping [170, 250): node1's first; [250, 400): the one still going.
  ASSERT_EQ(store->node_events(170, 250).size(), 1u);
  EXPECT_EQ(store->node_events(250, 400), (std::vector<NodeEventRecord>{all[2]}));
}
