#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"
#include "ctld/submit_ids.hpp"

namespace drover::ctld {

// The controller's jobs: every record by id, the counter that numbers new ones, which records
// make up each array, which records share each stored script and environment (payload), the
// submissions' request ids, and the jobs submitted since the last scheduling pass.
//
// Records come and go only through insert() and erase(), which keep the array index and the
// payload references right; a record's id, array_job_id and payload_id do not change while
// it is in the table. A record's state and `completing` change only through set_state() and
// set_completing(), which keep the indexes of active and finished records right, so that
// per-batch and per-second duties visit those instead of every record (a queue of a million
// pending jobs). Everything else in a record is the rules' to change.
class JobTable {
 public:
  using Map = std::map<uint64_t, core::Job>;  // by id: Slurm's order for listings
  using iterator = Map::iterator;
  using const_iterator = Map::const_iterator;

  // The id the next job gets (journaled; a test-only submission uses one up too).
  uint64_t next_id() const { return next_id_; }
  void set_next_id(uint64_t id) { next_id_ = id; }
  uint64_t take_id() { return next_id_++; }

  // Adds a record (none may have its id yet) and returns it where it stays.
  core::Job& insert(core::Job job);
  // Removes a record. `unreferenced_payload`: the payload id no record refers to any more
  // (its script and environment may go), else 0.
  struct Erased {
    iterator next;
    uint64_t unreferenced_payload = 0;
  };
  Erased erase(iterator it);

  // Reads as of a map (keys cannot be changed through the iterators).
  iterator find(uint64_t id) { return jobs_.find(id); }
  const_iterator find(uint64_t id) const { return jobs_.find(id); }
  core::Job* get(uint64_t id);
  const core::Job* get(uint64_t id) const;
  bool contains(uint64_t id) const {
    if (id >= kBitmapIds) return jobs_.count(id) > 0;
    return id / 64 < present_.size() && (present_[id / 64] >> (id % 64) & 1) != 0;
  }
  size_t count(uint64_t id) const { return contains(id) ? 1 : 0; }
  size_t size() const { return jobs_.size(); }
  iterator begin() { return jobs_.begin(); }
  iterator end() { return jobs_.end(); }
  const_iterator begin() const { return jobs_.begin(); }
  const_iterator end() const { return jobs_.end(); }

  // The only ways a record's state and `completing` change (see the class comment).
  void set_state(core::Job& job, core::JobState state);
  void set_completing(core::Job& job, bool completing);
  // Records running, suspended or completing (all that may hold resources: holds_resources()),
  // by id; active_ids() is a copy, for walks that change what they visit.
  const std::set<uint64_t>& active() const { return active_; }
  std::vector<uint64_t> active_ids() const { return {active_.begin(), active_.end()}; }
  // Records in a final state (completing ones too), by id: what MinJobAge may purge.
  const std::set<uint64_t>& finished() const { return finished_; }
  // A record's eligible time (--begin, a requeue's delay) changes only through this (or a
  // whole-record update followed by reindex()), which keeps the time indexes right.
  void set_eligible_time(core::Job& job, int64_t t);
  void reindex(const core::Job& job) { index(job); }
  // Pending records (not completing) whose eligible time came since the last call, up to
  // `now`, and those whose --deadline is at or before `now`: what the state thread must act on
  // without walking the queue. The first leave the begin index (it holds only eligible times
  // later than the last call's `now`); the second leave as their state changes.
  struct Due {
    std::vector<uint64_t> begun, expired;
  };
  Due take_due(int64_t now);
  // What is wrong with the indexes, checked against every record ("" when they are right);
  // for tests.
  std::string check_indexes() const;

  // The records of an array (its remainder and the tasks split off from it) in the order they
  // came; null when `array_job_id` names no array.
  const std::vector<uint64_t>* array_members(uint64_t array_job_id) const;
  bool is_array(uint64_t id) const { return array_members(id) != nullptr; }
  // The same in Slurm's order: the array's own record, then its tasks newest first.
  std::vector<uint64_t> array_records(uint64_t array_job_id) const;
  // How many records refer to a payload.
  size_t payload_refs(uint64_t payload_id) const;

  // Jobs submitted since the last scheduling pass (the incremental pass offers only these).
  void note_new_pending(uint64_t id) { new_pending_.push_back(id); }
  const std::vector<uint64_t>& new_pending() const { return new_pending_; }
  void clear_new_pending() { new_pending_.clear(); }

  // A request id is remembered while its job is, and at least this long after submission.
  static constexpr int64_t kSubmitIdWindow = 3600;
  // Request ids of purged jobs beyond this many are forgotten oldest first.
  static constexpr size_t kMaxSubmitIds = 100000;
  SubmitIds& submit_ids() { return submit_ids_; }
  const SubmitIds& submit_ids() const { return submit_ids_; }
  // Forgets the request ids past their time (at most once a minute: a scan over every id, and
  // retries come within about a minute anyway); adds their journal keys to `erased`.
  void forget_submit_ids(int64_t now, std::set<std::string>& erased);

 private:
  Map jobs_;
  uint64_t next_id_ = 1;
  // Array job id -> its records.
  std::unordered_map<uint64_t, std::vector<uint64_t>> array_members_;
  // Records whose payload is another record's (array tasks split off share the array's):
  // payload id -> how many. A record whose payload id is its own id is not counted here, so a
  // plain job costs nothing in this map.
  std::unordered_map<uint64_t, uint32_t> shared_payloads_;
  std::vector<uint64_t> new_pending_;
  std::set<uint64_t> active_, finished_;
  // A bit per job id up to the highest held, set while the record is here: what contains()
  // answers without a walk down the map (forgetting request ids asks it for every id held,
  // a million of them once a minute). Ids from kBitmapIds on (32 MB of bits; Slurm's ids end
  // at 67,043,328) are looked up in the map.
  static constexpr uint64_t kBitmapIds = uint64_t{1} << 28;
  std::vector<uint64_t> present_;
  void set_present(uint64_t id, bool present);
  SubmitIds submit_ids_;
  int64_t submit_ids_checked_at_ = 0;

  // Pending records by eligible time (those later than times_checked_) and by deadline, and
  // each indexed record's keys (kNoTime: not in that index), so that an update finds its old
  // entries. Only records with a future begin or a deadline cost anything here.
  std::set<std::pair<int64_t, uint64_t>> begins_, deadlines_;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> timed_;
  int64_t times_checked_ = 0;
  std::pair<int64_t, int64_t> time_keys(const core::Job& job) const;
  void unindex_times(uint64_t id);
  // Puts the record in, or takes it out of, the indexes its state and `completing` call for.
  void index(const core::Job& job);
  void unindex(uint64_t id);
};

}  // namespace drover::ctld
