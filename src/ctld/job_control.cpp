// scontrol hold/uhold/release/requeue/requeuehold and update: the changes users make to their
// jobs after submission, with Slurm's permission rules.
#include <algorithm>
#include <csignal>

#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "core/time_spec.hpp"
#include "ctld/acct_record.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

uint32_t StateMachine::next_priority(int nice) {
  if (lowest_priority_ > 1) --lowest_priority_;
  return static_cast<uint32_t>(
      std::clamp<int64_t>(static_cast<int64_t>(lowest_priority_) - nice, 1, 0xfffffffeLL));
}

bool StateMachine::requeue_allowed(const core::Job& job) const {
  if (job.spec.interactive) return false;  // its holder (salloc, srun) is gone with it
  return job.spec.requeue == 1 || (job.spec.requeue == -1 && config_.job_requeue);
}

void StateMachine::requeue_job(core::Job& job, int64_t now, uint8_t hold, bool processes_alive,
                               Effects& fx, int64_t kill_wait, const std::string& notice) {
  const bool was_running =
      processes_alive && job.state == core::JobState::Running && !job.completing;
  if (job.state == core::JobState::Running && !job.completing) {
    // The run that ends here stays in accounting as Slurm keeps it (sacct -D): REQUEUED, its
    // batch shell CANCELLED by the SIGTERM that stops it.
    store::JobRecord run = acct_record(job);
    run.state = "REQUEUED";
    run.end_time = now;
    run.exit_code = run.exit_signal = 0;
    for (auto& s : run.steps) {
      if (s.end_time != 0) continue;
      s.end_time = now;
      s.state = "CANCELLED";
      s.exit_code = 0;
      s.exit_signal = SIGTERM;
    }
    fx.account(acct::RequeuedRun{std::move(run)});
  }
  if (was_running) {
    charge_usage(job, now, fx);  // the run so far counts, as in Slurm
    // Its processes go first; the job waits (COMPLETING, then PENDING) and becomes eligible
    // again only once launch credentials of the old run have expired, as in Slurm.
    fx.order(job.batch_host,
             proto::Terminate{job.id, kill_wait < 0 ? config_.kill_wait_s : kill_wait, notice, {}});
    jobs_.set_completing(job, true);
  } else {
    if (holds_resources(job)) release(job);
    jobs_.set_completing(job, false);
    job.alloc.clear();
    job.batch_host.clear();
  }
  // Slurm makes a requeued job wait for its old launch credential to expire, whether or not
  // it was still running.
  jobs_.set_eligible_time(job, now + config_.requeue_delay_s);
  jobs_.set_state(job, core::JobState::Pending);
  job.reason = job.eligible_time > now ? "BeginTime" : "None";
  job.restarts += 1;
  job.submit_time = now;
  acct_.forget_submit_usage();
  job.start_time = core::kNoTime;
  job.end_time = core::kNoTime;
  job.cancelled_by = 0xffffffff;  // the exit code of the last run stays, as in Slurm
  job.warning_sent = false;
  if (hold) {
    job.held = hold;
    job.priority = 0;
    job.reason = "job_requeued_in_held_state";
  }
  fx.job_changed(job.id);
  fx.notify(notice::Reschedule{});
  full_pass_needed_ = true;
}

json StateMachine::control(const proto::ControlRequest& req, const Caller& who, int64_t now,
                           Effects& fx) {
  const std::string& action = req.action;
  const bool op = is_operator(who);
  std::vector<proto::JobError> errors;
  // A task named alone is split off the array's remainder first, as Slurm does.
  for (auto& t : resolve_all(req.jobs, true, fx)) {
    if (t.error) {
      errors.push_back(job_error(t.ref, *t.error));
      continue;
    }
    for (core::Job* jp : t.jobs) {
      core::Job& job = *jp;
      if (action == "hold" || action == "uhold" || action == "release") {
        if (core::is_finished(job.state)) {
          errors.push_back(job_error(t.ref, proto::Errno::kJobFinished));
          continue;
        }
        if (!may_act_on(who, job)) {
          errors.push_back(job_error(t.ref, proto::Errno::kUserIdMissing));
          continue;
        }
        if (action == "release") {
          if (job.held == core::kHeldAdmin && !op) {
            errors.push_back(job_error(t.ref, proto::Errno::kAccessDenied));
            continue;
          }
          if (job.held) {
            job.held = 0;
            job.priority = initial_priority(job, now);
            if (job.state == core::JobState::Pending) job.reason = "None";
          }
        } else {
          // An operator's plain hold is an administrator hold; uhold is always the user's.
          const uint8_t kind = action == "hold" && op ? core::kHeldAdmin : core::kHeldUser;
          if (job.held != core::kHeldAdmin) job.held = kind;
          job.priority = 0;
          if (job.state == core::JobState::Pending)
            job.reason = job.held == core::kHeldAdmin ? "JobHeldAdmin" : "JobHeldUser";
        }
      } else if (action == "requeue" || action == "requeuehold") {
        if (!may_act_on(who, job)) {
          errors.push_back(job_error(t.ref, proto::Errno::kAccessDenied));
          continue;
        }
        if (job.state == core::JobState::Pending) {
          errors.push_back(job_error(t.ref, proto::Errno::kJobPending));
          continue;
        }
        if (!requeue_allowed(job)) {
          errors.push_back(job_error(t.ref, proto::Errno::kDisabled));
          continue;
        }
        if (job.completing) {
          errors.push_back(
              job_error(t.ref, proto::Error(proto::Errno::kError, "Job is current completing")));
          continue;
        }
        uint8_t hold = 0;
        if (action == "requeuehold") hold = op ? core::kHeldAdmin : core::kHeldUser;
        requeue_job(job, now, hold, true, fx);
      } else {
        return error_reply(proto::Errno::kError, "Invalid request");
      }
      fx.job_changed(job.id);
      fx.notify(notice::Reschedule{});
      full_pass_needed_ = true;
    }
  }
  return proto::JobsReply{.errors = std::move(errors)}.to_json();
}

json StateMachine::update(const proto::JobUpdateRequest& req, const Caller& who, int64_t now,
                          Effects& fx) {
  const json set = req.set;
  std::vector<proto::JobError> errors;
  for (auto& t : resolve_all(req.jobs, true, fx)) {
    if (t.error) {
      errors.push_back(job_error(t.ref, *t.error));
      continue;
    }
    for (core::Job* jp : t.jobs) {
      if (auto refused = update_one(*jp, set, who, now, fx)) {
        errors.push_back(job_error(t.ref, *refused));
        break;
      }
    }
  }
  return proto::JobsReply{.errors = std::move(errors)}.to_json();
}

// Nothing on success, else why not. Checks everything before changing anything.
std::optional<proto::Error> StateMachine::update_one(core::Job& job, const json& set,
                                                     const Caller& who, int64_t now, Effects& fx) {
  const bool op = is_operator(who);
  if (core::is_finished(job.state)) return proto::Error(proto::Errno::kJobFinished);
  if (job.uid != who.uid && !op) return proto::Error(proto::Errno::kUserIdMissing);
  const bool pending = job.state == core::JobState::Pending;
  core::Job next = job;
  std::optional<proto::Error> applied_with_error;
  for (const auto& [key_raw, value_json] : set.items()) {
    const std::string key = core::to_lower(key_raw);
    const std::string value = value_json.get<std::string>();
    try {
      if (key == "timelimit") {
        // "+N" / "-N" change the limit by N minutes (any time form).
        int64_t m = 0;
        if (!value.empty() && (value[0] == '+' || value[0] == '-')) {
          const int64_t delta = core::parse_time_limit_minutes(value.substr(1));
          if (job.time_limit_min == core::kInfinite)
            return proto::Error(proto::Errno::kError, "Invalid TimeLimit value");
          m = job.time_limit_min + (value[0] == '+' ? delta : -delta);
          if (m < 1) return proto::Error(proto::Errno::kError, "Invalid TimeLimit value");
        } else {
          m = core::parse_time_limit_minutes(value);
          if (m == 0) m = core::kInfinite;
        }
        const bool raise = m == core::kInfinite
                               ? job.time_limit_min != core::kInfinite
                               : job.time_limit_min != core::kInfinite && m > job.time_limit_min;
        if (raise && !pending && !op) return proto::Error(proto::Errno::kAccessDenied);
        next.time_limit_min = m;
        next.spec.time_limit_min = m;
      } else if (key == "nice") {
        int n = std::stoi(value);
        if (n < 0 && !op) return proto::Error(proto::Errno::kAccessDenied);
        if (next.priority != 0)
          next.priority = static_cast<uint32_t>(std::clamp<int64_t>(
              static_cast<int64_t>(next.priority) + next.nice - n, 1, 0xfffffffeLL));
        next.nice = n;
      } else if (key == "priority") {
        if (!op) return proto::Error(proto::Errno::kAccessDenied);
        // Checked here too (scontrol checks first): a 64-bit value must not wrap.
        const long long v = std::stoll(value);
        if (v < 0 || v > 4294967293LL)
          return proto::Error(proto::Errno::kError, "Invalid Priority value: " + value);
        next.priority = static_cast<uint32_t>(v);
      } else if (key == "systemcomment") {
        if (!op) return proto::Error(proto::Errno::kAccessDenied);
        if (value.size() > kMaxTextField) return proto::Error(proto::Errno::kPathnameTooLong);
        next.system_comment = value;
      } else if (key == "jobname" || key == "name" || key == "comment") {
        if (value.size() > kMaxTextField) return proto::Error(proto::Errno::kPathnameTooLong);
        (key == "comment" ? next.spec.comment : next.spec.name) = value;
      } else if (key == "partition") {
        if (!pending) return proto::Error(proto::Errno::kJobNotPending);
        const Partition* p = find_partition(value);
        if (p == nullptr) return proto::Error(proto::Errno::kInvalidPartitionName);
        const int nodes_wanted = next.spec.nodes_min;
        // Slurm makes the change and still reports that the job cannot run there now.
        if ((p->max_time_min >= 0 &&
             (next.time_limit_min < 0 || next.time_limit_min > p->max_time_min)) ||
            nodes_wanted > static_cast<int>(p->nodes.size()))
          applied_with_error = proto::Error(proto::Errno::kRequestedPartConfigUnavailable);
        next.partition = p->name;
        next.spec.partitions = {p->name};
      } else if (key == "numnodes" || key == "minnodes") {
        if (!pending) continue;  // Slurm accepts and ignores a node count for a running job
        auto dash = value.find('-');
        int lo = std::stoi(value.substr(0, dash));
        int hi = dash == std::string::npos ? lo : std::stoi(value.substr(dash + 1));
        if (lo < 1 || hi < lo)
          return proto::Error(proto::Errno::kError, "Invalid node count specified");
        next.spec.nodes_min = lo;
        next.spec.nodes_max = dash == std::string::npos ? 0 : hi;  // shown as "2", not "2-2"
        next.spec.nodes_set = true;
        if (next.spec.ntasks < lo) next.spec.ntasks = lo;
      } else if (key == "numtasks") {
        if (!pending) return proto::Error(proto::Errno::kJobNotPending);
        int n = std::stoi(value);
        if (n < 1) return proto::Error(proto::Errno::kError, "Invalid number of tasks");
        next.spec.ntasks = n;
        next.spec.ntasks_set = true;
      } else if (key == "dependency") {
        if (!pending) return proto::Error(proto::Errno::kJobNotPending);
        core::Dependency dep;
        if (!value.empty()) {
          try {
            dep = core::parse_dependency(value, config_.max_array_size);
          } catch (const core::ParseError& e) {
            return proto::Error::from_message(e.what());  // the parser's: Slurm's texts
          }
          if (auto problem = check_dependency_targets(dep, job.id)) return problem;
        }
        next.dependency = dep;
        next.spec.dependency = value;
      } else if (key == "starttime" || key == "begintime") {
        if (!pending) return proto::Error(proto::Errno::kJobNotPending);
        next.spec.begin_time = core::parse_time_spec(value, now);
        next.eligible_time = std::max(now, next.spec.begin_time);
      } else if (key == "reqnodelist" || key == "nodelist") {
        if (!pending) return proto::Error(proto::Errno::kJobNotPending);
        for (const auto& n : core::expand_hostlist(value))
          if (!nodes_.contains(n)) return proto::Error(proto::Errno::kInvalidNodeName);
        next.spec.nodelist = value;
      } else if (key == "excnodelist") {
        if (!pending) return proto::Error(proto::Errno::kJobNotPending);
        for (const auto& n : core::expand_hostlist(value))
          if (!nodes_.contains(n)) return proto::Error(proto::Errno::kInvalidNodeName);
        next.spec.exclude = value;
      } else if (key == "arraytaskthrottle") {
        const long long v = std::stoll(value);
        if (v < 0 || v > 0xffffffffLL)
          return proto::Error(proto::Errno::kError, "Invalid ArrayTaskThrottle specification");
        next.array_max_running = static_cast<uint32_t>(v);
      } else if (key == "requeue") {
        next.spec.requeue = std::stoi(value) != 0 ? 1 : 0;
      } else {
        return proto::Error(proto::Errno::kError,
                            "Update of this parameter is not supported: " + key_raw + "=" + value);
      }
    } catch (const core::ParseError& e) {
      return proto::Error::from_message(e.what());  // the parser's: Slurm's texts
    } catch (const std::exception&) {
      return proto::Error(proto::Errno::kError, "Invalid " + key_raw + " specification");
    }
  }
  job = std::move(next);
  jobs_.reindex(job);           // its eligible time may have changed
  acct_.forget_submit_usage();  // the partition (and so its QOS) may have changed
  if (job.state == core::JobState::Pending) job.reason = "None";
  fx.job_changed(job.id);
  fx.notify(notice::Reschedule{});
  full_pass_needed_ = true;
  return applied_with_error;
}

}  // namespace drover::ctld
