// The accounting schema and statements both backends run. Times are integer Unix seconds and
// TRES are text; the SQL is what SQLite and PostgreSQL both accept.
#include "store/accounting_sql.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

#include "core/hostlist.hpp"
#include "store/acct_record_json.hpp"

namespace drover::store::acct_sql {
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
    " ntasks INTEGER NOT NULL DEFAULT 1, max_rss_kb BIGINT NOT NULL DEFAULT -1,"
    " PRIMARY KEY (job_id, step_name))",
    // Earlier runs of requeued jobs (state REQUEUED): acct_jobs holds a job's latest run.
    // Rare, so kept whole as JSON (store/acct_record_json.hpp) with only the window's columns.
    "CREATE TABLE IF NOT EXISTS acct_job_runs (job_id BIGINT NOT NULL, submit_time BIGINT NOT "
    "NULL, end_time BIGINT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (job_id, submit_time))",
    "CREATE INDEX IF NOT EXISTS acct_job_runs_end ON acct_job_runs (end_time)",
    "CREATE TABLE IF NOT EXISTS acct_cluster_tres (since BIGINT PRIMARY KEY, tres TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acct_node_events (node TEXT NOT NULL, since BIGINT NOT NULL,"
    " until_time BIGINT NOT NULL, state TEXT NOT NULL, reason TEXT NOT NULL, tres TEXT NOT NULL,"
    " PRIMARY KEY (node, since))",
};

constexpr AddedColumn kAddedColumns[] = {
    // Until then only batch steps were recorded; their name is their id.
    {"acct_steps", "job_name", "TEXT NOT NULL DEFAULT ''",
     "UPDATE acct_steps SET job_name = step_name WHERE job_name = ''"},
    {"acct_steps", "ntasks", "INTEGER NOT NULL DEFAULT 1", nullptr},
    {"acct_steps", "max_rss_kb", "BIGINT NOT NULL DEFAULT -1", nullptr},
    {"acct_jobs", "system_comment", "TEXT NOT NULL DEFAULT ''", nullptr},
};

// Where sacct lists a step (Slurm's database keeps batch as -5 and extern as -4 and sorts by
// that).
int64_t step_order(const std::string& name) {
  if (name == "batch") return -5;
  if (name == "extern") return -4;
  if (!name.empty() && name.size() < 11 &&
      name.find_first_not_of("0123456789") == std::string::npos)
    return std::stoll(name);
  return INT64_MAX;
}

}  // namespace

const char* const kJobColumns =
    "job_id, array_job_id, array_task_id, name, user_name, group_name, uid, gid, account, qos, "
    "partition_name, submit_time, eligible_time, start_time, end_time, state, reason, exit_code, "
    "exit_signal, cancelled_by, req_cpus, req_mem_mb, req_mem_per_cpu, req_nodes, req_tres, "
    "alloc_tres, alloc_cpus, nnodes, nodelist, workdir, time_limit_min, restarts, priority, "
    "system_comment";

const char* const kStepColumns =
    "job_id, step_name, state, exit_code, exit_signal, start_time, end_time, nodelist, nnodes, "
    "ncpus, alloc_tres, job_name, ntasks, max_rss_kb";

std::span<const char* const> schema() { return kSchema; }
std::span<const AddedColumn> added_columns() { return kAddedColumns; }

std::string job_upsert_clause() {
  std::string out = " ON CONFLICT (job_id) DO UPDATE SET ";
  const std::string cols = kJobColumns;
  bool first = true;
  for (size_t pos = 0; pos < cols.size();) {
    size_t end = cols.find(',', pos);
    if (end == std::string::npos) end = cols.size();
    std::string c = cols.substr(pos, end - pos);
    c.erase(0, c.find_first_not_of(' '));
    if (c != "job_id") {
      out += (first ? "" : ", ") + c + " = excluded." + c;
      first = false;
    }
    pos = end + 1;
  }
  return out;
}

std::vector<Value> job_values(const JobRecord& j) {
  return {static_cast<int64_t>(j.job_id),
          static_cast<int64_t>(j.array_job_id),
          static_cast<int64_t>(j.array_task_id),
          j.name,
          j.user,
          j.group,
          static_cast<int64_t>(j.uid),
          static_cast<int64_t>(j.gid),
          j.account,
          j.qos,
          j.partition,
          j.submit_time,
          j.eligible_time,
          j.start_time,
          j.end_time,
          j.state,
          j.reason,
          int64_t{j.exit_code},
          int64_t{j.exit_signal},
          j.cancelled_by,
          int64_t{j.req_cpus},
          j.req_mem_mb,
          int64_t{j.req_mem_per_cpu ? 1 : 0},
          int64_t{j.req_nodes},
          j.req_tres,
          j.alloc_tres,
          int64_t{j.alloc_cpus},
          int64_t{j.nnodes},
          j.nodelist,
          j.workdir,
          j.time_limit_min,
          static_cast<int64_t>(j.restarts),
          static_cast<int64_t>(j.priority),
          j.system_comment};
}

std::vector<Value> step_values(uint64_t job_id, const StepRecord& s) {
  return {static_cast<int64_t>(job_id),
          s.name,
          s.state,
          int64_t{s.exit_code},
          int64_t{s.exit_signal},
          s.start_time,
          s.end_time,
          s.nodelist,
          int64_t{s.nnodes},
          int64_t{s.ncpus},
          s.alloc_tres,
          s.job_name,
          int64_t{s.ntasks},
          s.max_rss_kb};
}

void sort_steps(std::vector<StepRecord>& steps) {
  std::stable_sort(steps.begin(), steps.end(), [](const StepRecord& a, const StepRecord& b) {
    return step_order(a.name) < step_order(b.name);
  });
}

Query job_query(const JobFilter& f, const std::function<std::string(size_t)>& placeholder) {
  Query q;
  q.sql = std::string("SELECT ") + kJobColumns + " FROM acct_jobs WHERE 1 = 1";
  auto param = [&](Value v) {
    q.params.push_back(std::move(v));
    return placeholder(q.params.size());
  };
  // " AND <column> IN (<one marker per value>)"
  auto in = [&](const char* column, const auto& values) {
    if (values.empty()) return std::string();
    std::string s = std::string(" ") + column + " IN (";
    bool first = true;
    for (const auto& v : values) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
        s += (first ? "" : ",") + param(v);
      else
        s += (first ? "" : ",") + param(static_cast<int64_t>(v));
      first = false;
    }
    return s + ")";
  };
  if (!f.job_ids.empty())
    q.sql += " AND (" + in("job_id", f.job_ids) + " OR" + in("array_job_id", f.job_ids) + ")";
  if (!f.uids.empty()) q.sql += " AND" + in("uid", f.uids);
  if (!f.gids.empty()) q.sql += " AND" + in("gid", f.gids);
  if (!f.states.empty()) q.sql += " AND" + in("state", f.states);
  if (!f.partitions.empty()) q.sql += " AND" + in("partition_name", f.partitions);
  if (!f.accounts.empty()) q.sql += " AND" + in("account", f.accounts);
  if (!f.include_ineligible) q.sql += " AND eligible_time <> 0";
  if (f.window_end)
    q.sql += " AND (eligible_time = 0 OR eligible_time <= " + param(*f.window_end) + ")";
  // With states, a job that ended must have ended in the window: it was in that state during
  // it (states a job is in while it lives need only overlap it, as above).
  if (!f.states.empty() && f.window_end)
    q.sql += " AND (state IN ('PENDING', 'RUNNING', 'SUSPENDED', 'REQUEUED') OR end_time <= " +
             param(*f.window_end) + ")";
  if (f.window_start) q.sql += " AND (end_time = 0 OR end_time >= " + param(*f.window_start) + ")";
  if (f.ended) {
    // One at a time: SQLite's markers are positional, and the operands of + are evaluated in
    // no set order.
    q.sql += " AND end_time > 0 AND end_time >= " + param(f.ended->first);
    q.sql += " AND end_time < " + param(f.ended->second);
  }
  // sacct's order: by submit time, the tasks of an array after other jobs and by task id.
  q.sql += " ORDER BY submit_time, array_job_id, array_task_id, job_id";
  return q;
}

std::string node_event_upsert(const std::function<std::string(size_t)>& placeholder) {
  std::string values;
  for (size_t i = 1; i <= 6; ++i) values += (i > 1 ? ", " : "") + placeholder(i);
  return "INSERT INTO acct_node_events (node, since, until_time, state, reason, tres) VALUES (" +
         values +
         ") ON CONFLICT (node, since) DO UPDATE SET until_time = excluded.until_time, state = "
         "excluded.state, reason = excluded.reason, tres = excluded.tres";
}

std::string node_event_query(const std::function<std::string(size_t)>& placeholder) {
  return "SELECT node, since, until_time, state, reason, tres FROM acct_node_events WHERE since "
         "< " +
         placeholder(2) + " AND (until_time = 0 OR until_time > " + placeholder(1) +
         ") ORDER BY since, node";
}

std::vector<Value> node_event_values(const NodeEventRecord& e) {
  return {e.node, e.since, e.until, e.state, e.reason, e.tres};
}

std::string run_upsert(const std::function<std::string(size_t)>& placeholder) {
  return "INSERT INTO acct_job_runs (job_id, submit_time, end_time, record) VALUES (" +
         placeholder(1) + ", " + placeholder(2) + ", " + placeholder(3) + ", " + placeholder(4) +
         ") ON CONFLICT (job_id, submit_time) DO UPDATE SET end_time = excluded.end_time, "
         "record = excluded.record";
}

std::vector<Value> run_values(const JobRecord& j) {
  return {static_cast<int64_t>(j.job_id), j.submit_time, j.end_time, record_json(j).dump()};
}

Query run_query(const JobFilter& f, const std::function<std::string(size_t)>& placeholder) {
  Query q;
  q.sql = "SELECT record FROM acct_job_runs";
  if (f.window_start) {
    q.params.push_back(*f.window_start);
    q.sql += " WHERE end_time >= " + placeholder(1);
  }
  return q;
}

namespace {
template <class T>
bool listed(const std::vector<T>& list, const T& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}
}  // namespace

bool matches(const JobRecord& j, const JobFilter& f) {
  if (!f.job_ids.empty() && !listed(f.job_ids, j.job_id) && !listed(f.job_ids, j.array_job_id))
    return false;
  if (!listed(f.uids, j.uid) || !listed(f.gids, j.gid) || !listed(f.states, j.state) ||
      !listed(f.partitions, j.partition) || !listed(f.accounts, j.account))
    return false;
  if (!f.include_ineligible && j.eligible_time == 0) return false;
  if (f.window_end && j.eligible_time != 0 && j.eligible_time > *f.window_end) return false;
  if (f.window_start && j.end_time != 0 && j.end_time < *f.window_start) return false;
  if (f.ended && (j.end_time <= 0 || j.end_time < f.ended->first || j.end_time >= f.ended->second))
    return false;
  const bool lives = j.state == "PENDING" || j.state == "RUNNING" || j.state == "SUSPENDED" ||
                     j.state == "REQUEUED";
  if (!f.states.empty() && f.window_end && !lives && j.end_time > *f.window_end) return false;
  return ran_on(j, std::set<std::string>(f.nodes.begin(), f.nodes.end()));
}

void merge_runs(std::vector<JobRecord>& jobs, std::vector<JobRecord> runs) {
  // Earlier runs first: a run requeued within the second it was submitted ties with the next.
  for (JobRecord& r : runs) sort_steps(r.steps);
  jobs.insert(jobs.begin(), std::make_move_iterator(runs.begin()),
              std::make_move_iterator(runs.end()));
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobRecord& a, const JobRecord& b) {
    return std::tie(a.submit_time, a.array_job_id, a.array_task_id, a.job_id) <
           std::tie(b.submit_time, b.array_job_id, b.array_task_id, b.job_id);
  });
}

bool ran_on(const JobRecord& j, const std::set<std::string>& nodes) {
  if (nodes.empty()) return true;
  const auto names = core::expand_hostlist(j.nodelist);
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return nodes.count(n) > 0; });
}

}  // namespace drover::store::acct_sql
