#pragma once
#include <cstdint>
#include <optional>
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
  uint64_t passes_out_of_time = 0;  // passes bf_max_time ended before every job was considered
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

// Whose per-user and per-account series (/metrics/jobs-users-accts, the only ones that name
// users or accounts) a scrape shows.
struct MetricsAudience {
  bool all_users = true;
  std::string user;  // without all_users: the one user whose series are shown ("": none)
  bool accounts = true;
};

// As slurm.conf's PrivateData (a comma-separated list) rules for the caller of a scrape:
// nullopt is an anonymous scrape; an operator (or the holder of the operator-set metrics
// token) sees everything. `jobs`, `users` or `usage` hide other users' series, `accounts`,
// `jobs` or `usage` the accounts' (docs/metrics.md).
MetricsAudience metrics_audience(const std::string& private_data,
                                 const std::optional<std::string>& caller, bool operator_caller);

// The exposition text of the cluster's state (a pure function of its arguments). Names and
// meanings: docs/metrics.md.
std::string metrics_text(const StateMachine& machine, const SchedStats& stats, MetricsFormat f,
                         unsigned groups = kMetricsAll, const MetricsAudience& audience = {});

// The pending jobs (array tasks not started count one each) the next scheduling pass will
// look at: all of them for a full pass, else only those submitted since the last one.
uint64_t pending_backlog(const StateMachine& machine);

}  // namespace drover::ctld
