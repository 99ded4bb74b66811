// What sprio and sshare show: each pending job's multifactor priority factors, and the
// fair-share values of every association. Read-only views of the controller's state, computed
// at query time (usage decays, so the association tree is decayed to `now` in a copy).
//
// Associations are read generically (root, accounts, user associations under any account), so
// these views do not depend on how users are mapped to accounts.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {
namespace {

// Slurm's TRES, in the order of its TRES table (sshare lists them so).
const std::vector<std::string> kTresNames = {"cpu",     "mem",     "energy", "node",
                                             "billing", "fs/disk", "vmem",   "pages"};

// The association a job charges: the user's association in the job's account, else the one
// under root, else the user's first association.
std::optional<sched::AssocId> job_association(const sched::AssocTree& tree, const core::Job& job) {
  if (!job.spec.account.empty())
    if (auto id = tree.find_user(job.user, job.spec.account)) return id;
  if (auto id = tree.find_user(job.user, "root")) return id;
  for (sched::AssocId id = 0; id < tree.size(); ++id)
    if (tree.at(id).is_user() && tree.at(id).user == job.user) return id;
  return std::nullopt;
}

// A double for the wire: JSON has no infinity (a Level FS without usage is +inf).
json wire_double(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  return v;
}

json wire_double(const std::optional<double>& v) { return v ? wire_double(*v) : json(nullptr); }

// A filter given (even empty) lets only its values through; none given lets everything.
template <class T, class V>
bool listed(const std::optional<std::vector<T>>& filter, const V& value) {
  if (!filter) return true;
  return std::find(filter->begin(), filter->end(), value) != filter->end();
}

// Names any case; an empty filter is none.
bool listed_nocase(const std::optional<std::vector<std::string>>& filter,
                   const std::string& value) {
  if (!filter || filter->empty()) return true;
  for (const auto& v : *filter)
    if (core::iequals(v, value)) return true;
  return false;
}

}  // namespace

json StateMachine::priority_factors_report(const proto::QueryRequest& req, int64_t now) const {
  const sched::PriorityConfig& conf = config_.priority;
  json reply = {{"priority_type", conf.multifactor() ? "priority/multifactor" : "priority/basic"},
                {"weights",
                 {{"age", conf.weight_age},
                  {"assoc", conf.weight_assoc},
                  {"fairshare", conf.weight_fairshare},
                  {"job_size", conf.weight_job_size},
                  {"partition", conf.weight_partition},
                  {"qos", conf.weight_qos}}},
                {"weight_tres", conf.weight_tres_text},
                {"rows", json::array()}};
  if (!conf.multifactor()) return reply;

  sched::AssocTree tree = acct_.tree();
  tree.decay_to(now, conf.decay_half_life_s);
  const auto fs_opts = sched::fairshare_options(conf);
  const auto shares = sched::compute_fairshare(tree, fs_opts);
  const PriorityTotals totals = priority_totals();

  json& rows = reply["rows"];
  for (const auto& [id, job] : jobs_) {
    // As Slurm lists them: pending, eligible (begin time reached, dependencies met; from
    // submission on under ACCRUE_ALWAYS) and not held.
    if (job.state != core::JobState::Pending || job.held || job.priority == 0) continue;
    if (!conf.flags.accrue_always &&
        (!job.dependency.empty() ||
         (job.eligible_time != core::kNoTime && job.eligible_time > now)))
      continue;
    if (!listed(req.job_ids, id) || !listed(req.uids, job.uid)) continue;

    double fairshare = 0;
    if (auto assoc = job_association(tree, job))
      fairshare = sched::job_fairshare_factor(tree, shares, *assoc, fs_opts);
    // One row per partition the job may run in, each with that partition's factor.
    std::vector<const Partition*> parts;
    for (const auto& name : job.spec.partitions)
      if (const Partition* p = find_partition(name)) parts.push_back(p);
    if (parts.empty())
      if (const Partition* p = find_partition(job.partition)) parts.push_back(p);
    for (const Partition* part : parts) {
      if (!listed(req.partitions, part->name)) continue;
      const sched::JobPriorityInput in = priority_input(job, part, now, fairshare, totals);
      const sched::PriorityFactors f = sched::compute_priority_factors(in, conf);
      json tres = json::object();
      for (const auto& [name, v] : f.tres) tres[name] = v;
      rows.push_back({{"job_id", id},
                      {"partition", part->name},
                      {"user", job.user},
                      {"uid", job.uid},
                      {"factors",
                       {{"age", f.age},
                        {"assoc", f.assoc},
                        {"fairshare", f.fairshare},
                        {"job_size", f.job_size},
                        {"partition", f.partition},
                        {"qos", f.qos},
                        {"tres", std::move(tres)},
                        {"site", f.site},
                        {"nice", f.nice}}}});
    }
  }
  return reply;
}

json StateMachine::shares_report(const proto::QueryRequest& req, int64_t now) const {
  const sched::PriorityConfig& conf = config_.priority;
  json reply = {{"priority_type", conf.multifactor() ? "priority/multifactor" : "priority/basic"},
                {"fair_tree", conf.fair_tree()},
                {"tres_names", kTresNames},
                {"rows", json::array()}};
  // Fair share is kept under priority/multifactor only; under priority/basic there are no
  // associations to show (as Slurm without an accounting database).
  if (!conf.multifactor()) return reply;

  sched::AssocTree tree = acct_.tree();
  tree.decay_to(now, conf.decay_half_life_s);
  const auto shares = sched::compute_fairshare(tree, sched::fairshare_options(conf));

  // TRESRunMins: what running jobs hold times the rest of their time limit, charged to their
  // association and every one above it. Slurm counts an unlimited job's limit as its INFINITE
  // minutes.
  std::vector<std::vector<uint64_t>> run_secs(tree.size(),
                                              std::vector<uint64_t>(kTresNames.size(), 0));
  for (const auto& [id, job] : jobs_) {
    if (job.state != core::JobState::Running || job.start_time == core::kNoTime) continue;
    const auto assoc = job_association(tree, job);
    if (!assoc) continue;
    const int64_t limit_s =
        job.time_limit_min < 0 ? int64_t{0xffffffff} * 60 : job.time_limit_min * 60;
    const auto left = static_cast<uint64_t>(std::max<int64_t>(0, limit_s - (now - job.start_time)));
    const auto cpus = static_cast<uint64_t>(job.alloc_cpus());
    const uint64_t held[] = {
        cpus, static_cast<uint64_t>(job.alloc_mem_mb()), 0, job.alloc.size(), cpus, 0, 0, 0};
    for (sched::AssocId a = *assoc;; a = tree.at(a).parent) {
      for (std::size_t t = 0; t < kTresNames.size(); ++t) run_secs[a][t] += held[t] * left;
      if (a == sched::AssocTree::kRoot) break;
    }
  }

  json& rows = reply["rows"];
  for (const sched::SshareRow& r : sched::sshare_rows(tree, shares)) {
    // As Slurm's controller filters: users by name (accounts pass), accounts by name (users
    // by their account).
    if (!r.user.empty() && !listed_nocase(req.users, r.user)) continue;
    if (!listed_nocase(req.accounts, r.account)) continue;
    json raw_shares = nullptr;
    if (r.raw_shares)
      raw_shares = r.raw_shares->parent ? json("parent") : json(r.raw_shares->value);
    // Usage is billing-seconds (CPU-seconds: drover has no TRESBillingWeights yet), so the
    // per-TRES usage Slurm keeps is known for cpu and billing only.
    const auto usage_mins = static_cast<uint64_t>(r.raw_usage / 60);
    json tres_raw = json::array(), tres_run = json::array();
    for (std::size_t t = 0; t < kTresNames.size(); ++t) {
      tres_raw.push_back(kTresNames[t] == "cpu" || kTresNames[t] == "billing" ? usage_mins : 0);
      tres_run.push_back(run_secs[r.id][t] / 60);
    }
    rows.push_back({{"id", r.id},
                    {"account", r.account},
                    {"user", r.user},
                    {"parent", r.parent},
                    {"raw_shares", std::move(raw_shares)},
                    {"norm_shares", wire_double(r.norm_shares)},
                    {"raw_usage", r.raw_usage},
                    {"norm_usage", wire_double(r.norm_usage)},
                    {"effective_usage", wire_double(r.effective_usage)},
                    {"fairshare", wire_double(r.fairshare)},
                    {"level_fs", wire_double(r.level_fs)},
                    {"grp_tres_raw", std::move(tres_raw)},
                    {"tres_run_mins", std::move(tres_run)}});
  }
  return reply;
}

}  // namespace drover::ctld
