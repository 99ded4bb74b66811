#pragma once
// The accounting store's own thread. Job records, node events, sacct/sreport/REST queries and
// sacctmgr's writes all go through it, so a slow or stalled database (a PostgreSQL failover, a
// lock held by a report) never holds up the state thread's submissions and scheduling.
//
// Work runs in the order it was posted: a query sees every record posted before it (written
// first when the store takes it). Records the store refuses wait in the backlog and are tried
// again with its back-off; the journal stays the source of truth, so nothing is lost when the
// process stops with records unwritten (the controller records every journaled job again at
// startup, and keeps purged jobs' unwritten records in the journal: see Server).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/thread_annotations.hpp"
#include "store/accounting.hpp"
#include "store/accounting_backlog.hpp"

namespace drover::ctld {

class AccountingWorker {
 public:
  // Every record posted with a sequence number up to `seq` is in the store. Called on the
  // worker's thread.
  using OnWritten = std::function<void(uint64_t seq)>;

  explicit AccountingWorker(std::unique_ptr<store::AccountingStore> store);
  // Stops the thread once the work it is doing ends; work not begun is dropped (see above).
  ~AccountingWorker();
  AccountingWorker(const AccountingWorker&) = delete;
  AccountingWorker& operator=(const AccountingWorker&) = delete;

  // Until start(), the constructing thread may use the store directly (loading at startup);
  // from start() on only the worker's thread touches it.
  store::AccountingStore& store_before_start() { return *store_; }
  void start(OnWritten on_written);

  // Any thread. `seq` increases from one call to the next.
  void post_records(uint64_t seq, std::vector<store::JobRecord> records);
  void post_node_events(std::vector<store::NodeEventRecord> events);
  // Runs `fn` with the store after all work posted before it, and after a write of the
  // backlog, so that what it reads includes every record the controller has.
  void post_query(std::function<void(store::AccountingStore&)> fn);

 private:
  struct Item {
    uint64_t seq = 0;
    std::vector<store::JobRecord> records;
    std::vector<store::NodeEventRecord> node_events;
    std::function<void(store::AccountingStore&)> query;
  };
  void push(Item item);
  void loop();
  // Worker thread: tries the backlog (always when `force`) and reports what is written.
  void write_backlog(bool force);
  void write_node_events();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_ DROVER_GUARDED_BY(mu_);
  bool stopping_ DROVER_GUARDED_BY(mu_) = false;

  // The worker's thread only, once started.
  std::unique_ptr<store::AccountingStore> store_;
  store::AccountingBacklog backlog_{*store_};
  OnWritten on_written_;
  uint64_t received_seq_ = 0;  // the highest sequence number taken into the backlog
  uint64_t written_seq_ = 0;   // the highest reported written
  std::vector<store::NodeEventRecord> node_events_unwritten_;

  std::thread thread_;  // last: started after everything above exists
};

}  // namespace drover::ctld
