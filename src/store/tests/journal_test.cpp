#include "store/journal.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

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
