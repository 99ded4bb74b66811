// Preemption's effects: the engine chooses which running jobs make room for a pending one;
// here they are stopped, requeued (REQUEUE, when the job may be requeued) or ended as
// PREEMPTED (CANCEL), with GraceTime between SIGTERM and SIGKILL.
#include "ctld/state_machine.hpp"

namespace drover::ctld {

void StateMachine::preempt_job(const sched::Preemption& p, int64_t now, Effects& fx) {
  auto it = jobs_.find(p.job_id);
  if (it == jobs_.end()) return;
  core::Job& job = it->second;
  if (job.state != core::JobState::Running || job.completing) return;
  const int64_t wait = p.grace_time_s > 0 ? p.grace_time_s : config_.kill_wait_s;
  const std::string notice = cancel_notice(job, now, " DUE TO PREEMPTION");
  if (p.mode == sched::PreemptMode::Requeue && requeue_allowed(job)) {
    requeue_job(job, now, 0, true, fx, wait, notice);
  } else {
    end_job(job, core::JobState::Preempted, "None", now, true, fx);
    send_terminate(job, now, " DUE TO PREEMPTION", fx, wait);
  }
}

}  // namespace drover::ctld
