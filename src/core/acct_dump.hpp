#pragma once
// The accounting hierarchy in the flat-file form `sacctmgr dump` writes and `sacctmgr load`
// reads: one cluster, its accounts and users (associations) with fair-share values and limits,
// plus drover's QOS lines (Slurm keeps QOS only in its database). One record per line:
//
//   Cluster - 'c':Fairshare=1:QOS='normal'
//   Parent - 'root'
//   Account - 'physics':Description='physics':Fairshare=10:GrpTRES=cpu=8:GrpJobs=4
//   Parent - 'physics'
//   User - 'alice':DefaultAccount='physics':Fairshare=1:MaxJobs=2
//   QOS - 'high':Priority=100:MaxWall=60:MaxJobsPerUser=2:MaxTRESPerUser=cpu=4:Flags=DenyOnLimit
//
// `Object - 'name'` then ':'-separated Key=Value options; values holding ':' are quoted
// (MaxWall='1:00:00'). Keys are case-insensitive and may be shortened as sacctmgr allows
// (MaxWall for MaxWallDurationPerJob). '#' starts a comment ("\#" is a '#'), '\' escapes the
// next character and a '\' at the end of a line continues it. A Parent line says under which
// account the following Account and User lines go (root until one is given). Cluster, account
// and QOS names are case-insensitive (kept in lower case); user names are kept as written.
//
// Pure: text in, records out. Errors are ParseError("<source>:<line>: ...").
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

inline constexpr int64_t kNoLimit = -1;

// TRES counts by Slurm's TRES name: "cpu", "mem" (MB), "energy", "node", "billing", "fs/disk",
// "vmem", "pages", "gres/<name>[:<type>]", "license/<name>", "bb/<name>".
using TresCounts = std::map<std::string, int64_t>;

// "cpu=8,mem=16G,gres/gpu=2" as sacctmgr takes it: names in any case (kept in lower case),
// whole counts, mem with an optional K/M/G/T unit (MB without one); a count of -1 means no
// limit and leaves the TRES out. Throws ParseError naming the bad item.
TresCounts parse_tres_counts(std::string_view text);
// Slurm's order (cpu, mem, energy, node, billing, fs/disk, vmem, pages, then the rest by
// name), mem in the largest exact unit ("mem=16G"), e.g. "cpu=8,mem=16G,gres/gpu=2".
std::string format_tres_counts(const TresCounts& tres);

// The limits an association (cluster, account or user line) may carry; kNoLimit / empty: none.
struct AssocLimits {
  int64_t grp_jobs = kNoLimit;
  int64_t grp_jobs_accrue = kNoLimit;
  int64_t grp_submit_jobs = kNoLimit;
  int64_t grp_wall_min = kNoLimit;
  int64_t max_jobs = kNoLimit;
  int64_t max_jobs_accrue = kNoLimit;
  int64_t max_submit_jobs = kNoLimit;
  int64_t max_wall_min = kNoLimit;  // MaxWallDurationPerJob
  int64_t min_prio_thresh = kNoLimit;
  int64_t priority = kNoLimit;  // the association's priority factor value
  TresCounts grp_tres, grp_tres_mins, grp_tres_run_mins;
  TresCounts max_tres_per_job, max_tres_per_node, max_tres_mins_per_job, max_tres_run_mins;
  bool operator==(const AssocLimits&) const = default;
};

// One association line.
struct AcctAssocLine {
  enum class Kind : uint8_t { Cluster, Account, User };
  Kind kind = Kind::Account;
  std::string name;               // cluster, account or user name
  std::string parent;             // the account it is under ("root" at the top; "" for the cluster)
  std::string partition;          // User lines: Partition= (an association for that partition only)
  int line = 0;                   // where it starts in the source (1-based)
  int64_t fairshare = kNoLimit;   // Fairshare=N (kNoLimit: not given, 1 by default)
  bool fairshare_parent = false;  // Fairshare=parent
  AssocLimits limits;
  // QOS= as written: names, or "+name" / "-name" to add to / take from the inherited list.
  std::vector<std::string> qos;
  bool qos_set = false;
  std::string default_qos;
  std::string description, organization;  // Account lines
  std::string classification;             // the Cluster line
  // User lines: fields of the user record (the same on each of its lines).
  std::string default_account, default_wckey, admin_level;
  std::vector<std::string> coordinators, wckeys;
  bool operator==(const AcctAssocLine&) const = default;
};

// A QOS line (drover's extension of the format): sacctmgr's QOS fields.
struct QosLine {
  std::string name;
  int line = 0;
  uint32_t id = 0;  // its id in the accounting database (sacctmgr's ID); 0: not stored yet
  std::string description;
  int64_t priority = 0;
  std::vector<std::string> flags;  // Slurm's spelling: "DenyOnLimit", "OverPartQOS", ...
  int64_t grace_time_s = 0;        // GraceTime (seconds)
  int64_t preempt_exempt_time_s = kNoLimit;
  std::vector<std::string> preempt;       // Preempt=: QOS names this one may preempt
  std::vector<std::string> preempt_mode;  // PreemptMode= words, lower case ("requeue"); empty:
                                          // the cluster's PreemptMode
  double usage_factor = 1.0;
  double usage_threshold = -1;  // < 0: none
  double limit_factor = -1;     // < 0: none
  int64_t grp_jobs = kNoLimit, grp_jobs_accrue = kNoLimit, grp_submit_jobs = kNoLimit;
  int64_t grp_wall_min = kNoLimit;
  int64_t max_jobs_per_user = kNoLimit, max_jobs_per_account = kNoLimit;
  int64_t max_submit_jobs_per_user = kNoLimit, max_submit_jobs_per_account = kNoLimit;
  int64_t max_jobs_accrue_per_user = kNoLimit, max_jobs_accrue_per_account = kNoLimit;
  int64_t max_wall_min = kNoLimit;  // MaxWallDurationPerJob
  int64_t min_prio_thresh = kNoLimit;
  TresCounts grp_tres, grp_tres_mins, grp_tres_run_mins;
  TresCounts max_tres_per_job, max_tres_per_node, max_tres_per_user, max_tres_per_account;
  TresCounts max_tres_mins_per_job, max_tres_run_mins_per_user, max_tres_run_mins_per_account;
  TresCounts min_tres_per_job;
  bool has_flag(std::string_view flag) const;  // case-insensitive
  bool operator==(const QosLine&) const = default;
};

struct AcctDump {
  std::string source;                 // the name errors are reported under
  AcctAssocLine cluster;              // the Cluster line: the root association's values
  std::vector<AcctAssocLine> assocs;  // Account and User lines in file order
  std::vector<QosLine> qos;           // QOS lines in file order ("normal" added if missing)
  const QosLine* find_qos(std::string_view name) const;
};

// Parses the file's text. Besides syntax it checks that the file starts with its Cluster
// line, that Parent lines name accounts defined above them, that no account, association or
// QOS is defined twice, that QOS=, DefaultQOS= and Preempt= name QOS of the file (or
// "normal", which always exists) and that a user's DefaultAccount is one of its accounts (the
// account of its first line when not given). Throws ParseError("<source>:<line>: ...").
AcctDump parse_acct_dump(std::string_view text, std::string_view source = "accounts.cfg");

// An association's settings (Fairshare, DefaultQOS, QOS and the limits) and a QOS's fields as
// the ':'-separated options of their lines ("Fairshare=10:GrpJobs=4:MaxTRESPerJob=cpu=8"), and
// back: the form the accounting store keeps them in. The parsers take exactly what a line of
// the file takes (sacctmgr's key names and abbreviations) and throw ParseError("<what>: ...").
std::string format_assoc_options(const AcctAssocLine& a);
void parse_assoc_options(std::string_view options, AcctAssocLine& into, std::string_view what);
std::string format_qos_options(const QosLine& q);
void parse_qos_options(std::string_view options, QosLine& into, std::string_view what);
// The same applied as sacctmgr's modify applies a `set`: TRES limits change per TRES (cpu=-1
// takes the cpu limit out, the other TRES keep theirs); everything else is replaced.
void modify_assoc_options(std::string_view options, AcctAssocLine& into, std::string_view what);
void modify_qos_options(std::string_view options, QosLine& into, std::string_view what);

// The file form of `dump`: the Cluster line, then for each account with children a Parent
// line followed by its users and sub-accounts (as sacctmgr dump orders them), then the QOS
// lines. parse_acct_dump gives back the same records (line numbers aside).
std::string format_acct_dump(const AcctDump& dump);

}  // namespace drover::core
