#pragma once
// The availability profile: for every node, what is free from now into the future, as a
// step function. Running jobs give back what they hold at their expected end; each job the
// plan reserves takes its share for [start, end). All step times other than `now` lie on
// the bf_resolution grid, which bounds how many steps there can be.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "sched/pass_arena.hpp"
#include "sched/request.hpp"
#include "sched/resources.hpp"

namespace drover::sched {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;

// An amount as a profile step keeps it: CPUs, memory (two int32 halves), then one count per
// GRES kind of the pass and no more, so that a step takes 16 bytes on a cluster of one GPU
// kind rather than an Amount's 64 (the profile's steps are most of what a pass reads).
struct PackedAmount {
  static constexpr int kHead = 3;  // CPUs, memory
  const int32_t* p;
};
inline int32_t cpus_of(PackedAmount a) { return a.p[0]; }
inline int64_t mem_of(PackedAmount a) {
  int64_t m;
  std::memcpy(&m, a.p + 1, sizeof m);
  return m;
}
inline int32_t gres_of(PackedAmount a, int kind) { return a.p[PackedAmount::kHead + kind]; }

class Profile {
 public:
  Profile() = default;
  // `resolution`: step times are rounded up to multiples of it (>= 1).
  // `gres_kinds`: the GRES kinds of the pass (what amounts hold beyond them is not kept).
  Profile(const std::vector<NodeSlot>& slots, int gres_kinds, int64_t now, int64_t resolution);
  // Starts over for another pass (keeps the memory of the last one).
  void reset(const std::vector<NodeSlot>& slots, int gres_kinds, int64_t now, int64_t resolution);

  // Gives `amount` back on `slot` from `when` on (a running job's expected end).
  void release_at(int slot, int64_t when, const Amount& amount);
  // Takes `amount` on `slot` for [start, end).
  void reserve(int slot, int64_t start, int64_t end, const Amount& amount);

  struct Window {
    int64_t start = kNever;        // earliest start >= from where the node fits; kNever: never
    Amount free;                   // what is free there throughout [start, start + duration)
    int cap = 0;                   // tasks that fits
    int64_t next_change = kNever;  // the node's next step after `start`
  };
  // The earliest start at or after `from` where `req` can put at least `min_tasks` tasks on
  // the node throughout `duration` seconds (kNever: for good).
  Window earliest(int slot, const Request& req, const NodeSlot& node, int64_t from,
                  int64_t duration, int min_tasks) const;

  // The same start without what is free there: the steps it spans, for fill() to work that
  // out while the profile is unchanged (most starts a search finds are not taken up).
  struct Span {
    int64_t start = kNever;
    int64_t next_change = kNever;
    uint32_t first = 0, end = 0;  // the steps [first, end) of the node's timeline
  };
  Span earliest_span(int slot, const Request& req, const NodeSlot& node, int64_t from,
                     int64_t duration, int min_tasks) const;
  // The window of a span found on `slot` (start kNever: none).
  Window fill(int slot, const Request& req, const NodeSlot& node, const Span& span) const;
  // What is free on `slot` throughout [start, start + duration) (start >= now).
  Amount free_over(int slot, int64_t start, int64_t duration) const;
  // The fewest CPUs free over a span's steps (what fill() would find free there).
  int32_t min_cpus(int slot, const Span& span) const {
    const int32_t* cells = lines_[slot].cells();
    int32_t m = cells[span.first * stride_];
    for (uint32_t j = span.first + 1; j < span.end; ++j) m = std::min(m, cells[j * stride_]);
    return m;
  }

  // Asks the memory for the start of a node's timeline (what earliest_span reads first).
  void prefetch(int slot) const { __builtin_prefetch(lines_[slot].times()); }

  int64_t round_up(int64_t t) const;
  int64_t now() const { return now_; }
  // The latest step time other than never (now when there is none).
  int64_t latest() const { return latest_; }
  // Steps in the whole profile (for statistics).
  size_t steps() const;

 private:
  // One node's step function: step i holds what is free over [times()[i], times()[i + 1])
  // (the last one for ever), packed (PackedAmount) in cells()[i * stride, (i + 1) * stride).
  // One block of the pass's arena per node, the times and then room for as many steps'
  // amounts, behind a 16-byte header: finding a step reads only times, a short timeline's
  // amounts share their cache lines, and an examination follows one pointer instead of two.
  class Line {
   public:
    size_t size() const { return n_; }
    const int64_t* times() const { return buf_; }
    const int32_t* cells() const { return reinterpret_cast<const int32_t*>(buf_ + cap_); }
    int32_t* cells() { return reinterpret_cast<int32_t*>(buf_ + cap_); }
    // One step from `t` on, all zero, in memory of the profile's arena (just reset: what the
    // line held before is gone) with room for as many steps as it had then.
    void reset(int64_t t, size_t stride, PassArena& arena);
    // A new step i + 1 from `t`, a copy of step i (t lies inside step i).
    void split_after(size_t i, int64_t t, size_t stride, PassArena& arena);

   private:
    void allocate(uint32_t cap, size_t stride, PassArena& arena);
    int64_t* buf_ = nullptr;  // cap_ times, then cap_ * stride cells (in the arena)
    uint32_t n_ = 0, cap_ = 0;
  };
  PackedAmount step(const Line& l, size_t i) const { return {l.cells() + i * stride_}; }
  Amount unpack(const Line& l, size_t i) const;
  // Adds `sign` times `amount` to steps [first, last) of the line.
  void add(Line& l, size_t first, size_t last, const Amount& amount, int sign) const;
  // Index of the step in effect at `t` (t >= now).
  static size_t step_at(const int64_t* times, size_t n, int64_t t);
  // Makes `t` a step boundary; returns the index of the step starting at `t`.
  size_t split(Line& line, int64_t t);

  int64_t now_ = 0, resolution_ = 1, latest_ = 0;
  int kinds_ = 0;                        // GRES kinds kept per step
  size_t stride_ = PackedAmount::kHead;  // int32 cells per step
  size_t nodes_ = 0;
  std::vector<Line> lines_;  // the first nodes_ are in use
  PassArena arena_;          // the lines' steps, given back at each reset
};

}  // namespace drover::sched
