#include "sched/pass_arena.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <vector>

namespace drover::sched {
namespace {

TEST(PassArena, HandsOutAlignedBlocksThatDoNotOverlap) {
  PassArena arena;
  std::vector<std::pair<std::byte*, size_t>> blocks;
  for (size_t i = 1; i <= 500; ++i) {
    const size_t bytes = i * 37 % 1000 + 1, align = size_t{1} << (i % 5);
    auto* p = static_cast<std::byte*>(arena.allocate(bytes, align));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    std::memset(p, static_cast<int>(i), bytes);
    blocks.emplace_back(p, bytes);
  }
  // Each block still holds what was written to it: none overlaps another.
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t j = 0; j < blocks[i].second; ++j)
      ASSERT_EQ(blocks[i].first[j], static_cast<std::byte>(i + 1));
}

TEST(PassArena, BlocksLargerThanAChunkAndResetKeepsTheMemory) {
  PassArena arena;
  void* small = arena.allocate(64, 8);
  void* big = arena.allocate(size_t{20} << 20, 64);  // beyond the first chunk
  ASSERT_NE(small, nullptr);
  ASSERT_NE(big, nullptr);
  std::memset(big, 1, size_t{20} << 20);
  EXPECT_GE(arena.used(), (size_t{20} << 20) + 64);
  const size_t held = arena.held();
  arena.reset();
  EXPECT_EQ(arena.used(), 0u);
  if (held == 0) GTEST_SKIP() << "under AddressSanitizer each block is allocated on its own";
  EXPECT_GE(held, (size_t{20} << 20) + 64);
  // After a reset the same demand fits in what is held (one chunk now).
  EXPECT_NE(arena.allocate(64, 8), nullptr);
  std::memset(arena.allocate(size_t{20} << 20, 64), 2, size_t{20} << 20);
  EXPECT_EQ(arena.held(), held);
}

TEST(PassArena, BacksPolymorphicContainers) {
  PassArena arena;
  std::pmr::vector<std::pmr::vector<int>> v(&arena);
  for (int i = 0; i < 100; ++i) v.emplace_back(static_cast<size_t>(i), i);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(v[i].get_allocator().resource(), &arena);
    EXPECT_EQ(v[i].size(), static_cast<size_t>(i));
    for (int x : v[i]) EXPECT_EQ(x, i);
  }
}

}  // namespace
}  // namespace drover::sched
