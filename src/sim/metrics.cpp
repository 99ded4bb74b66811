#include "sim/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace drover::sim {

double bounded_slowdown(int64_t wait, int64_t run, int64_t tau) {
  double denom = static_cast<double>(std::max(run, tau));
  return std::max(1.0, static_cast<double>(wait + run) / denom);
}

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double percentile_nearest_rank(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  // p/100*n computed as p*n/100 keeps exact ranks exact (95 * 20 / 100 = 19).
  size_t rank = static_cast<size_t>(std::ceil(p * n / 100.0));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

Metrics compute_metrics(const std::vector<JobOutcome>& jobs, int64_t cluster_cpus) {
  Metrics m;
  m.jobs = jobs.size();
  if (jobs.empty()) return m;
  std::vector<double> waits, bslds;
  waits.reserve(jobs.size());
  bslds.reserve(jobs.size());
  m.first_submit = jobs.front().submit;
  m.last_end = jobs.front().end;
  for (const JobOutcome& j : jobs) {
    waits.push_back(static_cast<double>(j.wait()));
    bslds.push_back(bounded_slowdown(j.wait(), j.run()));
    m.cpu_seconds += static_cast<double>(j.run()) * static_cast<double>(j.procs);
    m.first_submit = std::min(m.first_submit, j.submit);
    m.last_end = std::max(m.last_end, j.end);
  }
  m.wait = {mean(waits), percentile_nearest_rank(waits, 95)};
  m.bsld = {mean(bslds), percentile_nearest_rank(bslds, 95)};
  m.makespan = m.last_end - m.first_submit;
  if (m.makespan > 0 && cluster_cpus > 0)
    m.utilization =
        m.cpu_seconds / (static_cast<double>(cluster_cpus) * static_cast<double>(m.makespan));
  return m;
}

}  // namespace drover::sim
