#pragma once
// What a pass has learnt about when each candidate node can take part in a placement that
// needs one thing of every node (request shapes that differ only in how many nodes and tasks
// they want share it), for one length of time: per node a span [lo, hi) of start times at
// which it was found unable to. The profile only loses room as the pass goes on, so what was
// found stays true. A search at time t looks only at the nodes not known to be unable at t
// ("due"), in node order (so that it can stop at the first placement, which node order
// decides), skipping whole blocks of nodes that are not due.
//
// Beyond kFlat nodes, nodes live in blocks of kBlock; a tree over the blocks keeps, per
// subtree, the smallest hi and the largest lo, so that the next due node is found in
// O(log n) and an update changes one path of the tree. Up to kFlat nodes a plain scan costs
// less than keeping the tree; the answers are the same.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace drover::sched {

class NodeBounds {
 public:
  static constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

  bool ready(size_t n) const { return n_ == n && !known_.empty(); }
  // Whether answers come from scanning every node (few nodes): kth_due_after is cheap then.
  bool scans() const { return flat_; }
  // n nodes, nothing known about them.
  void init(size_t n) {
    n_ = n;
    flat_ = n <= kFlat;
    if (flat_) {
      known_.assign(std::max<size_t>(n, 1), kNothing);
      return;
    }
    const size_t blocks = (n + kBlock - 1) / kBlock;
    leaves_ = 1;
    while (leaves_ < blocks) leaves_ <<= 1;
    known_.assign(leaves_ * kBlock, kPadding);
    dirty_.assign(blocks, 0);
    dirty_blocks_.clear();
    dirty_until_ = 0;
    std::fill_n(known_.begin(), n, kNothing);
    tree_.assign(2 * leaves_, Summary{kMin, kMax});
    for (size_t b = 0; b < blocks; ++b) tree_[leaves_ + b] = Summary{kMin, kMin};
    for (size_t i = leaves_; i-- > 1;) tree_[i] = join(tree_[2 * i], tree_[2 * i + 1]);
  }

  // The first time >= from at which some node may be due (kMax: none ever).
  int64_t first_due(int64_t from) {
    if (known_.empty()) return kMax;
    if (flat_) {
      int64_t first = kMax;
      for (size_t i = 0; i < n_; ++i) first = std::min(first, due(i, from) ? from : known_[i].hi);
      return first;
    }
    flush();
    if (tree_[1].max_lo > from) return from;
    return std::max(from, tree_[1].min_hi);
  }

  bool due(size_t pos, int64_t t) const { return known_[pos].hi <= t || known_[pos].lo > t; }
  // What is known of the node at pos: it cannot take part at any start in [lo, hi).
  int64_t unable_from(size_t pos) const { return known_[pos].lo; }
  int64_t unable_until(size_t pos) const { return known_[pos].hi; }

  // The first position >= pos that is due at t, or -1. What was learnt about the nodes before
  // pos since the last call may not be in the tree yet (see learn()).
  int next_due(size_t pos, int64_t t) {
    if (flat_) {
      for (; pos < n_; ++pos)
        if (due(pos, t)) return static_cast<int>(pos);
      return -1;
    }
    if (pos >= n_) return -1;
    if (pos < dirty_until_) flush();
    size_t block = pos / kBlock;
    if (may_be_due(leaves_ + block, t))
      for (size_t i = pos, end = (block + 1) * kBlock; i < end; ++i)
        if (due(i, t)) return static_cast<int>(i);
    // Up to the first right sibling holding a due node, then down to its leftmost such block.
    size_t node = leaves_ + block;
    for (;;) {
      if (node == 1) return -1;
      if ((node & 1) == 0 && may_be_due(node + 1, t)) {
        ++node;
        break;
      }
      node >>= 1;
    }
    while (node < leaves_) node = may_be_due(2 * node, t) ? 2 * node : 2 * node + 1;
    for (size_t i = (node - leaves_) * kBlock;; ++i)
      if (due(i, t)) return static_cast<int>(i);
  }

  // The node at pos cannot take part at any start in [from, until) (a span that holds the
  // time it is due at): what is known of it becomes that, joined to what was known when the
  // two meet. Searches learn about nodes in node order, and looking for due nodes after pos
  // reads the tree only for later blocks: the tree is brought up to date once per walk.
  void learn(size_t pos, int64_t from, int64_t until) {
    Span s{from, until};
    Span& k = known_[pos];
    if (k.hi >= from && k.lo <= until) s = Span{std::min(from, k.lo), std::max(until, k.hi)};
    k = s;
    if (flat_) return;
    const size_t block = pos / kBlock;
    if (!dirty_[block]) {
      dirty_[block] = 1;
      dirty_blocks_.push_back(block);
    }
    dirty_until_ = std::max(dirty_until_, pos + 1);
  }

  // Among the nodes not due at t, the k-th smallest time at which one becomes due (1-based);
  // `never` if there are fewer, or that time is `never` or later.
  int64_t kth_due_after(int64_t t, int k, int64_t never) {
    if (k < 1) return never;
    if (flat_) {
      values_.clear();
      for (size_t i = 0; i < n_; ++i)
        if (!due(i, t)) values_.push_back(known_[i].hi);
      if (values_.size() < static_cast<size_t>(k)) return never;
      std::nth_element(values_.begin(), values_.begin() + (k - 1), values_.end());
      return std::min(values_[k - 1], never);
    }
    flush();
    if (k == 1 && !may_be_due(1, t)) return std::min(tree_[1].min_hi, never);
    // The nodes due at t (a search has looked at them all: those that fit) are set aside,
    // then the k smallest times taken out one by one (the tree keeps the smallest on top);
    // all are put back after.
    set_aside_.clear();
    for (int pos = next_due(0, t); pos >= 0; pos = next_due(pos + 1, t)) set_aside(pos);
    int64_t v = never;
    for (int i = 0; i < k; ++i) {
      v = tree_[1].min_hi;
      if (v >= never) {
        v = never;
        break;
      }
      if (i + 1 == k) break;
      size_t node = 1;
      while (node < leaves_) node = tree_[2 * node].min_hi == v ? 2 * node : 2 * node + 1;
      size_t pos = (node - leaves_) * kBlock;
      while (known_[pos].hi != v) ++pos;
      set_aside(pos);
    }
    for (const auto& [pos, span] : set_aside_) assign(pos, span);
    return v;
  }

 private:
  static constexpr size_t kBlock = 16;
  static constexpr size_t kFlat = 256;

  struct Span {
    int64_t lo, hi;
  };
  static constexpr Span kNothing{kMin, kMin};  // due at any time
  static constexpr Span kPadding{kMin, kMax};  // never due
  // Of a subtree: due somewhere at t when min_hi <= t or max_lo > t.
  struct Summary {
    int64_t max_lo, min_hi;
    bool operator==(const Summary&) const = default;
  };
  static Summary join(const Summary& a, const Summary& b) {
    return {std::max(a.max_lo, b.max_lo), std::min(a.min_hi, b.min_hi)};
  }
  bool may_be_due(size_t node, int64_t t) const {
    return tree_[node].min_hi <= t || tree_[node].max_lo > t;
  }

  void assign(size_t pos, Span s) {
    known_[pos] = s;
    if (!flat_) update(pos / kBlock);
  }
  // Sums up a block again, and its way up the tree.
  void update(size_t block) {
    const Span* k = &known_[block * kBlock];
    Summary sum{k[0].lo, k[0].hi};
    for (size_t i = 1; i < kBlock; ++i) sum = join(sum, Summary{k[i].lo, k[i].hi});
    for (size_t node = leaves_ + block; !(tree_[node] == sum);) {
      tree_[node] = sum;
      if (node == 1) break;
      node >>= 1;
      sum = join(tree_[2 * node], tree_[2 * node + 1]);
    }
  }
  // Takes a node out of every answer for now (kth_due_after puts it back).
  void set_aside(size_t pos) {
    set_aside_.push_back({pos, known_[pos]});
    assign(pos, kPadding);
  }
  void flush() {
    for (size_t block : dirty_blocks_) {
      dirty_[block] = 0;
      update(block);
    }
    dirty_blocks_.clear();
    dirty_until_ = 0;
  }

  size_t n_ = 0, leaves_ = 0;
  bool flat_ = false;
  std::vector<Span> known_;    // per node (beyond kFlat padded to whole blocks)
  std::vector<Summary> tree_;  // [1, leaves_): inner nodes; [leaves_, 2 leaves_): blocks
  // Blocks learnt about since the tree was last brought up to date, and where they end.
  std::vector<uint8_t> dirty_;
  std::vector<size_t> dirty_blocks_;
  size_t dirty_until_ = 0;
  struct Aside {
    size_t pos;
    Span span;
  };
  std::vector<Aside> set_aside_;  // scratch
  std::vector<int64_t> values_;   // scratch
};

}  // namespace drover::sched
