#include "sched/profile.hpp"

#include <algorithm>
#include <cstring>

namespace drover::sched {

Profile::Profile(const std::vector<NodeSlot>& slots, int gres_kinds, int64_t now,
                 int64_t resolution) {
  reset(slots, gres_kinds, now, resolution);
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
  for (size_t i = 0; i < nodes_; ++i) {
    Line& l = lines_[i];
    l.t.clear();
    l.t.push_back(now);
    l.cells.assign(stride_, 0);
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
    int32_t* c = l.cells.data() + i * stride_;
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
  for (size_t i = 0; i < nodes_; ++i) n += lines_[i].t.size();
  return n;
}

size_t Profile::step_at(const std::vector<int64_t>& times, int64_t t) {
  // Timelines are short; a linear scan from the back beats a binary search for the usual
  // two or three steps, and the binary search bounds the long ones.
  const size_t n = times.size();
  if (n <= 8) {
    size_t i = n - 1;
    while (i > 0 && times[i] > t) --i;
    return i;
  }
  return static_cast<size_t>(std::upper_bound(times.begin(), times.end(), t) - times.begin()) - 1;
}

size_t Profile::split(Line& line, int64_t t) {
  const size_t i = step_at(line.t, t);
  if (line.t[i] == t) return i;
  if (t < kNever) latest_ = std::max(latest_, t);
  line.t.insert(line.t.begin() + static_cast<std::ptrdiff_t>(i) + 1, t);
  // The new step starts as a copy of step i (copied out first: it may move).
  std::array<int32_t, PackedAmount::kHead + kMaxGresKinds> copy;
  std::copy_n(line.cells.begin() + static_cast<std::ptrdiff_t>(i * stride_), stride_, copy.begin());
  line.cells.insert(line.cells.begin() + static_cast<std::ptrdiff_t>((i + 1) * stride_),
                    copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(stride_));
  return i + 1;
}

void Profile::release_at(int slot, int64_t when, const Amount& amount) {
  when = round_up(std::max(when, now_));
  if (when >= kNever) return;
  Line& l = lines_[slot];
  const size_t first = split(l, when);
  add(l, first, l.t.size(), amount, 1);
}

void Profile::reserve(int slot, int64_t start, int64_t end, const Amount& amount) {
  Line& l = lines_[slot];
  const size_t first = split(l, start);
  size_t last = l.t.size();
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

namespace {

// Slides a candidate start along a node's steps [i, n): a step where `fits(j, fresh)` fails
// pushes the start past it (`fresh`: step j begins the window); once the window
// [start, start + duration) is covered, it fits.
template <typename Fits>
Profile::Span slide(const int64_t* t, size_t n, size_t i, int64_t start, int64_t duration,
                    Fits&& fits) {
  Profile::Span sp;
  size_t first = n;  // first step of the window so far; n: none
  for (; i < n; ++i) {
    const int64_t step_end = i + 1 < n ? t[i + 1] : kNever;
    if (step_end <= start) continue;
    if (first < n && t[i] >= start + duration) break;
    if (!fits(i, first == n)) {
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
  const int64_t* t = l.t.data();
  const size_t n = l.t.size();
  const int64_t start = std::max(from, now_);
  const size_t i = step_at(l.t, start);
  // With a floor each step is checked on its own: what is free throughout the window covers
  // it exactly when every step does. Without one, what is free so far in the window.
  auto by_floor = [&](const Request::Floor& floor) {
    return slide(t, n, i, start, duration,
                 [&](size_t j, bool) { return floor.covered_by(node, step(l, j)); });
  };
  if (const Request::Floor* floor = req.kept_floor(min_tasks)) return by_floor(*floor);
  Request::Floor scratch;
  if (req.make_floor(min_tasks, scratch)) return by_floor(scratch);
  Amount so_far;
  return slide(t, n, i, start, duration, [&](size_t j, bool fresh) {
    so_far = fresh ? unpack(l, j) : Amount::min(so_far, unpack(l, j));
    return req.tasks_fit(node, so_far) >= min_tasks;
  });
}

}  // namespace drover::sched
