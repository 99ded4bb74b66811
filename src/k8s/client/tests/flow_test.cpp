#include "k8s/client/flow.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace drover::k8s {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> feed_all(LineSplitter& s, const std::vector<std::string>& chunks) {
  std::vector<std::string> lines;
  for (const auto& c : chunks) {
    s.feed(c, [&](std::string_view l) {
      lines.emplace_back(l);
      return true;
    });
  }
  return lines;
}

TEST(LineSplitter, ChunkBoundaryMidLine) {
  LineSplitter s;
  auto lines = feed_all(s, {"{\"type\":\"ADD", "ED\"}\n{\"ty", "pe\":\"MODIFIED\"}\n{\"partial"});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], R"({"type":"ADDED"})");
  EXPECT_EQ(lines[1], R"({"type":"MODIFIED"})");
  EXPECT_EQ(s.pending(), "{\"partial");
}

TEST(LineSplitter, ManyLinesInOneChunkCrLfAndBlankLines) {
  LineSplitter s;
  auto lines = feed_all(s, {"a\r\n\nb\nc", "\n", "\n"});
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(s.pending().empty());
}

TEST(LineSplitter, ByteAtATime) {
  LineSplitter s;
  std::string text = "{\"x\":1}\n{\"y\":2}\n";
  std::vector<std::string> chunks;
  for (char c : text) chunks.emplace_back(1, c);
  EXPECT_EQ(feed_all(s, chunks), (std::vector<std::string>{"{\"x\":1}", "{\"y\":2}"}));
}

TEST(LineSplitter, StopsWhenTheCallbackSaysSo) {
  LineSplitter s;
  int calls = 0;
  bool go_on = s.feed("1\n2\n3\n", [&](std::string_view) { return ++calls < 2; });
  EXPECT_FALSE(go_on);
  EXPECT_EQ(calls, 2);
}

TEST(LineSplitter, OverlongLineIsAnError) {
  LineSplitter s(8);
  EXPECT_THROW(s.feed("0123456789", [](std::string_view) { return true; }), std::length_error);
}

TEST(TokenBucket, BurstThenQps) {
  auto t0 = TokenBucket::Clock::time_point{} + 1h;
  TokenBucket b(5, 10, t0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b.reserve(t0), 0ns) << i;  // the burst
  // The 11th waits one token's time (200 ms at 5 qps), the 12th two.
  EXPECT_NEAR(std::chrono::duration<double>(b.reserve(t0)).count(), 0.2, 1e-6);
  EXPECT_NEAR(std::chrono::duration<double>(b.reserve(t0)).count(), 0.4, 1e-6);
  // After a long idle time the bucket is full again, but never fuller than the burst.
  auto later = t0 + 100s;
  for (int i = 0; i < 10; ++i) EXPECT_EQ(b.reserve(later), 0ns) << i;
  EXPECT_GT(b.reserve(later), 0ns);
}

TEST(TokenBucket, RefillsAtQps) {
  auto t0 = TokenBucket::Clock::time_point{} + 1h;
  TokenBucket b(10, 1, t0);
  EXPECT_EQ(b.reserve(t0), 0ns);
  EXPECT_GT(b.reserve(t0 + 50ms), 0ns);   // half a token: wait
  EXPECT_EQ(b.reserve(t0 + 300ms), 0ns);  // the debt is paid and a token is there
}

TEST(TokenBucket, DisabledWithZeroQps) {
  TokenBucket b(0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(b.reserve(TokenBucket::Clock::now()), 0ns);
}

TEST(Backoff, GrowsAndStaysWithinBounds) {
  Backoff b{100ms, 2.0, 0.5, 2000ms};
  std::mt19937_64 rng(42);
  for (int attempt = 0; attempt < 40; ++attempt) {
    double base = std::min(2000.0, 100.0 * std::pow(2.0, attempt));
    for (int i = 0; i < 50; ++i) {
      auto d = b.delay(attempt, rng).count();
      EXPECT_GE(d, static_cast<long>(base) - 1) << attempt;
      EXPECT_LE(d, std::min(2000.0, base * 1.5)) << attempt;
    }
  }
  // Huge attempt numbers do not overflow.
  EXPECT_EQ(b.delay(1000000, rng), 2000ms);
}

TEST(Backoff, JitterSpreadsDelays) {
  Backoff b{1000ms, 1.0, 1.0, 10000ms};
  std::mt19937_64 rng(7);
  long lo = 1 << 30, hi = 0;
  for (int i = 0; i < 200; ++i) {
    long d = b.delay(0, rng).count();
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_LT(lo, 1200);
  EXPECT_GT(hi, 1800);
}

}  // namespace
}  // namespace drover::k8s
