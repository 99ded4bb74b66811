// The accounting store on PostgreSQL (libpq): the shared schema and statements
// (accounting_sql.hpp) with $n parameters sent as text. Writes go as multi-row statements in one
// transaction, so a batch costs a few round trips, not a few per job.
#include <libpq-fe.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include "store/accounting.hpp"
#include "store/accounting_sql.hpp"
#include "store/acct_record_json.hpp"
#include "store/assoc_sql.hpp"

namespace drover::store {
namespace {

// The connection is gone (the server restarted, the network dropped it): worth one reconnect.
struct ConnectionLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Rows per statement: PostgreSQL takes at most 65535 parameters in one.
constexpr size_t kJobsPerStatement = 1000;   // 33 parameters each
constexpr size_t kStepsPerStatement = 2000;  // 13 each

// Any constant: the key under which one session at a time creates or migrates the schema.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7236001)";

// libpq's messages end in a newline and may run over several lines: one line, for logs.
std::string one_line(const std::string& msg) {
  std::string out;
  for (char c : msg) {
    if (c == '\n' || c == '\t') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string read_password(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("accounting: cannot read password file " + path + ": " +
                             std::strerror(errno));
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// Parameter values as text, for PQexecParams.
class Params {
 public:
  void add(const acct_sql::Value& v) {
    text_.push_back(v.is_text ? v.text : std::to_string(v.number));
  }
  void add_all(const std::vector<acct_sql::Value>& vs) {
    for (const auto& v : vs) add(v);
  }
  int size() const { return static_cast<int>(text_.size()); }
  // Valid until the next add.
  const char* const* values() {
    ptrs_.clear();
    for (const auto& t : text_) ptrs_.push_back(t.c_str());
    return ptrs_.data();
  }

 private:
  std::vector<std::string> text_;
  std::vector<const char*> ptrs_;
};

// "{1,2,3}": a bigint[] parameter.
std::string id_array(const std::vector<uint64_t>& ids) {
  std::string s = "{";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + "}";
}

// "($1,$2,...),($n,...)": `rows` groups of `columns` markers.
std::string value_rows(size_t rows, int columns) {
  std::string s;
  size_t n = 0;
  for (size_t r = 0; r < rows; ++r) {
    s += r ? ",(" : "(";
    for (int c = 0; c < columns; ++c) s += (c ? ",$" : "$") + std::to_string(++n);
    s += ")";
  }
  return s;
}

using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

// Reads columns 0, 1, ... of one row in order.
class Reader {
 public:
  Reader(const PGresult* r, int row) : r_(r), row_(row) {}
  int64_t i64() { return std::strtoll(PQgetvalue(r_, row_, col_++), nullptr, 10); }
  std::string text() {
    const int c = col_++;
    return std::string(PQgetvalue(r_, row_, c), static_cast<size_t>(PQgetlength(r_, row_, c)));
  }

 private:
  const PGresult* r_;
  int row_;
  int col_ = 0;
};

class PgsqlAccounting final : public AccountingStore {
 public:
  explicit PgsqlAccounting(PgsqlLocation where) : where_(std::move(where)) {}
  ~PgsqlAccounting() override { drop(); }

  void upsert(const std::vector<JobRecord>& jobs) override {
    if (jobs.empty()) return;
    // The newest record of each job: one statement may not change a row twice.
    std::map<uint64_t, const JobRecord*> latest;
    std::vector<const JobRecord*> runs;  // earlier runs of requeued jobs
    for (const JobRecord& j : jobs) {
      if (j.state == "REQUEUED")
        runs.push_back(&j);
      else
        latest[j.job_id] = &j;
    }
    with_connection([&] { write(latest, runs); });
  }

  std::vector<JobRecord> query(const JobFilter& f) override {
    return with_connection([&] { return read(f); });
  }

  std::vector<ClusterTresRecord> cluster_tres() override {
    return with_connection([&] {
      const Result r = run("SELECT since, tres FROM acct_cluster_tres ORDER BY since", nullptr,
                           PGRES_TUPLES_OK, "read cluster TRES");
      std::vector<ClusterTresRecord> out;
      for (int i = 0; i < PQntuples(r.get()); ++i) {
        Reader reader(r.get(), i);
        ClusterTresRecord c;
        c.since = reader.i64();
        c.tres = reader.text();
        out.push_back(std::move(c));
      }
      return out;
    });
  }

  void register_cluster_tres(const ClusterTresRecord& c) override {
    const auto known = cluster_tres();
    if (!known.empty() && known.back().tres == c.tres) return;
    with_connection([&] {
      Params p;
      p.add(acct_sql::Value(c.since));
      p.add(acct_sql::Value(c.tres));
      run("INSERT INTO acct_cluster_tres (since, tres) VALUES ($1, $2) ON CONFLICT (since) DO "
          "UPDATE SET tres = excluded.tres",
          &p, PGRES_COMMAND_OK, "register cluster TRES");
    });
  }

  void put_node_events(const std::vector<NodeEventRecord>& events) override {
    if (events.empty()) return;
    const std::string sql =
        acct_sql::node_event_upsert([](size_t n) { return "$" + std::to_string(n); });
    with_connection([&] {
      transaction([&] {
        for (const auto& e : events) {
          Params p;
          p.add_all(acct_sql::node_event_values(e));
          run(sql, &p, PGRES_COMMAND_OK, "write node events");
        }
      });
    });
  }

  std::vector<NodeEventRecord> node_events(int64_t start, int64_t end) override {
    return with_connection([&] {
      Params p;
      p.add(acct_sql::Value(start));
      p.add(acct_sql::Value(end));
      const Result r =
          run(acct_sql::node_event_query([](size_t n) { return "$" + std::to_string(n); }), &p,
              PGRES_TUPLES_OK, "read node events");
      std::vector<NodeEventRecord> out;
      for (int i = 0; i < PQntuples(r.get()); ++i) {
        Reader reader(r.get(), i);
        out.push_back(acct_sql::read_node_event(reader));
      }
      return out;
    });
  }

  std::optional<StoredAssocData> load_assoc_data() override {
    return with_connection([&] {
      assoc_rows_ = read_assoc_rows();
      return assoc_sql::data_of(*assoc_rows_);
    });
  }

  void store_assoc_data(const StoredAssocData& data) override {
    assoc_sql::Rows after = assoc_sql::rows_of(data);
    try {
      bool first = true;
      with_connection([&] {
        // After a lost connection the last commit may or may not have happened: read again.
        if (!first) assoc_rows_.reset();
        first = false;
        if (!assoc_rows_) assoc_rows_ = read_assoc_rows();
        const assoc_sql::Diff d = assoc_sql::diff(*assoc_rows_, after);
        if (d.empty()) return;
        auto q = [](size_t n) { return "$" + std::to_string(n); };
        transaction([&] {
          for (const auto& [table, key] : d.deletes) {
            Params p;
            p.add(key);
            run(assoc_sql::delete_sql(*table, q), &p, PGRES_COMMAND_OK, "write associations");
          }
          for (const auto& [table, row] : d.upserts) {
            Params p;
            p.add_all(row);
            run(assoc_sql::upsert_sql(*table, q), &p, PGRES_COMMAND_OK, "write associations");
          }
        });
      });
    } catch (...) {
      assoc_rows_.reset();
      throw;
    }
    assoc_rows_ = std::move(after);
  }

 private:
  // Runs `f` on a live connection; when the connection turns out lost, reconnects once and
  // runs it again (writes are idempotent upserts, so a commit whose answer was lost is safe
  // to repeat).
  template <class F>
  auto with_connection(F&& f) -> decltype(f()) {
    for (int attempt = 0;; ++attempt) {
      connect();
      try {
        return f();
      } catch (const ConnectionLost&) {
        drop();
        if (attempt > 0) throw;
      }
    }
  }

  std::string where() const {
    return (where_.user.empty() ? "" : where_.user + "@") + where_.host + ":" +
           std::to_string(where_.port) + "/" + where_.database;
  }

  void connect() {
    if (conn_ && PQstatus(conn_) == CONNECTION_OK) return;
    drop();
    const std::string port = std::to_string(where_.port);
    const std::string password =
        where_.password_file.empty() ? "" : read_password(where_.password_file);
    std::vector<const char*> keys = {"host", "port", "dbname", "application_name",
                                     // A down or unreachable server must not hold the
                                     // controller's state thread for long.
                                     "connect_timeout", "keepalives_idle", "keepalives_interval",
                                     "keepalives_count", "tcp_user_timeout"};
    std::vector<const char*> values = {where_.host.c_str(),
                                       port.c_str(),
                                       where_.database.c_str(),
                                       "droverctld",
                                       "5",
                                       "10",
                                       "5",
                                       "3",
                                       "15000"};
    if (!where_.user.empty()) keys.push_back("user"), values.push_back(where_.user.c_str());
    if (!password.empty()) keys.push_back("password"), values.push_back(password.c_str());
    keys.push_back(nullptr);
    values.push_back(nullptr);
    conn_ = PQconnectdbParams(keys.data(), values.data(), 0);
    if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
      const std::string msg = conn_ ? one_line(PQerrorMessage(conn_)) : "out of memory";
      drop();
      throw std::runtime_error("accounting: cannot connect to PostgreSQL at " + where() + ": " +
                               msg);
    }
    // Notices ("relation already exists, skipping") would go to stderr.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    try {
      migrate();
    } catch (const std::exception& e) {
      drop();
      throw std::runtime_error(e.what());
    }
  }

  void drop() {
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
  }

  // Creates the tables or brings older ones up to date; every statement is a no-op when they
  // are current. Under an advisory lock, as concurrent CREATE ... IF NOT EXISTS can collide.
  void migrate() {
    transaction([&] {
      run(kSchemaLock, nullptr, PGRES_TUPLES_OK, "schema lock");
      for (const char* sql : acct_sql::schema()) run(sql, nullptr, PGRES_COMMAND_OK, "schema");
      for (const char* sql : assoc_sql::schema()) run(sql, nullptr, PGRES_COMMAND_OK, "schema");
      for (const auto& c : acct_sql::added_columns()) {
        Params p;
        p.add(std::string(c.table));
        p.add(std::string(c.name));
        const Result r =
            run("SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = $1 AND column_name = $2",
                &p, PGRES_TUPLES_OK, "schema");
        if (PQntuples(r.get()) > 0) continue;
        run(std::string("ALTER TABLE ") + c.table + " ADD COLUMN " + c.name + " " + c.definition,
            nullptr, PGRES_COMMAND_OK, "schema");
        if (c.fill) run(c.fill, nullptr, PGRES_COMMAND_OK, "schema");
      }
    });
  }

  // BEGIN, f, COMMIT; ROLLBACK when f throws (unless the connection is gone).
  template <class F>
  void transaction(F&& f) {
    run("BEGIN", nullptr, PGRES_COMMAND_OK, "begin");
    try {
      f();
      run("COMMIT", nullptr, PGRES_COMMAND_OK, "commit");
    } catch (const ConnectionLost&) {
      throw;
    } catch (...) {
      PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  Result run(const std::string& sql, Params* params, ExecStatusType want, const char* what) {
    Result r(PQexecParams(conn_, sql.c_str(), params ? params->size() : 0, nullptr,
                          params ? params->values() : nullptr, nullptr, nullptr, 0),
             &PQclear);
    if (r && PQresultStatus(r.get()) == want) return r;
    const std::string msg = one_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
    if (PQstatus(conn_) == CONNECTION_BAD)
      throw ConnectionLost("accounting: connection to PostgreSQL at " + where() + " lost: " + msg);
    throw std::runtime_error(std::string("accounting: ") + what + ": " + msg);
  }

  void write(const std::map<uint64_t, const JobRecord*>& latest,
             const std::vector<const JobRecord*>& runs) {
    std::vector<const JobRecord*> jobs;
    for (const auto& [id, j] : latest) jobs.push_back(j);
    const std::string insert_job =
        std::string("INSERT INTO acct_jobs (") + acct_sql::kJobColumns + ") VALUES ";
    const std::string insert_step =
        std::string("INSERT INTO acct_steps (") + acct_sql::kStepColumns + ") VALUES ";
    transaction([&] {
      for (const JobRecord* r : runs) {
        Params p;
        p.add_all(acct_sql::run_values(*r));
        run(acct_sql::run_upsert([](size_t n) { return "$" + std::to_string(n); }), &p,
            PGRES_COMMAND_OK, "write runs");
      }
      for (size_t from = 0; from < jobs.size(); from += kJobsPerStatement) {
        const size_t to = std::min(jobs.size(), from + kJobsPerStatement);
        Params p;
        std::vector<uint64_t> ids;
        std::vector<std::pair<uint64_t, const StepRecord*>> steps;
        for (size_t i = from; i < to; ++i) {
          p.add_all(acct_sql::job_values(*jobs[i]));
          ids.push_back(jobs[i]->job_id);
          for (const StepRecord& s : jobs[i]->steps) steps.emplace_back(jobs[i]->job_id, &s);
        }
        run(insert_job + value_rows(to - from, acct_sql::kJobColumnCount) +
                acct_sql::job_upsert_clause(),
            &p, PGRES_COMMAND_OK, "write jobs");
        Params del;
        del.add(id_array(ids));
        run("DELETE FROM acct_steps WHERE job_id = ANY($1::bigint[])", &del, PGRES_COMMAND_OK,
            "write steps");
        for (size_t s = 0; s < steps.size(); s += kStepsPerStatement) {
          const size_t end = std::min(steps.size(), s + kStepsPerStatement);
          Params sp;
          for (size_t k = s; k < end; ++k)
            sp.add_all(acct_sql::step_values(steps[k].first, *steps[k].second));
          run(insert_step + value_rows(end - s, acct_sql::kStepColumnCount), &sp, PGRES_COMMAND_OK,
              "write steps");
        }
      }
    });
  }

  std::vector<JobRecord> read(const JobFilter& f) {
    const auto q = acct_sql::job_query(f, [](size_t n) { return "$" + std::to_string(n); });
    Params p;
    p.add_all(q.params);
    const Result rows = run(q.sql, &p, PGRES_TUPLES_OK, "query");
    const std::set<std::string> nodes(f.nodes.begin(), f.nodes.end());
    std::vector<JobRecord> out;
    for (int i = 0; i < PQntuples(rows.get()); ++i) {
      Reader r(rows.get(), i);
      JobRecord j = acct_sql::read_job(r);
      if (acct_sql::ran_on(j, nodes)) out.push_back(std::move(j));
    }
    if (out.empty()) {
      read_runs(f, out);
      return out;
    }
    std::map<uint64_t, JobRecord*> by_id;
    std::vector<uint64_t> ids;
    for (JobRecord& j : out) by_id[j.job_id] = &j, ids.push_back(j.job_id);
    Params sp;
    sp.add(id_array(ids));
    const Result steps = run(std::string("SELECT ") + acct_sql::kStepColumns +
                                 " FROM acct_steps WHERE job_id = ANY($1::bigint[])",
                             &sp, PGRES_TUPLES_OK, "query steps");
    for (int i = 0; i < PQntuples(steps.get()); ++i) {
      Reader r(steps.get(), i);
      StepRecord s;
      const uint64_t job_id = acct_sql::read_step(r, s);
      if (auto it = by_id.find(job_id); it != by_id.end())
        it->second->steps.push_back(std::move(s));
    }
    for (JobRecord& j : out) acct_sql::sort_steps(j.steps);
    read_runs(f, out);
    return out;
  }

  void read_runs(const JobFilter& f, std::vector<JobRecord>& out) {
    const auto q = acct_sql::run_query(f, [](size_t n) { return "$" + std::to_string(n); });
    Params p;
    p.add_all(q.params);
    const Result rows = run(q.sql, &p, PGRES_TUPLES_OK, "query runs");
    std::vector<JobRecord> runs;
    for (int i = 0; i < PQntuples(rows.get()); ++i) {
      Reader r(rows.get(), i);
      JobRecord j = record_from_json(nlohmann::json::parse(r.text()));
      if (acct_sql::matches(j, f)) runs.push_back(std::move(j));
    }
    acct_sql::merge_runs(out, std::move(runs));
  }

  assoc_sql::Rows read_assoc_rows() {
    assoc_sql::Rows out;
    for (const auto& t : assoc_sql::tables()) {
      auto& rows = out[t.name];
      const Result r = run(assoc_sql::select_sql(t), nullptr, PGRES_TUPLES_OK, "read associations");
      for (int i = 0; i < PQntuples(r.get()); ++i) {
        Reader reader(r.get(), i);
        assoc_sql::Row row;
        for (bool text : t.is_text) {
          if (text)
            row.emplace_back(reader.text());
          else
            row.emplace_back(reader.i64());
        }
        std::string key = assoc_sql::key_text(row.front());
        rows.emplace(std::move(key), std::move(row));
      }
    }
    return out;
  }

  PgsqlLocation where_;
  PGconn* conn_ = nullptr;
  std::optional<assoc_sql::Rows> assoc_rows_;  // what the association tables hold, once known
};

}  // namespace

std::unique_ptr<AccountingStore> open_pgsql_accounting(const PgsqlLocation& where) {
  return std::make_unique<PgsqlAccounting>(where);
}

}  // namespace drover::store
