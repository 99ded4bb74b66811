// An agent's unacknowledged exits on disk: what one agent records the next one reads back,
// with everything the report carries; what cannot be read is skipped, never fatal.
#include "agent/exit_store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace drover::agent;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("drover-exits-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
}  // namespace

TEST(ExitStore, WhatOneAgentRecordsTheNextReads) {
  TempDir t;
  ExitStore store((t.path / "exits").string());
  store.open();
  EXPECT_EQ(fs::status(t.path / "exits").permissions(), fs::perms::owner_all);
  ExitRecord ok{0, 1, {}};
  ExitRecord oom{9, 3, {}};
  oom.usage.oom_kills = 2;
  oom.usage.max_rss_bytes = 1 << 20;
  ASSERT_TRUE(store.save(7, ok));
  ASSERT_TRUE(store.save(8, oom));
  struct stat st {};
  ASSERT_EQ(::stat((t.path / "exits" / "8").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto back = ExitStore((t.path / "exits").string()).load();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.at(7).status, 0);
  EXPECT_EQ(back.at(7).run, 1u);
  EXPECT_EQ(back.at(7).usage.oom_kills, 0);
  EXPECT_EQ(back.at(7).usage.max_rss_bytes, -1);
  EXPECT_EQ(back.at(8).status, 9);
  EXPECT_EQ(back.at(8).run, 3u);
  EXPECT_EQ(back.at(8).usage.oom_kills, 2);
  EXPECT_EQ(back.at(8).usage.max_rss_bytes, 1 << 20);

  // A later run's exit replaces the earlier one; an acknowledged one is gone.
  ASSERT_TRUE(store.save(7, ExitRecord{256, 2, {}}));
  store.remove(8);
  store.remove(8);  // twice: nothing to remove is no error
  back = store.load();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back.at(7).status, 256);
  EXPECT_EQ(back.at(7).run, 2u);
}

TEST(ExitStore, UnreadableRecordsAreSkipped) {
  TempDir t;
  const fs::path dir = t.path / "exits";
  ExitStore store(dir.string());
  EXPECT_TRUE(store.load().empty());  // no directory yet: nothing
  store.open();
  ASSERT_TRUE(store.save(1, ExitRecord{0, 1, {}}));
  write(dir / "2", "{\"job_id\": 2, \"status\": ");                // torn
  write(dir / "3", "{\"job_id\": 4, \"status\": 0, \"run\": 1}");  // another job's
  write(dir / "5", "[1, 2]");
  write(dir / "6", "{\"job_id\": 6, \"status\": \"x\", \"run\": 1}");
  write(dir / "7", std::string(10000, ' ') + "{}");
  write(dir / "notes", "hello");
  write(dir / ".9.tmp", "{\"job_id\": 9, \"status\": 0, \"run\": 1}");  // died writing it
  fs::create_directory(dir / "10");
  fs::create_symlink(dir / "1", dir / "11");
  auto back = store.load();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back.count(1), 1u);
  EXPECT_FALSE(fs::exists(dir / ".9.tmp"));
}
