#include "ctld/accounting_worker.hpp"

#include <spdlog/spdlog.h>

#include <chrono>

namespace drover::ctld {

AccountingWorker::AccountingWorker(std::unique_ptr<store::AccountingStore> store)
    : store_(std::move(store)) {}

AccountingWorker::~AccountingWorker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AccountingWorker::start(OnWritten on_written) {
  on_written_ = std::move(on_written);
  thread_ = std::thread([this] { loop(); });
}

void AccountingWorker::push(Item item) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void AccountingWorker::post_records(uint64_t seq, std::vector<store::JobRecord> records) {
  push({seq, std::move(records), {}, {}});
}

void AccountingWorker::post_node_events(std::vector<store::NodeEventRecord> events) {
  if (!events.empty()) push({0, {}, std::move(events), {}});
}

void AccountingWorker::post_query(std::function<void(store::AccountingStore&)> fn) {
  push({0, {}, {}, std::move(fn)});
}

void AccountingWorker::loop() {
  std::deque<Item> work;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      // Awake at least once a second while something waits, for the backlog's retries.
      const bool waiting = backlog_.size() > 0 || !node_events_unwritten_.empty();
      if (waiting)
        cv_.wait_for(lock, std::chrono::seconds(1),
                     [this] { return stopping_ || !queue_.empty(); });
      else
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      work.swap(queue_);
    }
    bool records = false;
    for (Item& item : work) {
      if (item.query) {
        // Records first, so the query sees them; its own failure is the query's to report.
        if (records || backlog_.size() > 0) write_backlog(true);
        records = false;
        try {
          item.query(*store_);
        } catch (const std::exception& e) {
          spdlog::error("accounting query: {}", e.what());
        }
        continue;
      }
      if (!item.records.empty() || item.seq > received_seq_) {
        backlog_.write(std::move(item.records), store::AccountingBacklog::Clock::now(),
                       /*force=*/false);  // queued; written below, once per wake-up
        received_seq_ = std::max(received_seq_, item.seq);
        records = true;
      }
      for (auto& e : item.node_events) node_events_unwritten_.push_back(std::move(e));
    }
    work.clear();
    write_backlog(false);
    write_node_events();
  }
}

void AccountingWorker::write_backlog(bool force) {
  const auto a = backlog_.write({}, store::AccountingBacklog::Clock::now(), force);
  if (a.tried && !a.error.empty()) {
    spdlog::error("accounting write failed ({} job records waiting, retrying): {}", backlog_.size(),
                  a.error);
    return;
  }
  if (a.tried && a.failures > 0)
    spdlog::info("accounting: {} job records written after {} failed attempts", a.written,
                 a.failures);
  if (backlog_.size() == 0 && received_seq_ > written_seq_) {
    written_seq_ = received_seq_;
    if (on_written_) on_written_(written_seq_);
  }
}

void AccountingWorker::write_node_events() {
  if (node_events_unwritten_.empty()) return;
  try {
    store_->put_node_events(node_events_unwritten_);
    node_events_unwritten_.clear();
  } catch (const std::exception& e) {
    spdlog::error("accounting: cannot record node events ({} waiting): {}",
                  node_events_unwritten_.size(), e.what());
    // A bounded list: the oldest half goes when a long outage fills it.
    if (node_events_unwritten_.size() > 10000)
      node_events_unwritten_.erase(node_events_unwritten_.begin(),
                                   node_events_unwritten_.begin() + 5000);
  }
}

}  // namespace drover::ctld
