#include "sched/profile.hpp"

#include <algorithm>

namespace drover::sched {

Profile::Profile(const std::vector<NodeSlot>& slots, int64_t now, int64_t resolution)
    : now_(now), resolution_(std::max<int64_t>(1, resolution)) {
  steps_.resize(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) steps_[i].push_back({now, slots[i].free_now});
}

int64_t Profile::round_up(int64_t t) const {
  if (t >= kNever) return kNever;
  if (t <= now_) return now_;
  const int64_t r = t % resolution_;
  return r == 0 ? t : t + (resolution_ - r);
}

size_t Profile::steps() const {
  size_t n = 0;
  for (const auto& s : steps_) n += s.size();
  return n;
}

size_t Profile::step_at(const std::vector<Step>& s, int64_t t) {
  // Timelines are short; a linear scan from the back beats a binary search for the usual
  // two or three steps, and the binary search bounds the long ones.
  if (s.size() <= 8) {
    size_t i = s.size() - 1;
    while (i > 0 && s[i].t > t) --i;
    return i;
  }
  auto it = std::upper_bound(s.begin(), s.end(), t,
                             [](int64_t v, const Step& st) { return v < st.t; });
  return static_cast<size_t>(it - s.begin()) - 1;
}

size_t Profile::split(std::vector<Step>& s, int64_t t) {
  const size_t i = step_at(s, t);
  if (s[i].t == t) return i;
  s.insert(s.begin() + static_cast<std::ptrdiff_t>(i) + 1, Step{t, s[i].free});
  return i + 1;
}

void Profile::release_at(int slot, int64_t when, const Amount& amount) {
  when = round_up(std::max(when, now_));
  if (when >= kNever) return;
  auto& s = steps_[slot];
  for (size_t i = split(s, when); i < s.size(); ++i) s[i].free += amount;
}

void Profile::reserve(int slot, int64_t start, int64_t end, const Amount& amount) {
  auto& s = steps_[slot];
  const size_t first = split(s, start);
  size_t last = s.size();
  if (end < kNever) last = split(s, end);
  for (size_t i = first; i < last; ++i) s[i].free -= amount;
}

Profile::Window Profile::earliest(int slot, const Request& req, const NodeSlot& node, int64_t from,
                                  int64_t duration, int min_tasks) const {
  const auto& s = steps_[slot];
  Window w;
  int64_t start = std::max(from, now_);
  size_t i = step_at(s, start);
  // Slide a candidate start along the steps: a step that cannot hold the tasks pushes the
  // start past it; once the window [start, start + duration) is covered, it fits.
  bool have = false;
  for (; i < s.size(); ++i) {
    const int64_t step_end = i + 1 < s.size() ? s[i + 1].t : kNever;
    if (step_end <= start) continue;
    if (have && s[i].t >= start + duration) break;
    const Amount free = have ? Amount::min(w.free, s[i].free) : s[i].free;
    const int cap = req.tasks_fit(node, free);
    if (cap < min_tasks) {
      have = false;
      start = step_end;
      if (start >= kNever) return Window{};
      continue;
    }
    if (!have) {
      w.start = start;
      w.next_change = step_end;
    }
    have = true;
    w.free = free;
    w.cap = cap;
    if (duration >= kNever - start) {
      if (step_end >= kNever) break;  // the last step lasts for ever
      continue;
    }
    if (step_end >= start + duration) break;
  }
  if (!have) return Window{};
  return w;
}

}  // namespace drover::sched
