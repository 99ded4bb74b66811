#pragma once
// What the accounting backends (SQLite, PostgreSQL) share: the schema and its migrations, the
// column lists, how a record becomes values and a row becomes a record, and the query a filter
// becomes. Each backend only binds values and reads columns its own way, so the two cannot
// drift apart.
#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "store/accounting.hpp"

namespace drover::store::acct_sql {

// CREATE TABLE / CREATE INDEX ... IF NOT EXISTS: safe to run on every open.
std::span<const char* const> schema();

// Columns added to a table since its first version: added to older databases when they open
// (ALTER TABLE ... ADD COLUMN), then `fill` (if any) runs once.
struct AddedColumn {
  const char* table;
  const char* name;
  const char* definition;
  const char* fill;
};
std::span<const AddedColumn> added_columns();

extern const char* const kJobColumns;  // "job_id, array_job_id, ..."
inline constexpr int kJobColumnCount = 34;
extern const char* const kStepColumns;  // "job_id, step_name, ..."
inline constexpr int kStepColumnCount = 14;

// " ON CONFLICT (job_id) DO UPDATE SET array_job_id = excluded.array_job_id, ..."
std::string job_upsert_clause();

// A parameter: a number or a text (a plain struct: GCC 12 warns falsely about std::variant's
// string member in initializer lists).
struct Value {
  Value(int64_t n) : number(n) {}  // NOLINT: implicit, so value lists read naturally
  Value(std::string t) : text(std::move(t)), is_text(true) {}  // NOLINT
  int64_t number = 0;
  std::string text;
  bool is_text = false;
};
// A job's values in kJobColumns order; a step's in kStepColumns order.
std::vector<Value> job_values(const JobRecord& j);
std::vector<Value> step_values(uint64_t job_id, const StepRecord& s);

// Reads a row in kJobColumns order through `r.i64()` and `r.text()`, column after column.
template <class Reader>
JobRecord read_job(Reader& r) {
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
  j.system_comment = r.text();
  return j;
}

// Reads a row in kStepColumns order; returns the job id it belongs to.
template <class Reader>
uint64_t read_step(Reader& r, StepRecord& s) {
  const auto job_id = static_cast<uint64_t>(r.i64());
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
  s.max_rss_kb = r.i64();
  return job_id;
}

// Steps in the order sacct lists them: batch, extern, then srun's steps by number.
void sort_steps(std::vector<StepRecord>& steps);

struct Query {
  std::string sql;
  std::vector<Value> params;
};
// The SELECT of kJobColumns a filter becomes (all but its node filter, see ran_on), in submit
// order. `placeholder(n)` spells the n-th parameter (from 1): "?" for SQLite, "$n" for libpq.
Query job_query(const JobFilter& f, const std::function<std::string(size_t)>& placeholder);

// Node events (acct_node_events): the upsert and the query of those overlapping a window
// ($1/? = start, $2/? = end), with `placeholder(n)` spelling the n-th parameter.
std::string node_event_upsert(const std::function<std::string(size_t)>& placeholder);
std::string node_event_query(const std::function<std::string(size_t)>& placeholder);
std::vector<Value> node_event_values(const NodeEventRecord& e);
template <class Reader>
NodeEventRecord read_node_event(Reader& r) {
  NodeEventRecord e;
  e.node = r.text();
  e.since = r.i64();
  e.until = r.i64();
  e.state = r.text();
  e.reason = r.text();
  e.tres = r.text();
  return e;
}

// Earlier runs of requeued jobs (acct_job_runs): the upsert ($1..$4 = job_values order of
// run_values), the query of those that may match `f` (by the window's start only; the rest is
// `matches`), and how they join the jobs read (sacct's order).
std::string run_upsert(const std::function<std::string(size_t)>& placeholder);
std::vector<Value> run_values(const JobRecord& j);
Query run_query(const JobFilter& f, const std::function<std::string(size_t)>& placeholder);
bool matches(const JobRecord& j, const JobFilter& f);  // job_query's filter, in C++
void merge_runs(std::vector<JobRecord>& jobs, std::vector<JobRecord> runs);

// The node filter, applied to the rows read: whether the job ran on any of `nodes` (empty:
// no filter). Hostlists are compressed in the table, so SQL cannot match names.
bool ran_on(const JobRecord& j, const std::set<std::string>& nodes);

}  // namespace drover::store::acct_sql
