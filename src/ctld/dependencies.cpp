// Whether a pending job may be considered for resources: holds, begin times, dependencies and
// array running limits, with Slurm's pending reasons.
#include "core/error.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {
namespace {

// Whether a dependency is met or can never be: all entries (or, for '?', any) satisfied;
// any (for '?', every) entry failed.
struct Verdict {
  bool met, never;
};
Verdict verdict(const core::Dependency& dep) {
  bool all_met = true, any_met = false, any_failed = false, all_failed = true;
  for (const auto& e : dep.entries) {
    all_met = all_met && e.state == core::DepState::Satisfied;
    any_met = any_met || e.state == core::DepState::Satisfied;
    any_failed = any_failed || e.state == core::DepState::Failed;
    all_failed = all_failed && e.state == core::DepState::Failed;
  }
  return {dep.any ? any_met : all_met, dep.any ? all_failed : any_failed};
}

bool ended_ok(const core::Job& j) {
  return j.state == core::JobState::Completed && j.exit_code == 0 && j.exit_signal == 0;
}

}  // namespace

// Only a job depending on itself is refused; unknown ids are accepted as Slurm 22.05 does.
std::optional<proto::Error> StateMachine::check_dependency_targets(const core::Dependency& dep,
                                                                   uint64_t self) const {
  for (const auto& e : dep.entries)
    if (e.type != core::DepType::Singleton && e.job_id == self)
      return proto::Error(proto::Errno::kDependency);
  return std::nullopt;
}

core::DepState StateMachine::evaluate_entry(uint32_t own_task, const core::DepEntry& e,
                                            int64_t now) const {
  using core::DepState;
  using core::DepType;
  // The records the entry waits on: one job, one array task, or every task of an array.
  std::vector<const core::Job*> targets;
  uint32_t task = e.array_task;
  if (e.type == DepType::AfterCorr && own_task != core::kNoArrayTask) task = own_task;
  if (const std::vector<uint64_t>* members = jobs_.array_members(e.job_id)) {
    for (uint64_t id : *members) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      const core::Job& t = it->second;
      if (task == core::kNoArrayTask) {
        targets.push_back(&t);
      } else if (t.array_task_id == task) {
        targets.push_back(&t);
      } else if (t.array_pending.contains(task)) {
        targets.push_back(&t);  // still in the remainder: pending
      }
    }
  } else if (auto it = jobs_.find(e.job_id); it != jobs_.end()) {
    targets.push_back(&it->second);
  }
  // A job that is gone (purged after MinJobAge) no longer holds anyone back.
  if (targets.empty()) return DepState::Satisfied;

  bool all_started = true, all_finished = true, any_bad = false;
  int64_t latest_start = 0, latest_end = 0;
  for (const core::Job* t : targets) {
    const bool finished = core::is_finished(t->state) && !t->completing;
    const bool started = finished || t->state != core::JobState::Pending;
    // A remainder record stands for tasks that have not started, whatever its own state.
    const bool has_unsplit = !t->array_pending.empty() && !core::is_finished(t->state);
    all_started = all_started && started && !has_unsplit;
    all_finished = all_finished && finished && !has_unsplit;
    if (finished) {
      any_bad = any_bad || !ended_ok(*t);
    }
    latest_start = std::max(latest_start, t->start_time);
    latest_end = std::max(latest_end, t->end_time);
  }
  const int64_t delay = e.delay_min * 60;
  switch (e.type) {
    case DepType::After:
      if (!all_started) return DepState::Unfulfilled;
      return now >= latest_start + delay ? DepState::Satisfied : DepState::Unfulfilled;
    case DepType::AfterAny:
    case DepType::AfterBurstBuffer:
      if (!all_finished) return DepState::Unfulfilled;
      return now >= latest_end + delay ? DepState::Satisfied : DepState::Unfulfilled;
    case DepType::AfterOk:
    case DepType::AfterCorr:
      if (any_bad) return DepState::Failed;
      if (!all_finished) return DepState::Unfulfilled;
      return now >= latest_end + delay ? DepState::Satisfied : DepState::Unfulfilled;
    case DepType::AfterNotOk:
      if (!all_finished) return DepState::Unfulfilled;
      if (!any_bad) return DepState::Failed;
      return now >= latest_end + delay ? DepState::Satisfied : DepState::Unfulfilled;
    case DepType::Singleton:
      return DepState::Unfulfilled;  // decided by eligibility(), which sees the whole queue
  }
  return DepState::Unfulfilled;
}

bool StateMachine::evaluate_dependency(core::Job& job, int64_t now) {
  bool changed = false;
  const bool remainder = !job.array_pending.empty();
  for (auto& e : job.dependency.entries) {
    if (e.state != core::DepState::Unfulfilled || e.type == core::DepType::Singleton) continue;
    // A remainder's aftercorr is decided task by task (split_correlated_tasks).
    if (remainder && e.type == core::DepType::AfterCorr) continue;
    core::DepState s = evaluate_entry(job.array_task_id, e, now);
    if (s != e.state) {
      e.state = s;
      changed = true;
    }
  }
  return changed;
}

void StateMachine::split_correlated_tasks(core::Job& remainder, int64_t now, Effects& fx) {
  bool corr = false;
  for (const auto& e : remainder.dependency.entries)
    corr = corr || e.type == core::DepType::AfterCorr;
  if (!corr || remainder.held) return;
  // aftercorr is decided task by task: a task whose counterpart has ended leaves the
  // remainder with its own verdict, as Slurm splits it off.
  for (uint32_t index : remainder.array_pending.to_vector(1u << 20)) {
    core::Dependency dep = remainder.dependency;
    for (auto& e : dep.entries)
      if (e.state == core::DepState::Unfulfilled && e.type != core::DepType::Singleton)
        e.state = evaluate_entry(index, e, now);
    const auto [met, never] = verdict(dep);
    if (!met && !never) continue;
    core::Job& task = split_array_task(remainder, index, fx);
    task.dependency = met ? core::Dependency{} : dep;
    jobs_.note_new_pending(task.id);
    if (&task == &remainder) break;
  }
}

std::string StateMachine::eligibility(core::Job& job, int64_t now, Effects& fx,
                                      std::set<std::pair<uint32_t, std::string>>& singletons_seen) {
  if (job.held && job.reason == "job_requeued_in_held_state") return job.reason;
  if (job.held == core::kHeldAdmin) return "JobHeldAdmin";
  if (job.held == core::kHeldUser) return "JobHeldUser";
  if (job.spec.deadline != 0 && now >= job.spec.deadline) {
    end_job(job, core::JobState::Deadline, "DeadLine", now, false, fx);
    return "DeadLine";
  }
  if (job.eligible_time != core::kNoTime && job.eligible_time > now) return "BeginTime";
  if (!job.dependency.empty()) {
    if (evaluate_dependency(job, now)) fx.job_changed(job.id);
    bool singleton = false;
    for (auto& e : job.dependency.entries) {
      if (e.type != core::DepType::Singleton) continue;
      // Only one job of a user's name runs at a time: the first eligible one in the queue
      // goes when no other is running.
      singleton = true;
      bool busy = singletons_seen.count({job.uid, job.spec.name}) > 0;
      // Running, suspended or completing: the active index.
      for (uint64_t id : jobs_.active()) {
        if (busy) break;
        const core::Job& other = *jobs_.get(id);
        busy = id != job.id && other.uid == job.uid && other.spec.name == job.spec.name;
      }
      if (!busy) e.state = core::DepState::Satisfied;
    }
    const auto [satisfied, never] = verdict(job.dependency);
    if (satisfied) {
      if (singleton) singletons_seen.insert({job.uid, job.spec.name});
      job.dependency = {};  // Slurm shows Dependency=(null) once it is met
      fx.job_changed(job.id);
    } else {
      // A singleton that did not get its turn waits again next pass.
      for (auto& e : job.dependency.entries)
        if (e.type == core::DepType::Singleton) e.state = core::DepState::Unfulfilled;
      if (never) {
        const bool kill = job.spec.kill_on_invalid_dep == 1 ||
                          (job.spec.kill_on_invalid_dep == -1 && config_.kill_invalid_depend);
        if (kill)
          end_job(job, core::JobState::Cancelled, "DependencyNeverSatisfied", now, false, fx);
        return "DependencyNeverSatisfied";
      }
      return "Dependency";
    }
  }
  if (job.array_max_running > 0 &&
      running_array_tasks(job.array_job_id) >= static_cast<int>(job.array_max_running))
    return "JobArrayTaskLimit";
  return "";
}

}  // namespace drover::ctld
