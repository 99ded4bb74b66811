// The controller's job table: the array index and payload references follow insert/erase.
#include "ctld/job_table.hpp"

#include <gtest/gtest.h>

using namespace drover;
using namespace drover::ctld;

namespace {

core::Job job(uint64_t id, uint64_t array_job_id = 0, uint64_t payload = 0) {
  core::Job j;
  j.id = id;
  j.array_job_id = array_job_id;
  j.payload_id = payload == 0 ? id : payload;
  return j;
}

TEST(JobTable, IdsComeFromTheCounter) {
  JobTable t;
  t.set_next_id(40);
  EXPECT_EQ(t.take_id(), 40u);
  EXPECT_EQ(t.next_id(), 41u);
}

TEST(JobTable, InsertFindErase) {
  JobTable t;
  t.insert(job(3));
  t.insert(job(1));
  ASSERT_NE(t.get(3), nullptr);
  EXPECT_EQ(t.get(2), nullptr);
  EXPECT_EQ(t.size(), 2u);
  std::vector<uint64_t> order;
  for (const auto& [id, j] : t) order.push_back(id);
  EXPECT_EQ(order, (std::vector<uint64_t>{1, 3}));
  auto erased = t.erase(t.find(1));
  EXPECT_EQ(erased.next, t.find(3));
  EXPECT_EQ(erased.unreferenced_payload, 1u);  // a plain job's own script goes with it
  EXPECT_FALSE(t.contains(1));
}

TEST(JobTable, ArrayIndexFollowsItsRecords) {
  JobTable t;
  t.insert(job(10, 10));      // the array's remainder
  t.insert(job(12, 10, 10));  // tasks split off, sharing its script
  t.insert(job(11, 10, 10));
  t.insert(job(20));
  EXPECT_TRUE(t.is_array(10));
  EXPECT_FALSE(t.is_array(20));
  EXPECT_FALSE(t.is_array(12));
  EXPECT_EQ(*t.array_members(10), (std::vector<uint64_t>{10, 12, 11}));
  EXPECT_EQ(t.array_records(10), (std::vector<uint64_t>{10, 12, 11}));  // own, newest first
  t.erase(t.find(12));
  EXPECT_EQ(t.array_records(10), (std::vector<uint64_t>{10, 11}));
  t.erase(t.find(10));
  t.erase(t.find(11));
  EXPECT_FALSE(t.is_array(10));
  EXPECT_TRUE(t.array_records(10).empty());
}

TEST(JobTable, SharedPayloadGoesWithTheLastRecord) {
  JobTable t;
  t.insert(job(10, 10));
  t.insert(job(11, 10, 10));
  t.insert(job(12, 10, 10));
  EXPECT_EQ(t.payload_refs(10), 3u);
  EXPECT_EQ(t.erase(t.find(10)).unreferenced_payload, 0u);  // the array's own record first
  EXPECT_EQ(t.payload_refs(10), 2u);
  EXPECT_EQ(t.erase(t.find(12)).unreferenced_payload, 0u);
  EXPECT_EQ(t.erase(t.find(11)).unreferenced_payload, 10u);
  EXPECT_EQ(t.payload_refs(10), 0u);
}

TEST(JobTable, RecordsWithoutAPayloadReleaseNone) {
  JobTable t;
  core::Job j = job(5);
  j.payload_id = 0;  // journaled before scripts were kept apart
  t.insert(std::move(j));
  EXPECT_EQ(t.erase(t.find(5)).unreferenced_payload, 0u);
}

TEST(JobTable, SubmitIdsOfJobsGoneAreForgottenAfterTheWindow) {
  JobTable t;
  t.insert(job(1));
  t.submit_ids().put(1000, "a", {1, 0});
  t.submit_ids().put(1000, "b", {2, 0});  // job 2 is gone
  std::set<std::string> erased;
  t.forget_submit_ids(JobTable::kSubmitIdWindow - 1, erased);
  EXPECT_TRUE(erased.empty());
  t.forget_submit_ids(JobTable::kSubmitIdWindow + 30, erased);  // within a minute of the last
  EXPECT_TRUE(erased.empty());
  t.forget_submit_ids(JobTable::kSubmitIdWindow + 60, erased);
  EXPECT_EQ(erased, std::set<std::string>{"1000:b"});
  EXPECT_TRUE(t.submit_ids().find(1000, "a"));
}

TEST(JobTable, NewPendingUntilThePassTakesThem) {
  JobTable t;
  t.note_new_pending(4);
  t.note_new_pending(5);
  EXPECT_EQ(t.new_pending().size(), 2u);
  t.clear_new_pending();
  EXPECT_TRUE(t.new_pending().empty());
}

}  // namespace
