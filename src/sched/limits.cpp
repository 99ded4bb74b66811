#include "sched/limits.hpp"

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/gres.hpp"
#include "core/text.hpp"
#include "sched/request.hpp"
#include "sched/resources.hpp"

namespace drover::sched {
namespace {

using core::kNoLimit;

constexpr const char* kFixedTres[] = {"cpu",     "mem",     "energy", "node",
                                      "billing", "fs/disk", "vmem",   "pages"};

// Slurm's limit kinds, each with one reason per class of TRES.
enum Kind : uint8_t {
  kAssocGrp,
  kAssocMaxPerJob,
  kAssocMaxPerNode,
  kAssocMaxMinsPerJob,
  kQosGrp,
  kQosMaxPerJob,
  kQosMaxPerNode,
  kQosMaxPerAccount,
  kQosMaxPerUser,
  kQosMaxMinsPerJob,
  kQosMin,
};

// Columns: cpu, mem, energy, node, billing, gres/*, license/*, bb/*, anything else. The names
// are Slurm 22.05's job_reason_string(), quirks included (no per-node reason for nodes or
// licenses, the QOS BB-minutes reason named Assoc...).
constexpr const char* kReasons[][9] = {
    {"AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpEnergy", "AssocGrpNodeLimit",
     "AssocGrpBilling", "AssocGrpGRES", "AssocGrpLicense", "AssocGrpBB", "AssocGrpUnknown"},
    {"AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob", "AssocMaxEnergyPerJob",
     "AssocMaxNodePerJobLimit", "AssocMaxBillingPerJob", "AssocMaxGRESPerJob",
     "AssocMaxLicensePerJob", "AssocMaxBBPerJob", "AssocMaxUnknownPerJob"},
    {"AssocMaxCpuPerNode", "AssocMaxMemPerNode", "AssocMaxEnergyPerNode", "AssocMaxUnknownPerNode",
     "AssocMaxBillingPerNode", "AssocMaxGRESPerNode", "AssocMaxUnknownPerNode", "AssocMaxBBPerNode",
     "AssocMaxUnknownPerNode"},
    {"AssocMaxCpuMinutesPerJobLimit", "AssocMaxMemMinutesPerJob", "AssocMaxEnergyMinutesPerJob",
     "AssocMaxNodeMinutesPerJob", "AssocMaxBillingMinutesPerJob", "AssocMaxGRESMinutesPerJob",
     "AssocMaxLicenseMinutesPerJob", "AssocMaxBBMinutesPerJob", "AssocMaxUnknownMinutesPerJob"},
    {"QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpEnergy", "QOSGrpNodeLimit", "QOSGrpBilling",
     "QOSGrpGRES", "QOSGrpLicense", "QOSGrpBB", "QOSGrpUnknown"},
    {"QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "QOSMaxEnergyPerJob", "QOSMaxNodePerJobLimit",
     "QOSMaxBillingPerJob", "QOSMaxGRESPerJob", "QOSMaxLicensePerJob", "QOSMaxBBPerJob",
     "QOSMaxUnknownPerJob"},
    {"QOSMaxCpuPerNode", "QOSMaxMemoryPerNode", "QOSMaxEnergyPerNode", "QOSMaxUnknownPerNode",
     "QOSMaxBillingPerNode", "QOSMaxGRESPerNode", "QOSMaxUnknownPerNode", "QOSMaxBBPerNode",
     "QOSMaxUnknownPerNode"},
    {"MaxCpuPerAccount", "MaxMemoryPerAccount", "MaxEnergyPerAccount", "MaxNodePerAccount",
     "MaxBillingPerAccount", "MaxGRESPerAccount", "MaxLicensePerAccount", "MaxBBPerAccount",
     "MaxUnknownPerAccount"},
    {"QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser", "QOSMaxEnergyPerUser",
     "QOSMaxNodePerUserLimit", "QOSMaxBillingPerUser", "QOSMaxGRESPerUser", "QOSMaxLicensePerUser",
     "QOSMaxBBPerUser", "QOSMaxUnknownPerUser"},
    {"QOSMaxCpuMinutesPerJobLimit", "QOSMaxMemoryMinutesPerJob", "QOSMaxEnergyMinutesPerJob",
     "QOSMaxNodeMinutesPerJob", "QOSMaxBillingMinutesPerJob", "QOSMaxGRESMinutesPerJob",
     "QOSMaxLicenseMinutesPerJob", "AssocMaxBBMinutesPerJob", "QOSMaxUnknownMinutesPerJob"},
    {"QOSMinCpuNotSatisfied", "QOSMinMemory", "QOSMinEnergy", "QOSMinNode", "QOSMinBilling",
     "QOSMinGRES", "QOSMinLicense", "QOSMinBB", "QOSMinUnknown"},
};

int tres_class(std::string_view name) {
  for (int i = 0; i < 5; ++i)
    if (name == kFixedTres[i]) return i;
  if (name.rfind("gres/", 0) == 0) return 5;
  if (name.rfind("license/", 0) == 0) return 6;
  if (name.rfind("bb/", 0) == 0) return 7;
  return 8;
}

bool is_fixed(std::string_view name) {
  return std::find(std::begin(kFixedTres), std::end(kFixedTres), name) != std::end(kFixedTres);
}

// Adds a count of GRES to `out` under its TRES names: "gres/<name>" and, typed,
// "gres/<name>:<type>".
void add_gres(std::map<std::string, int64_t>& out, const std::string& name, const std::string& type,
              int64_t count) {
  if (count <= 0) return;
  out["gres/" + name] += count;
  if (!type.empty()) out["gres/" + name + ":" + type] += count;
}

}  // namespace

Enforce parse_enforce(std::string_view text) {
  Enforce e;
  for (const auto& raw : core::split_list(text, ',')) {
    const std::string item = core::to_lower(raw);
    if (item == "1" || item == "associations") {
      e.associations = true;
    } else if (item == "2" || item == "limits") {
      e.associations = e.limits = true;
    } else if (item == "safe") {
      e.associations = e.limits = e.safe = true;
    } else if (item == "wckeys") {
      e.associations = e.wckeys = true;
    } else if (item == "qos") {
      e.associations = e.qos = true;
    } else if (item == "all") {
      e.associations = e.limits = e.qos = e.safe = e.wckeys = true;
    } else if (item == "nojobs" || item == "nosteps") {
      // What is recorded in accounting, not what is enforced.
    } else if (item == "0" || item == "none") {
      e = Enforce{};
    } else {
      throw core::ParseError("Invalid parameter for AccountingStorageEnforce: " + raw);
    }
  }
  return e;
}

int64_t JobTres::get(std::string_view name) const {
  if (name == "cpu") return cpu;
  if (name == "mem") return mem_mb;
  if (name == "node") return node;
  if (name == "billing") return billing;
  auto it = other.find(std::string(name));
  return it == other.end() ? 0 : it->second;
}

JobTres requested_tres(const core::JobSpec& spec, int64_t def_mem_per_cpu_mb,
                       int64_t def_mem_per_node_mb) {
  JobTres t;
  const int64_t nodes = std::max(1, spec.nodes_min);
  const int64_t tasks = std::max<int64_t>(spec.ntasks, nodes);
  t.node = nodes;
  t.cpu = tasks * std::max(1, spec.cpus_per_task);
  int64_t gpus = 0;
  try {
    if (!spec.gres.empty())
      for (const auto& g : core::parse_gres_list(spec.gres)) {
        add_gres(t.other, g.name, g.type, g.count * nodes);
        if (g.name == "gpu") gpus += g.count * nodes;
      }
    auto gpu = [&](const std::string& text, int64_t times) {
      if (text.empty()) return;
      const core::GresCount g = core::parse_gpu_count(text);
      add_gres(t.other, g.name, g.type, g.count * times);
      gpus += g.count * times;
    };
    gpu(spec.gpus_per_node, nodes);
    gpu(spec.gpus_per_task, tasks);
    gpu(spec.gpus, 1);
  } catch (const std::exception&) {
    // Checked at submission; nothing more to count.
  }
  // The memory rule as the engine applies it (request.cpp); whole nodes are known once placed.
  if (spec.exclusive || spec.mem_per_node_mb == 0)
    t.mem_mb = 0;
  else if (spec.mem_per_gpu_mb > 0 && spec.asks_for_gres())
    t.mem_mb = spec.mem_per_gpu_mb * std::max<int64_t>(1, gpus);
  else if (spec.mem_per_node_mb > 0)
    t.mem_mb = spec.mem_per_node_mb * nodes;
  else if (spec.mem_per_cpu_mb >= 0)
    t.mem_mb = spec.mem_per_cpu_mb * t.cpu;
  else if (def_mem_per_cpu_mb > 0)
    t.mem_mb = def_mem_per_cpu_mb * t.cpu;
  else if (def_mem_per_node_mb > 0)
    t.mem_mb = def_mem_per_node_mb * nodes;
  t.billing = t.cpu;
  return t;
}

JobTres allocated_tres(const std::vector<core::NodeAlloc>& alloc) {
  JobTres t;
  for (const auto& a : alloc) {
    t.cpu += a.cpus;
    t.mem_mb += a.mem_mb;
    for (const auto& g : a.gres) add_gres(t.other, g.name, g.type, g.count);
    t.nodes.push_back(a.node);
  }
  t.node = static_cast<int64_t>(alloc.size());
  t.billing = t.cpu;
  return t;
}

JobTres placement_tres(const Request& req, const std::vector<Share>& shares,
                       const std::vector<NodeSlot>& slots, const GresKinds& kinds) {
  JobTres t;
  for (const Share& sh : shares) {
    const NodeSlot& slot = slots[sh.slot];
    const Amount use = req.usage(slot, slot.free_now, sh.tasks, sh.job_gpus);
    t.cpu += use.cpus;
    t.mem_mb += use.mem_mb;
    for (size_t k = 0; k < kinds.size(); ++k) {
      const auto& [name, type] = kinds.kind(static_cast<int>(k));
      add_gres(t.other, name, type, use.gres[k]);
    }
    t.nodes.push_back(slot.node->name);
  }
  t.node = static_cast<int64_t>(shares.size());
  t.billing = t.cpu;
  return t;
}

Limits::Limits(core::AcctDump dump, Enforce enforce,
               const std::map<std::string, std::string>& partition_qos)
    : dump_(std::move(dump)), enforce_(enforce) {
  // The TRES table: Slurm's fixed TRES, then every other one a limit names.
  std::set<std::string> extra;
  auto collect = [&](const core::TresCounts& t) {
    for (const auto& [name, n] : t)
      if (!is_fixed(name)) extra.insert(name);
  };
  auto collect_assoc = [&](const core::AssocLimits& l) {
    for (const auto* t : {&l.grp_tres, &l.grp_tres_mins, &l.grp_tres_run_mins, &l.max_tres_per_job,
                          &l.max_tres_per_node, &l.max_tres_mins_per_job, &l.max_tres_run_mins})
      collect(*t);
  };
  collect_assoc(dump_.cluster.limits);
  for (const auto& a : dump_.assocs) collect_assoc(a.limits);
  for (const auto& q : dump_.qos)
    for (const auto* t : {&q.grp_tres, &q.grp_tres_mins, &q.grp_tres_run_mins, &q.max_tres_per_job,
                          &q.max_tres_per_node, &q.max_tres_per_user, &q.max_tres_per_account,
                          &q.max_tres_mins_per_job, &q.max_tres_run_mins_per_user,
                          &q.max_tres_run_mins_per_account, &q.min_tres_per_job})
      collect(*t);
  tres_names_.assign(std::begin(kFixedTres), std::end(kFixedTres));
  tres_names_.insert(tres_names_.end(), extra.begin(), extra.end());

  auto fail = [&](int line, const std::string& msg) {
    throw core::ParseError(dump_.source + (line > 0 ? ":" + std::to_string(line) : "") + ": " +
                           msg);
  };
  // QOS= of a line applied to the inherited list: plain names replace it, "+q" / "-q" edit it.
  auto qos_list = [&](const core::AcctAssocLine& l, std::vector<int> inherited) {
    if (!l.qos_set) return inherited;
    std::set<int> out;
    const bool relative = std::all_of(l.qos.begin(), l.qos.end(), [](const std::string& q) {
      return !q.empty() && (q.front() == '+' || q.front() == '-');
    });
    if (relative) out.insert(inherited.begin(), inherited.end());
    for (const auto& q : l.qos) {
      const bool minus = !q.empty() && q.front() == '-';
      const bool plus = !q.empty() && q.front() == '+';
      const int idx = find_qos(plus || minus ? q.substr(1) : q);
      if (minus)
        out.erase(idx);
      else
        out.insert(idx);
    }
    return std::vector<int>(out.begin(), out.end());
  };
  auto inherit = [](int64_t own, int64_t above) { return own != kNoLimit ? own : above; };
  auto inherit_tres = [](const core::TresCounts& own, core::TresCounts above) {
    for (const auto& [name, n] : own) above[name] = n;
    return above;
  };
  auto settle = [&](Assoc& a, const core::AcctAssocLine& l, const Assoc* up) {
    a.line = l.line;
    a.own = l.limits;
    a.grp_tres = l.limits.grp_tres;
    a.max_jobs = inherit(l.limits.max_jobs, up ? up->max_jobs : kNoLimit);
    a.max_submit_jobs = inherit(l.limits.max_submit_jobs, up ? up->max_submit_jobs : kNoLimit);
    a.max_wall_min = inherit(l.limits.max_wall_min, up ? up->max_wall_min : kNoLimit);
    a.max_tres_per_job =
        inherit_tres(l.limits.max_tres_per_job, up ? up->max_tres_per_job : core::TresCounts{});
    a.max_tres_per_node =
        inherit_tres(l.limits.max_tres_per_node, up ? up->max_tres_per_node : core::TresCounts{});
    a.max_tres_mins_per_job = inherit_tres(l.limits.max_tres_mins_per_job,
                                           up ? up->max_tres_mins_per_job : core::TresCounts{});
    // A cluster without QOS= gets "normal", as sacctmgr gives a new cluster.
    a.qos = qos_list(l, up ? up->qos : std::vector<int>{find_qos("normal")});
    a.default_qos = up ? up->default_qos : kNone;
    if (!l.default_qos.empty()) {
      a.default_qos = find_qos(l.default_qos);
      if (!std::binary_search(a.qos.begin(), a.qos.end(), a.default_qos))
        fail(l.line, "DefaultQOS '" + l.default_qos +
                         "' is not among the QOS this association may use (QOS=)");
    }
    a.priority = inherit(l.limits.priority, up ? up->priority : 0);
  };

  Assoc root;
  root.account = "root";
  settle(root, dump_.cluster, nullptr);
  accounts_.emplace("root", kRoot);
  assocs_.push_back(std::move(root));
  for (const auto& l : dump_.assocs) {
    Assoc a;
    a.parent = accounts_.at(l.parent);  // the parser checked parents come first
    if (l.kind == core::AcctAssocLine::Kind::Account) {
      a.account = l.name;
    } else {
      a.account = l.parent;
      a.user = l.name;
      a.partition = l.partition;
    }
    settle(a, l, &assocs_[a.parent]);
    const int idx = static_cast<int>(assocs_.size());
    if (a.is_user()) {
      users_.emplace(std::tuple{a.user, a.account, a.partition}, idx);
      default_account_.emplace(a.user, l.default_account);
    } else {
      accounts_.emplace(a.account, idx);
    }
    assocs_.push_back(std::move(a));
  }
  for (const auto& [part, qos] : partition_qos) {
    const int idx = find_qos(core::to_lower(qos));
    if (idx == kNone)
      throw core::ParseError("partition " + part + ": QOS=" + qos + " is not defined in " +
                             dump_.source);
    partition_qos_.emplace(part, idx);
  }

  for (const auto& q : dump_.qos) {
    qos_tres_.push_back({limit_vector(q.grp_tres), limit_vector(q.max_tres_per_job),
                         limit_vector(q.max_tres_per_node), limit_vector(q.max_tres_mins_per_job),
                         limit_vector(q.max_tres_per_user), limit_vector(q.max_tres_per_account),
                         limit_vector(q.min_tres_per_job)});
    max_qos_priority_ = std::max(max_qos_priority_, q.priority);
  }
  for (const auto& a : assocs_) {
    assoc_tres_.push_back({limit_vector(a.grp_tres),
                           limit_vector(a.max_tres_per_job),
                           limit_vector(a.max_tres_per_node),
                           limit_vector(a.max_tres_mins_per_job),
                           {},
                           {},
                           {}});
    max_assoc_priority_ = std::max(max_assoc_priority_, a.priority);
  }
}

std::vector<int64_t> Limits::limit_vector(const core::TresCounts& t) const {
  std::vector<int64_t> v(tres_names_.size(), kNoLimit);
  for (size_t i = 0; i < tres_names_.size(); ++i)
    if (auto it = t.find(tres_names_[i]); it != t.end()) v[i] = it->second;
  return v;
}

std::vector<int64_t> Limits::tres_vector(const JobTres& t) const {
  std::vector<int64_t> v(tres_names_.size(), 0);
  for (size_t i = 0; i < tres_names_.size(); ++i) v[i] = t.get(tres_names_[i]);
  return v;
}

int Limits::find_assoc(std::string_view user, std::string_view account,
                       std::string_view partition) const {
  const std::string u(user), a(account);
  if (!partition.empty())
    if (auto it = users_.find({u, a, std::string(partition)}); it != users_.end())
      return it->second;
  auto it = users_.find({u, a, ""});
  return it == users_.end() ? kNone : it->second;
}

std::optional<std::string> Limits::default_account(std::string_view user) const {
  auto it = default_account_.find(std::string(user));
  if (it == default_account_.end()) return std::nullopt;
  return it->second;
}

int Limits::find_qos(std::string_view name) const {
  for (size_t i = 0; i < dump_.qos.size(); ++i)
    if (dump_.qos[i].name == name) return static_cast<int>(i);
  return kNone;
}

std::string Limits::default_qos(int assoc) const {
  if (assoc != kNone) {
    const Assoc& a = assocs_[assoc];
    if (a.default_qos != kNone) return dump_.qos[a.default_qos].name;
    if (a.qos.size() == 1) return dump_.qos[a.qos.front()].name;
  }
  if (assocs_[kRoot].default_qos != kNone) return dump_.qos[assocs_[kRoot].default_qos].name;
  return "normal";
}

bool Limits::qos_allowed(int assoc, int qos) const {
  if (assoc == kNone || qos == kNone) return false;
  const auto& list = assocs_[assoc].qos;
  return std::binary_search(list.begin(), list.end(), qos);
}

Limits::Key Limits::key(std::string_view user, std::string_view account, std::string_view qos,
                        std::string_view partition) const {
  Key k;
  k.user = std::string(user);
  k.account = core::to_lower(account);
  k.assoc = find_assoc(k.user, k.account, partition);
  k.qos = find_qos(core::to_lower(qos));
  if (auto it = partition_qos_.find(std::string(partition)); it != partition_qos_.end())
    k.part_qos = it->second;
  return k;
}

Limits::Key Limits::key(const core::Job& job) const {
  return key(job.user, job.spec.account, job.spec.qos, job.partition);
}

std::vector<int> Limits::qos_order(const Key& k) const {
  if (k.qos != kNone && k.part_qos != kNone) {
    if (k.qos == k.part_qos) return {k.qos};
    if (dump_.qos[k.qos].has_flag("OverPartQOS")) return {k.qos, k.part_qos};
    return {k.part_qos, k.qos};
  }
  if (k.qos != kNone) return {k.qos};
  if (k.part_qos != kNone) return {k.part_qos};
  return {};
}

Limits::Usage Limits::empty_usage() const {
  Usage u;
  Usage::Counters zero;
  zero.tres.assign(tres_names_.size(), 0);
  u.assoc_.assign(assocs_.size(), zero);
  u.qos_.assign(dump_.qos.size(), zero);
  return u;
}

Limits::Usage::Counters& Limits::counters(std::map<std::pair<int, std::string>, Usage::Counters>& m,
                                          int q, const std::string& name) const {
  auto [it, fresh] = m.try_emplace({q, name});
  if (fresh) it->second.tres.assign(tres_names_.size(), 0);
  return it->second;
}

const Limits::Usage::Counters* Limits::find(
    const std::map<std::pair<int, std::string>, Usage::Counters>& m, int q,
    const std::string& name) const {
  auto it = m.find({q, name});
  return it == m.end() ? nullptr : &it->second;
}

void Limits::add_running(Usage& u, const Key& k, const JobTres& held) const {
  const std::vector<int64_t> v = tres_vector(held);
  auto charge = [&](Usage::Counters& c) {
    c.jobs += 1;
    for (size_t i = 0; i < v.size(); ++i) c.tres[i] += v[i];
    for (const auto& n : held.nodes) c.nodes[n] += 1;
  };
  for (int a = k.assoc; a != kNone; a = assocs_[a].parent) charge(u.assoc_[a]);
  for (int q : qos_order(k)) {
    charge(u.qos_[q]);
    charge(counters(u.qos_user_, q, k.user));
    charge(counters(u.qos_account_, q, k.account));
  }
}

void Limits::add_submitted(Usage& u, const Key& k, int64_t count) const {
  for (int a = k.assoc; a != kNone; a = assocs_[a].parent) u.assoc_[a].submit += count;
  for (int q : qos_order(k)) {
    u.qos_[q].submit += count;
    counters(u.qos_user_, q, k.user).submit += count;
    counters(u.qos_account_, q, k.account).submit += count;
  }
}

int64_t Limits::used(const Usage::Counters& c, size_t i) const {
  if (i == node_tres_) return static_cast<int64_t>(c.nodes.size());
  return i < c.tres.size() ? c.tres[i] : 0;  // a group without counts yet has none
}

// What a job adds to a group's count of TRES i: its amount, except for nodes, where only the
// nodes the group does not use yet count (for a request: at least the nodes beyond those).
int64_t Limits::added(const Usage::Counters& c, size_t i, const JobTres& t,
                      const std::vector<int64_t>& req) const {
  if (i != node_tres_) return req[i];
  if (t.nodes.empty()) return std::max<int64_t>(0, t.node - static_cast<int64_t>(c.nodes.size()));
  int64_t fresh = 0;
  for (const auto& n : t.nodes) fresh += c.nodes.count(n) ? 0 : 1;
  return fresh;
}

// Which limits a QOS has set already: a later QOS and the associations skip those.
struct Limits::Claimed {
  explicit Claimed(size_t n)
      : grp_tres(n, 0),
        max_pj(n, 0),
        max_pn(n, 0),
        max_mins_pj(n, 0),
        max_pu(n, 0),
        max_pa(n, 0),
        min_pj(n, 0) {}
  bool grp_jobs = false, grp_submit = false, max_jobs_pa = false, max_jobs_pu = false;
  bool max_submit_pa = false, max_submit_pu = false, max_wall = false;
  std::vector<char> grp_tres, max_pj, max_pn, max_mins_pj, max_pu, max_pa, min_pj;
};

namespace {

// The first TRES (in table order) whose limit in `lim` is broken; -1 when none is. Limits
// flagged in `skip` are not looked at; those looked at are flagged in `claim` (when given).
template <typename Broken>
int first_broken(const std::vector<int64_t>& lim, const std::vector<char>& skip,
                 std::vector<char>* claim, Broken broken) {
  for (size_t i = 0; i < lim.size(); ++i) {
    if (lim[i] == kNoLimit || skip[i]) continue;
    if (claim) (*claim)[i] = 1;
    if (broken(i, lim[i])) return static_cast<int>(i);
  }
  return -1;
}

bool over_time(int64_t time_limit_min, int64_t max_min) {
  return time_limit_min < 0 || time_limit_min > max_min;
}

}  // namespace

std::string Limits::check_start(const Key& k, const JobTres& tres, int64_t time_limit_min,
                                const Usage& u) const {
  if (enforce_.associations && k.assoc == kNone) return "InvalidAccount";
  if (enforce_.qos && (k.qos == kNone || !qos_allowed(k.assoc, k.qos))) return "InvalidQOS";
  if (!enforce_.limits || k.assoc == kNone) return "";
  const size_t n = tres_names_.size();
  const std::vector<int64_t> req = tres_vector(tres);
  const std::vector<int> qs = qos_order(k);
  Claimed c(n);
  static const Usage::Counters kEmpty;
  auto counts = [&](const Usage::Counters* p) -> const Usage::Counters& { return p ? *p : kEmpty; };
  auto reason = [&](Kind kind, int i) { return kReasons[kind][tres_class(tres_names_[i])]; };

  // Job counts and wall time (Slurm's pre-select checks).
  for (int q : qs) {
    const core::QosLine& ql = dump_.qos[q];
    const Usage::Counters& qc = u.qos_[q];
    const Usage::Counters& qa = counts(find(u.qos_account_, q, k.account));
    const Usage::Counters& qu = counts(find(u.qos_user_, q, k.user));
    if (!c.grp_jobs && ql.grp_jobs != kNoLimit) {
      c.grp_jobs = true;
      if (qc.jobs >= ql.grp_jobs) return "QOSGrpJobsLimit";
    }
    if (!c.max_jobs_pa && ql.max_jobs_per_account != kNoLimit) {
      c.max_jobs_pa = true;
      if (qa.jobs >= ql.max_jobs_per_account) return "MaxJobsPerAccount";
    }
    if (!c.max_jobs_pu && ql.max_jobs_per_user != kNoLimit) {
      c.max_jobs_pu = true;
      if (qu.jobs >= ql.max_jobs_per_user) return "QOSMaxJobsPerUserLimit";
    }
    if (!c.max_wall && ql.max_wall_min != kNoLimit) {
      c.max_wall = true;
      if (over_time(time_limit_min, ql.max_wall_min)) return "QOSMaxWallDurationPerJobLimit";
    }
  }
  for (int a = k.assoc; a != kNone; a = assocs_[a].parent) {
    const Assoc& as = assocs_[a];
    const Usage::Counters& ac = u.assoc_[a];
    if (!c.grp_jobs && as.own.grp_jobs != kNoLimit && ac.jobs >= as.own.grp_jobs)
      return "AssocGrpJobsLimit";
    if (a != k.assoc) continue;  // Max* limits: the user's association (inherited values)
    if (!c.max_jobs_pa && !c.max_jobs_pu && as.max_jobs != kNoLimit && ac.jobs >= as.max_jobs)
      return "AssocMaxJobsLimit";
    if (!c.max_wall && as.max_wall_min != kNoLimit && over_time(time_limit_min, as.max_wall_min))
      return "AssocMaxWallDurationPerJobLimit";
  }

  // TRES (Slurm's post-select checks).
  const int64_t job_nodes = std::max<int64_t>(1, req[node_tres_]);
  for (int q : qs) {
    const TresLimits& tl = qos_tres_[q];
    const Usage::Counters& qc = u.qos_[q];
    const Usage::Counters& qa = counts(find(u.qos_account_, q, k.account));
    const Usage::Counters& qu = counts(find(u.qos_user_, q, k.user));
    // The returned checker outlives this call: it holds the counters by pointer, not by a
    // reference to the parameter.
    auto group = [&](const Usage::Counters& g) {
      return [&, gp = &g](size_t i, int64_t lim) {
        const int64_t add = added(*gp, i, tres, req);
        return add > 0 && used(*gp, i) + add > lim;
      };
    };
    int i;
    if ((i = first_broken(tl.grp, c.grp_tres, &c.grp_tres, group(qc))) >= 0)
      return reason(kQosGrp, i);
    if ((i = first_broken(
             tl.max_mins_pj, c.max_mins_pj, &c.max_mins_pj, [&](size_t j, int64_t lim) {
               return req[j] > 0 && (time_limit_min < 0 || req[j] * time_limit_min > lim);
             })) >= 0)
      return reason(kQosMaxMinsPerJob, i);
    if ((i = first_broken(tl.max_pj, c.max_pj, &c.max_pj,
                          [&](size_t j, int64_t lim) { return req[j] > lim; })) >= 0)
      return reason(kQosMaxPerJob, i);
    if ((i = first_broken(tl.max_pn, c.max_pn, &c.max_pn,
                          [&](size_t j, int64_t lim) { return req[j] / job_nodes > lim; })) >= 0)
      return reason(kQosMaxPerNode, i);
    if ((i = first_broken(tl.min_pj, c.min_pj, &c.min_pj, [&](size_t j, int64_t lim) {
           // Memory of a whole-node request is known once placed.
           return req[j] < lim && !(tres_names_[j] == "mem" && req[j] == 0);
         })) >= 0)
      return reason(kQosMin, i);
    if ((i = first_broken(tl.max_pa, c.max_pa, &c.max_pa, group(qa))) >= 0)
      return reason(kQosMaxPerAccount, i);
    if ((i = first_broken(tl.max_pu, c.max_pu, &c.max_pu, group(qu))) >= 0)
      return reason(kQosMaxPerUser, i);
  }
  for (int a = k.assoc; a != kNone; a = assocs_[a].parent) {
    const TresLimits& tl = assoc_tres_[a];
    const Usage::Counters& ac = u.assoc_[a];
    int i = first_broken(tl.grp, c.grp_tres, nullptr, [&](size_t j, int64_t lim) {
      const int64_t add = added(ac, j, tres, req);
      return add > 0 && used(ac, j) + add > lim;
    });
    if (i >= 0) return reason(kAssocGrp, i);
    if (a != k.assoc) continue;
    if ((i = first_broken(tl.max_mins_pj, c.max_mins_pj, nullptr, [&](size_t j, int64_t lim) {
           return req[j] > 0 && (time_limit_min < 0 || req[j] * time_limit_min > lim);
         })) >= 0)
      return reason(kAssocMaxMinsPerJob, i);
    if ((i = first_broken(tl.max_pj, c.max_pj, nullptr,
                          [&](size_t j, int64_t lim) { return req[j] > lim; })) >= 0)
      return reason(kAssocMaxPerJob, i);
    if ((i = first_broken(tl.max_pn, c.max_pn, nullptr,
                          [&](size_t j, int64_t lim) { return req[j] / job_nodes > lim; })) >= 0)
      return reason(kAssocMaxPerNode, i);
  }
  return "";
}

std::string Limits::check_submit(const Key& k, const JobTres& tres, int64_t time_limit_min,
                                 int64_t count, const Usage& u) const {
  if (!enforce_.limits || k.assoc == kNone) return "";
  const size_t n = tres_names_.size();
  const std::vector<int64_t> req = tres_vector(tres);
  const std::vector<int> qs = qos_order(k);
  // Without a QOS Slurm checks strictly; with one, only DenyOnLimit makes size and time
  // limits refuse a submission (otherwise the job is accepted and waits).
  bool strict = qs.empty();
  for (int q : qs) strict = strict || dump_.qos[q].has_flag("DenyOnLimit");
  Claimed c(n);
  static const Usage::Counters kEmpty;
  auto counts = [&](const Usage::Counters* p) -> const Usage::Counters& { return p ? *p : kEmpty; };
  auto reason = [&](Kind kind, int i) { return kReasons[kind][tres_class(tres_names_[i])]; };
  const int64_t job_nodes = std::max<int64_t>(1, req[node_tres_]);
  auto over = [&](size_t j, int64_t lim) { return req[j] > lim; };
  auto under = [&](size_t j, int64_t lim) {
    return req[j] < lim && !(tres_names_[j] == "mem" && req[j] == 0);
  };
  auto over_per_node = [&](size_t j, int64_t lim) { return req[j] / job_nodes > lim; };
  auto over_mins = [&](size_t j, int64_t lim) {
    return req[j] > 0 && (time_limit_min < 0 || req[j] * time_limit_min > lim);
  };
  int i;
  for (int q : qs) {
    const core::QosLine& ql = dump_.qos[q];
    const TresLimits& tl = qos_tres_[q];
    if (strict) {
      if ((i = first_broken(tl.max_pa, c.max_pa, &c.max_pa, over)) >= 0)
        return reason(kQosMaxPerAccount, i);
      if ((i = first_broken(tl.max_pu, c.max_pu, &c.max_pu, over)) >= 0)
        return reason(kQosMaxPerUser, i);
      // A group limit is a size limit for one job here.
      if ((i = first_broken(tl.grp, c.grp_tres, &c.grp_tres, over)) >= 0) return reason(kQosGrp, i);
    }
    if (!c.grp_submit && ql.grp_submit_jobs != kNoLimit) {
      c.grp_submit = true;
      if (u.qos_[q].submit + count > ql.grp_submit_jobs) return "QOSGrpSubmitJobsLimit";
    }
    if (!c.max_wall && ql.max_wall_min != kNoLimit) {
      c.max_wall = true;
      if (strict && over_time(time_limit_min, ql.max_wall_min))
        return "QOSMaxWallDurationPerJobLimit";
    }
    if (strict) {
      if ((i = first_broken(tl.max_mins_pj, c.max_mins_pj, &c.max_mins_pj, over_mins)) >= 0)
        return reason(kQosMaxMinsPerJob, i);
      if ((i = first_broken(tl.max_pj, c.max_pj, &c.max_pj, over)) >= 0)
        return reason(kQosMaxPerJob, i);
      if ((i = first_broken(tl.max_pn, c.max_pn, &c.max_pn, over_per_node)) >= 0)
        return reason(kQosMaxPerNode, i);
    }
    if (!c.max_submit_pa && ql.max_submit_jobs_per_account != kNoLimit) {
      c.max_submit_pa = true;
      if (counts(find(u.qos_account_, q, k.account)).submit + count >
          ql.max_submit_jobs_per_account)
        return "MaxSubmitJobsPerAccount";
    }
    if (!c.max_submit_pu && ql.max_submit_jobs_per_user != kNoLimit) {
      c.max_submit_pu = true;
      if (counts(find(u.qos_user_, q, k.user)).submit + count > ql.max_submit_jobs_per_user)
        return "QOSMaxSubmitJobPerUserLimit";
    }
    if (strict && (i = first_broken(tl.min_pj, c.min_pj, &c.min_pj, under)) >= 0)
      return reason(kQosMin, i);
  }
  for (int a = k.assoc; a != kNone; a = assocs_[a].parent) {
    const Assoc& as = assocs_[a];
    const TresLimits& tl = assoc_tres_[a];
    if (strict && (i = first_broken(tl.grp, c.grp_tres, nullptr, over)) >= 0)
      return reason(kAssocGrp, i);
    if (!c.grp_submit && as.own.grp_submit_jobs != kNoLimit &&
        u.assoc_[a].submit + count > as.own.grp_submit_jobs)
      return "AssocGrpSubmitJobsLimit";
    if (a != k.assoc) continue;
    if (strict) {
      if ((i = first_broken(tl.max_pj, c.max_pj, nullptr, over)) >= 0)
        return reason(kAssocMaxPerJob, i);
      if ((i = first_broken(tl.max_pn, c.max_pn, nullptr, over_per_node)) >= 0)
        return reason(kAssocMaxPerNode, i);
    }
    if (!c.max_submit_pa && !c.max_submit_pu && as.max_submit_jobs != kNoLimit &&
        u.assoc_[a].submit + count > as.max_submit_jobs)
      return "AssocMaxSubmitJobLimit";
    if (strict) {
      if ((i = first_broken(tl.max_mins_pj, c.max_mins_pj, nullptr, over_mins)) >= 0)
        return reason(kAssocMaxMinsPerJob, i);
      if (!c.max_wall && as.max_wall_min != kNoLimit && over_time(time_limit_min, as.max_wall_min))
        return "AssocMaxWallDurationPerJobLimit";
    }
  }
  return "";
}

int64_t Limits::max_wall_min(const Key& k) const {
  if (!enforce_.limits) return kNoLimit;
  for (int q : qos_order(k))
    if (dump_.qos[q].max_wall_min != kNoLimit) return dump_.qos[q].max_wall_min;
  return k.assoc == kNone ? kNoLimit : assocs_[k.assoc].max_wall_min;
}

AssocTree Limits::fairshare_tree(int64_t usage_time) const {
  AssocTree tree(usage_time);
  for (const auto& l : dump_.assocs) {
    RawShares shares;
    shares.parent = l.fairshare_parent;
    if (l.fairshare != kNoLimit) shares.value = static_cast<uint32_t>(l.fairshare);
    if (l.kind == core::AcctAssocLine::Kind::Account)
      tree.add_account(l.name, l.parent, shares);
    else if (!tree.find_user(l.name, l.parent))  // per-partition associations share one
      tree.add_user(l.name, l.parent, shares);
  }
  return tree;
}

LimitPass::LimitPass(const Limits& limits, const std::vector<const core::Job*>& running,
                     int64_t def_mem_per_cpu_mb, int64_t def_mem_per_node_mb)
    : limits_(limits),
      usage_(limits.empty_usage()),
      def_mem_per_cpu_mb_(def_mem_per_cpu_mb),
      def_mem_per_node_mb_(def_mem_per_node_mb) {
  if (!limits_.enforce().limits) return;
  for (const core::Job* job : running)
    limits_.add_running(usage_, limits_.key(*job), allocated_tres(job->alloc));
}

std::string LimitPass::before(const core::Job& job, const std::string& partition) const {
  if (!limits_.enforce().any()) return "";
  return limits_.check_start(limits_.key(job.user, job.spec.account, job.spec.qos, partition),
                             requested_tres(job.spec, def_mem_per_cpu_mb_, def_mem_per_node_mb_),
                             job.time_limit_min, usage_);
}

std::string LimitPass::at_start(const core::Job& job, const std::string& partition,
                                const JobTres& held) const {
  if (!limits_.enforce().any()) return "";
  return limits_.check_start(limits_.key(job.user, job.spec.account, job.spec.qos, partition), held,
                             job.time_limit_min, usage_);
}

void LimitPass::started(const core::Job& job, const std::string& partition, const JobTres& held) {
  if (!limits_.enforce().limits) return;
  limits_.add_running(usage_, limits_.key(job.user, job.spec.account, job.spec.qos, partition),
                      held);
}

}  // namespace drover::sched
