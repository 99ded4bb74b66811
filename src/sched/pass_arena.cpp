#include "sched/pass_arena.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <new>

namespace drover::sched {

namespace {
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kChecked = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kChecked = true;
#else
constexpr bool kChecked = false;
#endif
#else
constexpr bool kChecked = false;
#endif
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kFirstChunk = size_t{4} << 20;
size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
}  // namespace

PassArena::~PassArena() {
  reset();
  for (const Chunk& c : chunks_) unmap(c);
}

void PassArena::unmap(const Chunk& c) { ::munmap(c.base, c.size); }

void PassArena::add_chunk(size_t at_least) {
  const size_t last = chunks_.empty() ? 0 : chunks_.back().size;
  const size_t size = round_up(std::max({at_least, kFirstChunk, 2 * last}), kHugePage);
  // Mapped with a huge page's worth to spare, so that the chunk can start on a huge page
  // boundary (the kernel backs only whole aligned 2 MiB ranges with huge pages).
  const size_t mapped = size + kHugePage;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  auto* raw = static_cast<std::byte*>(p);
  auto* base = reinterpret_cast<std::byte*>(round_up(reinterpret_cast<uintptr_t>(raw), kHugePage));
  if (base > raw) ::munmap(raw, static_cast<size_t>(base - raw));
  if (std::byte* end = base + size; end < raw + mapped)
    ::munmap(end, static_cast<size_t>(raw + mapped - end));
  ::madvise(base, size, MADV_HUGEPAGE);  // advice only: fine where THP is off
  chunks_.push_back({base, size});
}

void* PassArena::do_allocate(size_t bytes, size_t align) {
  if constexpr (kChecked) {
    void* p = ::operator new (bytes, std::align_val_t{align});
    checked_.emplace_back(p, align);
    offset_ += bytes;
    return p;
  }
  for (;;) {
    if (current_ < chunks_.size()) {
      const Chunk& c = chunks_[current_];
      const size_t at = round_up(offset_, align);
      if (at + bytes <= c.size) {
        offset_ = at + bytes;
        return c.base + at;
      }
      done_ += offset_;
      offset_ = 0;
      if (++current_ < chunks_.size()) continue;
    }
    add_chunk(bytes + align);
    current_ = chunks_.size() - 1;
  }
}

void PassArena::reset() {
  for (const auto& [p, align] : checked_) ::operator delete (p, std::align_val_t{align});
  checked_.clear();
  if (chunks_.size() > 1) {
    size_t total = 0;
    for (const Chunk& c : chunks_) {
      total += c.size;
      unmap(c);
    }
    chunks_.clear();
    add_chunk(total);
  }
  current_ = 0;
  offset_ = 0;
  done_ = 0;
}

size_t PassArena::used() const { return done_ + offset_; }

size_t PassArena::held() const {
  size_t n = 0;
  for (const Chunk& c : chunks_) n += c.size;
  return n;
}

}  // namespace drover::sched
