// Job arrays: one record holds the not-yet-started tasks; tasks are split off into records of
// their own as they start or are acted on alone (the last one takes over the array's own id).
#include <algorithm>

#include "core/error.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

int StateMachine::running_array_tasks(uint64_t array_job_id) const {
  int n = 0;
  const std::vector<uint64_t>* members = jobs_.array_members(array_job_id);
  if (!members) return 0;
  for (uint64_t id : *members)
    if (auto jt = jobs_.find(id); jt != jobs_.end() && jt->second.state == core::JobState::Running)
      ++n;
  return n;
}

core::Job& StateMachine::split_array_task(core::Job& remainder, uint32_t index, Effects& fx) {
  remainder.array_pending.erase(index);
  fx.job_changed(remainder.id);
  if (remainder.array_pending.empty()) {
    remainder.array_task_id = index;
    return remainder;
  }
  core::Job task = remainder;
  task.id = jobs_.take_id();
  fx.journal(journal::NextJobId{});
  task.array_task_id = index;
  task.array_pending = {};
  core::Job& stored = jobs_.insert(std::move(task));
  scheduler_->plans().inherit(remainder.id, stored.id);  // as the record's other fields
  fx.job_changed(stored.id);
  return stored;
}

void StateMachine::resolve(const core::JobRef& ref, bool split, Effects& fx, Target& t) {
  std::vector<core::Job*>& out = t.jobs;
  const std::vector<uint64_t>* members = jobs_.array_members(ref.job_id);
  const bool is_array = members != nullptr;
  if (!ref.tasks) {
    if (is_array) {
      for (uint64_t id : jobs_.array_records(ref.job_id))
        if (auto it = jobs_.find(id); it != jobs_.end()) out.push_back(&it->second);
    } else if (auto it = jobs_.find(ref.job_id); it != jobs_.end()) {
      out.push_back(&it->second);
    }
    if (out.empty()) t.error = proto::Errno::kInvalidJobId;
    return;
  }
  if (!is_array) {
    t.error = proto::Errno::kInvalidJobId;
    return;
  }
  // The remainder record, if any tasks are still unsplit.
  core::Job* remainder = nullptr;
  for (uint64_t id : *members) {
    auto it = jobs_.find(id);
    if (it != jobs_.end() && !it->second.array_pending.empty() &&
        !core::is_finished(it->second.state))
      remainder = &it->second;
  }
  // Asking for every unsplit task is asking for the remainder itself: no need to split.
  bool covers_remainder = remainder != nullptr;
  if (remainder)
    for (const auto& r : remainder->array_pending.ranges())
      for (uint64_t i = r.first; covers_remainder && i <= r.last; i += r.step)
        covers_remainder = ref.tasks->contains(static_cast<uint32_t>(i));
  for (uint32_t index : ref.tasks->to_vector(1u << 20)) {
    core::Job* found = nullptr;
    for (uint64_t id : *members) {
      auto it = jobs_.find(id);
      if (it != jobs_.end() && it->second.array_task_id == index) found = &it->second;
    }
    if (!found && remainder && remainder->array_pending.contains(index)) {
      if (covers_remainder) continue;
      if (!split) {
        t.remainder = remainder;
        t.remainder_tasks.insert(index);
        continue;
      }
      found = &split_array_task(*remainder, index, fx);
      if (remainder->array_pending.empty()) remainder = nullptr;
    }
    if (found) out.push_back(found);
  }
  if (covers_remainder && remainder) out.push_back(remainder);
  if (out.empty() && !t.remainder) t.error = proto::Errno::kInvalidJobId;
}

std::vector<StateMachine::Target> StateMachine::resolve_all(const std::vector<std::string>& refs,
                                                            bool split, Effects& fx) {
  std::vector<Target> out;
  for (const auto& r : refs) {
    Target t;
    t.ref = r;
    try {
      resolve(core::parse_job_ref(t.ref), split, fx, t);
    } catch (const core::ParseError&) {
      t.error = proto::Errno::kInvalidJobId;
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace drover::ctld
