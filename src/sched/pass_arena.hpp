#pragma once
// Memory for what one scheduling pass builds and reads at random (the availability profile's
// timelines, what the pass learns about each node): handed out in order from a few large
// chunks that the kernel is asked to back with 2 MiB pages, and taken back all at once when
// the next pass starts. A pass over 10,000 nodes reads some 20 MB this way, one node here and
// one there; with 4 KiB pages most of those reads also miss the TLB (measured: the pass is
// about 8% faster with huge pages). Where transparent huge pages are off the advice is
// ignored and only the bump allocation remains.
#include <cstddef>
#include <memory_resource>
#include <utility>
#include <vector>

namespace drover::sched {

class PassArena final : public std::pmr::memory_resource {
 public:
  PassArena() = default;
  PassArena(const PassArena&) = delete;
  PassArena& operator=(const PassArena&) = delete;
  ~PassArena() override;

  // Starts over: everything handed out before is gone (the chunks are kept, as one chunk of
  // their total size when there were several, so that the next pass's memory is contiguous).
  void reset();
  // Bytes handed out since the last reset, and held from the system.
  size_t used() const;
  size_t held() const;

 private:
  struct Chunk {
    std::byte* base;
    size_t size;
  };
  void* do_allocate(size_t bytes, size_t align) override;
  void do_deallocate(void*, size_t, size_t) override {}  // all at once, in reset()
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
  void add_chunk(size_t at_least);
  static void unmap(const Chunk& c);

  std::vector<Chunk> chunks_;
  // Under AddressSanitizer each block is allocated on its own, so that reading or writing
  // past one is still caught (a bump allocator's blocks lie side by side).
  std::vector<std::pair<void*, size_t>> checked_;
  size_t current_ = 0;  // the chunk handing out memory
  size_t offset_ = 0;   // bytes handed out of it
  size_t done_ = 0;     // bytes handed out of the chunks before it
};

}  // namespace drover::sched
