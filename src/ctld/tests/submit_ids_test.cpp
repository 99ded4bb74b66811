// The submissions' request ids: exact per user, the journal's keys, forgetting.
#include "ctld/submit_ids.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

using namespace drover::ctld;

namespace {

std::string hex_id(unsigned i) {  // as the commands make them: 32 lowercase hex digits
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", i * 2654435761u, i, ~i, i ^ 0x5a5a5a5au);
  return buf;
}

const auto nothing_exists = [](uint64_t) { return false; };

TEST(SubmitIds, OneUsersIdNeverFindsAnotherUsersJob) {
  SubmitIds ids;
  const std::string id = hex_id(1);
  ids.put(1000, id, {7, 100});
  ids.put(1000, "rest-1", {8, 100});
  ASSERT_TRUE(ids.find(1000, id));
  EXPECT_EQ(ids.find(1000, id)->job_id, 7u);
  EXPECT_EQ(ids.find(1000, "rest-1")->job_id, 8u);
  EXPECT_FALSE(ids.find(1001, id));
  EXPECT_FALSE(ids.find(1001, "rest-1"));
  EXPECT_FALSE(ids.find(1000, hex_id(2)));
  // The same text in capitals is another id (and not packed: it would come back lowercase).
  std::string upper = id;
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  EXPECT_FALSE(ids.find(1000, upper));
  EXPECT_EQ(ids.size(), 2u);
}

TEST(SubmitIds, ManyIdsAllFoundThenForgottenByTheJournalsKeys) {
  SubmitIds ids;
  const unsigned n = 20000;
  for (unsigned i = 1; i <= n; ++i) ids.put(1000 + i % 3, hex_id(i), {i, int64_t{i}});
  ASSERT_EQ(ids.size(), n);
  for (unsigned i = 1; i <= n; ++i) {
    auto e = ids.find(1000 + i % 3, hex_id(i));
    ASSERT_TRUE(e) << i;
    EXPECT_EQ(e->job_id, i);
    EXPECT_FALSE(ids.find(1000 + (i + 1) % 3, hex_id(i)));
  }
  // Jobs with even ids still exist; the rest are past the window.
  std::set<std::string> erased;
  ids.forget(
      n + 10, 5, 1000000, [](uint64_t id) { return id % 2 == 0; }, erased);
  EXPECT_EQ(ids.size(), n / 2);
  EXPECT_EQ(erased.size(), n / 2);
  EXPECT_TRUE(erased.count(SubmitIds::journal_key(1000 + 1 % 3, hex_id(1))));
  for (unsigned i = 1; i <= n; ++i)  // what remains is still found after the shifts
    EXPECT_EQ(ids.find(1000 + i % 3, hex_id(i)).has_value(), i % 2 == 0) << i;
}

TEST(SubmitIds, JournalKeysComeBackAsTheyWere) {
  SubmitIds ids;
  const std::string id = hex_id(5);
  ids.put_journaled("1000:" + id, {1, 10});
  ids.put_journaled("1000:r-1", {2, 10});
  ids.put_journaled("01000:" + id, {3, 10});  // not a form journal_key writes: kept verbatim
  ids.put_journaled("garbage", {4, 10});
  EXPECT_EQ(ids.find(1000, id)->job_id, 1u);
  EXPECT_EQ(ids.find(1000, "r-1")->job_id, 2u);
  EXPECT_EQ(ids.size(), 4u);
  std::set<std::string> erased;
  ids.forget(100, 50, 10, nothing_exists, erased);
  EXPECT_EQ(erased, (std::set<std::string>{"1000:" + id, "1000:r-1", "01000:" + id, "garbage"}));
  EXPECT_EQ(ids.size(), 0u);
}

TEST(SubmitIds, BeyondTheCapTheOldestOfJobsGoneGoFirst) {
  SubmitIds ids;
  for (unsigned i = 1; i <= 10; ++i) ids.put(1000, hex_id(i), {i, int64_t{100 + i}});
  ids.put(1000, "named", {11, 50});
  std::set<std::string> erased;
  // Job 1 still exists: never forgotten for the cap.
  ids.forget(
      120, 3600, 5, [](uint64_t id) { return id == 1; }, erased);
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ(erased.size(), 6u);
  EXPECT_TRUE(erased.count("1000:named"));  // the oldest
  EXPECT_TRUE(ids.find(1000, hex_id(1)));
  for (unsigned i = 2; i <= 6; ++i) EXPECT_FALSE(ids.find(1000, hex_id(i))) << i;
  for (unsigned i = 7; i <= 10; ++i) EXPECT_TRUE(ids.find(1000, hex_id(i))) << i;
}

TEST(SubmitIds, PutAgainReplacesTheEntry) {
  SubmitIds ids;
  ids.put(0, hex_id(9), {5, 1});
  ids.put(0, hex_id(9), {6, 2});
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(ids.find(0, hex_id(9))->job_id, 6u);
  EXPECT_EQ(ids.find(0, hex_id(9))->at, 2);
}

// Times that do not fit the table's 32 bits are kept exactly, in the map.
TEST(SubmitIds, AnyTimeIsKept) {
  SubmitIds ids;
  ids.put(1000, hex_id(1), {5, -7});
  ids.put(1000, hex_id(2), {6, int64_t{1} << 40});
  EXPECT_EQ(ids.find(1000, hex_id(1))->at, -7);
  EXPECT_EQ(ids.find(1000, hex_id(2))->at, int64_t{1} << 40);
  ids.put(1000, hex_id(1), {5, 9});  // moves into the table: still one entry
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.find(1000, hex_id(1))->at, 9);
}

// Against a plain map keyed by the journal's key: the same answers after any mix of
// submissions and forgetting.
TEST(SubmitIds, BehavesAsAMapByJournalKey) {
  SubmitIds ids;
  std::map<std::string, SubmitIds::Entry> ref;
  std::mt19937 rng(18);
  int64_t now = 1000;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 500; ++i) {
      const uint32_t uid = rng() % 3;
      const unsigned n = rng() % 3000;
      const std::string id = n % 7 == 0 ? "named-" + std::to_string(n) : hex_id(n);
      const SubmitIds::Entry e{rng() % 4000 + 1, now + static_cast<int64_t>(rng() % 50)};
      ids.put(uid, id, e);
      ref[SubmitIds::journal_key(uid, id)] = e;
    }
    now += 100;
    auto exists = [](uint64_t job) { return job % 3 == 0; };
    std::set<std::string> erased, ref_erased;
    const size_t cap = 1500;
    ids.forget(now, 250, cap, exists, erased);
    std::vector<std::pair<int64_t, std::string>> kept;
    for (auto it = ref.begin(); it != ref.end();) {
      if (exists(it->second.job_id)) {
        ++it;
      } else if (now - it->second.at >= 250) {
        ref_erased.insert(it->first);
        it = ref.erase(it);
      } else {
        kept.emplace_back(it->second.at, it->first);
        ++it;
      }
    }
    std::sort(kept.begin(), kept.end());
    for (const auto& [at, key] : kept) {
      if (ref.size() <= cap) break;
      ref.erase(key);
      ref_erased.insert(key);
    }
    ASSERT_EQ(erased, ref_erased) << round;
    ASSERT_EQ(ids.size(), ref.size()) << round;
    for (const auto& [key, e] : ref) {
      const size_t colon = key.find(':');
      auto got =
          ids.find(static_cast<uint32_t>(std::stoul(key.substr(0, colon))), key.substr(colon + 1));
      ASSERT_TRUE(got) << key;
      EXPECT_EQ(got->job_id, e.job_id);
      EXPECT_EQ(got->at, e.at);
    }
  }
}

}  // namespace
