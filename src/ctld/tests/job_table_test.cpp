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

namespace {
std::vector<uint64_t> ids(const std::set<uint64_t>& s) { return {s.begin(), s.end()}; }
}  // namespace

TEST(JobTable, ActiveAndFinishedIndexesFollowStateChanges) {
  JobTable t;
  core::Job& a = t.insert(job(1));  // pending: in neither index
  core::Job& b = t.insert(job(2));
  EXPECT_TRUE(t.active().empty());
  EXPECT_TRUE(t.finished().empty());
  t.set_state(a, core::JobState::Running);
  EXPECT_EQ(ids(t.active()), (std::vector<uint64_t>{1}));
  // Ending while its processes go: finished, and still active until they are gone.
  t.set_state(a, core::JobState::Completed);
  EXPECT_TRUE(t.active().empty());
  t.set_completing(a, true);
  EXPECT_EQ(ids(t.active()), (std::vector<uint64_t>{1}));
  EXPECT_EQ(ids(t.finished()), (std::vector<uint64_t>{1}));
  t.set_completing(a, false);
  EXPECT_TRUE(t.active().empty());
  EXPECT_EQ(ids(t.finished()), (std::vector<uint64_t>{1}));
  // Requeued while its processes go: pending and completing, so active, not finished.
  t.set_state(b, core::JobState::Running);
  t.set_completing(b, true);
  t.set_state(b, core::JobState::Pending);
  EXPECT_EQ(ids(t.active()), (std::vector<uint64_t>{2}));
  EXPECT_EQ(ids(t.finished()), (std::vector<uint64_t>{1}));
  t.set_state(b, core::JobState::Suspended);
  t.set_completing(b, false);
  EXPECT_EQ(ids(t.active()), (std::vector<uint64_t>{2}));
  EXPECT_EQ(t.check_indexes(), "");
  // Erasing takes a record out of both.
  t.erase(t.find(1));
  t.erase(t.find(2));
  EXPECT_TRUE(t.active().empty());
  EXPECT_TRUE(t.finished().empty());
  EXPECT_EQ(t.check_indexes(), "");
}

TEST(JobTable, RecordsInsertedAsTheyAreAreIndexed) {
  // A restart reads records back in whatever state they were journaled.
  JobTable t;
  core::Job running = job(5), completing = job(6), done = job(7), pending = job(8);
  running.state = core::JobState::Running;
  completing.state = core::JobState::Cancelled;
  completing.completing = true;
  done.state = core::JobState::Completed;
  for (auto* j : {&pending, &done, &completing, &running}) t.insert(*j);
  EXPECT_EQ(ids(t.active()), (std::vector<uint64_t>{5, 6}));
  EXPECT_EQ(ids(t.finished()), (std::vector<uint64_t>{6, 7}));
  EXPECT_EQ(t.active_ids(), (std::vector<uint64_t>{5, 6}));
  EXPECT_EQ(t.check_indexes(), "");
}

TEST(JobTable, CheckIndexesNamesAStateChangedBehindItsBack) {
  JobTable t;
  core::Job& a = t.insert(job(1));
  a.state = core::JobState::Running;  // not through set_state: the index cannot know
  EXPECT_EQ(t.check_indexes(), "job 1 active, not in the active index");
  t.set_state(a, core::JobState::Running);
  a.state = core::JobState::Failed;
  EXPECT_EQ(t.check_indexes(), "job 1 not active, but in the active index");
  t.set_state(a, core::JobState::Failed);
  a.state = core::JobState::Pending;
  EXPECT_EQ(t.check_indexes(), "job 1 not finished, but in the finished index");
}

TEST(JobTable, ContainsFollowsInsertAndEraseAtAnyId) {
  JobTable t;
  const uint64_t huge = uint64_t{1} << 40;  // beyond the bitmap: the map answers
  for (uint64_t id : {uint64_t{1}, uint64_t{63}, uint64_t{64}, uint64_t{100000}, huge})
    t.insert(job(id));
  for (uint64_t id : {uint64_t{1}, uint64_t{63}, uint64_t{64}, uint64_t{100000}, huge})
    EXPECT_TRUE(t.contains(id)) << id;
  for (uint64_t id : {uint64_t{0}, uint64_t{2}, uint64_t{65}, uint64_t{99999}, huge + 1})
    EXPECT_FALSE(t.contains(id)) << id;
  EXPECT_EQ(t.check_indexes(), "");
  t.erase(t.find(64));
  t.erase(t.find(huge));
  EXPECT_FALSE(t.contains(64));
  EXPECT_FALSE(t.contains(huge));
  EXPECT_TRUE(t.contains(63));
  EXPECT_EQ(t.count(100000), 1u);
  EXPECT_EQ(t.check_indexes(), "");
}

// Begins and deadlines: take_due() names each begun record once and each expired one while
// it stays pending; the indexes follow state changes, updates and erasure.
TEST(JobTable, TimeIndexesNameDueRecords) {
  JobTable t;
  core::Job a = job(1), b = job(2), c = job(3), d = job(4);
  a.eligible_time = 100;  // --begin
  b.spec.deadline = 150;
  c.eligible_time = 120;
  c.spec.deadline = 300;
  t.insert(a);
  t.insert(b);
  t.insert(c);
  t.insert(d);  // neither: costs the indexes nothing
  EXPECT_EQ(t.check_indexes(), "");
  auto due = t.take_due(99);
  EXPECT_TRUE(due.begun.empty());
  EXPECT_TRUE(due.expired.empty());
  due = t.take_due(130);
  EXPECT_EQ(due.begun, (std::vector<uint64_t>{1, 3}));
  EXPECT_TRUE(due.expired.empty());
  EXPECT_TRUE(t.take_due(140).begun.empty());  // once only
  EXPECT_EQ(t.check_indexes(), "");
  // A requeue delay sets a later eligible time: indexed again.
  t.set_eligible_time(*t.get(1), 200);
  EXPECT_EQ(t.check_indexes(), "");
  due = t.take_due(160);
  EXPECT_TRUE(due.begun.empty());
  EXPECT_EQ(due.expired, (std::vector<uint64_t>{2}));
  t.set_state(*t.get(2), core::JobState::Deadline);  // what the state thread does with it
  EXPECT_EQ(t.check_indexes(), "");
  // A whole-record update, then reindex().
  core::Job next = *t.get(3);
  next.spec.deadline = 170;
  *t.get(3) = next;
  EXPECT_NE(t.check_indexes(), "");
  t.reindex(*t.get(3));
  EXPECT_EQ(t.check_indexes(), "");
  due = t.take_due(210);
  EXPECT_EQ(due.begun, (std::vector<uint64_t>{1}));
  EXPECT_EQ(due.expired, (std::vector<uint64_t>{3}));
  t.set_state(*t.get(3), core::JobState::Running);  // leaves the pending indexes
  t.erase(t.find(1));
  EXPECT_EQ(t.check_indexes(), "");
  due = t.take_due(400);
  EXPECT_TRUE(due.begun.empty());
  EXPECT_TRUE(due.expired.empty());
}
