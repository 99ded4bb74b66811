#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/cgroup_conf.hpp"
#include "core/slurm_conf.hpp"
#include "sched/limits.hpp"
#include "sched/priority.hpp"
#include "sched/scheduler.hpp"
#include "store/accounting.hpp"

namespace drover::ctld {

// The controller's view of slurm.conf, with Slurm's defaults applied.
struct Config {
  core::SlurmConf conf;
  std::string source_path;  // where slurm.conf was read (jobs get it as SLURM_CONF)
  std::string state_dir;    // the controller's --state-dir (its StateSaveLocation)
  std::string cluster_name = "drover";
  std::string control_host = "localhost";
  std::string bind_address = "127.0.0.1";
  int port = 6817;
  // DroverHttpPort / DroverHttpAddress: the HTTP listener (GET /metrics); 0: none.
  int http_port = 0;
  std::string http_address = "127.0.0.1";
  int64_t kill_wait_s = 30;
  int64_t slurmd_timeout_s = 300;
  // How often agents send heartbeats: a third of SlurmdTimeout (1 to 30 s), so a node two
  // of them late is not responding well before SlurmdTimeout takes it DOWN.
  int64_t heartbeat_interval_s() const { return std::clamp<int64_t>(slurmd_timeout_s / 3, 1, 30); }
  int64_t min_job_age_s = 300;
  int64_t def_mem_per_cpu_mb = 0, def_mem_per_node_mb = 0;
  std::vector<std::string> gres_types;  // GresTypes: the generic resources jobs may ask for
  uint32_t max_array_size = 1001;       // MaxArraySize: array indices must be below it
  bool job_requeue = true;              // JobRequeue: batch jobs are requeued after node failure
  bool kill_invalid_depend = false;     // SchedulerParameters=kill_invalid_depend
  int64_t max_script_size = 4194304;    // SchedulerParameters=max_script_size: bytes, refused above
  // bf_interval: without events, the whole queue is re-planned this often (reasons, start
  // times); events that free resources re-plan at once.
  int64_t bf_interval_s = 30;
  // bf_max_time: a scheduling pass considers no more jobs after this long (default:
  // bf_interval); those it did not reach keep their reasons and planned starts until the next.
  int64_t bf_max_time_s = 0;
  // A requeued job that was running becomes eligible again only after this long, as Slurm
  // (its launch credentials must expire first): shown as reason BeginTime.
  int64_t requeue_delay_s = 121;
  // SchedulerType (sched/backfill: conservative planning of the whole queue; sched/builtin:
  // FIFO) and the bf_* SchedulerParameters.
  sched::SchedulerParams sched_params;
  sched::PriorityConfig priority;  // PriorityType, PriorityWeight*, ...
  uint32_t slurm_user_uid = 0;     // an operator besides root
  // AccountingStorageEnforce, and the accounts, users and QOS of the accounting file (null
  // without one: every user is an association under root and nothing is enforced).
  sched::Enforce enforce;
  std::shared_ptr<const sched::Limits> limits;
  // PreemptType, PreemptMode, PreemptExemptTime, and the QOS' Preempt lists and modes once
  // the accounting file is loaded; partitions' PreemptMode and GraceTime are per partition.
  sched::PreemptionView preemption;
  std::string slurm_user = "root";
  // ProctrackType and TaskPlugin, with cgroup.conf beside slurm.conf (Slurm's defaults without
  // one). `confine_set`: slurm.conf names either, so jobs are confined as Slurm would; without,
  // the agents keep drover's own rule (the memory a job asked for is its limit).
  bool confine_set = false;
  bool proctrack_pgid = false;  // ProctrackType=proctrack/pgid: no cgroups at all
  bool task_cgroup = false;     // TaskPlugin has task/cgroup
  core::CgroupConf cgroup;
  std::string gres_conf;  // gres.conf beside slurm.conf (ConstrainDevices: the GPUs' files)
  // AccountingStorageType and where: SQLite (sqlite_path empty: <state dir>/accounting.db) or
  // PostgreSQL.
  store::AccountingStorage accounting_storage;
};

// "CANCEL", "requeue", "OFF", ... as PreemptMode= gives it; SUSPEND (and GANG alone) are
// not supported yet. Throws core::ParseError.
sched::PreemptMode parse_preempt_mode(const std::string& text, const std::string& where);
// The mode as Slurm prints it: "OFF", "CANCEL", "REQUEUE".
const char* preempt_mode_name(sched::PreemptMode mode);

// AccountingStorageType=accounting_storage/sqlite (default; also for none and slurmdbd) or
// accounting_storage/pgsql with AccountingStorageHost, AccountingStoragePort,
// AccountingStorageUser, AccountingStorageLoc (the database) and AccountingStoragePassFile (a file
// holding the password, not readable by group or others). Throws core::ParseError("<source>: ...").
store::AccountingStorage parse_accounting_storage(const core::SlurmConf& conf,
                                                  const std::string& source_name);

// Throws core::ParseError for a bad file; unknown keys end up in conf.warnings.
Config load_config_text(const std::string& text, const std::string& source_name);
// The same from the file at `path` (absolute): at startup and on reconfigure. Throws
// core::ParseError also when it cannot be read.
Config load_config_file(const std::string& path);

// The slurm.conf keys whose change needs a restart of the controller (listeners, state and
// accounting storage, plugins, cluster identity): a reconfigure that changes one is refused.
// Each differing key as "Key" (empty when none differ).
std::vector<std::string> restart_only_changes(const core::SlurmConf& running,
                                              const core::SlurmConf& next);

// The accounting file: accounts.cfg beside slurm.conf (sacctmgr dump format, see
// docs/accounting.md).
std::string accounting_path(const std::string& slurm_conf_path);
// Sets c.limits (and the QOS' preemption settings) from accounts, users and QOS in dump form,
// with the partitions' QOS= and AccountingStorageEnforce. Throws core::ParseError for what
// they cannot mean (a DefaultQOS the association may not use, a partition QOS not defined).
void apply_accounting(Config& c, core::AcctDump dump);
// The same from the accounting file's text. Throws core::ParseError("<source>:<line>: ...").
void load_accounting(Config& c, const std::string& text, const std::string& source_name);
// The accounting file, read: it seeds the accounting store's accounts, users and QOS on the
// first start, and replaces them whenever its text changed since it was last loaded.
struct AccountsFile {
  std::string path;
  std::string digest;  // of its text: "fnv1a64:<hex>"
  core::AcctDump dump;
};
// The accounting file beside `slurm_conf_path`; nullopt when there is none. Throws
// core::ParseError for a bad file ("<path>:<line>: ...").
std::optional<AccountsFile> read_accounts_file(const std::string& slurm_conf_path);

}  // namespace drover::ctld
