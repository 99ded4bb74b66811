#include "ctld/accounting_worker.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

using namespace drover;
using namespace std::chrono_literals;

namespace {

// A real SQLite store behind a gate the test opens and closes (a database that stalls) and a
// switch that makes writes fail (a database that is down).
class GatedStore : public store::AccountingStore {
 public:
  struct Control {
    std::mutex mu;
    std::condition_variable cv;
    bool open = true;
    bool down = false;
    int waiting = 0;  // calls held at the gate
    void set_open(bool o) {
      {
        std::lock_guard lock(mu);
        open = o;
      }
      cv.notify_all();
    }
    bool wait_for_waiter(std::chrono::milliseconds limit) {
      std::unique_lock lock(mu);
      return cv.wait_for(lock, limit, [this] { return waiting > 0; });
    }
  };

  GatedStore(const std::string& path, std::shared_ptr<Control> c)
      : real_(store::open_sqlite_accounting(path)), c_(std::move(c)) {}

  void upsert(const std::vector<store::JobRecord>& jobs) override {
    gate();
    if (c_->down) throw std::runtime_error("accounting: database down");
    real_->upsert(jobs);
  }
  std::vector<store::JobRecord> query(const store::JobFilter& f) override {
    gate();
    return real_->query(f);
  }
  std::optional<store::StoredAssocData> load_assoc_data() override {
    return real_->load_assoc_data();
  }
  void store_assoc_data(const store::StoredAssocData& d) override { real_->store_assoc_data(d); }
  std::vector<store::ClusterTresRecord> cluster_tres() override { return real_->cluster_tres(); }
  void register_cluster_tres(const store::ClusterTresRecord& r) override {
    real_->register_cluster_tres(r);
  }
  void put_node_events(const std::vector<store::NodeEventRecord>& e) override {
    gate();
    real_->put_node_events(e);
  }
  std::vector<store::NodeEventRecord> node_events(int64_t s, int64_t e) override {
    return real_->node_events(s, e);
  }

 private:
  void gate() {
    std::unique_lock lock(c_->mu);
    ++c_->waiting;
    c_->cv.notify_all();
    c_->cv.wait(lock, [this] { return c_->open; });
    --c_->waiting;
  }
  std::unique_ptr<store::AccountingStore> real_;
  std::shared_ptr<Control> c_;
};

store::JobRecord record(uint64_t id, const std::string& state) {
  store::JobRecord r;
  r.job_id = id;
  r.state = state;
  r.name = "job" + std::to_string(id);
  r.user = "alice";
  r.submit_time = r.eligible_time = 1000 + static_cast<int64_t>(id);
  return r;
}

class AccountingWorkerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("acct_worker_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    control_ = std::make_shared<GatedStore::Control>();
    worker_ = std::make_unique<ctld::AccountingWorker>(
        std::make_unique<GatedStore>((dir_ / "acct.db").string(), control_));
    worker_->start([this](uint64_t seq) {
      std::lock_guard lock(mu_);
      written_ = seq;
      cv_.notify_all();
    });
  }
  void TearDown() override {
    control_->set_open(true);
    worker_.reset();
    std::filesystem::remove_all(dir_);
  }
  bool wait_written(uint64_t seq, std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return written_ >= seq; });
  }
  uint64_t written() {
    std::lock_guard lock(mu_);
    return written_;
  }
  std::vector<store::JobRecord> query_all() {
    std::promise<std::vector<store::JobRecord>> p;
    auto f = p.get_future();
    store::JobFilter all;
    all.include_ineligible = true;
    worker_->post_query([&p, all](store::AccountingStore& s) { p.set_value(s.query(all)); });
    return f.get();
  }

  std::filesystem::path dir_;
  std::shared_ptr<GatedStore::Control> control_;
  std::unique_ptr<ctld::AccountingWorker> worker_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t written_ = 0;
};

TEST_F(AccountingWorkerTest, SaysWhenRecordsAreWrittenAndQueriesSeeThem) {
  worker_->post_records(1, {record(1, "PENDING"), record(2, "PENDING")});
  worker_->post_records(2, {record(1, "RUNNING")});
  const auto rows = query_all();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].state, "RUNNING");
  EXPECT_TRUE(wait_written(2));
}

// The point of the worker: posting never waits for the database.
TEST_F(AccountingWorkerTest, PostingDoesNotWaitForAStalledStore) {
  control_->set_open(false);
  worker_->post_records(1, {record(1, "PENDING")});
  ASSERT_TRUE(control_->wait_for_waiter(10s));  // the worker is stuck in the store
  for (uint64_t seq = 2; seq <= 200; ++seq) worker_->post_records(seq, {record(seq, "PENDING")});
  worker_->post_node_events({{"node1", 1, 0, "DOWN", "test", "cpu=1"}});
  bool answered = false;
  worker_->post_query([&](store::AccountingStore&) { answered = true; });
  // All posted while the store is held: nothing written, nothing answered yet.
  EXPECT_EQ(written(), 0u);
  control_->set_open(true);
  EXPECT_TRUE(wait_written(200));
  EXPECT_EQ(query_all().size(), 200u);
  EXPECT_TRUE(answered);  // in order: before the query query_all() posted
}

TEST_F(AccountingWorkerTest, RecordsWaitWhileTheStoreIsDownAndAreWrittenWhenItIsBack) {
  control_->down = true;
  worker_->post_records(1, {record(1, "PENDING")});
  worker_->post_records(2, {record(2, "COMPLETED")});
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(written(), 0u);  // not said written while they are not
  control_->down = false;
  // The backlog's back-off retries within a few seconds, without anything new posted.
  EXPECT_TRUE(wait_written(2));
  EXPECT_EQ(query_all().size(), 2u);
}

TEST_F(AccountingWorkerTest, AQueryFailureIsReportedNotFatal) {
  worker_->post_query([](store::AccountingStore&) { throw std::runtime_error("boom"); });
  worker_->post_records(1, {record(1, "PENDING")});
  EXPECT_TRUE(wait_written(1));
}

}  // namespace
