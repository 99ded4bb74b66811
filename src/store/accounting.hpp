#pragma once
// Job accounting: one record per job (and its steps) that outlives the job in the controller.
// The interface is backend-neutral: SQLite (the default) and PostgreSQL run the same schema and
// statements (accounting_sql.hpp: INSERT ... ON CONFLICT, integer times, text TRES).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/acct_data.hpp"

namespace drover::store {

inline constexpr uint32_t kAcctNoTask = 0xfffffffe;  // not an array task
inline constexpr int64_t kAcctNoUid = -1;            // nobody cancelled it
inline constexpr int64_t kAcctPartitionLimit = -2;   // JobRecord::time_limit_min

struct StepRecord {
  std::string name;   // the step id: "batch", "extern", "0", ...
  std::string state;  // "COMPLETED", "CANCELLED", ...
  int exit_code = 0, exit_signal = 0;
  int64_t start_time = 0, end_time = 0;
  std::string nodelist;
  int nnodes = 0;
  int ncpus = 0;
  std::string alloc_tres;
  std::string job_name;  // sacct's JobName for the step: "batch", srun's -J or command name
  int ntasks = 1;
  int64_t max_rss_kb = -1;  // peak memory (sacct's MaxRSS); -1: not gathered
  bool operator==(const StepRecord&) const = default;
};

struct JobRecord {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;  // 0: not an array task
  uint32_t array_task_id = kAcctNoTask;
  std::string name;
  std::string user, group;
  uint32_t uid = 0, gid = 0;
  std::string account, qos, partition;
  int64_t submit_time = 0, eligible_time = 0, start_time = 0, end_time = 0;
  std::string state;   // Slurm's long name: "COMPLETED", "RUNNING", ...
  std::string reason;  // pending reason or end reason
  int exit_code = 0, exit_signal = 0;
  int64_t cancelled_by = kAcctNoUid;
  int req_cpus = 0;
  int64_t req_mem_mb = 0;  // per node, or per CPU when req_mem_per_cpu
  bool req_mem_per_cpu = false;
  int req_nodes = 0;
  std::string req_tres, alloc_tres;  // "cpu=2,mem=1G,node=1,billing=2"
  int alloc_cpus = 0;
  int nnodes = 0;
  std::string nodelist;  // compressed hostlist ("None assigned" is the CLI's business)
  std::string workdir;
  // -1: unlimited; kAcctPartitionLimit: none of its own and never started, so never resolved
  // (sacct's "Partition_Limit")
  int64_t time_limit_min = -1;
  uint32_t restarts = 0;
  uint32_t priority = 0;
  std::string system_comment;  // the controller's own note on the job (Slurm's SystemComment)
  std::vector<StepRecord> steps;
  bool operator==(const JobRecord&) const = default;
};

// What to select; empty lists select everything.
struct JobFilter {
  std::vector<uint64_t> job_ids;  // a job, or every task of the array with that id
  std::vector<uint32_t> uids;
  std::vector<uint32_t> gids;
  std::vector<std::string> states;  // long names
  std::vector<std::string> partitions;
  std::vector<std::string> accounts;
  std::vector<std::string> nodes;  // ran on any of these (expanded names)
  // The window: jobs eligible before window_end that had not ended before window_start.
  std::optional<int64_t> window_start, window_end;
  bool include_ineligible = false;  // also jobs never eligible (held, -j)
  // Only jobs that ended in [first, second): with the end time's index, a day's ended jobs
  // are read without a pass over every job that ended since.
  std::optional<std::pair<int64_t, int64_t>> ended;
};

// The accounts, users, associations and QOS sacctmgr manages, as stored.
struct StoredAssocData {
  core::AcctData data;
  std::string seeded_from;  // a digest of the accounts.cfg they were last seeded from ("": none)
  bool operator==(const StoredAssocData&) const = default;
};

// The cluster's TRES ("cpu=8,mem=16G,node=2,billing=8,gres/gpu=2") from `since` on: what
// sreport's Reported time is made of.
struct ClusterTresRecord {
  int64_t since = 0;
  std::string tres;
  bool operator==(const ClusterTresRecord&) const = default;
};

// A node out of service ("DOWN": down or fully drained; "MAINT": in a maintenance reservation)
// from `since` until `until` (0: still), with its reason and TRES: sreport's Down and PLND Down.
struct NodeEventRecord {
  std::string node;
  int64_t since = 0, until = 0;
  std::string state, reason, tres;
  bool operator==(const NodeEventRecord&) const = default;
};

class AccountingStore {
 public:
  virtual ~AccountingStore() = default;
  // Inserts or replaces these jobs (and their steps) in one transaction; durable on return.
  // Throws std::runtime_error ("accounting: ...") when that cannot be done; nothing is
  // written then.
  virtual void upsert(const std::vector<JobRecord>& jobs) = 0;
  // Records matching the filter, in submit order (then job id), steps included in the order
  // sacct lists them: batch, extern, then srun's steps by number.
  virtual std::vector<JobRecord> query(const JobFilter& filter) = 0;
  // The accounts, users, associations and QOS (store/assoc_sql.hpp); nullopt when none were
  // ever stored. Throws std::runtime_error ("accounting: ...").
  virtual std::optional<StoredAssocData> load_assoc_data() = 0;
  // Makes the stored entities `data` in one transaction, writing only the rows that differ from
  // what is stored; durable on return. Throws like upsert; nothing is written then.
  virtual void store_assoc_data(const StoredAssocData& data) = 0;
  // The cluster's TRES as registered over time, oldest first.
  virtual std::vector<ClusterTresRecord> cluster_tres() = 0;
  // Registers the cluster's TRES from `r.since` on, unless they are those last registered.
  virtual void register_cluster_tres(const ClusterTresRecord& r) = 0;
  // Inserts node events or updates them (by node and since: an event that ended), in one
  // transaction.
  virtual void put_node_events(const std::vector<NodeEventRecord>& events) = 0;
  // The events that overlap [start, end), oldest first.
  virtual std::vector<NodeEventRecord> node_events(int64_t start, int64_t end) = 0;
};

// The SQLite backend: a file of its own (the controller uses <state dir>/accounting.db).
std::unique_ptr<AccountingStore> open_sqlite_accounting(const std::string& path);

// Where a PostgreSQL database is and how to log in.
struct PgsqlLocation {
  std::string host = "localhost";  // a name, an address, or a Unix socket directory ("/...")
  int port = 5432;
  std::string user;  // empty: libpq's default (the process's user name)
  std::string database = "drover";
  std::string password_file;  // its first line is the password; empty: none
  bool operator==(const PgsqlLocation&) const = default;
};

// The PostgreSQL backend (libpq). Opening does not connect: each call connects when it has no
// connection (creating or migrating the schema), and reconnects once when the connection was
// lost, so a database that is down makes calls throw, not the open.
std::unique_ptr<AccountingStore> open_pgsql_accounting(const PgsqlLocation& where);

// Which backend and where: AccountingStorageType and its keys in slurm.conf.
struct AccountingStorage {
  enum class Type { Sqlite, Pgsql } type = Type::Sqlite;
  std::string sqlite_path;  // Sqlite
  PgsqlLocation pgsql;      // Pgsql
  // "SQLite <path>" or "PostgreSQL user@host:port/database", for logs.
  std::string describe() const;
};

std::unique_ptr<AccountingStore> open_accounting(const AccountingStorage& storage);

}  // namespace drover::store
