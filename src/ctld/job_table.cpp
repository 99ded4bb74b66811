#include "ctld/job_table.hpp"

#include <algorithm>
#include <bit>
#include <string>

namespace drover::ctld {

core::Job& JobTable::insert(core::Job job) {
  const uint64_t id = job.id;
  core::Job& stored = jobs_.emplace(id, std::move(job)).first->second;
  set_present(id, true);
  if (stored.array_job_id != 0) {
    auto& members = array_members_[stored.array_job_id];
    if (std::find(members.begin(), members.end(), id) == members.end()) members.push_back(id);
  }
  if (stored.payload_id != 0 && stored.payload_id != id) ++shared_payloads_[stored.payload_id];
  index(stored);
  return stored;
}

namespace {
bool is_active(const core::Job& job) {
  return job.state == core::JobState::Running || job.state == core::JobState::Suspended ||
         job.completing;
}
}  // namespace

std::pair<int64_t, int64_t> JobTable::time_keys(const core::Job& job) const {
  if (job.state != core::JobState::Pending || job.completing) return {core::kNoTime, core::kNoTime};
  return {job.eligible_time > times_checked_ ? job.eligible_time : core::kNoTime,
          job.spec.deadline > 0 ? job.spec.deadline : core::kNoTime};
}

void JobTable::unindex_times(uint64_t id) {
  auto it = timed_.find(id);
  if (it == timed_.end()) return;
  if (it->second.first != core::kNoTime) begins_.erase({it->second.first, id});
  if (it->second.second != core::kNoTime) deadlines_.erase({it->second.second, id});
  timed_.erase(it);
}

void JobTable::set_eligible_time(core::Job& job, int64_t t) {
  job.eligible_time = t;
  index(job);
}

JobTable::Due JobTable::take_due(int64_t now) {
  Due out;
  for (auto it = begins_.begin(); it != begins_.end() && it->first <= now;) {
    const uint64_t id = it->second;
    out.begun.push_back(id);
    it = begins_.erase(it);
    auto t = timed_.find(id);
    t->second.first = core::kNoTime;
    if (t->second.second == core::kNoTime) timed_.erase(t);
  }
  times_checked_ = std::max(times_checked_, now);
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first <= now; ++it)
    out.expired.push_back(it->second);
  return out;
}

void JobTable::index(const core::Job& job) {
  unindex_times(job.id);
  if (const auto keys = time_keys(job);
      keys.first != core::kNoTime || keys.second != core::kNoTime) {
    if (keys.first != core::kNoTime) begins_.insert({keys.first, job.id});
    if (keys.second != core::kNoTime) deadlines_.insert({keys.second, job.id});
    timed_[job.id] = keys;
  }
  if (is_active(job))
    active_.insert(job.id);
  else
    active_.erase(job.id);
  if (core::is_finished(job.state))
    finished_.insert(job.id);
  else
    finished_.erase(job.id);
}

void JobTable::set_present(uint64_t id, bool present) {
  if (id >= kBitmapIds) return;
  if (id / 64 >= present_.size()) {
    if (!present) return;
    present_.resize(std::min<uint64_t>(kBitmapIds / 64, id / 64 + 1 + present_.size() / 2));
  }
  if (present)
    present_[id / 64] |= uint64_t{1} << (id % 64);
  else
    present_[id / 64] &= ~(uint64_t{1} << (id % 64));
}

void JobTable::unindex(uint64_t id) {
  unindex_times(id);
  active_.erase(id);
  finished_.erase(id);
}

void JobTable::set_state(core::Job& job, core::JobState state) {
  job.state = state;
  index(job);
}

void JobTable::set_completing(core::Job& job, bool completing) {
  job.completing = completing;
  index(job);
}

std::string JobTable::check_indexes() const {
  size_t active = 0, finished = 0;
  for (const auto& [id, job] : jobs_) {
    if (is_active(job) != (active_.count(id) > 0))
      return "job " + std::to_string(id) + (is_active(job) ? " active, not" : " not active, but") +
             " in the active index";
    if (core::is_finished(job.state) != (finished_.count(id) > 0))
      return "job " + std::to_string(id) +
             (core::is_finished(job.state) ? " finished, not" : " not finished, but") +
             " in the finished index";
    active += is_active(job);
    finished += core::is_finished(job.state);
  }
  if (active != active_.size()) return "the active index names jobs that are gone";
  size_t present = 0;
  for (uint64_t word : present_) present += static_cast<size_t>(std::popcount(word));
  if (present != static_cast<size_t>(std::count_if(jobs_.begin(), jobs_.end(), [](const auto& j) {
        return j.first < kBitmapIds;
      })))
    return "the id bitmap holds " + std::to_string(present) + " ids";
  for (const auto& [id, job] : jobs_)
    if (!contains(id)) return "job " + std::to_string(id) + " not in the id bitmap";
  if (finished != finished_.size()) return "the finished index names jobs that are gone";
  size_t begins = 0, deadlines = 0;
  for (const auto& [id, job] : jobs_) {
    const auto keys = time_keys(job);
    const auto it = timed_.find(id);
    const auto held = it == timed_.end() ? std::pair{core::kNoTime, core::kNoTime} : it->second;
    if (held != keys || (keys.first != core::kNoTime && !begins_.count({keys.first, id})) ||
        (keys.second != core::kNoTime && !deadlines_.count({keys.second, id})))
      return "job " + std::to_string(id) + " has the wrong entries in the time indexes";
    begins += keys.first != core::kNoTime;
    deadlines += keys.second != core::kNoTime;
  }
  if (begins != begins_.size() || deadlines != deadlines_.size() || timed_.size() > jobs_.size())
    return "the time indexes name jobs that are gone";
  return "";
}

JobTable::Erased JobTable::erase(iterator it) {
  const uint64_t id = it->first, array_job_id = it->second.array_job_id,
                 payload = it->second.payload_id;
  Erased out;
  unindex(id);
  set_present(id, false);
  out.next = jobs_.erase(it);
  if (array_job_id != 0) {
    auto m = array_members_.find(array_job_id);
    if (m != array_members_.end()) {
      m->second.erase(std::remove(m->second.begin(), m->second.end(), id), m->second.end());
      if (m->second.empty()) array_members_.erase(m);
    }
  }
  if (payload != 0) {
    if (payload != id) {
      auto s = shared_payloads_.find(payload);
      if (s != shared_payloads_.end() && --s->second == 0) shared_payloads_.erase(s);
    }
    if (payload_refs(payload) == 0) out.unreferenced_payload = payload;
  }
  return out;
}

core::Job* JobTable::get(uint64_t id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const core::Job* JobTable::get(uint64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const std::vector<uint64_t>* JobTable::array_members(uint64_t array_job_id) const {
  auto it = array_members_.find(array_job_id);
  return it == array_members_.end() || it->second.empty() ? nullptr : &it->second;
}

std::vector<uint64_t> JobTable::array_records(uint64_t array_job_id) const {
  const std::vector<uint64_t>* members = array_members(array_job_id);
  if (!members) return {};
  std::vector<uint64_t> ids = *members;
  std::sort(ids.begin(), ids.end(), [array_job_id](uint64_t a, uint64_t b) {
    if ((a == array_job_id) != (b == array_job_id)) return a == array_job_id;
    return a > b;
  });
  return ids;
}

size_t JobTable::payload_refs(uint64_t payload_id) const {
  if (payload_id == 0) return 0;
  size_t n = 0;
  if (const core::Job* own = get(payload_id); own && own->payload_id == payload_id) n = 1;
  if (auto s = shared_payloads_.find(payload_id); s != shared_payloads_.end()) n += s->second;
  return n;
}

void JobTable::forget_submit_ids(int64_t now, std::set<std::string>& erased) {
  if (now - submit_ids_checked_at_ < 60) return;
  submit_ids_checked_at_ = now;
  submit_ids_.forget(
      now, kSubmitIdWindow, kMaxSubmitIds, [this](uint64_t id) { return contains(id); }, erased);
}

}  // namespace drover::ctld
