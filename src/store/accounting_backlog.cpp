#include "store/accounting_backlog.hpp"

#include <algorithm>
#include <stdexcept>

namespace drover::store {

AccountingBacklog::Attempt AccountingBacklog::write(std::vector<JobRecord> records,
                                                    Clock::time_point now, bool force) {
  for (JobRecord& r : records) queue(std::move(r));
  Attempt a;
  if (size() == 0 || (!force && now < next_attempt_)) return a;
  a.tried = true;
  a.failures = failures_;
  std::vector<JobRecord> batch;
  batch.reserve(size());
  for (auto& [key, r] : runs_) batch.push_back(std::move(r));
  for (auto& [id, r] : queued_) batch.push_back(std::move(r));
  runs_.clear();
  try {
    store_.upsert(batch);
  } catch (const std::exception& e) {
    for (JobRecord& r : batch) queue(std::move(r));
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

void AccountingBacklog::queue(JobRecord r) {
  if (r.state == "REQUEUED") {
    const std::pair<uint64_t, int64_t> key{r.job_id, r.submit_time};
    runs_[key] = std::move(r);
  } else {
    const uint64_t id = r.job_id;
    queued_[id] = std::move(r);
  }
}

const JobRecord* AccountingBacklog::pending(uint64_t job_id) const {
  auto it = queued_.find(job_id);
  return it == queued_.end() ? nullptr : &it->second;
}

}  // namespace drover::store
