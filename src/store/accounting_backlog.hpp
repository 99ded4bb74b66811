#pragma once
// Accounting records the store has not taken yet. The controller's journal is the source of
// truth and accounting follows it: when a write fails (say the database is down) the records
// wait here, the newest per job (and every earlier run of a requeued job), and go out with the
// next write. Attempts back off (1 s, doubling to 60 s) so a database that stays down costs
// the state thread one failed attempt now and then, not one per batch.
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/accounting.hpp"

namespace drover::store {

class AccountingBacklog {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kFirstDelay = std::chrono::seconds(1);
  static constexpr Clock::duration kMaxDelay = std::chrono::seconds(60);

  explicit AccountingBacklog(AccountingStore& store) : store_(store) {}

  struct Attempt {
    bool tried = false;   // false: nothing queued, or the next attempt is not due
    std::string error;    // why it failed; empty when it worked
    size_t written = 0;   // records written when it worked
    size_t failures = 0;  // attempts that had failed before this one
  };
  // Queues `records` (replacing older ones of the same jobs), then writes everything queued
  // in one upsert when an attempt is due (always when `force`); on failure all stays queued.
  Attempt write(std::vector<JobRecord> records, Clock::time_point now, bool force = false);

  const JobRecord* pending(uint64_t job_id) const;
  size_t size() const { return queued_.size() + runs_.size(); }

 private:
  void queue(JobRecord r);

  AccountingStore& store_;
  std::map<uint64_t, JobRecord> queued_;
  // Earlier runs of requeued jobs (state REQUEUED), by job and submit time: kept beside the
  // job's latest record, not in its place.
  std::map<std::pair<uint64_t, int64_t>, JobRecord> runs_;
  Clock::time_point next_attempt_{};
  Clock::duration delay_ = kFirstDelay;
  size_t failures_ = 0;
};

}  // namespace drover::store
