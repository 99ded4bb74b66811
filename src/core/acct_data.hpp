#pragma once
// The accounting entities as sacctmgr manages them (what slurmdbd keeps in its tables): the
// cluster's associations (its root, accounts, users in accounts, optionally per partition)
// with their ids, settings and limits, the account and user records, and the QOS. Accounts
// and users are records of their own: deleting an account's association (and the tree under
// it) leaves the records of the sub-accounts and users, as in Slurm.
//
// The controller owns this (the accounting store keeps it); accounts.cfg (acct_dump.hpp) seeds
// it, and sched::Limits is built from its dump form. Pure: no I/O.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/acct_dump.hpp"

namespace drover::core {

struct AcctAccount {
  std::string name;  // lower case
  std::string description, organization;
  bool operator==(const AcctAccount&) const = default;
};

struct AcctUser {
  std::string name;
  std::string default_account;       // "" when none (its associations are gone)
  std::string admin_level = "None";  // "None", "Operator" or "Administrator"
  std::string default_wckey;
  std::vector<std::string> coordinators;  // accounts it coordinates
  std::vector<std::string> wckeys;
  bool operator==(const AcctUser&) const = default;
};

struct AcctAssoc {
  uint32_t id = 0;        // Slurm's id_assoc: 1 for the root, then in order of creation
  std::string account;    // "root" for the cluster's root association
  std::string user;       // "" for an account's association
  std::string partition;  // a user's per-partition association
  std::string parent;     // the account above ("" for the root association)
  // Fairshare (kNoLimit: not given, 1), DefaultQOS, QOS (as given: names or +name/-name) and
  // the limits: the association settings of a dump line (kind, name, parent and the record
  // fields of `settings` are unused).
  AcctAssocLine settings;
  bool is_root() const { return parent.empty(); }
  bool is_user() const { return !user.empty(); }
  bool operator==(const AcctAssoc&) const = default;
};

struct AcctData {
  std::string cluster;
  std::string classification;
  std::vector<AcctAccount> accounts;  // by name; "root" included
  std::vector<AcctUser> users;        // by name
  std::vector<AcctAssoc> assocs;      // by id; the root association first
  std::vector<QosLine> qos;           // by id; "normal" (id 1) always exists
  uint32_t next_assoc_id = 1, next_qos_id = 1;

  const AcctAccount* find_account(std::string_view name) const;
  AcctAccount* find_account(std::string_view name);
  const AcctUser* find_user(std::string_view name) const;
  AcctUser* find_user(std::string_view name);
  // The association of an account (user ""), or of a user in an account (and partition).
  const AcctAssoc* find_assoc(std::string_view account, std::string_view user,
                              std::string_view partition = "") const;
  const AcctAssoc* root() const { return assocs.empty() ? nullptr : &assocs.front(); }
  const QosLine* find_qos(std::string_view name) const;
  bool operator==(const AcctData&) const = default;
};

// A new cluster's data, as slurmctld's first registration leaves it in slurmdbd: the root
// association and account ("default root account", organization "root"), user root
// (Administrator) in account root, and QOS normal.
AcctData new_acct_data(std::string_view cluster);

// From a parsed accounts.cfg: ids in file order (the Cluster line's root association is 1),
// account records from Account lines (root added: "default root account"), user records from
// a user's first line.
AcctData acct_data_from_dump(const AcctDump& dump);

// The dump form (what sched::Limits and `sacctmgr dump` take): the Cluster line from the root
// association, then every association under an existing parent, each account's line before
// those below it; user lines carry their user record. Records without an association are left
// out. QOS in id order.
AcctDump acct_dump_of(const AcctData& data);

// What `sacctmgr show assoc` shows of an association (slurmdbd fills in its parents' limits):
// its own Fairshare and Grp* limits; the Max* limits, Priority and DefaultQOS it has or
// inherits from the nearest account above (TRES limits per TRES); `qos` the QOS it may use by
// name, sorted (QOS= lists apply down the tree, +q/-q edit the inherited list; the root's
// default is normal), with qos_set.
AcctAssocLine shown_settings(const AcctData& data, const AcctAssoc& a);
// Accounts' own associations by account name: lookups for listing many associations.
using AccountIndex = std::map<std::string, const AcctAssoc*, std::less<>>;
AccountIndex account_index(const AcctData& data);
AcctAssocLine shown_settings(const AcctAssoc& a, const AccountIndex& accounts);

// Associations in the order sacctmgr lists them: the root association, then depth first,
// under each account its users (by name, then partition) before its sub-accounts (by name).
std::vector<const AcctAssoc*> hierarchical_order(const AcctData& data);

}  // namespace drover::core
