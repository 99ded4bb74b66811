// The accounting store on SQLite: the shared schema and statements (accounting_sql.hpp) bound
// through sqlite3's API, in one file of its own.
#include <sqlite3.h>

#include <optional>
#include <stdexcept>

#include "store/accounting.hpp"
#include "store/accounting_sql.hpp"
#include "store/acct_record_json.hpp"
#include "store/assoc_sql.hpp"
#include "store/sqlite_file.hpp"

namespace drover::store {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error("accounting: " + what + ": " +
                           (db ? sqlite3_errmsg(db) : "no database"));
}

// Binds values to ?1, ?2, ... in order.
void bind(sqlite3_stmt* st, const std::vector<acct_sql::Value>& values) {
  int i = 0;
  for (const auto& v : values) {
    if (v.is_text)
      sqlite3_bind_text(st, ++i, v.text.data(), static_cast<int>(v.text.size()), SQLITE_TRANSIENT);
    else
      sqlite3_bind_int64(st, ++i, v.number);
  }
}

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
    // Small pages: a pending job's row touches its table and seven indexes, each a page
    // written whole to the WAL at every commit.
    db_ = open_durable_sqlite(path, "accounting", 1024);
    for (const char* sql : acct_sql::schema()) exec(sql);
    for (const char* sql : assoc_sql::schema()) exec(sql);
    for (const auto& c : acct_sql::added_columns()) {
      if (has_column(c.table, c.name)) continue;
      exec((std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.name + " " + c.definition)
               .c_str());
      if (c.fill) exec(c.fill);
    }
    upsert_job_ = std::make_unique<Stmt>(
        db_, std::string("INSERT INTO acct_jobs (") + acct_sql::kJobColumns + ") VALUES (" +
                 placeholders(acct_sql::kJobColumnCount) + ")" + acct_sql::job_upsert_clause());
    erase_steps_ = std::make_unique<Stmt>(db_, "DELETE FROM acct_steps WHERE job_id = ?");
    insert_step_ = std::make_unique<Stmt>(db_, std::string("INSERT INTO acct_steps (") +
                                                   acct_sql::kStepColumns + ") VALUES (" +
                                                   placeholders(acct_sql::kStepColumnCount) + ")");
    steps_of_ = std::make_unique<Stmt>(
        db_, std::string("SELECT ") + acct_sql::kStepColumns + " FROM acct_steps WHERE job_id = ?");
    upsert_run_ =
        std::make_unique<Stmt>(db_, acct_sql::run_upsert([](size_t) { return std::string("?"); }));
  }

  ~SqliteAccounting() override {
    upsert_job_.reset();
    erase_steps_.reset();
    insert_step_.reset();
    steps_of_.reset();
    upsert_run_.reset();
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
    const auto q = acct_sql::job_query(f, [](size_t) { return std::string("?"); });
    Stmt st(db_, q.sql);
    bind(st.get(), q.params);
    const std::set<std::string> nodes(f.nodes.begin(), f.nodes.end());
    std::vector<JobRecord> out;
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
      Reader r(st.get());
      JobRecord j = acct_sql::read_job(r);
      if (acct_sql::ran_on(j, nodes)) out.push_back(std::move(j));
    }
    if (rc != SQLITE_DONE) fail(db_, "query");
    for (JobRecord& j : out) j.steps = steps(j.job_id);
    const auto rq = acct_sql::run_query(f, [](size_t) { return std::string("?"); });
    Stmt runs_st(db_, rq.sql);
    bind(runs_st.get(), rq.params);
    std::vector<JobRecord> runs;
    while ((rc = sqlite3_step(runs_st.get())) == SQLITE_ROW) {
      Reader r(runs_st.get());
      JobRecord j = record_from_json(nlohmann::json::parse(r.text()));
      if (acct_sql::matches(j, f)) runs.push_back(std::move(j));
    }
    if (rc != SQLITE_DONE) fail(db_, "query runs");
    acct_sql::merge_runs(out, std::move(runs));
    return out;
  }

  std::vector<ClusterTresRecord> cluster_tres() override {
    Stmt st(db_, "SELECT since, tres FROM acct_cluster_tres ORDER BY since");
    std::vector<ClusterTresRecord> out;
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
      Reader r(st.get());
      ClusterTresRecord c;
      c.since = r.i64();
      c.tres = r.text();
      out.push_back(std::move(c));
    }
    if (rc != SQLITE_DONE) fail(db_, "read cluster TRES");
    return out;
  }

  void register_cluster_tres(const ClusterTresRecord& c) override {
    const auto known = cluster_tres();
    if (!known.empty() && known.back().tres == c.tres) return;
    Stmt st(db_,
            "INSERT INTO acct_cluster_tres (since, tres) VALUES (?, ?) ON CONFLICT (since) DO "
            "UPDATE SET tres = excluded.tres");
    run(st.get(), {c.since, c.tres});
  }

  void put_node_events(const std::vector<NodeEventRecord>& events) override {
    if (events.empty()) return;
    Stmt st(db_, acct_sql::node_event_upsert([](size_t) { return std::string("?"); }));
    exec("BEGIN");
    try {
      for (const auto& e : events) run(st.get(), acct_sql::node_event_values(e));
      exec("COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::vector<NodeEventRecord> node_events(int64_t start, int64_t end) override {
    // Numbered: the query names its parameters out of order.
    Stmt st(db_, acct_sql::node_event_query([](size_t n) { return "?" + std::to_string(n); }));
    bind(st.get(), {start, end});
    std::vector<NodeEventRecord> out;
    int rc;
    while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
      Reader r(st.get());
      out.push_back(acct_sql::read_node_event(r));
    }
    if (rc != SQLITE_DONE) fail(db_, "read node events");
    return out;
  }

  std::optional<StoredAssocData> load_assoc_data() override {
    assoc_rows_ = read_assoc_rows();
    return assoc_sql::data_of(*assoc_rows_);
  }

  void store_assoc_data(const StoredAssocData& data) override {
    assoc_sql::Rows after = assoc_sql::rows_of(data);
    try {
      if (!assoc_rows_) assoc_rows_ = read_assoc_rows();
      const assoc_sql::Diff d = assoc_sql::diff(*assoc_rows_, after);
      if (d.empty()) return;
      auto q = [](size_t) { return std::string("?"); };
      exec("BEGIN");
      try {
        for (const auto& [table, key] : d.deletes) {
          Stmt st(db_, assoc_sql::delete_sql(*table, q));
          run(st.get(), {key});
        }
        for (const auto& [table, row] : d.upserts) {
          Stmt st(db_, assoc_sql::upsert_sql(*table, q));
          run(st.get(), row);
        }
        exec("COMMIT");
      } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
    } catch (...) {
      assoc_rows_.reset();  // what is stored is known again by reading it
      throw;
    }
    assoc_rows_ = std::move(after);
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

  // Whether a table has a column: a statement naming it compiles.
  bool has_column(const char* table, const char* column) {
    sqlite3_stmt* st = nullptr;
    const std::string sql = std::string("SELECT ") + column + " FROM " + table + " WHERE 1 = 0";
    const bool ok = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) == SQLITE_OK;
    sqlite3_finalize(st);
    return ok;
  }

  void run(sqlite3_stmt* st, const std::vector<acct_sql::Value>& values) {
    bind(st, values);
    const int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) fail(db_, "write");
  }

  void put(const JobRecord& j) {
    if (j.state == "REQUEUED") {  // an earlier run: the job's own row is its latest
      run(upsert_run_->get(), acct_sql::run_values(j));
      return;
    }
    run(upsert_job_->get(), acct_sql::job_values(j));
    run(erase_steps_->get(), {static_cast<int64_t>(j.job_id)});
    for (const StepRecord& s : j.steps)
      run(insert_step_->get(), acct_sql::step_values(j.job_id, s));
  }

  assoc_sql::Rows read_assoc_rows() {
    assoc_sql::Rows out;
    for (const auto& t : assoc_sql::tables()) {
      auto& rows = out[t.name];
      Stmt st(db_, assoc_sql::select_sql(t));
      int rc;
      while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
        Reader r(st.get());
        assoc_sql::Row row;
        for (bool text : t.is_text) {
          if (text)
            row.emplace_back(r.text());
          else
            row.emplace_back(r.i64());
        }
        std::string key = assoc_sql::key_text(row.front());
        rows.emplace(std::move(key), std::move(row));
      }
      if (rc != SQLITE_DONE) fail(db_, "read " + std::string(t.name));
    }
    return out;
  }

  std::vector<StepRecord> steps(uint64_t job_id) {
    sqlite3_stmt* st = steps_of_->get();
    bind(st, {static_cast<int64_t>(job_id)});
    std::vector<StepRecord> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      Reader r(st);
      acct_sql::read_step(r, out.emplace_back());
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE) fail(db_, "query steps");
    acct_sql::sort_steps(out);
    return out;
  }

  sqlite3* db_ = nullptr;
  std::unique_ptr<Stmt> upsert_job_, erase_steps_, insert_step_, steps_of_, upsert_run_;
  std::optional<assoc_sql::Rows> assoc_rows_;  // what the association tables hold, once known
};

}  // namespace

std::unique_ptr<AccountingStore> open_sqlite_accounting(const std::string& path) {
  return std::make_unique<SqliteAccounting>(path);
}

}  // namespace drover::store
