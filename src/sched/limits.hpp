#pragma once
// Association and QOS limits (Slurm 22.05's accounting policy, AccountingStorageEnforce).
//
// Built from the accounting file (core/acct_dump.hpp): the association tree (root, accounts,
// users; a user may also have per-partition associations), the QOS table, which QOS each
// association may use and its default. Usage (running jobs, submitted jobs, TRES held) is
// counted per association (an account's counts include everything below it), per QOS, and per
// QOS and user / account; a pass or a submission check builds it from the jobs it sees.
//
// Checks follow Slurm's order and precedence: the partition's QOS, then the job's QOS (swapped
// when the job's QOS has OverPartQOS), then the user's association, then its accounts up to
// root. A limit is taken from the first of these that sets it, and a QOS that sets a limit
// hides the association's limit of the same kind (MaxJobsPerUser/PerAccount hide MaxJobs,
// MaxSubmitJobsPerUser/PerAccount hide MaxSubmitJobs, per TRES for the TRES limits).
// Max* association limits (MaxJobs, MaxSubmitJobs, MaxWall, MaxTRESPerJob, ...) apply to the
// user's association and are inherited from the nearest account above that sets them; Grp*
// limits apply at every level to everything below.
//
// Pure: no I/O, no clock.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/acct_dump.hpp"
#include "core/job.hpp"
#include "sched/fairshare.hpp"

namespace drover::sched {

// AccountingStorageEnforce.
struct Enforce {
  bool associations = false;  // a job needs an association (user, account[, partition])
  bool limits = false;        // association and QOS limits
  bool qos = false;           // a job's QOS must be one its association may use
  bool safe = false;          // accepted; the *Mins limits it refines are not enforced yet
  bool wckeys = false;        // accepted; WCKeys are not enforced yet
  bool any() const { return associations || limits || qos || safe || wckeys; }
};
// "associations,limits,qos,safe,wckeys,nojobs,nosteps", "all", "none" (and 0/1/2), any case.
// Throws core::ParseError("Invalid parameter for AccountingStorageEnforce: <item>").
Enforce parse_enforce(std::string_view text);

// What a job asks for or holds, as Slurm counts TRES: CPUs, memory (MB), nodes, billing (the
// CPU count) and GRES by TRES name ("gres/gpu" and, for typed requests, "gres/gpu:a100").
struct JobTres {
  int64_t cpu = 0, mem_mb = 0, node = 0, billing = 0;
  std::map<std::string, int64_t> other;  // "gres/gpu", "gres/gpu:a100", ...
  int64_t get(std::string_view name) const;
  // The nodes an allocation holds (empty for a request): group node limits count each node a
  // group uses once, as Slurm does.
  std::vector<std::string> nodes;
};
// What a pending job asks for: its tasks' CPUs, its nodes, memory by its rule (--mem per
// node, --mem-per-cpu, --mem-per-gpu, DefMemPerCPU/Node; 0 when it takes whole nodes: known
// once placed) and its GRES.
JobTres requested_tres(const core::JobSpec& spec, int64_t def_mem_per_cpu_mb,
                       int64_t def_mem_per_node_mb);
// What an allocation holds.
JobTres allocated_tres(const std::vector<core::NodeAlloc>& alloc);

class Limits {
 public:
  static constexpr int kRoot = 0;
  static constexpr int kNone = -1;

  struct Assoc {
    std::string account;        // the account; for a user association, the account it charges
    std::string user;           // empty for an account (and root)
    std::string partition;      // a user's per-partition association
    int parent = kNone;         // the account above (root: kNone)
    int line = 0;               // its line in the file
    core::AssocLimits own;      // as written
    core::TresCounts grp_tres;  // own.grp_tres
    // Max* limits in force for a user association: its own, else the nearest account's above.
    int64_t max_jobs = core::kNoLimit, max_submit_jobs = core::kNoLimit;
    int64_t max_wall_min = core::kNoLimit;
    core::TresCounts max_tres_per_job, max_tres_per_node, max_tres_mins_per_job;
    std::vector<int> qos;     // QOS it may use (sorted indices), inherited unless QOS= is given
    int default_qos = kNone;  // DefaultQOS, inherited
    int64_t priority = 0;     // Priority, inherited
    bool is_user() const { return !user.empty(); }
  };

  // Builds the limits from a parsed file. `partition_qos`: partition name -> its QOS= from
  // slurm.conf. Throws core::ParseError ("<file>:<line>: ...") for what the file cannot mean
  // (a DefaultQOS the association may not use) and for a partition QOS that is not defined.
  Limits(core::AcctDump dump, Enforce enforce,
         const std::map<std::string, std::string>& partition_qos = {});

  const Enforce& enforce() const { return enforce_; }
  const core::AcctDump& dump() const { return dump_; }
  const std::vector<Assoc>& assocs() const { return assocs_; }
  const std::vector<core::QosLine>& qos() const { return dump_.qos; }

  // The association of a job: (user, account, partition), else (user, account); kNone.
  int find_assoc(std::string_view user, std::string_view account, std::string_view partition) const;
  // The user's DefaultAccount; nullopt for a user with no association.
  std::optional<std::string> default_account(std::string_view user) const;
  int find_qos(std::string_view name) const;  // kNone when not defined
  // The QOS a job of association `assoc` gets without --qos: the association's DefaultQOS,
  // else its only QOS, else root's DefaultQOS, else "normal".
  std::string default_qos(int assoc) const;
  bool qos_allowed(int assoc, int qos) const;
  int64_t max_qos_priority() const { return max_qos_priority_; }
  int64_t max_assoc_priority() const { return max_assoc_priority_; }

  // A job as the limits see it.
  struct Key {
    int assoc = kNone;
    int qos = kNone;       // the job's QOS (kNone: unknown)
    int part_qos = kNone;  // its partition's QOS
    std::string user, account;
  };
  Key key(std::string_view user, std::string_view account, std::string_view qos,
          std::string_view partition) const;
  Key key(const core::Job& job) const;

  // Usage counters: running jobs and what they hold, submitted (pending or running) jobs.
  class Usage {
   public:
    struct Counters {
      int64_t jobs = 0, submit = 0;
      std::vector<int64_t> tres;         // per TRES of the limits' table
      std::map<std::string, int> nodes;  // node -> running jobs of the group there
    };

   private:
    friend class Limits;
    std::vector<Counters> assoc_, qos_;
    std::map<std::pair<int, std::string>, Counters> qos_user_, qos_account_;
  };
  Usage empty_usage() const;
  // A running job: a job and what it holds, for its association and the accounts above, its
  // QOS and its partition's QOS (and each QOS's per-user and per-account counts).
  void add_running(Usage& u, const Key& k, const JobTres& held) const;
  // Submitted jobs (an array counts its tasks).
  void add_submitted(Usage& u, const Key& k, int64_t count) const;

  // Why a job may not start now with `tres` for `time_limit_min` (kNoLimit: unlimited), as
  // Slurm's pending reason ("QOSMaxJobsPerUserLimit", "AssocGrpCpuLimit", ...); "" when it
  // may. Without limits enforced: "" (or "InvalidAccount" / "InvalidQOS" when associations /
  // QOS are enforced and the job's are gone).
  std::string check_start(const Key& k, const JobTres& tres, int64_t time_limit_min,
                          const Usage& u) const;
  // Whether a submission of `count` jobs is refused: the reason name of the limit it breaks,
  // "" when accepted. Submit-count limits always refuse; size and time limits only when a
  // QOS of the job has DenyOnLimit (otherwise the job is accepted and waits).
  std::string check_submit(const Key& k, const JobTres& tres, int64_t time_limit_min, int64_t count,
                           const Usage& u) const;
  // The time limit a job without --time gets when the partition has no DefaultTime: the
  // smallest MaxWall in force for it (kNoLimit: none), as Slurm sets it.
  int64_t max_wall_min(const Key& k) const;

  // The association tree for fair share: accounts with their Fairshare, users under them.
  AssocTree fairshare_tree(int64_t usage_time = 0) const;

 private:
  struct Claimed;
  // TRES limits as vectors over tres_names_ (kNoLimit: none).
  struct TresLimits {
    std::vector<int64_t> grp, max_pj, max_pn, max_mins_pj, max_pu, max_pa, min_pj;
  };
  std::vector<int> qos_order(const Key& k) const;
  std::vector<int64_t> tres_vector(const JobTres& t) const;
  std::vector<int64_t> limit_vector(const core::TresCounts& t) const;
  int64_t added(const Usage::Counters& c, size_t i, const JobTres& t,
                const std::vector<int64_t>& req) const;
  int64_t used(const Usage::Counters& c, size_t i) const;
  Usage::Counters& counters(std::map<std::pair<int, std::string>, Usage::Counters>& m, int q,
                            const std::string& name) const;
  const Usage::Counters* find(const std::map<std::pair<int, std::string>, Usage::Counters>& m,
                              int q, const std::string& name) const;

  core::AcctDump dump_;
  Enforce enforce_;
  std::vector<Assoc> assocs_;
  std::map<std::string, int> accounts_;  // account -> its association
  std::map<std::tuple<std::string, std::string, std::string>, int> users_;
  std::map<std::string, std::string> default_account_;
  std::map<std::string, int> partition_qos_;
  std::vector<std::string> tres_names_;  // the TRES the limits name, in Slurm's order
  size_t node_tres_ = 3;                 // index of "node" in tres_names_
  std::vector<TresLimits> qos_tres_, assoc_tres_;
  int64_t max_qos_priority_ = 0, max_assoc_priority_ = 0;
};

struct Request;
struct Share;
struct NodeSlot;
class GresKinds;

// What a placement found by the engine would hold (nodes, CPUs, memory, GRES by name).
JobTres placement_tres(const Request& req, const std::vector<Share>& shares,
                       const std::vector<NodeSlot>& slots, const GresKinds& kinds);

// The limits as one scheduling pass sees them: usage of the running jobs, plus each job the
// pass starts, so the jobs after it see that usage too.
class LimitPass {
 public:
  LimitPass(const Limits& limits, const std::vector<const core::Job*>& running,
            int64_t def_mem_per_cpu_mb, int64_t def_mem_per_node_mb);
  // Before a start is searched for: why `job` may not start in `partition` with what it asks
  // for ("" when it may).
  std::string before(const core::Job& job, const std::string& partition) const;
  // A start was found: why it may not start with what it would hold ("" when it may).
  std::string at_start(const core::Job& job, const std::string& partition,
                       const JobTres& held) const;
  void started(const core::Job& job, const std::string& partition, const JobTres& held);

 private:
  const Limits& limits_;
  Limits::Usage usage_;
  int64_t def_mem_per_cpu_mb_, def_mem_per_node_mb_;
};

}  // namespace drover::sched
