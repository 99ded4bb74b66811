// NodeBounds against a plain list of what is known per node: which nodes are due, in what
// order, the first due time and the k-th time nodes become due, over random updates (sizes
// across the flat scan and the tree, partial blocks included).
#include "sched/node_bounds.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using drover::sched::NodeBounds;

namespace {

constexpr int64_t kNever = INT64_MAX / 4;

struct Model {
  std::vector<int64_t> lo, hi;
  explicit Model(size_t n) : lo(n, NodeBounds::kMin), hi(n, NodeBounds::kMin) {}
  bool due(size_t i, int64_t t) const { return hi[i] <= t || lo[i] > t; }
  void learn(size_t i, int64_t t, int64_t until) {
    if (hi[i] >= t && lo[i] <= until) {
      lo[i] = std::min(lo[i], t);
      hi[i] = std::max(hi[i], until);
    } else {
      lo[i] = t;
      hi[i] = until;
    }
  }
  int64_t first_due(int64_t from) const {
    int64_t best = NodeBounds::kMax;
    for (size_t i = 0; i < lo.size(); ++i) best = std::min(best, due(i, from) ? from : hi[i]);
    return best;
  }
  int64_t kth(int64_t t, int k) const {
    std::vector<int64_t> v;
    for (size_t i = 0; i < lo.size(); ++i)
      if (!due(i, t)) v.push_back(hi[i]);
    std::sort(v.begin(), v.end());
    if (k < 1 || v.size() < static_cast<size_t>(k)) return kNever;
    return std::min(v[k - 1], kNever);
  }
};

}  // namespace

TEST(NodeBounds, AgreesWithAPlainList) {
  for (int seed = 0; seed < 100; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t lo, int64_t hi) {
      return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
    };
    static const size_t sizes[] = {1, 5, 16, 17, 100, 256, 257, 300, 1000, 2049};
    const size_t n = sizes[seed % 10];
    NodeBounds b;
    ASSERT_FALSE(b.ready(n));
    b.init(n);
    ASSERT_TRUE(b.ready(n));
    Model m(n);
    for (int step = 0; step < 150; ++step) {
      const int64_t t = pick(0, 1000);
      ASSERT_EQ(b.first_due(t), m.first_due(t)) << "seed " << seed << " step " << step;
      // Due positions in order, as a search walks them, learning about some of them.
      std::vector<int> walked, expected;
      for (size_t i = 0; i < n; ++i)
        if (m.due(i, t)) expected.push_back(static_cast<int>(i));
      for (int pos = b.next_due(0, t); pos >= 0; pos = b.next_due(pos + 1, t))
        walked.push_back(pos);
      ASSERT_EQ(walked, expected) << "seed " << seed << " step " << step;
      for (int pos : walked) {
        ASSERT_TRUE(b.due(pos, t));
        if (pick(0, 2) == 0) continue;  // feasible at t: nothing learnt
        const int64_t until = pick(0, 20) == 0 ? kNever : t + pick(1, 200);
        b.learn(pos, t, until);
        m.learn(pos, t, until);
      }
      for (int k : {1, 2, 3, 7, 40})
        ASSERT_EQ(b.kth_due_after(t, k, kNever), m.kth(t, k))
            << "seed " << seed << " step " << step << " k " << k;
    }
  }
}
