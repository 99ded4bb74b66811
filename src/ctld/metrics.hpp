#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace drover::ctld {

class StateMachine;

// What the state thread measures around scheduling passes and counts of requests: the part of
// the metrics that StateMachine does not hold. Owned by the state thread.
struct SchedStats {
  uint64_t cycles = 0;        // scheduling passes run
  double last_s = 0;          // duration of the last pass
  double max_s = 0;           // longest pass
  double total_s = 0;         // sum of all passes
  uint64_t last_backlog = 0;  // pending jobs the last pass considered
  uint64_t jobs_submitted = 0;
  uint64_t jobs_started = 0;
  void record_pass(double seconds, uint64_t backlog) {
    ++cycles;
    last_s = seconds;
    total_s += seconds;
    if (seconds > max_s) max_s = seconds;
    last_backlog = backlog;
  }
};

enum class MetricsFormat { OpenMetrics, Prometheus };

// The metric groups, as Slurm 25.11 splits them over /metrics/<group>.
enum MetricsGroup : unsigned {
  kMetricsJobs = 1,
  kMetricsNodes = 2,
  kMetricsPartitions = 4,
  kMetricsUsersAccounts = 8,
  kMetricsScheduler = 16,
  kMetricsAll = 31,
};

// OpenMetrics 1.0 unless the Accept header asks for text/plain (Prometheus 0.0.4) without
// naming application/openmetrics-text.
MetricsFormat metrics_format_for(std::string_view accept_header);
std::string_view metrics_content_type(MetricsFormat f);

// The exposition text of the cluster's state (a pure function of its arguments). Names and
// meanings: docs/metrics.md.
std::string metrics_text(const StateMachine& machine, const SchedStats& stats, MetricsFormat f,
                         unsigned groups = kMetricsAll);

// The pending jobs (array tasks not started count one each) the next scheduling pass will
// look at: all of them for a full pass, else only those submitted since the last one.
uint64_t pending_backlog(const StateMachine& machine);

}  // namespace drover::ctld
