#include "store/journal.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "proto/json.hpp"

using namespace drover;

namespace {
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("drover-journal-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file() const { return (path / "state.db").string(); }
};
core::Job job(uint64_t id, core::JobState s) {
  core::Job j;
  j.id = id;
  j.state = s;
  j.spec.name = "j" + std::to_string(id);
  return j;
}
}  // namespace

TEST(Journal, CommittedJobsSurviveReopen) {
  TempDir dir;
  {
    store::Journal j(dir.file());
    j.put_job(job(1, core::JobState::Pending));
    j.put_job(job(2, core::JobState::Running));
    j.set_next_job_id(3);
    j.commit();
    j.put_job(job(2, core::JobState::Completed));
    j.erase_job(1);
    j.commit();
  }
  store::Journal j(dir.file());
  auto loaded = j.load();
  EXPECT_EQ(loaded.next_job_id, 3u);
  ASSERT_EQ(loaded.jobs.size(), 1u);
  EXPECT_EQ(loaded.jobs[0].id, 2u);
  EXPECT_EQ(loaded.jobs[0].state, core::JobState::Completed);
}

TEST(Journal, UncommittedChangesAreLost) {
  TempDir dir;
  {
    store::Journal j(dir.file());
    j.put_job(job(1, core::JobState::Pending));
    j.commit();
    j.put_job(job(5, core::JobState::Pending));
    // destroyed without commit, as a crash would
  }
  store::Journal j(dir.file());
  auto loaded = j.load();
  ASSERT_EQ(loaded.jobs.size(), 1u);
  EXPECT_EQ(loaded.next_job_id, 2u);  // derived from the highest id ever stored
}

TEST(Journal, IdsAreNeverReusedAfterJobsAreErased) {
  TempDir dir;
  {
    store::Journal j(dir.file());
    j.put_job(job(9, core::JobState::Completed));
    j.set_next_job_id(10);
    j.commit();
    j.erase_job(9);
    j.commit();
  }
  store::Journal j(dir.file());
  EXPECT_EQ(j.load().next_job_id, 10u);
}

TEST(Journal, RecordsAndCountersSurviveReopen) {
  TempDir dir;
  {
    store::Journal j(dir.file());
    j.put_record("reservation", "maint", {{"start", 10}});
    j.put_record("reservation", "gone", {{"start", 20}});
    j.set_counter("next_resv_id", 7);
    j.commit();
    j.erase_record("reservation", "gone");
    j.put_record("reservation", "maint", {{"start", 30}});
    j.commit();
    j.put_record("reservation", "lost", {{"start", 40}});  // never committed
  }
  store::Journal j(dir.file());
  auto loaded = j.load();
  ASSERT_EQ(loaded.records["reservation"].size(), 1u);
  EXPECT_EQ(loaded.records["reservation"]["maint"]["start"], 30);
  EXPECT_EQ(loaded.counters["next_resv_id"], 7);
  EXPECT_EQ(loaded.counters.count("next_job_id"), 0u);
}

TEST(Journal, PayloadsAreReadBackOneByOne) {
  TempDir dir;
  {
    store::Journal j(dir.file());
    j.put_payload(7, {{"script", "#!/bin/sh\ntrue\n"}, {"environment", {{"A", "1"}}}});
    j.put_payload(8, {{"script", "#!/bin/sh\n"}});
    j.commit();
    j.erase_payload(8);
    j.commit();
  }
  store::Journal j(dir.file());
  auto p = j.get_payload(7);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ((*p)["environment"]["A"], "1");
  EXPECT_FALSE(j.get_payload(8).has_value());
  EXPECT_FALSE(j.get_payload(9).has_value());
  EXPECT_TRUE(j.load().records.empty());  // not loaded with the rest
}

// Records leave out the fields that hold their default; every field must still come back,
// defaults and others alike, and a record written in full (an older journal) still loads.
TEST(Journal, CompactRecordsLoadAsWritten) {
  TempDir dir;
  core::Job full = job(4, core::JobState::Running);
  full.spec.partitions = {"a", "b"};
  full.spec.time_limit_min = 0;  // a value that differs from the default (-2)
  full.spec.begin_time = 1700000000;
  full.spec.deadline = 1800000000;
  full.eligible_time = 0;
  full.priority = 7;
  full.reason = "None";
  full.alloc = {core::NodeAlloc{"n1", 2, 100, 1}};
  full.batch_host = "n1";
  core::Job pending = job(5, core::JobState::Pending);
  {
    store::Journal j(dir.file());
    j.put_job(full);
    j.put_job(pending);
    j.commit();
  }
  store::Journal j(dir.file());
  auto loaded = j.load();
  ASSERT_EQ(loaded.jobs.size(), 2u);
  EXPECT_EQ(nlohmann::json(loaded.jobs[0]), nlohmann::json(full));
  EXPECT_EQ(nlohmann::json(loaded.jobs[1]), nlohmann::json(pending));
}

TEST(Journal, NewJournalsUseSmallPages) {
  TempDir dir;
  { store::Journal j(dir.file()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.file().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), store::Journal::kPageSize);
  sqlite3_finalize(st);
  sqlite3_close(db);
}
