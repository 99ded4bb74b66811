#pragma once
// Fair share (Slurm 22.05's priority/multifactor): the association tree with decayed usage,
// Fair Tree (the default) and classic fair-share factors (PriorityFlags=NO_FAIR_TREE), what
// sshare shows, and TRES billing. Pure: no I/O, no clock; times are arguments.
//
// Usage is TRES-billing-seconds. Decay is exact: after dt seconds usage is multiplied by
// 2^(-dt / half_life). (Slurm multiplies by (1 - 0.693 / half_life) per second, which is the
// same curve to within 0.01% per half life.) A running job's usage over [t0, t1) is the integral
// of its billing rate decayed to the tree's usage time; Slurm instead charges each calculation
// period's usage decayed by the whole period, which differs by at most the decay of one
// PriorityCalcPeriod.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/priority.hpp"

namespace drover::sched {

// An association's Fairshare= value: a number of shares, or "parent" (the association does not
// compete at its own level: an account's children compete as if they were its parent's, a user
// ranks with its account's values).
struct RawShares {
  uint32_t value = 1;
  bool parent = false;
  bool operator==(const RawShares&) const = default;
};

// "parent" (any case) or a number 0..4294967294 as sacctmgr takes it; throws core::ParseError.
RawShares parse_raw_shares(std::string_view text);

using AssocId = uint32_t;

struct Association {
  std::string account;            // the account; for a user, the account it charges
  std::string user;               // empty for an account
  AssocId parent = 0;             // the account above (the root's is itself)
  RawShares shares;               // Fairshare=
  double raw_usage = 0;           // decayed billing-seconds of this association and all below it
  std::vector<AssocId> children;  // in the order added
  bool is_user() const { return !user.empty(); }
};

// The association tree of one cluster: the root account "root", accounts and users (leaves).
// Usage added to an association is added to every association above it too, as Slurm does.
class AssocTree {
 public:
  static constexpr AssocId kRoot = 0;

  // The root account "root"; usage is valued at `usage_time` until decay_to moves it.
  explicit AssocTree(int64_t usage_time = 0);

  // Adds an account under `parent` (an account name). Throws std::invalid_argument when the
  // name exists or the parent does not.
  AssocId add_account(std::string_view name, std::string_view parent = "root",
                      RawShares shares = {});
  // Adds user `user` charging `account`. A user may be in several accounts (one association
  // each). Throws std::invalid_argument for a duplicate or a missing account.
  AssocId add_user(std::string_view user, std::string_view account, RawShares shares = {});

  std::optional<AssocId> find_account(std::string_view name) const;
  std::optional<AssocId> find_user(std::string_view user, std::string_view account) const;
  const Association& at(AssocId id) const { return assocs_.at(id); }
  std::size_t size() const { return assocs_.size(); }
  std::size_t user_count() const { return user_count_; }

  // The time the usage values are valued at.
  int64_t usage_time() const { return usage_time_; }
  // Decays every association's usage from usage_time() to `now` and makes `now` the usage
  // time. half_life_s <= 0: no decay. A `now` before usage_time() changes nothing.
  void decay_to(int64_t now, int64_t half_life_s);
  // Adds billing-seconds valued at usage_time() to `id` and every association above it.
  void add_usage(AssocId id, double billing_seconds);
  // Adds the usage of a job billed `billing_rate` per second while running over [t0, t1),
  // decayed to usage_time(): rate * integral of 2^(-(usage_time - t) / half_life) dt, or
  // rate * (t1 - t0) without decay. Throws std::invalid_argument unless
  // t0 <= t1 <= usage_time(). (Scale the rate by the QOS UsageFactor before calling.)
  void add_running_usage(AssocId id, int64_t t0, int64_t t1, double billing_rate,
                         int64_t half_life_s);
  // PriorityUsageResetPeriod: every association's usage becomes 0.
  void reset_usage();

 private:
  std::vector<Association> assocs_;
  std::map<std::string, AssocId, std::less<>> accounts_;
  std::map<std::pair<std::string, std::string>, AssocId> users_;  // (user, account)
  std::size_t user_count_ = 0;
  int64_t usage_time_ = 0;
};

// 2^(-seconds / half_life_s); 1 when half_life_s <= 0 or seconds <= 0.
double decay_factor(int64_t seconds, int64_t half_life_s);

struct FairShareOptions {
  bool fair_tree = true;          // false: classic (PriorityFlags=NO_FAIR_TREE)
  bool depth_oblivious = false;   // classic with PriorityFlags=DEPTH_OBLIVIOUS
  uint32_t dampening_factor = 1;  // FairShareDampeningFactor (classic only)
};
FairShareOptions fairshare_options(const PriorityConfig& conf);

// What priority/multifactor computes for one association (what sshare shows).
struct ShareInfo {
  // NormShares. Fair Tree: shares / shares of the association and its siblings. Classic: the
  // product of that ratio up to the root. FairShare=parent: the values of the nearest
  // association above that is not "parent". The root: 0 (Fair Tree) or 1 (classic).
  double norm_shares = 0;
  double raw_usage = 0;
  // NormUsage: raw usage / the root's (0 when the root has none). The root: none.
  std::optional<double> norm_usage;
  // EffectvUsage. Fair Tree: usage / the usage of the association above it (0 when that is
  // 0). Classic: U_E = U + (U_E,parent - U) * S / S_siblings, the normalised usage for the
  // associations under the root. The root: 1.
  double effective_usage = 0;
  // FairShare. Fair Tree: users only, rank / number of user associations. Classic: every
  // association, 2^(-(EffectvUsage / NormShares) / dampening), 0 without shares.
  std::optional<double> fairshare;
  // LevelFS (Fair Tree only): NormShares / EffectvUsage among siblings; +inf without usage, 0
  // without shares. None for the root and for FairShare=parent associations (a "parent" user
  // ranks as +inf, first in its account).
  std::optional<double> level_fs;
};

// The fair-share values of every association, indexed by AssocId.
std::vector<ShareInfo> compute_fairshare(const AssocTree& tree, const FairShareOptions& opt);

// The fair-share factor of a job charging association `id` (a user association), as
// priority/multifactor uses it: Fair Tree's rank factor; classic: the formula on the values of
// the association, or of the nearest association above it for a FairShare=parent user.
double job_fairshare_factor(const AssocTree& tree, const std::vector<ShareInfo>& shares, AssocId id,
                            const FairShareOptions& opt);

// Billable TRES of a job (TRESBillingWeights, parsed with parse_tres_weights): the sum of
// count * weight over the TRES, or with MAX_TRES the largest of the node TRES (cpu, mem, node,
// gres/*) plus the sum of the others (licenses, burst buffers, ...). The "billing" TRES itself is
// ignored. No weights: the CPU count.
double billable_tres(const std::map<std::string, double>& tres,
                     const std::map<std::string, double>& billing_weights, bool max_tres);

// ---- sshare ----

struct SshareRow {
  int depth = 0;        // indentation of the Account column (root 0, its children 1, ...)
  std::string account;  // the account; for a user row, the user's account
  std::string user;     // empty for an account row
  // The account above: for a user row its account, for the root none. sshare indents by it.
  std::string parent;
  AssocId id = 0;                       // the ID column shows id + 1 (Slurm's root is 1)
  std::string cluster;                  // Cluster column
  std::string partition;                // Partition column (-m); empty: none
  std::optional<RawShares> raw_shares;  // none for the root
  double norm_shares = 0;
  uint64_t raw_usage = 0;
  std::optional<double> norm_usage, effective_usage, fairshare, level_fs;
  // TRES lists ("cpu=1,mem=0,..."), as the caller renders them.
  std::string grp_tres_mins, grp_tres_raw, tres_run_mins;
};

// One row per association in sshare's order: depth first from the root, under each account
// its users then its sub-accounts, each by name.
std::vector<SshareRow> sshare_rows(const AssocTree& tree, const std::vector<ShareInfo>& shares);

// Sets each row's depth the way sshare indents the rows it prints: one more than the row of
// its parent account printed before it, 0 when that account is not printed (sshare -A, -U).
void sshare_print_depths(std::vector<SshareRow>& rows);

// sshare's columns, in the order of its field table (which -o prefixes are matched against).
enum class SshareColumn : uint8_t {
  Account,
  Cluster,
  EffectvUsage,
  FairShare,
  GrpTRESMins,
  GrpTRESRaw,
  ID,
  LevelFS,
  NormShares,
  NormUsage,
  Partition,
  RawShares,
  RawUsage,
  TRESRunMins,
  User,
};
struct SshareField {
  SshareColumn column;
  int len;  // width; negative: left-justified
};
// The names of every column in table order (sshare --helpformat).
std::vector<std::string> sshare_field_names();
// sshare -o: a comma-separated list of (case-insensitive) prefixes of column names, each with
// an optional "%width" (negative: left-justified); the first column in table order that a
// name is a prefix of. Repeated names count once. Throws core::ParseError with sshare's
// message (Invalid field requested: "x") for a name that is no column's prefix.
std::vector<SshareField> parse_sshare_fields(std::string_view list);
// The built-in column sets: Account User [Partition] RawShares NormShares RawUsage
// [NormUsage] EffectvUsage FairShare [LevelFS (Fair Tree)] [GrpTRESMins TRESRunMins].
std::vector<SshareField> sshare_default_fields(bool long_format, bool fair_tree,
                                               bool partitions = false);

struct SshareOptions {
  bool long_format = false;  // -l: NormUsage, LevelFS (Fair Tree), GrpTRESMins, TRESRunMins
  bool fair_tree = true;     // Fair Tree: LevelFS with -l, FairShare for users only
  bool parsable = false;     // -p: '|' after every field
  bool parsable2 = false;    // -P: '|' between fields
  bool no_header = false;    // -n
};

// sshare 22.05's output of `fields`: a header and a line of dashes (unless -n or parsable),
// then one line per row. Widths as given (Account left-justified in 20, the rest
// right-justified by default), every field followed by a space, strings too wide cut with a
// '+', doubles as %f (switching to %e when too wide), blank for values a row does not have.
std::string format_sshare(const std::vector<SshareRow>& rows,
                          const std::vector<SshareField>& fields, const SshareOptions& opt);
// The built-in columns for opt.long_format and opt.fair_tree.
std::string format_sshare(const std::vector<SshareRow>& rows, const SshareOptions& opt = {});

}  // namespace drover::sched
