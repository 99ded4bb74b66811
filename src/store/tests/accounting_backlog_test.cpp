#include "store/accounting_backlog.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace drover::store;
using Clock = AccountingBacklog::Clock;
using std::chrono::seconds;

namespace {
// A store that is up or down at the test's word, and keeps what it was given.
struct FakeStore : AccountingStore {
  bool down = false;
  int calls = 0;
  std::map<uint64_t, JobRecord> rows;
  void upsert(const std::vector<JobRecord>& jobs) override {
    ++calls;
    if (down) throw std::runtime_error("accounting: database down");
    for (const auto& j : jobs) rows[j.job_id] = j;
  }
  std::vector<JobRecord> query(const JobFilter&) override { return {}; }
  std::optional<StoredAssocData> load_assoc_data() override { return std::nullopt; }
  void store_assoc_data(const StoredAssocData&) override {}
  std::vector<ClusterTresRecord> cluster_tres() override { return {}; }
  void register_cluster_tres(const ClusterTresRecord&) override {}
  void put_node_events(const std::vector<NodeEventRecord>&) override {}
  std::vector<NodeEventRecord> node_events(int64_t, int64_t) override { return {}; }
};

JobRecord rec(uint64_t id, const std::string& state) {
  JobRecord j;
  j.job_id = id;
  j.state = state;
  return j;
}
}  // namespace

TEST(AccountingBacklog, WritesStraightThroughWhileTheStoreWorks) {
  FakeStore store;
  AccountingBacklog backlog(store);
  const auto t = Clock::now();
  auto a = backlog.write({rec(1, "RUNNING"), rec(2, "PENDING")}, t);
  EXPECT_TRUE(a.tried);
  EXPECT_TRUE(a.error.empty());
  EXPECT_EQ(a.written, 2u);
  EXPECT_EQ(backlog.size(), 0u);
  EXPECT_EQ(store.rows.size(), 2u);
  EXPECT_FALSE(backlog.write({}, t).tried);  // nothing to do
}

TEST(AccountingBacklog, KeepsTheNewestRecordsWhileDownAndBacksOff) {
  FakeStore store;
  store.down = true;
  AccountingBacklog backlog(store);
  const auto t = Clock::now();
  auto a = backlog.write({rec(1, "RUNNING")}, t);
  EXPECT_TRUE(a.tried);
  EXPECT_EQ(a.error, "accounting: database down");
  // Within the first delay nothing is tried; records queue up, newest per job.
  a = backlog.write({rec(1, "COMPLETED"), rec(2, "RUNNING")}, t + seconds(0));
  EXPECT_FALSE(a.tried);
  EXPECT_EQ(store.calls, 1);
  EXPECT_EQ(backlog.size(), 2u);
  ASSERT_NE(backlog.pending(1), nullptr);
  EXPECT_EQ(backlog.pending(1)->state, "COMPLETED");
  EXPECT_EQ(backlog.pending(3), nullptr);
  // Delays double: 1 s, 2 s, 4 s ...
  EXPECT_TRUE(backlog.write({}, t + seconds(1)).tried);
  EXPECT_FALSE(backlog.write({}, t + seconds(2)).tried);
  EXPECT_TRUE(backlog.write({}, t + seconds(3)).tried);
  EXPECT_FALSE(backlog.write({}, t + seconds(6)).tried);
  EXPECT_EQ(store.calls, 3);
  // A forced attempt (sacct wants current records) goes regardless.
  EXPECT_TRUE(backlog.write({}, t + seconds(6), true).tried);
  // Back up: everything queued goes out at the next due attempt.
  store.down = false;
  a = backlog.write({rec(3, "PENDING")}, t + seconds(100));
  EXPECT_TRUE(a.tried);
  EXPECT_TRUE(a.error.empty());
  EXPECT_EQ(a.written, 3u);
  EXPECT_EQ(a.failures, 4u);
  EXPECT_EQ(backlog.size(), 0u);
  EXPECT_EQ(store.rows.at(1).state, "COMPLETED");
  // And the delay starts over.
  store.down = true;
  backlog.write({rec(4, "PENDING")}, t + seconds(200));
  EXPECT_TRUE(backlog.write({}, t + seconds(201)).tried);
}

TEST(AccountingBacklog, TheDelayStopsGrowingAtAMinute) {
  FakeStore store;
  store.down = true;
  AccountingBacklog backlog(store);
  auto t = Clock::now();
  backlog.write({rec(1, "RUNNING")}, t);
  for (int i = 0; i < 20; ++i) {
    t += seconds(60);
    EXPECT_TRUE(backlog.write({}, t).tried) << i;
  }
}

// The ended runs of a requeued job queue beside its newest record, not in its place.
TEST(AccountingBacklog, EarlierRunsOfARequeuedJobQueueBesideItsNewestRecord) {
  FakeStore store;
  store.down = true;
  AccountingBacklog backlog(store);
  const auto t = Clock::now();
  JobRecord run1 = rec(1, "REQUEUED"), run2 = rec(1, "REQUEUED");
  run1.submit_time = 100;
  run2.submit_time = 200;
  backlog.write({run1, rec(1, "PENDING")}, t);
  backlog.write({run2, rec(1, "RUNNING")}, t);
  EXPECT_EQ(backlog.size(), 3u);
  EXPECT_EQ(backlog.pending(1)->state, "RUNNING");
  store.down = false;
  auto a = backlog.write({}, t, true);
  EXPECT_TRUE(a.error.empty());
  EXPECT_EQ(a.written, 3u);
  EXPECT_EQ(backlog.size(), 0u);
  EXPECT_EQ(store.rows.at(1).state, "RUNNING");  // written last: the runs go first
}
