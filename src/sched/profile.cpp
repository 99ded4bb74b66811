#include "sched/profile.hpp"

#include <algorithm>
#include <cstring>

namespace drover::sched {

Profile::Profile(const std::vector<NodeSlot>& slots, int gres_kinds, int64_t now,
                 int64_t resolution) {
  reset(slots, gres_kinds, now, resolution);
}

void Profile::Line::allocate(uint32_t cap, size_t stride, PassArena& arena) {
  buf_ = static_cast<int64_t*>(
      arena.allocate(cap * (sizeof(int64_t) + stride * sizeof(int32_t)), alignof(int64_t)));
  cap_ = cap;
}

void Profile::Line::reset(int64_t t, size_t stride, PassArena& arena) {
  allocate(std::max<uint32_t>(cap_, 4), stride, arena);
  n_ = 1;
  buf_[0] = t;
  std::fill_n(cells(), stride, 0);
}

void Profile::Line::split_after(size_t i, int64_t t, size_t stride, PassArena& arena) {
  if (n_ == cap_) {
    // Moves to a block twice the size (the old one stays in the arena until the next pass).
    const int64_t* old_times = buf_;
    const int32_t* old_cells = cells();
    allocate(cap_ * 2, stride, arena);
    std::copy_n(old_times, n_, buf_);
    std::copy_n(old_cells, n_ * stride, cells());
  }
  std::copy_backward(buf_ + i + 1, buf_ + n_, buf_ + n_ + 1);
  buf_[i + 1] = t;
  int32_t* c = cells();
  std::copy_backward(c + i * stride, c + n_ * stride, c + (n_ + 1) * stride);
  ++n_;
}

void Profile::reset(const std::vector<NodeSlot>& slots, int gres_kinds, int64_t now,
                    int64_t resolution) {
  now_ = now;
  latest_ = now;
  resolution_ = std::max<int64_t>(1, resolution);
  kinds_ = std::clamp(gres_kinds, 0, kMaxGresKinds);
  stride_ = PackedAmount::kHead + static_cast<size_t>(kinds_);
  nodes_ = slots.size();
  if (lines_.size() < nodes_) lines_.resize(nodes_);
  arena_.reset();
  for (size_t i = 0; i < nodes_; ++i) {
    Line& l = lines_[i];
    l.reset(now, stride_, arena_);
    add(l, 0, 1, slots[i].free_now, 1);
  }
}

Amount Profile::unpack(const Line& l, size_t i) const {
  const PackedAmount a = step(l, i);
  Amount out;
  out.cpus = cpus_of(a);
  out.mem_mb = mem_of(a);
  for (int k = 0; k < kinds_; ++k) out.gres[k] = gres_of(a, k);
  return out;
}

void Profile::add(Line& l, size_t first, size_t last, const Amount& amount, int sign) const {
  const int64_t mem = sign * amount.mem_mb;
  for (size_t i = first; i < last; ++i) {
    int32_t* c = l.cells() + i * stride_;
    c[0] += sign * amount.cpus;
    int64_t m;
    std::memcpy(&m, c + 1, sizeof m);
    m += mem;
    std::memcpy(c + 1, &m, sizeof m);
    for (int k = 0; k < kinds_; ++k) c[PackedAmount::kHead + k] += sign * amount.gres[k];
  }
}

int64_t Profile::round_up(int64_t t) const {
  if (t >= kNever) return kNever;
  if (t <= now_) return now_;
  const int64_t r = t % resolution_;
  return r == 0 ? t : t + (resolution_ - r);
}

size_t Profile::steps() const {
  size_t n = 0;
  for (size_t i = 0; i < nodes_; ++i) n += lines_[i].size();
  return n;
}

size_t Profile::step_at(const int64_t* times, size_t n, int64_t t) {
  // Timelines are short; a linear scan from the back beats a binary search for the usual
  // two or three steps, and the binary search bounds the long ones.
  if (n <= 8) {
    size_t i = n - 1;
    while (i > 0 && times[i] > t) --i;
    return i;
  }
  return static_cast<size_t>(std::upper_bound(times, times + n, t) - times) - 1;
}

size_t Profile::split(Line& line, int64_t t) {
  const size_t i = step_at(line.times(), line.size(), t);
  if (line.times()[i] == t) return i;
  if (t < kNever) latest_ = std::max(latest_, t);
  line.split_after(i, t, stride_, arena_);
  return i + 1;
}

void Profile::release_at(int slot, int64_t when, const Amount& amount) {
  when = round_up(std::max(when, now_));
  if (when >= kNever) return;
  Line& l = lines_[slot];
  const size_t first = split(l, when);
  add(l, first, l.size(), amount, 1);
}

void Profile::reserve(int slot, int64_t start, int64_t end, const Amount& amount) {
  Line& l = lines_[slot];
  const size_t first = split(l, start);
  size_t last = l.size();
  if (end < kNever) last = split(l, end);
  add(l, first, last, amount, -1);
}

Profile::Window Profile::earliest(int slot, const Request& req, const NodeSlot& node, int64_t from,
                                  int64_t duration, int min_tasks) const {
  return fill(slot, req, node, earliest_span(slot, req, node, from, duration, min_tasks));
}

Profile::Window Profile::fill(int slot, const Request& req, const NodeSlot& node,
                              const Span& span) const {
  Window w;
  if (span.start >= kNever) return w;
  const Line& l = lines_[slot];
  w.start = span.start;
  w.next_change = span.next_change;
  w.free = unpack(l, span.first);
  for (uint32_t j = span.first + 1; j < span.end; ++j) w.free = Amount::min(w.free, unpack(l, j));
  w.cap = req.tasks_fit(node, w.free);
  return w;
}

Amount Profile::free_over(int slot, int64_t start, int64_t duration) const {
  const Line& l = lines_[slot];
  const int64_t* t = l.times();
  const int64_t end = duration >= kNever - start ? kNever : start + duration;
  size_t j = step_at(t, l.size(), start);
  Amount free = unpack(l, j);
  for (++j; j < l.size() && t[j] < end; ++j) free = Amount::min(free, unpack(l, j));
  return free;
}

namespace {

// Slides a candidate start along a node's steps [i, n): a step where `fits(j, fresh)` fails
// pushes the start past it (`fresh`: step j begins the window, else it is checked together
// with the window's steps before it); once the window [start, start + duration) is covered,
// it fits. With `kJoint` (what is free is worked out over the window's steps together, no
// floor), a step that fits alone but not with the window's earlier steps moves the start to
// the window's second step instead: a window from there may hold.
template <bool kJoint, typename Fits>
Profile::Span slide(const int64_t* t, size_t n, size_t i, int64_t start, int64_t duration,
                    Fits&& fits) {
  Profile::Span sp;
  size_t first = n;  // first step of the window so far; n: none
  for (; i < n; ++i) {
    const int64_t step_end = i + 1 < n ? t[i + 1] : kNever;
    if (step_end <= start) continue;
    if (first < n && t[i] >= start + duration) break;
    if (!fits(i, first == n)) {
      if (kJoint && first < i && fits(i, true)) {
        start = t[first + 1];
        i = first;  // resumes at first + 1
        first = n;
        continue;
      }
      first = n;
      start = step_end;
      if (start >= kNever) return Profile::Span{};
      continue;
    }
    if (first == n) {
      first = i;
      sp.start = start;
      sp.next_change = step_end;
    }
    if (duration >= kNever - start) {
      if (step_end >= kNever) {
        ++i;
        break;  // the last step lasts for ever
      }
      continue;
    }
    if (step_end >= start + duration) {
      ++i;
      break;
    }
  }
  if (first == n) return Profile::Span{};
  sp.first = static_cast<uint32_t>(first);
  sp.end = static_cast<uint32_t>(std::min(i, n));
  return sp;
}

}  // namespace

Profile::Span Profile::earliest_span(int slot, const Request& req, const NodeSlot& node,
                                     int64_t from, int64_t duration, int min_tasks) const {
  const Line& l = lines_[slot];
  const int64_t* t = l.times();
  const size_t n = l.size();
  const int64_t start = std::max(from, now_);
  const size_t i = step_at(t, n, start);
  // With a floor each step is checked on its own: what is free throughout the window covers
  // it exactly when every step does. Without one, what is free so far in the window.
  auto by_floor = [&](const Request::Floor& floor) {
    return slide<false>(t, n, i, start, duration,
                        [&](size_t j, bool) { return floor.covered_by(node, step(l, j)); });
  };
  if (const Request::Floor* floor = req.kept_floor(min_tasks)) return by_floor(*floor);
  Request::Floor scratch;
  if (req.make_floor(min_tasks, scratch)) return by_floor(scratch);
  Amount so_far;
  return slide<true>(t, n, i, start, duration, [&](size_t j, bool fresh) {
    so_far = fresh ? unpack(l, j) : Amount::min(so_far, unpack(l, j));
    return req.tasks_fit(node, so_far) >= min_tasks;
  });
}

}  // namespace drover::sched
