#pragma once
// Schedule quality measures (Feitelson and Rudolph; Parallel Workloads Archive conventions).
// See /work/shared/reference/schedule_quality.md for the definitions.
#include <cstdint>
#include <vector>

namespace drover::sim {

// One replayed job's fate, in seconds on the trace's own clock.
struct JobOutcome {
  int64_t id = 0;  // the trace's job number
  int64_t submit = 0, start = 0, end = 0;
  int64_t procs = 0;
  int64_t wait() const { return start - submit; }
  int64_t run() const { return end - start; }
};

inline constexpr int64_t kBsldTau = 10;  // seconds

// max(1, (wait + run) / max(run, tau)).
double bounded_slowdown(int64_t wait, int64_t run, int64_t tau = kBsldTau);

// Arithmetic mean (0 for no values), summed in the order given.
double mean(const std::vector<double>& values);
// Nearest-rank percentile: the smallest value with at least p% of the values at or below it,
// i.e. sorted[ceil(p/100 * n) - 1] (rank at least 1). 0 for no values. p in (0, 100].
double percentile_nearest_rank(std::vector<double> values, double p);

struct Stat {
  double mean = 0;
  double p95 = 0;  // nearest rank
};

struct Metrics {
  uint64_t jobs = 0;
  Stat wait;  // seconds
  Stat bsld;  // bounded slowdown, tau = 10 s
  int64_t first_submit = 0, last_end = 0;
  int64_t makespan = 0;    // last end - first submit
  double cpu_seconds = 0;  // sum of run * procs
  double utilization = 0;  // cpu_seconds / (cpus * makespan); 0 when makespan is 0
};

Metrics compute_metrics(const std::vector<JobOutcome>& jobs, int64_t cluster_cpus);

}  // namespace drover::sim
