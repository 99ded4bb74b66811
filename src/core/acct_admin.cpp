#include "core/acct_admin.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace drover::core {
namespace {

using Entity = AcctRequest::Entity;
using Action = AcctRequest::Action;

constexpr const char* kDenied =
    "sacctmgr: error: Your user doesn't have privilege to perform this action\n"
    " Error with request: Access/permission denied\n";

// printf's "%-W.Ws": left-justified in W columns, cut to W.
std::string col(std::string_view s, size_t w) {
  std::string out(s.substr(0, w));
  out.resize(w, ' ');
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<std::string> lowered(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& s : v) out.push_back(to_lower(s));
  return out;
}

std::string field(const AcctRequest& req, std::string_view name) {
  for (const auto& [k, v] : req.fields)
    if (iequals(k, name)) return v;
  return {};
}
bool has_field(const AcctRequest& req, std::string_view name) {
  return std::any_of(req.fields.begin(), req.fields.end(),
                     [&](const auto& kv) { return iequals(kv.first, name); });
}

std::string minutes_text(int64_t min) { return format_hms(min * 60); }

// sacctmgr's listing of association settings given to add (sacctmgr_print_assoc_limits).
std::string assoc_settings_text(const AcctAssocLine& s, const std::string& parent) {
  std::string out;
  auto line = [&](const char* key, const std::string& value) {
    out += "  " + col(key, 14) + "= " + value + "\n";
  };
  auto num = [&](const char* key, int64_t v) {
    if (v != kNoLimit) line(key, std::to_string(v));
  };
  auto tres = [&](const char* key, const TresCounts& t) {
    if (!t.empty()) line(key, format_tres_counts(t));
  };
  const AssocLimits& l = s.limits;
  if (s.fairshare_parent)
    line("Fairshare", "parent");
  else
    num("Fairshare", s.fairshare);
  num("GrpJobs", l.grp_jobs);
  num("GrpJobsAccrue", l.grp_jobs_accrue);
  num("GrpSubmitJobs", l.grp_submit_jobs);
  tres("GrpTRES", l.grp_tres);
  tres("GrpTRESMins", l.grp_tres_mins);
  tres("GrpTRESRunMins", l.grp_tres_run_mins);
  if (l.grp_wall_min != kNoLimit) line("GrpWall", minutes_text(l.grp_wall_min));
  num("MaxJobs", l.max_jobs);
  num("MaxJobsAccrue", l.max_jobs_accrue);
  num("MaxSubmitJobs", l.max_submit_jobs);
  tres("MaxTRES", l.max_tres_per_job);
  tres("MaxTRESPerNode", l.max_tres_per_node);
  tres("MaxTRESMins", l.max_tres_mins_per_job);
  tres("MaxTRESRunMins", l.max_tres_run_mins);
  if (l.max_wall_min != kNoLimit) line("MaxWall", minutes_text(l.max_wall_min));
  num("MinPrioThresh", l.min_prio_thresh);
  if (!parent.empty()) line("Parent", parent);
  num("Priority", l.priority);
  if (s.qos_set) {
    std::string q;
    for (const auto& name : s.qos) q += (q.empty() ? "" : ",") + name;
    line("QOS", q);
  }
  if (!s.default_qos.empty()) line("DefQOS", s.default_qos);
  return out;
}

std::string real_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%f", v);
  return buf;
}

// sacctmgr's listing of a new QOS's settings (sacctmgr_print_qos_limits; its MaxJobsPerUser
// line really is not padded like the others).
std::string qos_settings_text(const QosLine& q) {
  std::string out;
  auto line = [&](const char* key, const std::string& value) {
    out += "  " + col(key, 25) + "= " + value + "\n";
  };
  auto num = [&](const char* key, int64_t v) {
    if (v != kNoLimit) line(key, std::to_string(v));
  };
  auto tres = [&](const char* key, const TresCounts& t) {
    if (!t.empty()) line(key, format_tres_counts(t));
  };
  auto joined = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
    return s;
  };
  if (!q.preempt.empty()) line("Preempt", joined(q.preempt));
  if (!q.flags.empty()) line("Flags", joined(q.flags));
  if (q.grace_time_s != 0) line("GraceTime", format_hms(q.grace_time_s));
  num("GrpJobs", q.grp_jobs);
  num("GrpJobsAccrue", q.grp_jobs_accrue);
  num("GrpSubmitJobs", q.grp_submit_jobs);
  tres("GrpTRES", q.grp_tres);
  tres("GrpTRESMins", q.grp_tres_mins);
  tres("GrpTRESRunMins", q.grp_tres_run_mins);
  if (q.grp_wall_min != kNoLimit) line("GrpWall", minutes_text(q.grp_wall_min));
  if (q.limit_factor >= 0) line("LimitFactor", real_text(q.limit_factor));
  num("MaxJobsPerAccount", q.max_jobs_per_account);
  if (q.max_jobs_per_user != kNoLimit)
    out += "  MaxJobsPerUser = " + std::to_string(q.max_jobs_per_user) + "\n";
  num("MaxJobsAccruePerAccount", q.max_jobs_accrue_per_account);
  num("MaxJobsAccruePerUser", q.max_jobs_accrue_per_user);
  num("MaxSubmitJobsPerAccount", q.max_submit_jobs_per_account);
  num("MaxSubmitJobsPerUser", q.max_submit_jobs_per_user);
  tres("MaxTRESPerAccount", q.max_tres_per_account);
  tres("MaxTRESPerJob", q.max_tres_per_job);
  tres("MaxTRESPerNode", q.max_tres_per_node);
  tres("MaxTRESPerUser", q.max_tres_per_user);
  tres("MaxTRESMinsPerJob", q.max_tres_mins_per_job);
  tres("MaxTRESRunMinsPerAccount", q.max_tres_run_mins_per_account);
  tres("MaxTRESRunMinsPerUser", q.max_tres_run_mins_per_user);
  if (q.max_wall_min != kNoLimit) line("MaxWall", minutes_text(q.max_wall_min));
  num("MinPrioThreshold", q.min_prio_thresh);
  tres("MinTRESPerJob", q.min_tres_per_job);
  if (!q.preempt_mode.empty()) line("PreemptMode", to_upper(joined(q.preempt_mode)));
  if (q.preempt_exempt_time_s != kNoLimit)
    line("PreemptExemptTime", format_hms(q.preempt_exempt_time_s));
  if (q.priority != 0) line("Priority", std::to_string(q.priority));
  if (q.usage_factor != 1.0) line("UsageFactor", real_text(q.usage_factor));
  if (q.usage_threshold >= 0) line("UsageThreshold", real_text(q.usage_threshold));
  return out;
}

// A request's QOS change applied to an association's QOS= (as given, not yet inherited).
void apply_qos(AcctAssocLine& s, char op, const std::vector<std::string>& names) {
  if (op == 0) return;
  if (op == '=') {
    s.qos = names;
    s.qos_set = !names.empty();
    return;
  }
  const bool relative = !s.qos_set || std::all_of(s.qos.begin(), s.qos.end(), [](const auto& q) {
    return !q.empty() && (q.front() == '+' || q.front() == '-');
  });
  for (const auto& n : names) {
    if (relative) {
      std::erase(s.qos, std::string("+") + n);
      std::erase(s.qos, std::string("-") + n);
      s.qos.push_back(std::string(1, op) + n);
    } else if (op == '+') {
      if (!contains(s.qos, n)) s.qos.push_back(n);
    } else {
      std::erase(s.qos, n);
    }
  }
  // An empty list is sacctmgr's QOS='': the association inherits its parent's again.
  s.qos_set = !s.qos.empty();
}

// The associations at or below account `top` (its own, its users', its sub-accounts').
std::set<uint32_t> subtree(const AcctData& d, const std::string& top) {
  std::set<std::string> accounts = {top};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& a : d.assocs)
      if (!a.is_user() && !a.is_root() && accounts.count(a.parent) &&
          accounts.insert(a.account).second)
        grew = true;
  }
  std::set<uint32_t> out;
  for (const auto& a : d.assocs)
    if (accounts.count(a.account)) out.insert(a.id);
  return out;
}

// The error when pending or running jobs use any of `ids`; "" when none do.
std::string active_jobs_error(const AcctData& d, const std::set<uint32_t>& ids,
                              const std::vector<AcctJob>& active) {
  // (user, account) -> the partitions of its associations that go ("" for any partition).
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> going;
  for (const auto& a : d.assocs)
    if (a.is_user() && ids.count(a.id)) going[{a.user, a.account}].push_back(a.partition);
  std::string lines;
  for (const AcctJob& j : active) {
    auto it = going.find({j.user, j.account});
    if (it == going.end()) continue;
    if (!contains(it->second, "") && !contains(it->second, j.partition)) continue;
    lines += "  JobID = " + col(std::to_string(j.id), 10) + " C = " + col(d.cluster, 10) +
             " A = " + col(j.account, 10) + " U = " + col(j.user, 9) + "\n";
  }
  if (lines.empty()) return "";
  return " Error with request: Job(s) active, cancel job(s) before remove\n" + lines;
}

// Associations of `d` in sacctmgr's listing order, filtered.
template <class Pred>
std::vector<const AcctAssoc*> assocs_where(const AcctData& d, Pred pred) {
  std::vector<const AcctAssoc*> out;
  for (const AcctAssoc* a : hierarchical_order(d))
    if (pred(*a)) out.push_back(a);
  return out;
}

AcctAssoc* assoc_by_id(AcctData& d, uint32_t id) {
  for (auto& a : d.assocs)
    if (a.id == id) return &a;
  return nullptr;
}

void sort_records(AcctData& d) {
  std::sort(d.accounts.begin(), d.accounts.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::sort(d.users.begin(), d.users.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
}

// A user whose default account's associations are gone gets the first account it still has
// (by name), or none.
void settle_default_accounts(AcctData& d) {
  std::map<std::string, std::set<std::string>> accounts_of;  // user -> its accounts
  for (const auto& a : d.assocs)
    if (a.is_user()) accounts_of[a.user].insert(a.account);
  for (auto& u : d.users) {
    const auto it = accounts_of.find(u.name);
    if (it == accounts_of.end())
      u.default_account.clear();
    else if (!it->second.count(u.default_account))
      u.default_account = *it->second.begin();
  }
}

std::string admin_level_name(const std::string& v) {
  if (iequals(v, "None")) return "None";
  if (iequals(v, "Operator") || iequals(v, "Oper")) return "Operator";
  if (iequals(v, "Administrator") || iequals(v, "Admin")) return "Administrator";
  return "";
}

struct Result {
  AcctOutcome o;
  void fail(std::string err, int rc = 1) {
    o.err += err;
    o.rc = rc;
    o.changed = false;
  }
};

void add_accounts(const AcctData& in, const AcctRequest& req, bool may_modify, bool commit,
                  Result& r) {
  AcctData d = in;
  const std::string parent = req.parents.empty() ? "root" : to_lower(req.parents.front());
  if (!d.find_assoc(parent, "")) {
    r.fail(" Parent account '" + parent + "' doesn't exist on cluster " + d.cluster +
           "\n        Contact your admin to add this account.\n No associations created.\n");
    return;
  }
  std::vector<std::string> names;
  for (const auto& n : lowered(req.names))
    if (!d.find_assoc(n, "") && !contains(names, n)) names.push_back(n);
  if (names.empty()) {
    r.o.out = " Nothing new added.\n";
    r.o.rc = 1;
    return;
  }
  AcctAssocLine settings;
  parse_assoc_options(req.settings, settings, "sacctmgr");
  apply_qos(settings, req.qos_op, lowered(req.qos));
  const std::string descr = to_lower(field(req, "Description"));
  const std::string org = to_lower(field(req, "Organization"));
  std::string& out = r.o.out;
  out = " Adding Account(s)\n";
  for (const auto& n : names) out += "  " + n + "\n";
  out += " Settings\n";
  out += "  Description     = " + (descr.empty() ? std::string("Account Name") : descr) + "\n";
  out += "  Organization    = " + (org.empty() ? std::string("Parent/Account Name") : org) + "\n";
  out += " Associations\n";
  for (const auto& n : names) out += "  A = " + col(n, 10) + " C = " + col(d.cluster, 10) + "\n";
  // The association's settings (its parent always among them) show when anything was given.
  if (!req.fields.empty() || !req.settings.empty() || req.qos_op != 0 || !req.parents.empty())
    out += " Settings\n" + assoc_settings_text(settings, parent);
  if (commit && !may_modify) {
    r.fail(" Problem adding accounts: Access/permission denied\n");
    return;
  }
  for (const auto& n : names) {
    AcctAccount rec{n, descr.empty() ? n : descr,
                    !org.empty() ? org : (parent == "root" ? n : parent)};
    if (AcctAccount* old = d.find_account(n))
      *old = rec;
    else
      d.accounts.push_back(rec);
    AcctAssoc a;
    a.id = d.next_assoc_id++;
    a.account = n;
    a.parent = parent;
    a.settings = settings;
    d.assocs.push_back(std::move(a));
  }
  sort_records(d);
  r.o.data = std::move(d);
  r.o.changed = true;
}

void add_users(const AcctData& in, const AcctRequest& req, bool may_modify, bool commit,
               Result& r) {
  AcctData d = in;
  std::vector<std::string> accounts = lowered(req.accounts);
  const std::string def = to_lower(field(req, "DefaultAccount"));
  if (!def.empty() && !contains(accounts, def)) accounts.push_back(def);
  if (accounts.empty()) {
    r.fail(" Need name of account to add user to.\n");
    return;
  }
  for (const auto& a : accounts) {
    if (!d.find_account(a)) {
      r.fail(" This account '" + a +
             "' doesn't exist.\n        Contact your admin to add this account.\n No "
             "associations or wckeys created.\n");
      return;
    }
    if (!d.find_assoc(a, "")) {
      r.fail(" This account '" + a + "' doesn't exist on cluster " + d.cluster +
             "\n        Contact your admin to add this account.\n No associations or wckeys "
             "created.\n");
      return;
    }
  }
  std::string level;
  if (has_field(req, "AdminLevel")) {
    level = admin_level_name(field(req, "AdminLevel"));
    if (level.empty()) {
      r.fail(" Bad AdminLevel '" + field(req, "AdminLevel") + "'\n");
      return;
    }
  }
  std::vector<std::string> sorted = accounts;
  std::sort(sorted.begin(), sorted.end());
  // The accounts in the tree's order: the associations are made and listed that way.
  std::vector<std::string> tree_order;
  for (const AcctAssoc* a : hierarchical_order(d))
    if (!a->is_user() && contains(accounts, a->account)) tree_order.push_back(a->account);
  const std::vector<std::string> partitions =
      req.partitions.empty() ? std::vector<std::string>{""} : req.partitions;

  std::vector<std::string> new_users;
  std::vector<AcctAssoc> new_assocs;
  AcctAssocLine settings;
  parse_assoc_options(req.settings, settings, "sacctmgr");
  apply_qos(settings, req.qos_op, lowered(req.qos));
  for (const auto& user : lowered(req.names)) {
    if (!d.find_user(user) && !contains(new_users, user)) new_users.push_back(user);
    for (const auto& acct : tree_order)
      for (const auto& part : partitions) {
        if (d.find_assoc(acct, user, part)) continue;
        AcctAssoc a;
        a.account = acct;
        a.user = user;
        a.partition = part;
        a.parent = acct;
        a.settings = settings;
        new_assocs.push_back(std::move(a));
      }
  }
  if (new_users.empty() && new_assocs.empty()) {
    r.o.out = " Nothing new added.\n";
    r.o.rc = 1;
    return;
  }
  std::string& out = r.o.out;
  if (!new_users.empty()) {
    out += " Adding User(s)\n";
    for (const auto& u : new_users) out += "  " + u + "\n";
    if (!def.empty() || !level.empty()) {
      out += " Settings =\n";
      if (!def.empty()) out += "  Default Account = " + def + "\n";
      if (!level.empty()) out += "  Admin Level     = " + level + "\n";
    }
  }
  if (!new_assocs.empty()) {
    out += " Associations =\n";
    for (const auto& a : new_assocs) {
      out +=
          "  U = " + col(a.user, 9) + " A = " + col(a.account, 10) + " C = " + col(d.cluster, 10);
      if (!a.partition.empty()) out += " P = " + col(a.partition, 10);
      out += "\n";
    }
    out += " Non Default Settings\n" + assoc_settings_text(settings, "");
  }
  if (commit && !may_modify) {
    r.fail(" Problem adding users: Access/permission denied\n");
    return;
  }
  for (const auto& u : new_users) {
    AcctUser rec;
    rec.name = u;
    rec.default_account = def.empty() ? sorted.front() : def;
    if (!level.empty()) rec.admin_level = level;
    rec.default_wckey = field(req, "DefaultWCKey");
    d.users.push_back(std::move(rec));
  }
  for (auto& a : new_assocs) {
    a.id = d.next_assoc_id++;
    d.assocs.push_back(std::move(a));
  }
  sort_records(d);
  r.o.data = std::move(d);
  r.o.changed = true;
}

void add_qos(const AcctData& in, const AcctRequest& req, bool may_modify, bool commit, Result& r) {
  AcctData d = in;
  std::vector<QosLine> fresh;
  for (const auto& n : lowered(req.names)) {
    if (d.find_qos(n) ||
        std::any_of(fresh.begin(), fresh.end(), [&](const auto& q) { return q.name == n; }))
      continue;
    QosLine q;
    q.name = n;
    parse_qos_options(req.settings, q, "sacctmgr");
    if (q.description.empty()) q.description = n;
    fresh.push_back(std::move(q));
  }
  if (fresh.empty()) {
    r.o.out = " Nothing new added.\n";
    r.o.rc = 1;
    return;
  }
  std::string& out = r.o.out;
  out = " Adding QOS(s)\n";
  for (const auto& q : fresh) out += "  " + q.name + "\n";
  out += " Settings\n  Description    = " + fresh.front().description + "\n";
  out += qos_settings_text(fresh.front());
  if (commit && !may_modify) {
    r.fail(" Problem adding QOS: Access/permission denied\n");
    return;
  }
  for (auto& q : fresh) {
    q.id = d.next_qos_id++;
    d.qos.push_back(std::move(q));
  }
  r.o.data = std::move(d);
  r.o.changed = true;
}

bool nothing_to_set(const AcctRequest& req) {
  return req.fields.empty() && req.settings.empty() && req.qos_op == 0;
}

void modify_accounts(const AcctData& in, const AcctRequest& req, Result& r) {
  AcctData d = in;
  const std::vector<std::string> names = lowered(req.names);
  const std::vector<std::string> parents = lowered(req.parents);
  auto named = [&](const std::string& account) {
    return names.empty() || contains(names, account);
  };
  std::string& out = r.o.out;
  bool nothing = false, touched = false;
  if (!req.fields.empty()) {
    std::vector<std::string> changed;
    for (auto& rec : d.accounts) {
      if (!named(rec.name)) continue;
      const AcctAssoc* a = d.find_assoc(rec.name, "");
      if (!parents.empty() && (!a || !contains(parents, a->parent))) continue;
      if (has_field(req, "Description")) rec.description = to_lower(field(req, "Description"));
      if (has_field(req, "Organization")) rec.organization = to_lower(field(req, "Organization"));
      changed.push_back(rec.name);
    }
    if (changed.empty()) {
      out += " Nothing modified\n";
      nothing = true;
    } else {
      out += " Modified accounts...\n";
      for (const auto& n : changed) out += "  " + n + "\n";
      touched = true;
    }
  }
  if (!req.settings.empty() || req.qos_op != 0) {
    const auto hits = assocs_where(d, [&](const AcctAssoc& a) {
      return !a.is_user() && !a.is_root() && named(a.account) &&
             (parents.empty() || contains(parents, a.parent));
    });
    std::vector<uint32_t> ids;
    for (const AcctAssoc* a : hits) ids.push_back(a->id);
    if (ids.empty()) {
      out += " Nothing modified\n";
      nothing = true;
    } else {
      out += " Modified account associations...\n";
      touched = true;
      for (uint32_t id : ids) {
        AcctAssoc* a = assoc_by_id(d, id);
        modify_assoc_options(req.settings, a->settings, "sacctmgr");
        apply_qos(a->settings, req.qos_op, lowered(req.qos));
        out += "  C = " + col(d.cluster, 10) + " A = " + a->account + " of " + a->parent + "\n";
      }
    }
  }
  if (nothing) r.o.rc = 1;
  r.o.changed = touched;
  r.o.data = std::move(d);
}

void modify_users(const AcctData& in, const AcctRequest& req, Result& r) {
  AcctData d = in;
  const std::vector<std::string> names = lowered(req.names);
  const std::vector<std::string> accounts = lowered(req.accounts);
  auto named = [&](const std::string& user) { return names.empty() || contains(names, user); };
  std::string& out = r.o.out;
  bool nothing = false, touched = false;
  if (!req.fields.empty()) {
    std::string level;
    if (has_field(req, "AdminLevel")) {
      level = admin_level_name(field(req, "AdminLevel"));
      if (level.empty()) {
        r.fail(" Bad AdminLevel '" + field(req, "AdminLevel") + "'\n");
        return;
      }
    }
    const std::string def = to_lower(field(req, "DefaultAccount"));
    std::vector<AcctUser*> users;
    for (auto& u : d.users)
      if (named(u.name)) users.push_back(&u);
    if (has_field(req, "DefaultAccount")) {
      std::string lacking;
      for (const AcctUser* u : users) {
        const bool member = std::any_of(d.assocs.begin(), d.assocs.end(), [&](const auto& a) {
          return a.user == u->name && a.account == def;
        });
        if (!member) lacking += "  U = " + u->name + " C = " + d.cluster + "\n";
      }
      if (!lacking.empty()) {
        r.o.out = " Can't modify because these users aren't associated with new default account '" +
                  def + "'...\n" + lacking;
        r.o.rc = 1;
        return;
      }
    }
    if (users.empty()) {
      out += " Nothing modified\n";
      nothing = true;
    } else {
      out += " Modified users...\n";
      touched = true;
      for (AcctUser* u : users) {
        if (!level.empty()) u->admin_level = level;
        if (has_field(req, "DefaultAccount")) u->default_account = def;
        if (has_field(req, "DefaultWCKey")) u->default_wckey = field(req, "DefaultWCKey");
        out += "  " + u->name + "\n";
      }
    }
  }
  if (!req.settings.empty() || req.qos_op != 0) {
    const auto hits = assocs_where(d, [&](const AcctAssoc& a) {
      return a.is_user() && named(a.user) && (accounts.empty() || contains(accounts, a.account)) &&
             (req.partitions.empty() || contains(req.partitions, a.partition));
    });
    std::vector<uint32_t> ids;
    for (const AcctAssoc* a : hits) ids.push_back(a->id);
    if (ids.empty()) {
      out += " Nothing modified\n";
      nothing = true;
    } else {
      out += " Modified user associations...\n";
      touched = true;
      for (uint32_t id : ids) {
        AcctAssoc* a = assoc_by_id(d, id);
        modify_assoc_options(req.settings, a->settings, "sacctmgr");
        apply_qos(a->settings, req.qos_op, lowered(req.qos));
        out += "  C = " + col(d.cluster, 10) + " A = " + col(a->account, 20) +
               " U = " + col(a->user, 9);
        if (!a->partition.empty()) out += " P = " + col(a->partition, 10);
        out += "\n";
      }
    }
  }
  if (nothing) r.o.rc = 1;
  r.o.changed = touched;
  r.o.data = std::move(d);
}

void modify_qos(const AcctData& in, const AcctRequest& req, Result& r) {
  AcctData d = in;
  const std::vector<std::string> names = lowered(req.names);
  std::string list;
  for (auto& q : d.qos) {
    if (!names.empty() && !contains(names, q.name)) continue;
    modify_qos_options(req.settings, q, "sacctmgr");
    list += "  " + q.name + "\n";
  }
  if (list.empty()) {
    r.o.out = " Nothing modified\n";
    r.o.rc = 1;
    return;
  }
  r.o.out = " Modified qos...\n" + list;
  r.o.changed = true;
  r.o.data = std::move(d);
}

void delete_accounts(const AcctData& in, const AcctRequest& req, const std::vector<AcctJob>& active,
                     Result& r) {
  AcctData d = in;
  const std::vector<std::string> names = lowered(req.names);
  const std::vector<std::string> parents = lowered(req.parents);
  std::vector<std::string> gone;
  std::set<uint32_t> ids;
  for (const auto& rec : d.accounts) {
    if (rec.name == "root" || !contains(names, rec.name)) continue;
    const AcctAssoc* a = d.find_assoc(rec.name, "");
    if (!parents.empty() && (!a || !contains(parents, a->parent))) continue;
    gone.push_back(rec.name);
    const auto below = subtree(d, rec.name);
    ids.insert(below.begin(), below.end());
  }
  if (gone.empty()) {
    r.o.out = " Nothing deleted\n";
    r.o.rc = 1;
    return;
  }
  if (const std::string busy = active_jobs_error(d, ids, active); !busy.empty()) {
    r.fail(busy);
    return;
  }
  std::string& out = r.o.out;
  out = " Deleting accounts...\n";
  for (const auto& n : gone) out += "  " + n + "\n";
  std::erase_if(d.accounts, [&](const AcctAccount& a) { return contains(gone, a.name); });
  std::erase_if(d.assocs, [&](const AcctAssoc& a) { return ids.count(a.id) > 0; });
  settle_default_accounts(d);
  r.o.data = std::move(d);
  r.o.changed = true;
}

void delete_users(const AcctData& in, const AcctRequest& req, const std::vector<AcctJob>& active,
                  Result& r) {
  AcctData d = in;
  const std::vector<std::string> names = lowered(req.names);
  const std::vector<std::string> accounts = lowered(req.accounts);
  const bool whole_users = accounts.empty() && req.partitions.empty();
  std::set<uint32_t> ids;
  std::string lines;
  for (const AcctAssoc* a : hierarchical_order(d)) {
    if (!a->is_user() || !contains(names, a->user)) continue;
    if (!accounts.empty() && !contains(accounts, a->account)) continue;
    if (!req.partitions.empty() && !contains(req.partitions, a->partition)) continue;
    ids.insert(a->id);
    lines +=
        "  C = " + col(d.cluster, 10) + " A = " + col(a->account, 10) + " U = " + col(a->user, 9);
    if (!a->partition.empty()) lines += " P = " + col(a->partition, 10);
    lines += "\n";
  }
  std::vector<std::string> users;
  if (whole_users)
    for (const auto& u : d.users)
      if (contains(names, u.name)) users.push_back(u.name);
  if (ids.empty() && users.empty()) {
    r.o.out = " Nothing deleted\n";
    r.o.rc = 1;
    return;
  }
  if (const std::string busy = active_jobs_error(d, ids, active); !busy.empty()) {
    r.fail(busy);
    return;
  }
  if (whole_users) {
    r.o.out = " Deleting users...\n";
    for (const auto& u : users) r.o.out += "  " + u + "\n";
    std::erase_if(d.users, [&](const AcctUser& u) { return contains(users, u.name); });
  } else {
    r.o.out = " Deleting user associations...\n" + lines;
  }
  std::erase_if(d.assocs, [&](const AcctAssoc& a) { return ids.count(a.id) > 0; });
  settle_default_accounts(d);
  r.o.data = std::move(d);
  r.o.changed = true;
}

void delete_qos(const AcctData& in, const AcctRequest& req, Result& r) {
  AcctData d = in;
  const std::vector<std::string> names = lowered(req.names);
  std::vector<std::string> gone;
  for (const auto& q : d.qos)
    if (contains(names, q.name)) gone.push_back(q.name);
  if (gone.empty()) {
    r.o.out = " Nothing deleted\n";
    r.o.rc = 1;
    return;
  }
  r.o.out = " Deleting QOS(s)...\n";
  for (const auto& n : gone) r.o.out += "  " + n + "\n";
  std::erase_if(d.qos, [&](const QosLine& q) { return contains(gone, q.name); });
  // Nothing may name a QOS that is gone: association lists and defaults, Preempt lists.
  for (auto& a : d.assocs) {
    std::erase_if(a.settings.qos, [&](const std::string& q) {
      const bool signed_name = !q.empty() && (q.front() == '+' || q.front() == '-');
      return contains(gone, signed_name ? q.substr(1) : q);
    });
    if (a.settings.qos_set && a.settings.qos.empty() && !a.is_root()) a.settings.qos_set = false;
    if (contains(gone, a.settings.default_qos)) a.settings.default_qos.clear();
  }
  for (auto& q : d.qos) std::erase_if(q.preempt, [&](const auto& p) { return contains(gone, p); });
  r.o.data = std::move(d);
  r.o.changed = true;
}

}  // namespace

bool acct_admin_level(const AcctData& data, std::string_view user) {
  const AcctUser* u = data.find_user(user);
  return u && (u->admin_level == "Operator" || u->admin_level == "Administrator");
}

AcctOutcome apply_acct_request(const AcctData& data, const AcctRequest& req, bool may_modify,
                               const std::vector<AcctJob>& active, bool commit) {
  Result r;
  r.o.data = data;
  for (const auto& c : req.clusters)
    if (!iequals(c, data.cluster)) {
      r.fail(" This cluster '" + to_lower(c) +
             "' doesn't exist.\n        Contact your admin to "
             "add it to accounting.\n");
      return r.o;
    }
  try {
    if (req.action == Action::Add) {
      if (req.entity == Entity::Account) add_accounts(data, req, may_modify, commit, r);
      if (req.entity == Entity::User) add_users(data, req, may_modify, commit, r);
      if (req.entity == Entity::Qos) add_qos(data, req, may_modify, commit, r);
    } else {
      if (!may_modify) {
        r.fail(kDenied);
        return r.o;
      }
      if (req.action == Action::Modify) {
        if (nothing_to_set(req)) {
          r.fail(" You didn't give me anything to set\n");
          return r.o;
        }
        if (req.entity == Entity::Account) modify_accounts(data, req, r);
        if (req.entity == Entity::User) modify_users(data, req, r);
        if (req.entity == Entity::Qos) modify_qos(data, req, r);
      } else {
        if (req.entity == Entity::Account) delete_accounts(data, req, active, r);
        if (req.entity == Entity::User) delete_users(data, req, active, r);
        if (req.entity == Entity::Qos) delete_qos(data, req, r);
      }
    }
  } catch (const ParseError& e) {
    // A value the option parser refuses (sacctmgr checks its options before sending them).
    std::string what = e.what();
    if (what.rfind("sacctmgr: ", 0) == 0) what.erase(0, 10);
    r.o.out.clear();
    r.fail(" " + what + "\n");
    r.o.data = data;
  }
  if (!r.o.changed) r.o.data = data;
  return r.o;
}

}  // namespace drover::core
