#pragma once
// What sreport reports, worked out from job records as slurmdbd's hourly rollup works it out
// (checked against real sreport: tests/compat/golden/accounting): per TRES, the time the cluster
// had (Reported), what running jobs held (Allocated), what eligible jobs waited for while
// resources were idle (Planned, at most the idle time of each hour, the rest OverCommitted),
// nodes out of service (Down, PLND Down), the rest Idle; and what each association (account,
// user) used. Times are TRES-seconds.
// Pure: records in, sums out.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/acct_dump.hpp"

namespace drover::core {

struct UsageJob {
  std::string account, user;
  int64_t eligible = 0;  // 0: never eligible
  int64_t start = 0;     // 0: not started
  int64_t end = 0;       // 0: not ended (running, or pending)
  TresCounts requested;  // what it asked for (its waiting counts toward Planned)
  TresCounts allocated;  // what it held while it ran
};

// The cluster's TRES (cpu, mem, node, billing, gres/...) from `since` until the next period.
struct TresPeriod {
  int64_t since = 0;
  TresCounts counts;
};

// A node out of service from `start` until `end` (0: still): down or fully drained (Down), or
// in a maintenance reservation (`planned`: PLND Down), with the node's TRES.
struct NodeDownPeriod {
  int64_t start = 0, end = 0;
  TresCounts tres;
  bool planned = false;
};

struct UsageTotals {
  std::map<std::string, int64_t> allocated, down, planned_down, idle, planned, over_committed,
      reported;
  TresCounts count;  // the cluster's TRES at the end of the window (sreport's TRES Count)
};

struct AssocUsage {
  std::string account, user;
  std::map<std::string, int64_t> used;  // TRES-seconds within the window
};

struct UsageReport {
  UsageTotals cluster;
  std::vector<AssocUsage> assocs;  // each (account, user) with a job in the window, by both
};

// The window [start, end) up to `now` (the hour in progress counts as far as it went).
UsageReport compute_usage(const std::vector<UsageJob>& jobs, const std::vector<TresPeriod>& cluster,
                          const std::vector<NodeDownPeriod>& down, int64_t start, int64_t end,
                          int64_t now);

}  // namespace drover::core
