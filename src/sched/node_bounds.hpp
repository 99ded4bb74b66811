#pragma once
// What a pass has learnt about when each candidate node can take part in a placement that
// needs one thing of every node (request shapes that differ only in how many nodes and tasks
// they want share it), for one length of time: per node a span [lo, hi) of start times at
// which it was found unable to. The profile only loses room as the pass goes on, so what was
// found stays true. A search at time t looks only at the nodes not known to be unable at t
// ("due"), in node order (so that it can stop at the first placement, which node order
// decides), skipping whole groups of nodes that are not due.
//
// Beyond kFlat nodes a tree of fan-out kFan sums them up: level 0 per kFan nodes, each level
// above per kFan entries of the one below, up to a level of at most kFan entries; a summary
// keeps the smallest hi and the largest lo below it. Finding the next due node and updating
// a summary read small runs of adjacent entries (few cache lines, a shallow tree). Up to
// kFlat nodes a plain scan costs less than keeping the tree; the answers are the same.
//
// Times are kept as 32-bit offsets from a base (the pass's now), 8 bytes per node instead of
// 16: the spans are most of what a search reads. Every time given must lie in
// [base, base + kRange) (in_range()) or be kMin, kMax or the engine's never (kNeverTime).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <vector>

namespace drover::sched {

class NodeBounds {
 public:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNeverTime = kMax / 4;                             // (sched::kNever)
  static constexpr int64_t kRange = std::numeric_limits<int32_t>::max() - 2;  // about 68 years
  // Whether `t` can be given to bounds based at `base`.
  static bool in_range(int64_t base, int64_t t) { return t >= base && t - base < kRange; }

  // `mem`: where the spans and the tree live (a pass's arena).
  explicit NodeBounds(std::pmr::memory_resource* mem = std::pmr::get_default_resource())
      : known_(mem), levels_(mem) {}

  bool ready(size_t n) const { return n_ == n && !known_.empty(); }
  // Whether answers come from scanning every node (few nodes): kth_due_after is cheap then.
  bool scans() const { return flat_; }
  // n nodes, nothing known about them; times from `base` on.
  void init(size_t n, int64_t base = 0) {
    n_ = n;
    base_ = base;
    flat_ = n <= kFlat;
    known_.assign(std::max<size_t>(n, 1), kNothing);
    dirty_until_ = 0;
    dirty_blocks_.clear();
    if (flat_) return;
    levels_.clear();
    for (size_t size = (n + kFan - 1) / kFan;; size = (size + kFan - 1) / kFan) {
      levels_.emplace_back(size, Summary{kCodeMin, kCodeMin});  // what kNothing sums up to
      if (size <= kFan) break;
    }
    dirty_.assign(levels_[0].size(), 0);
  }

  // The first time >= from at which some node may be due (kMax: none ever).
  int64_t first_due(int64_t from) {
    if (known_.empty()) return kMax;
    const Code f = code(from);
    if (flat_) {
      Code first = kCodeMax;
      for (size_t i = 0; i < n_; ++i) first = std::min(first, due_at(i, f) ? f : known_[i].hi);
      return time(first);
    }
    flush();
    const Summary all = root();
    if (all.max_lo > f) return from;
    return time(std::max(f, all.min_hi));
  }

  bool due(size_t pos, int64_t t) const { return due_at(pos, code(t)); }
  void prefetch(size_t pos) const { __builtin_prefetch(&known_[pos]); }
  // What is known of the node at pos: it cannot take part at any start in [lo, hi).
  int64_t unable_from(size_t pos) const { return time(known_[pos].lo); }
  int64_t unable_until(size_t pos) const { return time(known_[pos].hi); }
  // Learns what `o` (bounds with the same base and nodes) knows of the node at pos.
  void learn_from(size_t pos, const NodeBounds& o) { learn_codes(pos, o.known_[pos]); }

  // The first position >= pos that is due at t, or -1. What was learnt about the nodes before
  // pos since the last call may not be in the tree yet (see learn()).
  int next_due(size_t pos, int64_t t) { return next_due_at(pos, code(t)); }

  // The node at pos cannot take part at any start in [from, until) (a span that holds the
  // time it is due at): what is known of it becomes that, joined to what was known when the
  // two meet. Searches learn about nodes in node order, and looking for due nodes after pos
  // reads the tree only for later nodes: the tree is brought up to date once per walk.
  void learn(size_t pos, int64_t from, int64_t until) {
    learn_codes(pos, {code(from), code(until)});
  }

  // Among the nodes not due at t, the k-th smallest time at which one becomes due (1-based);
  // `never` if there are fewer, or that time is `never` or later.
  int64_t kth_due_after(int64_t t, int k, int64_t never) {
    const Code v = kth_code(code(t), k, code(never));
    return v >= code(never) ? never : time(v);
  }

 private:
  static constexpr size_t kFan = 16;
  static constexpr size_t kFlat = 256;

  // A time as kept: its offset from base_, or one of the codes below.
  using Code = int32_t;
  static constexpr Code kCodeMin = std::numeric_limits<Code>::min();
  static constexpr Code kCodeMax = std::numeric_limits<Code>::max();
  static constexpr Code kCodeNever = kCodeMax - 1;
  Code code(int64_t t) const {
    if (t == kMin) return kCodeMin;
    if (t >= kMax) return kCodeMax;
    if (t >= kNeverTime) return kCodeNever;
    return static_cast<Code>(t - base_);
  }
  int64_t time(Code c) const {
    if (c == kCodeMin) return kMin;
    if (c == kCodeMax) return kMax;
    if (c == kCodeNever) return kNeverTime;
    return base_ + c;
  }

  struct Span {
    Code lo, hi;
  };
  bool due_at(size_t pos, Code t) const { return known_[pos].hi <= t || known_[pos].lo > t; }

  int next_due_at(size_t pos, Code t) {
    if (pos >= n_) return -1;
    if (flat_) {
      for (; pos < n_; ++pos)
        if (due_at(pos, t)) return static_cast<int>(pos);
      return -1;
    }
    if (pos < dirty_until_) flush();
    const size_t block = pos / kFan;
    if (may_be_due(levels_[0][block], t))
      for (size_t i = pos, end = std::min(n_, (block + 1) * kFan); i < end; ++i)
        if (due_at(i, t)) return static_cast<int>(i);
    // Up through the levels to the first later entry that may hold a due node, then down to
    // its first such node.
    size_t idx = block, level = 0;
    for (;;) {
      const std::pmr::vector<Summary>& here = levels_[level];
      const size_t end = std::min(here.size(), (idx / kFan + 1) * kFan);
      size_t j = idx + 1;
      while (j < end && !may_be_due(here[j], t)) ++j;
      if (j < end) {
        idx = j;
        break;
      }
      if (++level == levels_.size()) return -1;
      idx /= kFan;
    }
    for (; level > 0; --level) idx = first_may_be_due(levels_[level - 1], idx * kFan, t);
    for (size_t i = idx * kFan;; ++i)
      if (due_at(i, t)) return static_cast<int>(i);
  }

  void learn_codes(size_t pos, Span s) {
    Span& k = known_[pos];
    const Code from = s.lo, until = s.hi;
    if (k.hi >= from && k.lo <= until) s = Span{std::min(from, k.lo), std::max(until, k.hi)};
    k = s;
    mark(pos);
  }
  // The node at pos changed: its block is summed up again at the next flush.
  void mark(size_t pos) {
    if (flat_) return;
    const size_t block = pos / kFan;
    if (!dirty_[block]) {
      dirty_[block] = 1;
      dirty_blocks_.push_back(block);
    }
    dirty_until_ = std::max(dirty_until_, pos + 1);
  }

  static constexpr Span kNothing{kCodeMin, kCodeMin};  // due at any time
  static constexpr Span kAside{kCodeMin, kCodeMax};    // never due, never next
  // Of a group: due somewhere at t when min_hi <= t or max_lo > t.
  struct Summary {
    Code max_lo, min_hi;
    bool operator==(const Summary&) const = default;
  };
  static Summary join(const Summary& a, const Summary& b) {
    return {std::max(a.max_lo, b.max_lo), std::min(a.min_hi, b.min_hi)};
  }
  static bool may_be_due(const Summary& s, Code t) { return s.min_hi <= t || s.max_lo > t; }
  static size_t first_may_be_due(const std::pmr::vector<Summary>& level, size_t from, Code t) {
    while (!may_be_due(level[from], t)) ++from;
    return from;
  }
  Summary root() const {
    const std::pmr::vector<Summary>& top = levels_.back();
    Summary all = top[0];
    for (size_t i = 1; i < top.size(); ++i) all = join(all, top[i]);
    return all;
  }

  // kth_due_after in codes.
  Code kth_code(Code t, int k, Code never) {
    if (k < 1) return never;
    if (flat_) {
      values_.clear();
      for (size_t i = 0; i < n_; ++i)
        if (!due_at(i, t)) values_.push_back(known_[i].hi);
      if (values_.size() < static_cast<size_t>(k)) return never;
      std::nth_element(values_.begin(), values_.begin() + (k - 1), values_.end());
      return std::min(values_[k - 1], never);
    }
    flush();
    if (k == 1 && !may_be_due(root(), t)) return std::min(root().min_hi, never);
    // The nodes due at t (a search has looked at them all: those that fit) are set aside,
    // then the k smallest times taken out one by one (the tree keeps the smallest on top);
    // all are put back after.
    // (Set aside as learning is: each block is summed up once, at the flush below, however
    // many of its nodes are due; so are they put back.)
    set_aside_.clear();
    for (int pos = next_due_at(0, t); pos >= 0; pos = next_due_at(pos + 1, t)) {
      set_aside_.push_back({static_cast<size_t>(pos), known_[pos]});
      known_[pos] = kAside;
      mark(static_cast<size_t>(pos));
    }
    flush();
    Code v = never;
    for (int i = 0; i < k; ++i) {
      v = root().min_hi;
      if (v >= never) {
        v = never;
        break;
      }
      if (i + 1 == k) break;
      size_t idx = 0;
      for (size_t level = levels_.size(); level-- > 0;) {
        const std::pmr::vector<Summary>& here = levels_[level];
        idx *= kFan;
        while (here[idx].min_hi != v) ++idx;
      }
      size_t pos = idx * kFan;
      while (known_[pos].hi != v) ++pos;
      set_aside(pos);
    }
    for (const auto& [pos, span] : set_aside_) {
      known_[pos] = span;
      mark(pos);
    }
    return v;
  }

  void assign(size_t pos, Span s) {
    known_[pos] = s;
    if (!flat_) update(pos / kFan);
  }
  // A block's summary. A whole block in four independent runs: one run's max/min chain
  // would take most of the time (flushes sum millions of blocks a pass).
  Summary sum_block(size_t block) const {
    const size_t first = block * kFan, end = std::min(n_, first + kFan);
    const Span* k = known_.data() + first;
    auto of = [](const Span& x) { return Summary{x.lo, x.hi}; };
    if (end - first < kFan) {
      Summary sum = of(k[0]);
      for (size_t i = 1; i < end - first; ++i) sum = join(sum, of(k[i]));
      return sum;
    }
    Summary s0 = of(k[0]), s1 = of(k[1]), s2 = of(k[2]), s3 = of(k[3]);
    for (size_t i = 4; i < kFan; i += 4) {
      s0 = join(s0, of(k[i]));
      s1 = join(s1, of(k[i + 1]));
      s2 = join(s2, of(k[i + 2]));
      s3 = join(s3, of(k[i + 3]));
    }
    return join(join(s0, s1), join(s2, s3));
  }
  // Sums up a block of nodes again, and its way up the levels while that changes anything.
  void update(size_t block) {
    Summary sum = sum_block(block);
    size_t idx = block;
    for (size_t level = 0;; ++level) {
      std::pmr::vector<Summary>& here = levels_[level];
      if (here[idx] == sum) return;
      here[idx] = sum;
      if (level + 1 == levels_.size()) return;
      const size_t group = idx / kFan * kFan, group_end = std::min(here.size(), group + kFan);
      sum = here[group];
      for (size_t i = group + 1; i < group_end; ++i) sum = join(sum, here[i]);
      idx /= kFan;
    }
  }
  void flush() {
    for (size_t block : dirty_blocks_) {
      dirty_[block] = 0;
      update(block);
    }
    dirty_blocks_.clear();
    dirty_until_ = 0;
  }
  // Takes a node out of every answer for now (kth_due_after puts it back).
  void set_aside(size_t pos) {
    set_aside_.push_back({pos, known_[pos]});
    assign(pos, kAside);
  }

  size_t n_ = 0;
  int64_t base_ = 0;
  bool flat_ = false;
  std::pmr::vector<Span> known_;                        // per node
  std::pmr::vector<std::pmr::vector<Summary>> levels_;  // see above; levels_[0]: per kFan nodes
  // Blocks learnt about since the tree was last brought up to date, and where they end.
  std::vector<uint8_t> dirty_;
  std::vector<size_t> dirty_blocks_;
  size_t dirty_until_ = 0;
  struct Aside {
    size_t pos;
    Span span;
  };
  std::vector<Aside> set_aside_;  // scratch
  std::vector<Code> values_;      // scratch
};

}  // namespace drover::sched
