#pragma once
// sacctmgr's add, modify and delete of accounts, users (their associations) and QOS, with the
// rules of Slurm 22.05's slurmdbd and the text its sacctmgr prints for them (compared with real
// Slurm: tests/compat/golden/accounting). Pure: the controller applies a request to its data
// with the caller's rights and its pending and running jobs, and gets the new data and what
// sacctmgr is to print.
//
// A request is first previewed (commit false: what sacctmgr prints before asking "Would you
// like to commit changes?") and then committed. As with slurmdbd, rights are checked before
// anything for modify and delete, but only at commit for add (sacctmgr shows what it is about
// to add, then the database refuses).
#include <cstdint>
#include <string>
#include <vector>

#include "core/acct_data.hpp"

namespace drover::core {

struct AcctRequest {
  enum class Action { Add, Modify, Delete };
  enum class Entity { Account, User, Qos };
  Action action = Action::Add;
  Entity entity = Entity::Account;
  // Add: the names to add. Modify and delete: which ones (none: every one, for modify).
  std::vector<std::string> names;
  // Users: Account= (add: where to add them; else which associations) and Partition=.
  std::vector<std::string> accounts, partitions;
  std::vector<std::string> clusters;  // Cluster= (this cluster is the only one)
  std::vector<std::string> parents;   // accounts: Parent= (add: where; else which ones)
  // Record fields, by sacctmgr's names: accounts Description, Organization; users
  // DefaultAccount, AdminLevel, DefaultWCKey.
  std::vector<std::pair<std::string, std::string>> fields;
  // Association settings (Fairshare, DefaultQOS, the limits) or a QOS's fields, as
  // accounts.cfg options ("GrpJobs=4:MaxWall=60").
  std::string settings;
  // An association's QOS list: '=' sets it, '+' adds to it, '-' takes out of it; 0: unchanged.
  char qos_op = 0;
  std::vector<std::string> qos;
  bool operator==(const AcctRequest&) const = default;
};

// A pending or running job: associations it runs under may not be deleted.
struct AcctJob {
  uint64_t id = 0;
  std::string account, user, partition;
};

struct AcctOutcome {
  std::string out, err;  // what sacctmgr prints on stdout and stderr
  int rc = 0;            // its exit code
  bool changed = false;  // something to commit (or committed)
  AcctData data;         // the data after the change
};

// `may_modify`: root, SlurmUser or a user with AdminLevel Operator or Administrator.
AcctOutcome apply_acct_request(const AcctData& data, const AcctRequest& req, bool may_modify,
                               const std::vector<AcctJob>& active, bool commit);

// Whether `user`'s AdminLevel lets it change accounting data (Operator or Administrator).
bool acct_admin_level(const AcctData& data, std::string_view user);

}  // namespace drover::core
