// priority/multifactor in the controller: usage charged to users' associations as jobs
// end, and every pending job's priority recomputed from its factors before a full pass.
// Associations come from the accounting file (accounts.cfg); without one, each user is an
// association under root.
#include <algorithm>

#include "ctld/state_machine.hpp"

namespace drover::ctld {

sched::AssocId StateMachine::charged_association(const core::Job& job) {
  if (config_.limits)
    if (auto id = acct_.tree().find_user(job.user, job.spec.account)) return *id;
  if (auto id = acct_.tree().find_user(job.user, "root")) return *id;
  return acct_.tree().add_user(job.user, "root");
}

void StateMachine::charge_usage(const core::Job& job, int64_t now, Effects& fx) {
  if (!config_.priority.multifactor() || job.start_time == core::kNoTime || now <= job.start_time)
    return;
  const sched::AssocId id = charged_association(job);
  double rate = job.alloc_cpus();
  if (config_.limits)  // the QOS's UsageFactor scales what the job is charged
    if (int q = config_.limits->find_qos(job.spec.qos); q != sched::Limits::kNone)
      rate *= config_.limits->qos()[q].usage_factor;
  acct_.tree().decay_to(now, config_.priority.decay_half_life_s);
  acct_.tree().add_running_usage(id, job.start_time, now, rate, config_.priority.decay_half_life_s);
  fx.journal(journal::Usage{});
}

json StateMachine::usage_record() const {
  json users = json::array();
  for (sched::AssocId id = 0; id < acct_.tree().size(); ++id) {
    const sched::Association& a = acct_.tree().at(id);
    if (a.is_user() && a.raw_usage > 0) users.push_back({a.user, a.account, a.raw_usage});
  }
  return {{"time", acct_.tree().usage_time()}, {"users", users}};
}

void StateMachine::restore_usage(const json& record) {
  if (!record.is_object()) return;
  const int64_t at = record.value("time", int64_t{0});
  // Usage is valued at the tree's time: older usage is decayed to it first.
  acct_.tree().decay_to(at, config_.priority.decay_half_life_s);
  const double factor =
      sched::decay_factor(acct_.tree().usage_time() - at, config_.priority.decay_half_life_s);
  for (const auto& u : record.value("users", json::array())) {
    const std::string user = u.at(0), account = u.at(1);
    std::optional<sched::AssocId> id = acct_.tree().find_user(user, account);
    // A user with no association of its own is charged under root (charged_association), so
    // that one comes back; any other association that is gone takes its usage with it, as Slurm
    // drops the usage of a deleted association.
    if (!id && account == "root") id = acct_.tree().add_user(user, "root");
    if (id) acct_.tree().add_usage(*id, u.at(2).get<double>() * factor);
  }
}

void StateMachine::update_priorities(int64_t now) {
  const sched::PriorityConfig& conf = config_.priority;
  if (!conf.multifactor()) return;
  acct_.tree().decay_to(now, conf.decay_half_life_s);
  for (const auto& [id, job] : jobs_)
    if (job.state == core::JobState::Pending) charged_association(job);
  const auto opts = sched::fairshare_options(conf);
  const auto shares = sched::compute_fairshare(acct_.tree(), opts);

  const PriorityTotals totals = priority_totals();
  for (auto& [id, job] : jobs_)
    if (job.state == core::JobState::Pending && !job.held) {
      const uint32_t p = multifactor_priority_of(job, now, shares, totals);
      if (p != job.priority) plan_changed_.push_back(id);
      job.priority = p;
    }
}

StateMachine::PriorityTotals StateMachine::priority_totals() const {
  PriorityTotals t;
  for (const auto& n : nodes_) t.cluster_cpus += static_cast<uint32_t>(n.cpus);
  for (const auto& p : partitions_)
    t.max_partition_job_factor =
        std::max<uint32_t>(t.max_partition_job_factor, p.conf.priority_job_factor);
  return t;
}

sched::JobPriorityInput StateMachine::priority_input(const core::Job& job, const Partition* part,
                                                     int64_t now, double fairshare,
                                                     const PriorityTotals& totals) const {
  if (part == nullptr) part = find_partition(job.partition);
  const uint32_t cluster_cpus = totals.cluster_cpus;
  sched::JobPriorityInput in;
  in.now = now;
  in.submit_time = job.submit_time;
  in.eligible_time = job.eligible_time;
  in.dependency_pending = !job.dependency.empty();
  in.cpus =
      static_cast<uint32_t>(std::max(1, job.spec.ntasks) * std::max(1, job.spec.cpus_per_task));
  in.min_nodes = static_cast<uint32_t>(std::max(1, job.spec.nodes_min));
  in.time_limit_min = job.time_limit_min < 0 ? core::kInfinite : job.time_limit_min;
  in.cluster_cpus = cluster_cpus;
  in.cluster_nodes = static_cast<uint32_t>(nodes_.size());
  if (part != nullptr)
    in.partition_job_factor = static_cast<uint32_t>(part->conf.priority_job_factor);
  in.max_partition_job_factor = totals.max_partition_job_factor;
  if (const sched::Limits* limits = config_.limits.get()) {
    // QOS and association priorities, normalised by the largest of each.
    if (int q = limits->find_qos(job.spec.qos); q != sched::Limits::kNone)
      in.qos_priority = static_cast<uint32_t>(limits->qos()[q].priority);
    in.max_qos_priority = static_cast<uint32_t>(limits->max_qos_priority());
    if (int a = limits->find_assoc(job.user, job.spec.account,
                                   part != nullptr ? part->name : job.partition.str());
        a != sched::Limits::kNone)
      in.assoc_priority = static_cast<uint32_t>(limits->assocs()[a].priority);
    in.max_assoc_priority = static_cast<uint32_t>(limits->max_assoc_priority());
  }
  in.fairshare = fairshare;
  in.job_tres = {{"cpu", in.cpus}};
  in.partition_tres = {{"cpu", cluster_cpus}};
  in.nice = job.nice;
  return in;
}

uint32_t StateMachine::multifactor_priority_of(const core::Job& job, int64_t now,
                                               const std::vector<sched::ShareInfo>& shares,
                                               const PriorityTotals& totals) {
  const sched::PriorityConfig& conf = config_.priority;
  const double fairshare = sched::job_fairshare_factor(
      acct_.tree(), shares, charged_association(job), sched::fairshare_options(conf));
  const sched::JobPriorityInput in = priority_input(job, nullptr, now, fairshare, totals);
  return sched::multifactor_priority(sched::compute_priority_factors(in, conf), conf);
}

uint32_t StateMachine::initial_priority(const core::Job& job, int64_t now) {
  if (!config_.priority.multifactor()) return next_priority(job.nice);
  charged_association(job);
  return multifactor_priority_of(
      job, now, sched::compute_fairshare(acct_.tree(), sched::fairshare_options(config_.priority)),
      priority_totals());
}

}  // namespace drover::ctld
