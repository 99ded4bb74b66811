// The accounting store on SQLite. Times are integer Unix seconds and TRES are text, so the
// same schema and statements serve a PostgreSQL backend.
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>

#include "core/hostlist.hpp"
#include "store/accounting.hpp"
#include "store/sqlite_file.hpp"

namespace drover::store {
namespace {

constexpr const char* kSchema[] = {
    "CREATE TABLE IF NOT EXISTS acct_jobs ("
    " job_id BIGINT PRIMARY KEY, array_job_id BIGINT NOT NULL, array_task_id BIGINT NOT NULL,"
    " name TEXT NOT NULL, user_name TEXT NOT NULL, group_name TEXT NOT NULL,"
    " uid BIGINT NOT NULL, gid BIGINT NOT NULL, account TEXT NOT NULL, qos TEXT NOT NULL,"
    " partition_name TEXT NOT NULL, submit_time BIGINT NOT NULL, eligible_time BIGINT NOT NULL,"
    " start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, state TEXT NOT NULL,"
    " reason TEXT NOT NULL, exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL,"
    " cancelled_by BIGINT NOT NULL, req_cpus INTEGER NOT NULL, req_mem_mb BIGINT NOT NULL,"
    " req_mem_per_cpu INTEGER NOT NULL, req_nodes INTEGER NOT NULL, req_tres TEXT NOT NULL,"
    " alloc_tres TEXT NOT NULL, alloc_cpus INTEGER NOT NULL, nnodes INTEGER NOT NULL,"
    " nodelist TEXT NOT NULL, workdir TEXT NOT NULL, time_limit_min BIGINT NOT NULL,"
    " restarts INTEGER NOT NULL, priority BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_array ON acct_jobs (array_job_id)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_uid ON acct_jobs (uid, submit_time)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_submit ON acct_jobs (submit_time)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_end ON acct_jobs (end_time)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_state ON acct_jobs (state)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_partition ON acct_jobs (partition_name)",
    "CREATE INDEX IF NOT EXISTS acct_jobs_account ON acct_jobs (account)",
    "CREATE TABLE IF NOT EXISTS acct_steps ("
    " job_id BIGINT NOT NULL, step_name TEXT NOT NULL, state TEXT NOT NULL,"
    " exit_code INTEGER NOT NULL, exit_signal INTEGER NOT NULL, start_time BIGINT NOT NULL,"
    " end_time BIGINT NOT NULL, nodelist TEXT NOT NULL, nnodes INTEGER NOT NULL,"
    " ncpus INTEGER NOT NULL, alloc_tres TEXT NOT NULL, job_name TEXT NOT NULL DEFAULT '',"
    " ntasks INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (job_id, step_name))",
};

// Columns added to acct_steps since its first version: added to older databases when they
// open (ALTER TABLE ... ADD COLUMN, which PostgreSQL takes as well), then filled in.
struct AddedColumn {
  const char* name;
  const char* definition;
  const char* fill;  // run once after adding it, or null
};
constexpr AddedColumn kAddedStepColumns[] = {
    // Until then only batch steps were recorded; their name is their id.
    {"job_name", "TEXT NOT NULL DEFAULT ''",
     "UPDATE acct_steps SET job_name = step_name WHERE job_name = ''"},
    {"ntasks", "INTEGER NOT NULL DEFAULT 1", nullptr},
};

constexpr const char* kJobColumns =
    "job_id, array_job_id, array_task_id, name, user_name, group_name, uid, gid, account, qos, "
    "partition_name, submit_time, eligible_time, start_time, end_time, state, reason, exit_code, "
    "exit_signal, cancelled_by, req_cpus, req_mem_mb, req_mem_per_cpu, req_nodes, req_tres, "
    "alloc_tres, alloc_cpus, nnodes, nodelist, workdir, time_limit_min, restarts, priority";
constexpr int kJobColumnCount = 33;

constexpr const char* kStepColumns =
    "job_id, step_name, state, exit_code, exit_signal, start_time, end_time, nodelist, nnodes, "
    "ncpus, alloc_tres, job_name, ntasks";
constexpr int kStepColumnCount = 13;

// Where sacct lists a step: batch, extern, then srun's steps by number (Slurm's database keeps
// batch as -5 and extern as -4 and sorts by that).
int64_t step_order(const std::string& name) {
  if (name == "batch") return -5;
  if (name == "extern") return -4;
  if (!name.empty() && name.size() < 11 &&
      name.find_first_not_of("0123456789") == std::string::npos)
    return std::stoll(name);
  return INT64_MAX;
}

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error("accounting: " + what + ": " +
                           (db ? sqlite3_errmsg(db) : "no database"));
}

// Binds values to ?1, ?2, ... in order.
class Binder {
 public:
  explicit Binder(sqlite3_stmt* st) : st_(st) {}
  Binder& operator()(int64_t v) {
    sqlite3_bind_int64(st_, ++i_, v);
    return *this;
  }
  Binder& operator()(const std::string& v) {
    sqlite3_bind_text(st_, ++i_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }

 private:
  sqlite3_stmt* st_;
  int i_ = 0;
};

// Reads columns 0, 1, ... in order.
class Reader {
 public:
  explicit Reader(sqlite3_stmt* st) : st_(st) {}
  int64_t i64() { return sqlite3_column_int64(st_, i_++); }
  std::string text() {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, i_));
    const int n = sqlite3_column_bytes(st_, i_++);
    return p ? std::string(p, static_cast<size_t>(n)) : std::string();
  }

 private:
  sqlite3_stmt* st_;
  int i_ = 0;
};

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st_, nullptr) != SQLITE_OK) fail(db, "prepare");
  }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  sqlite3_stmt* get() const { return st_; }

 private:
  sqlite3_stmt* st_ = nullptr;
};

std::string placeholders(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += i ? ",?" : "?";
  return s;
}

class SqliteAccounting final : public AccountingStore {
 public:
  explicit SqliteAccounting(const std::string& path) {
    db_ = open_durable_sqlite(path, "accounting");
    for (const char* sql : kSchema) exec(sql);
    for (const AddedColumn& c : kAddedStepColumns) {
      if (has_column("acct_steps", c.name)) continue;
      exec((std::string("ALTER TABLE acct_steps ADD COLUMN ") + c.name + " " + c.definition)
               .c_str());
      if (c.fill) exec(c.fill);
    }
    std::string upsert = std::string("INSERT INTO acct_jobs (") + kJobColumns + ") VALUES (" +
                         placeholders(kJobColumnCount) + ") ON CONFLICT (job_id) DO UPDATE SET ";
    std::string cols = kJobColumns;
    bool first = true;
    for (size_t pos = 0; pos < cols.size();) {
      size_t end = cols.find(',', pos);
      if (end == std::string::npos) end = cols.size();
      std::string c = cols.substr(pos, end - pos);
      c.erase(0, c.find_first_not_of(' '));
      if (c != "job_id") {
        upsert += (first ? "" : ", ") + c + " = excluded." + c;
        first = false;
      }
      pos = end + 1;
    }
    upsert_job_ = std::make_unique<Stmt>(db_, upsert);
    erase_steps_ = std::make_unique<Stmt>(db_, "DELETE FROM acct_steps WHERE job_id = ?");
    insert_step_ =
        std::make_unique<Stmt>(db_, std::string("INSERT INTO acct_steps (") + kStepColumns +
                                        ") VALUES (" + placeholders(kStepColumnCount) + ")");
    steps_of_ = std::make_unique<Stmt>(
        db_, std::string("SELECT ") + kStepColumns + " FROM acct_steps WHERE job_id = ?");
  }

  ~SqliteAccounting() override {
    upsert_job_.reset();
    erase_steps_.reset();
    insert_step_.reset();
    steps_of_.reset();
    sqlite3_close(db_);
  }

  void upsert(const std::vector<JobRecord>& jobs) override {
    if (jobs.empty()) return;
    exec("BEGIN");
    try {
      for (const JobRecord& j : jobs) put(j);
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::vector<JobRecord> query(const JobFilter& f) override {
    std::string sql = std::string("SELECT ") + kJobColumns + " FROM acct_jobs WHERE 1 = 1";
    if (!f.job_ids.empty())
      sql += " AND (job_id IN (" + placeholders(f.job_ids.size()) + ") OR array_job_id IN (" +
             placeholders(f.job_ids.size()) + "))";
    if (!f.uids.empty()) sql += " AND uid IN (" + placeholders(f.uids.size()) + ")";
    if (!f.gids.empty()) sql += " AND gid IN (" + placeholders(f.gids.size()) + ")";
    if (!f.states.empty()) sql += " AND state IN (" + placeholders(f.states.size()) + ")";
    if (!f.partitions.empty())
      sql += " AND partition_name IN (" + placeholders(f.partitions.size()) + ")";
    if (!f.accounts.empty()) sql += " AND account IN (" + placeholders(f.accounts.size()) + ")";
    if (!f.include_ineligible) sql += " AND eligible_time <> 0";
    if (f.window_end) sql += " AND (eligible_time = 0 OR eligible_time <= ?)";
    if (f.window_start) sql += " AND (end_time = 0 OR end_time >= ?)";
    sql += " ORDER BY submit_time, job_id";
    Stmt st(db_, sql);
    Binder b(st.get());
    for (int pass = 0; pass < 2 && !f.job_ids.empty(); ++pass)
      for (uint64_t id : f.job_ids) b(static_cast<int64_t>(id));
    for (uint32_t v : f.uids) b(static_cast<int64_t>(v));
    for (uint32_t v : f.gids) b(static_cast<int64_t>(v));
    for (const auto& v : f.states) b(v);
    for (const auto& v : f.partitions) b(v);
    for (const auto& v : f.accounts) b(v);
    if (f.window_end) b(*f.window_end);
    if (f.window_start) b(*f.window_start);
    const std::set<std::string> wanted_nodes(f.nodes.begin(), f.nodes.end());
    std::vector<JobRecord> out;
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
      JobRecord j = read_job(st.get());
      if (!wanted_nodes.empty()) {
        const auto names = core::expand_hostlist(j.nodelist);
        if (std::none_of(names.begin(), names.end(),
                         [&](const std::string& n) { return wanted_nodes.count(n) > 0; }))
          continue;
      }
      out.push_back(std::move(j));
    }
    if (rc != SQLITE_DONE) fail(db_, "query");
    for (JobRecord& j : out) j.steps = steps(j.job_id);
    return out;
  }

 private:
  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw std::runtime_error(std::string("accounting: ") + sql + ": " + msg);
    }
  }

  // Whether a table has a column: a statement naming it compiles (in SQLite and PostgreSQL
  // alike, unlike PRAGMA table_info or information_schema).
  bool has_column(const char* table, const char* column) {
    sqlite3_stmt* st = nullptr;
    const std::string sql = std::string("SELECT ") + column + " FROM " + table + " WHERE 1 = 0";
    const bool ok = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) == SQLITE_OK;
    sqlite3_finalize(st);
    return ok;
  }

  void run(sqlite3_stmt* st) {
    const int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) fail(db_, "write");
  }

  void put(const JobRecord& j) {
    sqlite3_stmt* st = upsert_job_->get();
    Binder{st}(static_cast<int64_t>(j.job_id))(static_cast<int64_t>(j.array_job_id))(
        static_cast<int64_t>(j.array_task_id))(j.name)(j.user)(j.group)(
        static_cast<int64_t>(j.uid))(static_cast<int64_t>(j.gid))(j.account)(j.qos)(j.partition)(
        j.submit_time)(j.eligible_time)(j.start_time)(j.end_time)(j.state)(j.reason)(
        int64_t{j.exit_code})(int64_t{j.exit_signal})(j.cancelled_by)(int64_t{j.req_cpus})(
        j.req_mem_mb)(int64_t{j.req_mem_per_cpu ? 1 : 0})(int64_t{j.req_nodes})(j.req_tres)(
        j.alloc_tres)(int64_t{j.alloc_cpus})(int64_t{j.nnodes})(j.nodelist)(j.workdir)(
        j.time_limit_min)(static_cast<int64_t>(j.restarts))(static_cast<int64_t>(j.priority));
    run(st);
    Binder{erase_steps_->get()}(static_cast<int64_t>(j.job_id));
    run(erase_steps_->get());
    for (const StepRecord& s : j.steps) {
      Binder{insert_step_->get()}(static_cast<int64_t>(j.job_id))(s.name)(s.state)(
          int64_t{s.exit_code})(int64_t{s.exit_signal})(s.start_time)(s.end_time)(s.nodelist)(
          int64_t{s.nnodes})(int64_t{s.ncpus})(s.alloc_tres)(s.job_name)(int64_t{s.ntasks});
      run(insert_step_->get());
    }
  }

  static JobRecord read_job(sqlite3_stmt* st) {
    Reader r(st);
    JobRecord j;
    j.job_id = static_cast<uint64_t>(r.i64());
    j.array_job_id = static_cast<uint64_t>(r.i64());
    j.array_task_id = static_cast<uint32_t>(r.i64());
    j.name = r.text();
    j.user = r.text();
    j.group = r.text();
    j.uid = static_cast<uint32_t>(r.i64());
    j.gid = static_cast<uint32_t>(r.i64());
    j.account = r.text();
    j.qos = r.text();
    j.partition = r.text();
    j.submit_time = r.i64();
    j.eligible_time = r.i64();
    j.start_time = r.i64();
    j.end_time = r.i64();
    j.state = r.text();
    j.reason = r.text();
    j.exit_code = static_cast<int>(r.i64());
    j.exit_signal = static_cast<int>(r.i64());
    j.cancelled_by = r.i64();
    j.req_cpus = static_cast<int>(r.i64());
    j.req_mem_mb = r.i64();
    j.req_mem_per_cpu = r.i64() != 0;
    j.req_nodes = static_cast<int>(r.i64());
    j.req_tres = r.text();
    j.alloc_tres = r.text();
    j.alloc_cpus = static_cast<int>(r.i64());
    j.nnodes = static_cast<int>(r.i64());
    j.nodelist = r.text();
    j.workdir = r.text();
    j.time_limit_min = r.i64();
    j.restarts = static_cast<uint32_t>(r.i64());
    j.priority = static_cast<uint32_t>(r.i64());
    return j;
  }

  std::vector<StepRecord> steps(uint64_t job_id) {
    sqlite3_stmt* st = steps_of_->get();
    Binder{st}(static_cast<int64_t>(job_id));
    std::vector<StepRecord> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      Reader r(st);
      r.i64();  // job_id
      StepRecord s;
      s.name = r.text();
      s.state = r.text();
      s.exit_code = static_cast<int>(r.i64());
      s.exit_signal = static_cast<int>(r.i64());
      s.start_time = r.i64();
      s.end_time = r.i64();
      s.nodelist = r.text();
      s.nnodes = static_cast<int>(r.i64());
      s.ncpus = static_cast<int>(r.i64());
      s.alloc_tres = r.text();
      s.job_name = r.text();
      s.ntasks = static_cast<int>(r.i64());
      out.push_back(std::move(s));
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) fail(db_, "query steps");
    std::stable_sort(out.begin(), out.end(), [](const StepRecord& a, const StepRecord& b) {
      return step_order(a.name) < step_order(b.name);
    });
    return out;
  }

  sqlite3* db_ = nullptr;
  std::unique_ptr<Stmt> upsert_job_, erase_steps_, insert_step_, steps_of_;
};

}  // namespace

std::unique_ptr<AccountingStore> open_sqlite_accounting(const std::string& path) {
  return std::make_unique<SqliteAccounting>(path);
}

}  // namespace drover::store
