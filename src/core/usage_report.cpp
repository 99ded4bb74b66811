#include "core/usage_report.hpp"

#include <algorithm>
#include <tuple>

namespace drover::core {
namespace {

constexpr int64_t kHour = 3600;

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) {
  return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

using Buckets = std::map<int64_t, std::map<std::string, int64_t>>;  // hour -> TRES -> seconds

// Adds counts x seconds of [from, to) to the hours it falls in (within [start, stop)).
void spread(Buckets& b, const TresCounts& counts, int64_t from, int64_t to, int64_t start,
            int64_t stop) {
  from = std::max(from, start);
  to = std::min(to, stop);
  while (from < to) {
    const int64_t hour = from / kHour * kHour;
    const int64_t next = std::min(to, hour + kHour);
    auto& bucket = b[std::max(hour, start)];
    for (const auto& [name, n] : counts) bucket[name] += n * (next - from);
    from = next;
  }
}

}  // namespace

UsageReport compute_usage(const std::vector<UsageJob>& jobs, const std::vector<TresPeriod>& cluster,
                          const std::vector<NodeDownPeriod>& down, int64_t start, int64_t end,
                          int64_t now) {
  UsageReport r;
  const int64_t stop = std::min(end, now);
  std::vector<TresPeriod> periods = cluster;
  std::sort(periods.begin(), periods.end(),
            [](const TresPeriod& a, const TresPeriod& b) { return a.since < b.since; });
  for (const TresPeriod& p : periods)
    if (p.since < end) r.cluster.count = p.counts;

  Buckets total, alloc, waiting, out, planned_out;
  for (const NodeDownPeriod& d : down)
    spread(d.planned ? planned_out : out, d.tres, d.start, d.end ? d.end : now, start, stop);
  for (size_t i = 0; i < periods.size(); ++i) {
    const int64_t until = i + 1 < periods.size() ? periods[i + 1].since : stop;
    spread(total, periods[i].counts, periods[i].since, until, start, stop);
  }
  std::map<std::pair<std::string, std::string>, std::map<std::string, int64_t>> used;
  for (const UsageJob& j : jobs) {
    const int64_t ran_to = j.end ? j.end : now;
    if (j.start > 0 && overlap(j.start, ran_to, start, stop) > 0) {
      spread(alloc, j.allocated, j.start, ran_to, start, stop);
      auto& u = used[{j.account, j.user}];
      for (const auto& [name, n] : j.allocated)
        u[name] += n * overlap(j.start, ran_to, start, stop);
    }
    if (j.eligible > 0) {
      const int64_t waited_to = j.start ? j.start : ran_to;
      spread(waiting, j.requested, j.eligible, waited_to, start, stop);
    }
  }
  // Hour by hour, as slurmdbd rolls up: what was neither allocated nor out of service is idle,
  // of which what eligible jobs waited for is Planned, up to all of it (the rest of their
  // waiting is OverCommitted).
  for (const auto& [hour_start, tres] : total) {
    for (const auto& [tres_name, capacity] : tres) {
      const int64_t hour = hour_start;  // (lambdas may not capture structured bindings in C++20)
      const std::string& name = tres_name;
      auto get = [&](const Buckets& b) -> int64_t {
        auto h = b.find(hour);
        if (h == b.end()) return 0;
        auto t = h->second.find(name);
        return t == h->second.end() ? 0 : t->second;
      };
      // What jobs held comes first, then what was down, then what was down as planned.
      const int64_t a = std::min(get(alloc), capacity);
      const int64_t d = std::min(get(out), capacity - a);
      const int64_t pd = std::min(get(planned_out), capacity - a - d);
      const int64_t idle = capacity - a - d - pd;
      const int64_t planned = std::min(get(waiting), idle);
      r.cluster.reported[name] += capacity;
      r.cluster.allocated[name] += a;
      r.cluster.planned[name] += planned;
      r.cluster.over_committed[name] += get(waiting) - planned;
      r.cluster.idle[name] += idle - planned;
      r.cluster.down[name] += d;
      r.cluster.planned_down[name] += pd;
    }
  }
  for (auto& [key, u] : used) r.assocs.push_back({key.first, key.second, std::move(u)});
  return r;
}

}  // namespace drover::core
