#include "store/accounting_backlog.hpp"

#include <algorithm>
#include <stdexcept>

namespace drover::store {

AccountingBacklog::Attempt AccountingBacklog::write(std::vector<JobRecord> records,
                                                    Clock::time_point now, bool force) {
  for (JobRecord& r : records) queued_[r.job_id] = std::move(r);
  Attempt a;
  if (queued_.empty() || (!force && now < next_attempt_)) return a;
  a.tried = true;
  a.failures = failures_;
  std::vector<JobRecord> batch;
  batch.reserve(queued_.size());
  for (auto& [id, r] : queued_) batch.push_back(std::move(r));
  try {
    store_.upsert(batch);
  } catch (const std::exception& e) {
    for (JobRecord& r : batch) queued_[r.job_id] = std::move(r);
    a.error = e.what();
    ++failures_;
    next_attempt_ = now + delay_;
    delay_ = std::min(delay_ * 2, kMaxDelay);
    return a;
  }
  a.written = batch.size();
  queued_.clear();
  failures_ = 0;
  delay_ = kFirstDelay;
  next_attempt_ = {};
  return a;
}

const JobRecord* AccountingBacklog::pending(uint64_t job_id) const {
  auto it = queued_.find(job_id);
  return it == queued_.end() ? nullptr : &it->second;
}

}  // namespace drover::store
