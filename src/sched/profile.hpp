#pragma once
// The availability profile: for every node, what is free from now into the future, as a
// step function. Running jobs give back what they hold at their expected end; each job the
// plan reserves takes its share for [start, end). All step times other than `now` lie on
// the bf_resolution grid, which bounds how many steps there can be.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "sched/request.hpp"
#include "sched/resources.hpp"

namespace drover::sched {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;

class Profile {
 public:
  Profile() = default;
  // `resolution`: step times are rounded up to multiples of it (>= 1).
  Profile(const std::vector<NodeSlot>& slots, int64_t now, int64_t resolution);
  // Starts over for another pass (keeps the memory of the last one).
  void reset(const std::vector<NodeSlot>& slots, int64_t now, int64_t resolution);

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
  // The fewest CPUs free over a span's steps (what fill() would find free there).
  int32_t min_cpus(int slot, const Span& span) const {
    const Amount* free = lines_[slot].free.data();
    int32_t m = free[span.first].cpus;
    for (uint32_t j = span.first + 1; j < span.end; ++j) m = std::min(m, free[j].cpus);
    return m;
  }

  int64_t round_up(int64_t t) const;
  int64_t now() const { return now_; }
  // Steps in the whole profile (for statistics).
  size_t steps() const;

 private:
  // One node's step function: step i holds free[i] over [t[i], t[i + 1]) (the last one for
  // ever). Times apart from amounts, so that finding a step reads only times.
  struct Line {
    std::vector<int64_t> t;
    std::vector<Amount> free;
  };
  // Index of the step in effect at `t` (t >= now).
  static size_t step_at(const std::vector<int64_t>& times, int64_t t);
  // Makes `t` a step boundary; returns the index of the step starting at `t`.
  static size_t split(Line& line, int64_t t);

  int64_t now_ = 0, resolution_ = 1;
  size_t nodes_ = 0;
  std::vector<Line> lines_;  // the first nodes_ are in use
};

}  // namespace drover::sched
