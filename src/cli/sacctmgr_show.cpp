// sacctmgr show|list account|user|qos|association: Slurm 22.05's fields, default formats, orders
// and widths (tests/compat/golden/accounting).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "cli/sacctmgr.hpp"
#include "core/duration.hpp"
#include "core/text.hpp"

namespace drover::cli {
namespace {

using core::AcctAssoc;
using core::AcctData;
using core::kNoLimit;

// What one line of a listing is about.
struct Row {
  const AcctData* data = nullptr;
  const core::AccountIndex* accounts = nullptr;  // association rows
  const AcctAssoc* assoc = nullptr;              // association rows
  core::AcctAssocLine shown;  // its settings as shown (parents' limits filled in)
  const core::AcctAccount* account = nullptr;
  const core::AcctUser* user = nullptr;
  const core::QosLine* qos = nullptr;
  int depth = 0;  // tree listing: how deep in the tree
  bool tree = false;
};

struct Field {
  std::vector<const char*> names;  // the first is its name; the others are aliases
  size_t min;                      // shortest prefix taken
  const char* header;
  int width;
  std::function<PrintCell(const Row&)> get;
};

PrintCell text(std::string s) { return {std::move(s), false}; }
PrintCell num(int64_t n) { return {std::to_string(n), true}; }
PrintCell limit(int64_t n) { return n == kNoLimit ? PrintCell{} : num(n); }
PrintCell tres(const core::TresCounts& t) { return text(core::format_tres_counts(t)); }
PrintCell minutes(int64_t m) {
  return m == kNoLimit ? PrintCell{} : text(core::format_hms(m * 60));
}
PrintCell one_tres(const core::TresCounts& t, const char* name) {
  auto it = t.find(name);
  return it == t.end() ? PrintCell{} : num(it->second);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string real(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

const core::AssocLimits& L(const Row& r) { return r.shown.limits; }

// Association fields (and the association columns of withassoc listings).
const std::vector<Field>& assoc_fields() {
  static const std::vector<Field> k = {
      {{"Account", "Acct"},
       1,
       "Account",
       10,
       [](const Row& r) {
         return text(r.tree ? std::string(static_cast<size_t>(r.depth), ' ') + r.assoc->account
                            : r.assoc->account);
       }},
      {{"Cluster"}, 1, "Cluster", 10, [](const Row& r) { return text(r.data->cluster); }},
      {{"DefaultQOS"}, 3, "Def QOS", 9, [](const Row& r) { return text(r.shown.default_qos); }},
      {{"Fairshare", "Shares"},
       1,
       "Share",
       9,
       [](const Row& r) {
         if (r.shown.fairshare_parent) return text("parent");
         return num(r.shown.fairshare == kNoLimit ? 1 : r.shown.fairshare);
       }},
      {{"GrpCPUMins"},
       7,
       "GrpCPUMins",
       11,
       [](const Row& r) { return one_tres(L(r).grp_tres_mins, "cpu"); }},
      {{"GrpCPURunMins"},
       7,
       "GrpCPURunMins",
       13,
       [](const Row& r) { return one_tres(L(r).grp_tres_run_mins, "cpu"); }},
      {{"GrpCPUs"}, 7, "GrpCPUs", 8, [](const Row& r) { return one_tres(L(r).grp_tres, "cpu"); }},
      {{"GrpJobs"}, 4, "GrpJobs", 7, [](const Row& r) { return limit(L(r).grp_jobs); }},
      {{"GrpJobsAccrue"},
       8,
       "GrpJobsAccrue",
       13,
       [](const Row& r) { return limit(L(r).grp_jobs_accrue); }},
      {{"GrpMemory", "GrpMem"},
       4,
       "GrpMem",
       7,
       [](const Row& r) { return one_tres(L(r).grp_tres, "mem"); }},
      {{"GrpNodes"},
       4,
       "GrpNodes",
       8,
       [](const Row& r) { return one_tres(L(r).grp_tres, "node"); }},
      {{"GrpSubmitJobs", "GrpSubmit"},
       4,
       "GrpSubmit",
       9,
       [](const Row& r) { return limit(L(r).grp_submit_jobs); }},
      {{"GrpTRES"}, 7, "GrpTRES", 13, [](const Row& r) { return tres(L(r).grp_tres); }},
      {{"GrpTRESMins"},
       8,
       "GrpTRESMins",
       13,
       [](const Row& r) { return tres(L(r).grp_tres_mins); }},
      {{"GrpTRESRunMins"},
       8,
       "GrpTRESRunMins",
       13,
       [](const Row& r) { return tres(L(r).grp_tres_run_mins); }},
      {{"GrpWall"}, 4, "GrpWall", 11, [](const Row& r) { return minutes(L(r).grp_wall_min); }},
      {{"ID"}, 1, "ID", 6, [](const Row& r) { return num(r.assoc->id); }},
      {{"MaxCPUMinsPerJob", "MaxCPUMins"},
       7,
       "MaxCPUMins",
       11,
       [](const Row& r) { return one_tres(L(r).max_tres_mins_per_job, "cpu"); }},
      {{"MaxCPURunMins"},
       7,
       "MaxCPURunMins",
       13,
       [](const Row& r) { return one_tres(L(r).max_tres_run_mins, "cpu"); }},
      {{"MaxCPUsPerJob", "MaxCPUs"},
       7,
       "MaxCPUs",
       8,
       [](const Row& r) { return one_tres(L(r).max_tres_per_job, "cpu"); }},
      {{"MaxJobs"}, 4, "MaxJobs", 7, [](const Row& r) { return limit(L(r).max_jobs); }},
      {{"MaxJobsAccrue"},
       8,
       "MaxJobsAccrue",
       13,
       [](const Row& r) { return limit(L(r).max_jobs_accrue); }},
      {{"MaxNodesPerJob", "MaxNodes"},
       4,
       "MaxNodes",
       8,
       [](const Row& r) { return one_tres(L(r).max_tres_per_job, "node"); }},
      {{"MaxSubmitJobs", "MaxSubmit"},
       4,
       "MaxSubmit",
       9,
       [](const Row& r) { return limit(L(r).max_submit_jobs); }},
      {{"MaxTRES", "MaxTRESPerJob"},
       7,
       "MaxTRES",
       13,
       [](const Row& r) { return tres(L(r).max_tres_per_job); }},
      {{"MaxTRESMins", "MaxTRESMinsPerJob"},
       8,
       "MaxTRESMins",
       13,
       [](const Row& r) { return tres(L(r).max_tres_mins_per_job); }},
      {{"MaxTRESPerNode"},
       11,
       "MaxTRESPerNode",
       14,
       [](const Row& r) { return tres(L(r).max_tres_per_node); }},
      {{"MaxTRESRunMins"},
       8,
       "MaxTRESRunMins",
       13,
       [](const Row& r) { return tres(L(r).max_tres_run_mins); }},
      {{"MaxWall", "MaxWallDurationPerJob"},
       4,
       "MaxWall",
       11,
       [](const Row& r) { return minutes(L(r).max_wall_min); }},
      {{"MinPrioThresh"},
       4,
       "MinPrioThresh",
       13,
       [](const Row& r) { return limit(L(r).min_prio_thresh); }},
      {{"ParentID"},
       7,
       "ParentID",
       8,
       [](const Row& r) {
         if (r.assoc->is_root()) return num(0);
         auto up = r.accounts->find(r.assoc->parent);
         return up != r.accounts->end() ? num(up->second->id) : PrintCell{};
       }},
      {{"ParentName"},
       7,
       "ParentName",
       10,
       [](const Row& r) { return text(r.assoc->is_user() ? "" : r.assoc->parent); }},
      {{"Partition"}, 4, "Partition", 10, [](const Row& r) { return text(r.assoc->partition); }},
      {{"Priority"}, 3, "Priority", 10, [](const Row& r) { return limit(L(r).priority); }},
      {{"QOS", "QosLevel"}, 1, "QOS", 20, [](const Row& r) { return text(joined(r.shown.qos)); }},
      {{"User"}, 1, "User", 10, [](const Row& r) { return text(r.assoc->user); }},
  };
  return k;
}

const std::vector<Field>& account_fields() {
  static const std::vector<Field> k = {
      {{"Account", "Name"}, 1, "Account", 10, [](const Row& r) { return text(r.account->name); }},
      {{"Description"}, 1, "Descr", 20, [](const Row& r) { return text(r.account->description); }},
      {{"Organization"}, 1, "Org", 20, [](const Row& r) { return text(r.account->organization); }},
  };
  return k;
}

const std::vector<Field>& user_fields() {
  static const std::vector<Field> k = {
      {{"User", "Name"}, 1, "User", 10, [](const Row& r) { return text(r.user->name); }},
      {{"DefaultAccount"},
       8,
       "Def Acct",
       10,
       [](const Row& r) { return text(r.user->default_account); }},
      {{"AdminLevel", "Admin"},
       2,
       "Admin",
       9,
       [](const Row& r) { return text(r.user->admin_level); }},
      {{"DefaultWCKey"},
       8,
       "Def WCKey",
       10,
       [](const Row& r) { return text(r.user->default_wckey); }},
  };
  return k;
}

const std::vector<Field>& qos_fields() {
  static const std::vector<Field> k = {
      {{"Name"}, 1, "Name", 10, [](const Row& r) { return text(r.qos->name); }},
      {{"Description"}, 1, "Descr", 20, [](const Row& r) { return text(r.qos->description); }},
      {{"Flags"}, 1, "Flags", 20, [](const Row& r) { return text(joined(r.qos->flags)); }},
      {{"GraceTime"},
       3,
       "GraceTime",
       10,
       [](const Row& r) { return text(core::format_hms(r.qos->grace_time_s)); }},
      {{"GrpJobs"}, 4, "GrpJobs", 7, [](const Row& r) { return limit(r.qos->grp_jobs); }},
      {{"GrpJobsAccrue"},
       8,
       "GrpJobsAccrue",
       13,
       [](const Row& r) { return limit(r.qos->grp_jobs_accrue); }},
      {{"GrpSubmitJobs", "GrpSubmit"},
       4,
       "GrpSubmit",
       9,
       [](const Row& r) { return limit(r.qos->grp_submit_jobs); }},
      {{"GrpTRES"}, 7, "GrpTRES", 13, [](const Row& r) { return tres(r.qos->grp_tres); }},
      {{"GrpTRESMins"},
       8,
       "GrpTRESMins",
       13,
       [](const Row& r) { return tres(r.qos->grp_tres_mins); }},
      {{"GrpTRESRunMins"},
       8,
       "GrpTRESRunMins",
       13,
       [](const Row& r) { return tres(r.qos->grp_tres_run_mins); }},
      {{"GrpWall"}, 4, "GrpWall", 11, [](const Row& r) { return minutes(r.qos->grp_wall_min); }},
      {{"ID"}, 1, "ID", 6, [](const Row& r) { return num(r.qos->id); }},
      {{"LimitFactor"},
       3,
       "LimitFactor",
       11,
       [](const Row& r) {
         return r.qos->limit_factor < 0 ? PrintCell{} : text(real(r.qos->limit_factor));
       }},
      {{"MaxJobsAccruePerAccount", "MaxJobsAccruePA"},
       15,
       "MaxJobsAccruePA",
       15,
       [](const Row& r) { return limit(r.qos->max_jobs_accrue_per_account); }},
      {{"MaxJobsAccruePerUser", "MaxJobsAccruePU"},
       15,
       "MaxJobsAccruePU",
       15,
       [](const Row& r) { return limit(r.qos->max_jobs_accrue_per_user); }},
      {{"MaxJobsPerAccount", "MaxJobsPA"},
       9,
       "MaxJobsPA",
       9,
       [](const Row& r) { return limit(r.qos->max_jobs_per_account); }},
      {{"MaxJobsPerUser", "MaxJobsPU"},
       9,
       "MaxJobsPU",
       9,
       [](const Row& r) { return limit(r.qos->max_jobs_per_user); }},
      {{"MaxSubmitJobsPerAccount", "MaxSubmitPA"},
       11,
       "MaxSubmitPA",
       11,
       [](const Row& r) { return limit(r.qos->max_submit_jobs_per_account); }},
      {{"MaxSubmitJobsPerUser", "MaxSubmitPU"},
       11,
       "MaxSubmitPU",
       11,
       [](const Row& r) { return limit(r.qos->max_submit_jobs_per_user); }},
      {{"MaxTRES", "MaxTRESPerJob"},
       7,
       "MaxTRES",
       13,
       [](const Row& r) { return tres(r.qos->max_tres_per_job); }},
      {{"MaxTRESMins", "MaxTRESMinsPerJob"},
       8,
       "MaxTRESMins",
       13,
       [](const Row& r) { return tres(r.qos->max_tres_mins_per_job); }},
      {{"MaxTRESPerAccount", "MaxTRESPA"},
       9,
       "MaxTRESPA",
       13,
       [](const Row& r) { return tres(r.qos->max_tres_per_account); }},
      {{"MaxTRESPerNode"},
       11,
       "MaxTRESPerNode",
       14,
       [](const Row& r) { return tres(r.qos->max_tres_per_node); }},
      {{"MaxTRESPerUser", "MaxTRESPU"},
       9,
       "MaxTRESPU",
       13,
       [](const Row& r) { return tres(r.qos->max_tres_per_user); }},
      {{"MaxWall", "MaxWallDurationPerJob"},
       4,
       "MaxWall",
       11,
       [](const Row& r) { return minutes(r.qos->max_wall_min); }},
      {{"MinPrioThreshold"},
       4,
       "MinPrioThres",
       12,
       [](const Row& r) { return limit(r.qos->min_prio_thresh); }},
      {{"MinTRES", "MinTRESPerJob"},
       4,
       "MinTRES",
       13,
       [](const Row& r) { return tres(r.qos->min_tres_per_job); }},
      {{"Preempt"}, 7, "Preempt", 10, [](const Row& r) { return text(joined(r.qos->preempt)); }},
      {{"PreemptExemptTime"},
       8,
       "PreemptExemptTime",
       19,
       [](const Row& r) {
         return r.qos->preempt_exempt_time_s == kNoLimit
                    ? PrintCell{}
                    : text(core::format_hms(r.qos->preempt_exempt_time_s));
       }},
      {{"PreemptMode"},
       8,
       "PreemptMode",
       11,
       [](const Row& r) {
         return text(r.qos->preempt_mode.empty() ? "cluster" : joined(r.qos->preempt_mode));
       }},
      {{"Priority"}, 3, "Priority", 10, [](const Row& r) { return num(r.qos->priority); }},
      {{"UsageFactor"},
       6,
       "UsageFactor",
       11,
       [](const Row& r) { return text(real(r.qos->usage_factor)); }},
      {{"UsageThreshold"},
       6,
       "UsageThres",
       10,
       [](const Row& r) {
         return r.qos->usage_threshold < 0 ? PrintCell{} : text(real(r.qos->usage_threshold));
       }},
  };
  return k;
}

struct Chosen {
  const Field* field;
  int width;
};

// Format= items (or a default list) to fields; nullopt and `unknown` set for a name no field has.
std::optional<std::vector<Chosen>> choose(const std::vector<const std::vector<Field>*>& tables,
                                          const std::string& list, std::string& unknown) {
  std::vector<Chosen> out;
  for (const FormatItem& item : parse_format_list(list)) {
    const Field* found = nullptr;
    for (const auto* table : tables) {
      for (const Field& f : *table)
        for (const char* n : f.names)
          if (core::iequals(item.name, n)) found = found ? found : &f;
    }
    for (const auto* table : tables)
      for (const Field& f : *table) {
        if (found) break;
        for (const char* n : f.names) {
          const std::string_view name(n);
          if (item.name.size() >= f.min && item.name.size() <= name.size() &&
              core::iequals(item.name, name.substr(0, item.name.size()))) {
            found = &f;
            break;
          }
        }
      }
    if (!found) {
      unknown = item.name;
      return std::nullopt;
    }
    out.push_back({found, item.has_width ? item.width : found->width});
  }
  return out;
}

void print(const std::vector<Chosen>& cols, const std::vector<Row>& rows,
           const PrintOptions& options, CommandResult& res) {
  std::vector<PrintColumn> pc;
  for (const auto& c : cols) pc.push_back({c.field->header, c.width});
  FieldPrinter printer(std::move(pc), options);
  res.out += printer.header();
  for (const Row& r : rows) {
    std::vector<PrintCell> cells;
    for (const auto& c : cols) cells.push_back(c.field->get(r));
    res.out += printer.row(cells);
  }
}

std::vector<std::string> where_list(const ShowRequest& req, const char* key) {
  std::vector<std::string> out;
  for (const auto& [k, v] : req.where)
    if (k == key)
      for (const auto& item : core::split_list(v, ',')) out.push_back(item);
  return out;
}

bool in(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() || std::any_of(list.begin(), list.end(),
                                     [&](const std::string& x) { return core::iequals(x, v); });
}

// How deep in the tree: accounts under root are 1 deep, their users 2, and so on.
int depth_of(const core::AccountIndex& accounts, const AcctAssoc& a) {
  auto account = [&](const std::string& name) -> const AcctAssoc* {
    auto it = accounts.find(name);
    return it == accounts.end() ? nullptr : it->second;
  };
  int depth = a.is_user() ? 1 : 0;
  const AcctAssoc* cur = a.is_user() ? account(a.account) : &a;
  for (size_t steps = 0; cur && !cur->is_root() && steps <= accounts.size(); ++steps) {
    ++depth;
    cur = account(cur->parent);
  }
  return depth;
}

Row assoc_row(const AcctData& d, const core::AccountIndex& accounts, const AcctAssoc& a,
              bool tree) {
  Row r;
  r.data = &d;
  r.accounts = &accounts;
  r.assoc = &a;
  r.shown = core::shown_settings(a, accounts);
  r.tree = tree;
  r.depth = depth_of(accounts, a);
  return r;
}

constexpr const char* kAssocFormat =
    "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,GrpTRESMins,"
    "MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins";
constexpr const char* kAccountFormat = "Account,Description,Organization";
constexpr const char* kAccountAssocFormat =
    "Account,Description,Organization,Cluster,ParentName,User,Share,Priority,GrpJobs,GrpNodes,"
    "GrpCPUs,GrpMem,GrpSubmit,GrpWall,GrpCPUMins,MaxJobs,MaxNodes,MaxCPUs,MaxSubmit,MaxWall,"
    "MaxCPUMins,QOS,DefaultQOS";
constexpr const char* kUserFormat = "User,DefaultAccount,AdminLevel";
constexpr const char* kUserAssocFormat =
    "User,DefaultAccount,AdminLevel,Cluster,Account,Partition,Share,Priority,MaxJobs,MaxNodes,"
    "MaxCPUs,MaxSubmit,MaxWall,MaxCPUMins,QOS,DefaultQOS";
constexpr const char* kQosFormat =
    "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags%40,UsageThreshold,"
    "UsageFactor,GrpTRES,GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,"
    "MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,"
    "MaxSubmitPA,MinTRES";

}  // namespace

void show_entities(const AcctData& d, const ShowRequest& req, const PrintOptions& options,
                   CommandResult& res) {
  std::string unknown;
  std::optional<std::vector<Chosen>> cols;
  std::vector<Row> rows;
  const std::vector<std::string> names = req.names;
  const core::AccountIndex index = core::account_index(d);
  if (req.entity == "association") {
    std::string format = req.format.empty() ? kAssocFormat : req.format;
    // A tree listing's account column is wider and left-justified.
    cols = choose({&assoc_fields()}, format, unknown);
    if (cols && req.tree) {
      const auto items = parse_format_list(format);
      for (size_t i = 0; i < cols->size(); ++i)
        if ((*cols)[i].field == &assoc_fields().front() && !items[i].has_width)
          (*cols)[i].width = -20;
    }
    const auto accounts = where_list(req, "accounts"), users = where_list(req, "users"),
               partitions = where_list(req, "partitions"), ids = where_list(req, "ids");
    for (const AcctAssoc* a : core::hierarchical_order(d)) {
      if (!in(accounts, a->account) || !in(partitions, a->partition) ||
          !in(ids, std::to_string(a->id)))
        continue;
      if (!users.empty() && (!a->is_user() || !in(users, a->user))) continue;
      rows.push_back(assoc_row(d, index, *a, req.tree));
    }
  } else if (req.entity == "account") {
    const std::string format = !req.format.empty() ? req.format
                               : req.with_assoc    ? kAccountAssocFormat
                                                   : kAccountFormat;
    cols = choose({&account_fields(), &assoc_fields()}, format, unknown);
    const auto descriptions = where_list(req, "descriptions");
    const auto orgs = where_list(req, "organizations");
    for (const auto& acct : d.accounts) {
      if (!in(names, acct.name) || !in(descriptions, acct.description) ||
          !in(orgs, acct.organization))
        continue;
      if (!req.with_assoc) {
        Row r;
        r.data = &d;
        r.account = &acct;
        rows.push_back(r);
        continue;
      }
      // The account's own association, then its users' newest first, as slurmdbd lists them.
      std::vector<const AcctAssoc*> mine;
      for (const auto& a : d.assocs)
        if (a.account == acct.name) mine.push_back(&a);
      std::stable_sort(mine.begin(), mine.end(), [](const AcctAssoc* x, const AcctAssoc* y) {
        if (x->is_user() != y->is_user()) return !x->is_user();
        return x->id > y->id;
      });
      for (const AcctAssoc* a : mine) {
        Row r = assoc_row(d, index, *a, false);
        r.account = &acct;
        rows.push_back(r);
      }
    }
  } else if (req.entity == "user") {
    const std::string format = !req.format.empty() ? req.format
                               : req.with_assoc    ? kUserAssocFormat
                                                   : kUserFormat;
    cols = choose({&user_fields(), &assoc_fields()}, format, unknown);
    const auto accounts = where_list(req, "accounts");
    const auto defaults = where_list(req, "defaultaccounts");
    const auto levels = where_list(req, "adminlevels");
    for (const auto& u : d.users) {
      if (!in(names, u.name) || !in(defaults, u.default_account) || !in(levels, u.admin_level))
        continue;
      if (!req.with_assoc) {
        Row r;
        r.data = &d;
        r.user = &u;
        rows.push_back(r);
        continue;
      }
      // A user's associations by account name, descending, as slurmdbd lists them.
      std::vector<const AcctAssoc*> mine;
      for (const auto& a : d.assocs)
        if (a.user == u.name && in(accounts, a.account)) mine.push_back(&a);
      std::stable_sort(mine.begin(), mine.end(), [](const AcctAssoc* x, const AcctAssoc* y) {
        return std::tie(y->account, y->partition) < std::tie(x->account, x->partition);
      });
      for (const AcctAssoc* a : mine) {
        Row r = assoc_row(d, index, *a, false);
        r.user = &u;
        rows.push_back(r);
      }
    }
  } else if (req.entity == "qos") {
    cols = choose({&qos_fields()}, req.format.empty() ? kQosFormat : req.format, unknown);
    const auto ids = where_list(req, "ids");
    for (const auto& q : d.qos) {
      if (!in(names, q.name) || !in(ids, std::to_string(q.id))) continue;
      Row r;
      r.data = &d;
      r.qos = &q;
      rows.push_back(r);
    }
  }
  if (!cols) {
    res.err += "Unknown field '" + unknown + "'\n";
    res.rc = 1;
    return;
  }
  print(*cols, rows, options, res);
}

}  // namespace drover::cli
