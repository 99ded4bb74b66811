#include "core/acct_data.hpp"

#include <algorithm>
#include <map>

namespace drover::core {
namespace {

template <class T>
auto find_named(T& list, std::string_view name) -> decltype(&list.front()) {
  for (auto& x : list)
    if (x.name == name) return &x;
  return nullptr;
}

AcctAssoc assoc_of(const AcctAssocLine& line, uint32_t id) {
  AcctAssoc a;
  a.id = id;
  switch (line.kind) {
    case AcctAssocLine::Kind::Cluster:
      a.account = "root";
      break;
    case AcctAssocLine::Kind::Account:
      a.account = line.name;
      a.parent = line.parent;
      break;
    case AcctAssocLine::Kind::User:
      a.account = line.parent;
      a.user = line.name;
      a.partition = line.partition;
      a.parent = line.parent;
      break;
  }
  a.settings.fairshare = line.fairshare;
  a.settings.fairshare_parent = line.fairshare_parent;
  a.settings.limits = line.limits;
  a.settings.qos = line.qos;
  a.settings.qos_set = line.qos_set;
  a.settings.default_qos = line.default_qos;
  return a;
}

// The association's settings on a dump line of the given kind and name.
AcctAssocLine line_of(const AcctAssoc& a, AcctAssocLine::Kind kind) {
  AcctAssocLine line = a.settings;
  line.kind = kind;
  line.line = 0;
  line.partition.clear();
  line.description.clear();
  line.organization.clear();
  line.classification.clear();
  line.default_account.clear();
  line.default_wckey.clear();
  line.admin_level.clear();
  line.coordinators.clear();
  line.wckeys.clear();
  switch (kind) {
    case AcctAssocLine::Kind::Cluster:
      line.parent.clear();
      break;
    case AcctAssocLine::Kind::Account:
      line.name = a.account;
      line.parent = a.parent;
      break;
    case AcctAssocLine::Kind::User:
      line.name = a.user;
      line.parent = a.account;
      line.partition = a.partition;
      break;
  }
  return line;
}

}  // namespace

const AcctAccount* AcctData::find_account(std::string_view name) const {
  return find_named(accounts, name);
}
AcctAccount* AcctData::find_account(std::string_view name) { return find_named(accounts, name); }
const AcctUser* AcctData::find_user(std::string_view name) const { return find_named(users, name); }
AcctUser* AcctData::find_user(std::string_view name) { return find_named(users, name); }
const QosLine* AcctData::find_qos(std::string_view name) const { return find_named(qos, name); }

const AcctAssoc* AcctData::find_assoc(std::string_view account, std::string_view user,
                                      std::string_view partition) const {
  for (const auto& a : assocs)
    if (a.account == account && a.user == user && a.partition == partition) return &a;
  return nullptr;
}

AcctData new_acct_data(std::string_view cluster) {
  AcctData d;
  d.cluster = std::string(cluster);
  d.accounts.push_back({"root", "default root account", "root"});
  AcctUser root;
  root.name = "root";
  root.default_account = "root";
  root.admin_level = "Administrator";
  d.users.push_back(root);
  AcctAssoc top;
  top.id = 1;
  top.account = "root";
  AcctAssoc root_user;
  root_user.id = 2;
  root_user.account = "root";
  root_user.user = "root";
  root_user.parent = "root";
  d.assocs = {top, root_user};
  d.next_assoc_id = 3;
  QosLine normal;
  normal.name = "normal";
  normal.id = 1;
  normal.description = "Normal QOS default";
  d.qos.push_back(normal);
  d.next_qos_id = 2;
  return d;
}

AcctData acct_data_from_dump(const AcctDump& dump) {
  AcctData d;
  d.cluster = dump.cluster.name;
  d.classification = dump.cluster.classification;
  d.accounts.push_back({"root", "default root account", "root"});
  uint32_t id = 1;
  d.assocs.push_back(assoc_of(dump.cluster, id++));
  for (const auto& line : dump.assocs) {
    d.assocs.push_back(assoc_of(line, id++));
    if (line.kind == AcctAssocLine::Kind::Account) {
      // sacctmgr's defaults: the account's name as its description, its parent's as the
      // organization.
      d.accounts.push_back({line.name, line.description.empty() ? line.name : line.description,
                            line.organization.empty() ? line.parent : line.organization});
    } else if (!d.find_user(line.name)) {
      AcctUser u;
      u.name = line.name;
      u.default_account = line.default_account;
      u.admin_level = line.admin_level.empty() ? "None" : line.admin_level;
      u.default_wckey = line.default_wckey;
      u.coordinators = line.coordinators;
      u.wckeys = line.wckeys;
      d.users.push_back(std::move(u));
    }
  }
  d.next_assoc_id = id;
  uint32_t qid = 1;
  for (QosLine q : dump.qos) {
    q.line = 0;
    q.id = qid++;
    d.qos.push_back(std::move(q));
  }
  d.next_qos_id = qid;
  std::sort(d.accounts.begin(), d.accounts.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::sort(d.users.begin(), d.users.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return d;
}

std::vector<const AcctAssoc*> hierarchical_order(const AcctData& data) {
  std::map<std::string, std::vector<const AcctAssoc*>> children;  // account -> below it
  const AcctAssoc* top = nullptr;
  for (const auto& a : data.assocs) {
    if (a.is_root())
      top = &a;
    else
      children[a.is_user() ? a.account : a.parent].push_back(&a);
  }
  std::vector<const AcctAssoc*> out;
  if (!top) return out;
  for (auto& [account, list] : children)
    std::sort(list.begin(), list.end(), [](const AcctAssoc* x, const AcctAssoc* y) {
      if (x->is_user() != y->is_user()) return x->is_user();
      if (x->is_user()) return std::tie(x->user, x->partition) < std::tie(y->user, y->partition);
      return x->account < y->account;
    });
  // Depth first; an account's association leads the associations below it.
  std::vector<const AcctAssoc*> stack = {top};
  while (!stack.empty()) {
    const AcctAssoc* a = stack.back();
    stack.pop_back();
    out.push_back(a);
    if (a->is_user()) continue;
    auto it = children.find(a->account);
    if (it == children.end()) continue;
    for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) stack.push_back(*c);
  }
  return out;
}

AccountIndex account_index(const AcctData& data) {
  AccountIndex out;
  for (const auto& a : data.assocs)
    if (!a.is_user()) out.emplace(a.account, &a);
  return out;
}

AcctAssocLine shown_settings(const AcctData& data, const AcctAssoc& a) {
  return shown_settings(a, account_index(data));
}

AcctAssocLine shown_settings(const AcctAssoc& a, const AccountIndex& accounts) {
  // The chain from the root down to `a`.
  std::vector<const AcctAssoc*> chain = {&a};
  while (!chain.back()->is_root() && chain.size() <= accounts.size() + 1) {
    auto it = accounts.find(chain.back()->parent);
    if (it == accounts.end() || it->second == chain.back()) break;
    chain.push_back(it->second);
  }
  AcctAssocLine out;
  std::vector<std::string> qos = {"normal"};
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const AcctAssocLine& own = (*it)->settings;
    auto inherit = [](int64_t& v, int64_t mine) {
      if (mine != kNoLimit) v = mine;
    };
    auto inherit_tres = [](TresCounts& v, const TresCounts& mine) {
      for (const auto& [name, n] : mine) v[name] = n;
    };
    AssocLimits& l = out.limits;
    inherit(l.max_jobs, own.limits.max_jobs);
    inherit(l.max_jobs_accrue, own.limits.max_jobs_accrue);
    inherit(l.max_submit_jobs, own.limits.max_submit_jobs);
    inherit(l.max_wall_min, own.limits.max_wall_min);
    inherit(l.priority, own.limits.priority);
    inherit_tres(l.max_tres_per_job, own.limits.max_tres_per_job);
    inherit_tres(l.max_tres_per_node, own.limits.max_tres_per_node);
    inherit_tres(l.max_tres_mins_per_job, own.limits.max_tres_mins_per_job);
    inherit_tres(l.max_tres_run_mins, own.limits.max_tres_run_mins);
    if (!own.default_qos.empty()) out.default_qos = own.default_qos;
    if (own.qos_set) {
      const bool relative = std::all_of(own.qos.begin(), own.qos.end(), [](const std::string& q) {
        return !q.empty() && (q.front() == '+' || q.front() == '-');
      });
      if (!relative) qos.clear();
      for (const auto& q : own.qos) {
        const bool minus = !q.empty() && q.front() == '-';
        const std::string name = !q.empty() && (minus || q.front() == '+') ? q.substr(1) : q;
        std::erase(qos, name);
        if (!minus) qos.push_back(name);
      }
    }
  }
  const AssocLimits& mine = a.settings.limits;
  AssocLimits& l = out.limits;
  l.grp_jobs = mine.grp_jobs;
  l.grp_jobs_accrue = mine.grp_jobs_accrue;
  l.grp_submit_jobs = mine.grp_submit_jobs;
  l.grp_wall_min = mine.grp_wall_min;
  l.min_prio_thresh = mine.min_prio_thresh;
  l.grp_tres = mine.grp_tres;
  l.grp_tres_mins = mine.grp_tres_mins;
  l.grp_tres_run_mins = mine.grp_tres_run_mins;
  out.fairshare = a.settings.fairshare;
  out.fairshare_parent = a.settings.fairshare_parent;
  std::sort(qos.begin(), qos.end());
  out.qos = std::move(qos);
  out.qos_set = true;
  return out;
}

AcctDump acct_dump_of(const AcctData& data) {
  AcctDump dump;
  dump.source = "accounting";
  if (const AcctAssoc* top = data.root()) {
    dump.cluster = line_of(*top, AcctAssocLine::Kind::Cluster);
    dump.cluster.name = data.cluster;
    dump.cluster.classification = data.classification;
  }
  std::map<std::string_view, const AcctUser*> users;
  for (const auto& u : data.users) users.emplace(u.name, &u);
  std::map<std::string_view, const AcctAccount*> accounts;
  for (const auto& acct : data.accounts) accounts.emplace(acct.name, &acct);
  for (const AcctAssoc* a : hierarchical_order(data)) {
    if (a->is_root()) continue;
    if (a->is_user()) {
      AcctAssocLine line = line_of(*a, AcctAssocLine::Kind::User);
      if (auto it = users.find(a->user); it != users.end()) {
        const AcctUser* u = it->second;
        line.default_account = u->default_account;
        line.admin_level = u->admin_level == "None" ? "" : u->admin_level;
        line.default_wckey = u->default_wckey;
        line.coordinators = u->coordinators;
        line.wckeys = u->wckeys;
      }
      dump.assocs.push_back(std::move(line));
    } else {
      AcctAssocLine line = line_of(*a, AcctAssocLine::Kind::Account);
      if (auto it = accounts.find(a->account); it != accounts.end()) {
        const AcctAccount* acct = it->second;
        line.description = acct->description;
        line.organization = acct->organization;
      }
      dump.assocs.push_back(std::move(line));
    }
  }
  dump.qos = data.qos;
  return dump;
}

}  // namespace drover::core
