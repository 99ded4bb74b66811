// Accounts, users and QOS in the controller (the accounting file and AccountingStorageEnforce):
// a new job's account and QOS, the limits that refuse a submission, and the count of submitted
// jobs those limits need. The limits that hold jobs back are the engine's (sched/limits.hpp).
#include <algorithm>

#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

std::string StateMachine::admit(core::JobSpec& spec, const Caller& who, const Partition& part,
                                int64_t count, bool test_only) {
  const sched::Limits* limits = config_.limits.get();
  if (limits == nullptr) return "";
  const sched::Enforce& enforce = limits->enforce();
  // The account: as given, else the user's DefaultAccount.
  std::string account = core::to_lower(spec.account);
  if (account.empty()) account = limits->default_account(who.user).value_or("");
  int assoc = limits->find_assoc(who.user, account, part.name);
  if (assoc == sched::Limits::kNone) {
    if (enforce.associations) return "Invalid account or account/partition combination specified";
    // Not enforced: as Slurm, a job naming an account the user is not in charges the user's
    // default account when there is one.
    if (auto def = limits->default_account(who.user)) {
      account = *def;
      assoc = limits->find_assoc(who.user, account, part.name);
    }
  }
  // The QOS: as given, else the association's default.
  std::string qos = core::to_lower(spec.qos);
  if (qos.empty()) qos = limits->default_qos(assoc);
  const int q = limits->find_qos(qos);
  if (enforce.qos && (q == sched::Limits::kNone || !limits->qos_allowed(assoc, q)))
    return "Invalid qos specification";
  spec.account = account;
  spec.qos = qos;
  if (!enforce.limits) return "";

  const sched::Limits::Key key = limits->key(who.user, account, qos, part.name);
  // Without --time or a partition DefaultTime the MaxWall in force is the job's limit.
  if (spec.time_limit_min == core::kTimeNotSet && part.default_time_min < 0) {
    const int64_t wall = limits->max_wall_min(key);
    if (wall != core::kNoLimit)
      spec.time_limit_min = part.max_time_min >= 0 ? std::min(wall, part.max_time_min) : wall;
  }
  int64_t time_limit = spec.time_limit_min;
  if (time_limit == core::kTimeNotSet)
    time_limit = part.default_time_min >= 0 ? part.default_time_min : part.max_time_min;
  const sched::JobTres tres =
      sched::requested_tres(spec, config_.def_mem_per_cpu_mb, config_.def_mem_per_node_mb);
  if (!limits->check_submit(key, tres, time_limit, count, submit_usage()).empty())
    return "Job violates accounting/QOS policy (job submit limit, user's size and/or time "
           "limits)";
  if (!test_only) limits->add_submitted(*acct_.submit_usage(), key, count);
  return "";
}

const sched::Limits::Usage& StateMachine::submit_usage() {
  if (!acct_.submit_usage()) {
    const sched::Limits& limits = *config_.limits;
    sched::Limits::Usage usage = limits.empty_usage();
    for (const auto& [id, job] : jobs_) {
      if (core::is_finished(job.state)) continue;
      // An array's remainder stands for each of its tasks.
      const int64_t n =
          job.array_pending.empty() ? 1 : static_cast<int64_t>(job.array_pending.size());
      limits.add_submitted(usage, limits.key(job), n);
    }
    acct_.set_submit_usage(std::move(usage));
  }
  return *acct_.submit_usage();
}

}  // namespace drover::ctld
