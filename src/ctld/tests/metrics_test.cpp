#include "ctld/metrics.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "harness.hpp"

using namespace drover;
using namespace drover::ctld;
using namespace drover::ctld::testing;

namespace {

// The value of one sample line ("name" or "name{label=\"v\"}"), or -1 when absent.
double value_of(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ')
      return std::stod(line.substr(series.size() + 1));
  return -1;
}

// Structure every exposition must have: each sample belongs to the family most recently
// declared with # TYPE (counters by their _total sample), families are declared once, and
// (OpenMetrics) the text ends with # EOF.
void check_structure(const std::string& text, MetricsFormat f) {
  std::istringstream in(text);
  std::string line, family, type;
  std::set<std::string> families;
  bool eof = false;
  while (std::getline(in, line)) {
    ASSERT_FALSE(eof) << "text after # EOF";
    if (line == "# EOF") {
      eof = true;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream l(line.substr(7));
      l >> family >> type;
      EXPECT_TRUE(families.insert(family).second) << "family declared twice: " << family;
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# UNIT ", 0) == 0) {
      std::istringstream l(line.substr(7));
      std::string name;
      l >> name;
      if (line.rfind("# UNIT ", 0) == 0) {
        std::string unit;
        l >> unit;
        EXPECT_EQ(name, family);
        EXPECT_TRUE(name.size() > unit.size() &&
                    name.compare(name.size() - unit.size(), unit.size(), unit) == 0)
            << name;
      }
      continue;
    }
    ASSERT_NE(line[0], '#') << line;
    std::string name = line.substr(0, line.find_first_of("{ "));
    std::string expect = family;
    if (type == "counter" && f == MetricsFormat::OpenMetrics) expect += "_total";
    EXPECT_EQ(name, expect) << line;
  }
  EXPECT_EQ(eof, f == MetricsFormat::OpenMetrics);
}

}  // namespace

TEST(Metrics, IdleClusterCountsNodesAndNoJobs) {
  Harness h;
  SchedStats st;
  std::string text = metrics_text(h.sm, st, MetricsFormat::OpenMetrics);
  check_structure(text, MetricsFormat::OpenMetrics);
  EXPECT_EQ(value_of(text, "slurm_nodes"), 2);
  EXPECT_EQ(value_of(text, "slurm_nodes_idle"), 2);
  EXPECT_EQ(value_of(text, "slurm_jobs_pending"), 0);
  EXPECT_EQ(value_of(text, "drover_cpus"), 4);
  EXPECT_EQ(value_of(text, "drover_cpus_idle"), 4);
  EXPECT_EQ(value_of(text, "slurm_partition_jobs_pending{partition=\"debug\"}"), 0);
  EXPECT_EQ(value_of(text, "slurm_partition_cpus{partition=\"debug\"}"), 4);
  EXPECT_EQ(value_of(text, "drover_memory_bytes"), 2000.0 * 1024 * 1024);
  EXPECT_NE(text.find("# UNIT drover_memory_bytes bytes\n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
}

TEST(Metrics, JobsByStatePartitionUserAndResources) {
  Harness h;
  Effects fx;
  for (int i = 0; i < 2; ++i) h.submit(h.alice, h.spec(1, 2), fx);
  h.submit(h.bob, h.spec(1, 2), fx);
  h.sm.schedule(h.now, fx);
  SchedStats st;
  st.jobs_submitted = 3;
  st.jobs_started = 2;
  st.record_pass(0.002, 3);
  st.record_pass(0.001, 1);
  std::string text = metrics_text(h.sm, st, MetricsFormat::OpenMetrics);
  check_structure(text, MetricsFormat::OpenMetrics);
  EXPECT_EQ(value_of(text, "slurm_jobs"), 3);
  EXPECT_EQ(value_of(text, "slurm_jobs_running"), 2);
  EXPECT_EQ(value_of(text, "slurm_jobs_pending"), 1);
  EXPECT_EQ(value_of(text, "slurm_jobs_cpus_alloc"), 4);
  EXPECT_EQ(value_of(text, "slurm_nodes_alloc"), 2);
  EXPECT_EQ(value_of(text, "slurm_nodes_idle"), 0);
  EXPECT_EQ(value_of(text, "drover_cpus_alloc"), 4);
  EXPECT_EQ(value_of(text, "slurm_partition_jobs_running{partition=\"debug\"}"), 2);
  EXPECT_EQ(value_of(text, "slurm_partition_jobs_pending{partition=\"debug\"}"), 1);
  EXPECT_EQ(value_of(text, "slurm_partition_nodes_cpus_alloc{partition=\"debug\"}"), 4);
  EXPECT_EQ(value_of(text, "slurm_user_jobs_running{user=\"alice\"}"), 2);
  EXPECT_EQ(value_of(text, "slurm_user_jobs_pending{user=\"bob\"}"), 1);
  EXPECT_EQ(value_of(text, "slurm_node_cpus_alloc{node=\"node1\"}"), 2);
  EXPECT_EQ(value_of(text, "drover_jobs_submitted_total"), 3);
  EXPECT_EQ(value_of(text, "drover_jobs_started_total"), 2);
  EXPECT_EQ(value_of(text, "drover_sched_cycles_total"), 2);
  EXPECT_DOUBLE_EQ(value_of(text, "drover_sched_cycle_last_seconds"), 0.001);
  EXPECT_DOUBLE_EQ(value_of(text, "drover_sched_cycle_max_seconds"), 0.002);
  EXPECT_DOUBLE_EQ(value_of(text, "drover_sched_cycle_mean_seconds"), 0.0015);
  EXPECT_EQ(value_of(text, "slurm_schedule_cycle_last"), 1000);
  EXPECT_EQ(value_of(text, "drover_sched_backlog"), 1);
  EXPECT_EQ(value_of(text, "slurm_schedule_queue_len"), 1);
}

TEST(Metrics, GroupsSelectFamilies) {
  Harness h;
  SchedStats st;
  std::string nodes = metrics_text(h.sm, st, MetricsFormat::OpenMetrics, kMetricsNodes);
  check_structure(nodes, MetricsFormat::OpenMetrics);
  EXPECT_EQ(value_of(nodes, "slurm_nodes"), 2);
  EXPECT_EQ(nodes.find("slurm_jobs"), std::string::npos);
  EXPECT_EQ(nodes.find("slurm_partition"), std::string::npos);
}

TEST(Metrics, PrometheusTextFormat) {
  Harness h;
  SchedStats st;
  std::string text = metrics_text(h.sm, st, MetricsFormat::Prometheus);
  check_structure(text, MetricsFormat::Prometheus);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_EQ(text.find("# UNIT"), std::string::npos);
  EXPECT_NE(text.find("# TYPE drover_jobs_submitted_total counter\n"), std::string::npos);
}

TEST(Metrics, AcceptHeaderPicksFormat) {
  EXPECT_EQ(metrics_format_for(""), MetricsFormat::OpenMetrics);
  EXPECT_EQ(metrics_format_for("*/*"), MetricsFormat::OpenMetrics);
  EXPECT_EQ(metrics_format_for("text/plain"), MetricsFormat::Prometheus);
  EXPECT_EQ(metrics_format_for("application/openmetrics-text;version=1.0.0,text/plain;"
                               "version=0.0.4;q=0.5"),
            MetricsFormat::OpenMetrics);
  EXPECT_EQ(metrics_content_type(MetricsFormat::OpenMetrics),
            "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_EQ(metrics_content_type(MetricsFormat::Prometheus),
            "text/plain; version=0.0.4; charset=utf-8");
}

TEST(Metrics, LabelValuesAreEscaped) {
  Harness h;
  Effects fx;
  Caller odd{1002, 1002, "a\"b\\c", "g"};
  h.submit(odd, h.spec(1, 1), fx);
  std::string text = metrics_text(h.sm, SchedStats{}, MetricsFormat::OpenMetrics);
  EXPECT_EQ(value_of(text, "slurm_user_jobs{user=\"a\\\"b\\\\c\"}"), 1);
}

// A large queue: the figures are right, and the cost on the state thread is printed (timing
// belongs to benchmarks, not to pass/fail). The jobs are
// restored as from the journal: submitting 100k jobs one by one takes minutes.
TEST(Metrics, CostWith100kPendingJobs) {
  StateMachine sm(two_node_config(), sched::make_scheduler());
  std::vector<core::Job> jobs;
  for (uint64_t i = 1; i <= 100000; ++i) {
    core::Job j;
    j.id = i;
    j.spec.name = "job";
    j.spec.ntasks = 1;
    j.spec.account = i % 3 ? "physics" : "chemistry";
    j.uid = 1000 + static_cast<uint32_t>(i % 7);
    j.user = "user" + std::to_string(i % 7);
    j.partition = "debug";
    j.submit_time = 1000;
    jobs.push_back(std::move(j));
  }
  sm.restore(100001, std::move(jobs), 1000);
  SchedStats st;
  auto t0 = std::chrono::steady_clock::now();
  std::string text;
  const int rounds = 5;
  for (int i = 0; i < rounds; ++i) text = metrics_text(sm, st, MetricsFormat::OpenMetrics);
  auto per =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0) / rounds;
  t0 = std::chrono::steady_clock::now();
  uint64_t backlog = pending_backlog(sm);
  auto backlog_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("metrics_text with 100k pending jobs: %.2f ms, %zu bytes; pending_backlog: %.2f ms\n",
              per.count(), text.size(), backlog_ms);
  EXPECT_EQ(value_of(text, "slurm_jobs_pending"), 100000);
  EXPECT_EQ(value_of(text, "slurm_account_jobs_pending{account=\"physics\"}"), 66667);
  EXPECT_EQ(backlog, 100000u);
}

// PrivateData: series naming users or accounts only for those allowed to see them.
TEST(Metrics, PrivateDataDecidesWhoseSeriesAScrapeShows) {
  EXPECT_TRUE(metrics_audience("", std::nullopt, false).all_users);
  EXPECT_TRUE(metrics_audience("", std::nullopt, false).accounts);
  const MetricsAudience anonymous = metrics_audience("Jobs,Accounts", std::nullopt, false);
  EXPECT_FALSE(anonymous.all_users);
  EXPECT_EQ(anonymous.user, "");
  EXPECT_FALSE(anonymous.accounts);
  const MetricsAudience bob = metrics_audience("users", std::string("bob"), false);
  EXPECT_FALSE(bob.all_users);
  EXPECT_EQ(bob.user, "bob");
  EXPECT_TRUE(bob.accounts);
  EXPECT_FALSE(metrics_audience("accounts", std::string("bob"), false).accounts);
  EXPECT_TRUE(metrics_audience("accounts", std::string("bob"), false).all_users);
  EXPECT_FALSE(metrics_audience("usage", std::string("bob"), false).all_users);
  const MetricsAudience op = metrics_audience("jobs,users,accounts", std::string("root"), true);
  EXPECT_TRUE(op.all_users);
  EXPECT_TRUE(op.accounts);

  Harness h;
  Effects fx;
  core::JobSpec spec = h.spec(1, 1);
  spec.account = "physics";
  h.submit(h.alice, spec, fx);
  h.submit(h.bob, spec, fx);
  const std::string all = metrics_text(h.sm, SchedStats{}, MetricsFormat::OpenMetrics);
  EXPECT_EQ(value_of(all, "slurm_user_jobs{user=\"alice\"}"), 1);
  EXPECT_EQ(value_of(all, "slurm_account_jobs{account=\"physics\"}"), 2);
  const std::string for_bob =
      metrics_text(h.sm, SchedStats{}, MetricsFormat::OpenMetrics, kMetricsAll, bob);
  check_structure(for_bob, MetricsFormat::OpenMetrics);
  EXPECT_EQ(value_of(for_bob, "slurm_user_jobs{user=\"alice\"}"), -1);
  EXPECT_EQ(value_of(for_bob, "slurm_user_jobs{user=\"bob\"}"), 1);
  EXPECT_EQ(value_of(for_bob, "slurm_jobs"), 2);  // counts without names stay
  const std::string for_nobody =
      metrics_text(h.sm, SchedStats{}, MetricsFormat::OpenMetrics, kMetricsAll, anonymous);
  check_structure(for_nobody, MetricsFormat::OpenMetrics);
  EXPECT_EQ(for_nobody.find("user=\""), std::string::npos);
  EXPECT_EQ(for_nobody.find("account=\""), std::string::npos);
}
