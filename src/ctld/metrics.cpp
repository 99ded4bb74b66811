// The controller's metrics in OpenMetrics / Prometheus text. Names starting slurm_ are those
// of Slurm 25.11's metrics/openmetrics plugin (same meaning, same labels); drover_ names are
// drover's own where Slurm has none (docs/metrics.md lists which is which).
#include "ctld/metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "core/text.hpp"
#include "ctld/state_machine.hpp"

namespace drover::ctld {

namespace {

constexpr int64_t kMiB = 1024 * 1024;

// A pending array remainder stands for every task not started yet.
uint64_t task_count(const core::Job& j) {
  return j.array_job_id != 0 && j.array_task_id == core::kNoArrayTask ? j.array_pending.size() : 1;
}

int64_t gpus_of(const std::vector<core::GresCount>& gres) {
  int64_t n = 0;
  for (const auto& g : gres)
    if (g.name == "gpu") n += g.count;
  return n;
}

struct JobCounts {
  uint64_t total = 0, pending = 0, running = 0, suspended = 0, completing = 0, completed = 0,
           cancelled = 0, failed = 0, timeout = 0, node_failed = 0, preempted = 0, bootfail = 0,
           deadline = 0, outofmemory = 0, hold = 0;
  int64_t cpus_alloc = 0, mem_alloc_mb = 0, gpus_alloc = 0, nodes_alloc = 0;
  void add(const core::Job& j) {
    const uint64_t n = task_count(j);
    total += n;
    switch (j.state) {
      case core::JobState::Pending:
        pending += n;
        if (j.held) hold += n;
        break;
      case core::JobState::Running:
        running += n;
        break;
      case core::JobState::Suspended:
        suspended += n;
        break;
      case core::JobState::Completed:
        completed += n;
        break;
      case core::JobState::Cancelled:
        cancelled += n;
        break;
      case core::JobState::Failed:
        failed += n;
        break;
      case core::JobState::Timeout:
        timeout += n;
        break;
      case core::JobState::NodeFail:
        node_failed += n;
        break;
      case core::JobState::Preempted:
        preempted += n;
        break;
      case core::JobState::BootFail:
        bootfail += n;
        break;
      case core::JobState::Deadline:
        deadline += n;
        break;
      case core::JobState::OutOfMemory:
        outofmemory += n;
        break;
    }
    if (j.completing) completing += n;
    if (holds_resources(j)) {
      for (const auto& a : j.alloc) {
        cpus_alloc += a.cpus;
        mem_alloc_mb += a.mem_mb;
        gpus_alloc += gpus_of(a.gres);
      }
      nodes_alloc += static_cast<int64_t>(j.alloc.size());
    }
  }
};

struct NodeCounts {
  uint64_t total = 0, idle = 0, alloc = 0, mixed = 0, down = 0, unknown = 0, drain = 0, drained = 0,
           draining = 0, noresp = 0, resv = 0, maint = 0;
  int64_t cpus = 0, cpus_alloc = 0, cpus_idle = 0, cpus_other = 0;
  int64_t mem_mb = 0, mem_alloc_mb = 0, gpus = 0, gpus_alloc = 0;
  void add(const core::Node& n) {
    ++total;
    switch (n.base()) {
      case core::NodeBase::Idle:
        ++idle;
        break;
      case core::NodeBase::Allocated:
        ++alloc;
        break;
      case core::NodeBase::Mixed:
        ++mixed;
        break;
      case core::NodeBase::Down:
        ++down;
        break;
      case core::NodeBase::Unknown:
        ++unknown;
        break;
    }
    if (n.drain) {
      ++drain;
      if (n.running_jobs > 0 || n.alloc_cpus > 0)
        ++draining;
      else
        ++drained;
    }
    if (n.not_responding) ++noresp;
    if (n.reserved) ++resv;
    if (n.maint) ++maint;
    const int64_t free_cpus = std::max(0, n.cpus - n.alloc_cpus);
    cpus += n.cpus;
    cpus_alloc += n.alloc_cpus;
    (n.schedulable() ? cpus_idle : cpus_other) += free_cpus;
    mem_mb += n.real_memory_mb;
    mem_alloc_mb += n.alloc_mem_mb;
    gpus += gpus_of(n.gres_total);
    gpus_alloc += gpus_of(n.gres_used);
  }
};

class Writer {
 public:
  explicit Writer(MetricsFormat f) : f_(f) { out_.reserve(16 * 1024); }

  // A gauge family; `unit` ("seconds", "bytes") only where the name ends in "_<unit>".
  void gauge(std::string_view name, std::string_view help, std::string_view unit = "") {
    header(name, "gauge", help, unit);
  }
  // A counter family: its sample is name + "_total".
  void counter(std::string_view name, std::string_view help) {
    if (f_ == MetricsFormat::OpenMetrics)
      header(name, "counter", help, "");
    else
      header(std::string(name) + "_total", "counter", help, "");
  }
  void sample(std::string_view name, double v) { sample(name, {}, {}, v); }
  void sample(std::string_view name, std::string_view label, std::string_view label_value,
              double v) {
    out_ += name;
    if (!label.empty()) {
      out_ += '{';
      out_ += label;
      out_ += "=\"";
      escape(label_value);
      out_ += "\"}";
    }
    out_ += ' ';
    char buf[40];
    if (v == static_cast<double>(static_cast<int64_t>(v)) && v < 9e15 && v > -9e15)
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else
      std::snprintf(buf, sizeof buf, "%.9g", v);
    out_ += buf;
    out_ += '\n';
  }
  // One-sample gauge.
  void gauge1(std::string_view name, std::string_view help, double v, std::string_view unit = "") {
    gauge(name, help, unit);
    sample(name, v);
  }
  std::string finish() {
    if (f_ == MetricsFormat::OpenMetrics) out_ += "# EOF\n";
    return std::move(out_);
  }

 private:
  void header(std::string_view name, std::string_view type, std::string_view help,
              std::string_view unit) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
    if (!unit.empty() && f_ == MetricsFormat::OpenMetrics) {
      out_ += "# UNIT ";
      out_ += name;
      out_ += ' ';
      out_ += unit;
      out_ += '\n';
    }
  }
  void escape(std::string_view s) {
    for (char c : s) {
      if (c == '\\')
        out_ += "\\\\";
      else if (c == '"')
        out_ += "\\\"";
      else if (c == '\n')
        out_ += "\\n";
      else
        out_ += c;
    }
  }
  MetricsFormat f_;
  std::string out_;
};

// One labelled family over a sorted set of keys.
template <typename Map, typename Get>
void labelled(Writer& w, std::string_view name, std::string_view help, std::string_view label,
              const Map& rows, Get get) {
  w.gauge(name, help);
  for (const auto& [key, row] : rows) w.sample(name, label, key, static_cast<double>(get(row)));
}

template <typename Map>
std::vector<std::pair<std::string, typename Map::mapped_type>> sorted(const Map& m) {
  std::vector<std::pair<std::string, typename Map::mapped_type>> v(m.begin(), m.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return v;
}

}  // namespace

MetricsFormat metrics_format_for(std::string_view accept) {
  if (accept.find("application/openmetrics-text") != std::string_view::npos)
    return MetricsFormat::OpenMetrics;
  if (accept.find("text/plain") != std::string_view::npos) return MetricsFormat::Prometheus;
  return MetricsFormat::OpenMetrics;
}

std::string_view metrics_content_type(MetricsFormat f) {
  return f == MetricsFormat::OpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

uint64_t pending_backlog(const StateMachine& m) {
  if (!m.full_pass_pending()) return m.jobs().new_pending().size();
  uint64_t n = 0;
  for (const auto& [id, j] : m.jobs())
    if (j.state == core::JobState::Pending) n += task_count(j);
  return n;
}

MetricsAudience metrics_audience(const std::string& private_data,
                                 const std::optional<std::string>& caller, bool operator_caller) {
  if (operator_caller) return {};
  bool users = false, accounts = false;
  for (const std::string& item : core::split_list(core::to_lower(private_data), ',')) {
    if (item == "jobs" || item == "usage") users = accounts = true;
    if (item == "users") users = true;
    if (item == "accounts") accounts = true;
  }
  MetricsAudience a;
  if (users) {
    a.all_users = false;
    a.user = caller.value_or("");
  }
  a.accounts = !accounts;
  return a;
}

std::string metrics_text(const StateMachine& m, const SchedStats& st, MetricsFormat f,
                         unsigned groups, const MetricsAudience& audience) {
  const JobTable& jobs = m.jobs();
  const NodeTable& nodes = m.nodes();
  const auto parts = m.partition_nodes();

  // One walk over the jobs and one over the nodes.
  JobCounts all;
  std::unordered_map<std::string, JobCounts> by_part, by_user, by_account;
  for (const auto& p : parts) by_part[p.first];
  const bool per_owner = groups & kMetricsUsersAccounts;
  // Consecutive jobs mostly share partition, user and account: remember the last entry.
  struct Last {
    const std::string* key = nullptr;
    JobCounts* counts = nullptr;
    JobCounts& at(std::unordered_map<std::string, JobCounts>& m, const std::string& k) {
      if (!key || *key != k) {
        key = &k;
        counts = &m[k];
      }
      return *counts;
    }
  } last_part, last_user, last_account;
  for (const auto& [id, j] : jobs) {
    all.add(j);
    last_part.at(by_part, j.partition).add(j);
    if (per_owner) {
      last_user.at(by_user, j.user).add(j);
      if (!j.spec.account.empty()) last_account.at(by_account, j.spec.account).add(j);
    }
  }
  NodeCounts cluster;
  // By node id (a hole where a node left).
  std::vector<NodeCounts> node_counts(static_cast<size_t>(nodes.id_end()));
  for (auto it = nodes.begin(); it != nodes.end(); ++it) {
    node_counts[static_cast<size_t>(it.id())].add(*it);
    cluster.add(*it);
  }
  std::unordered_map<std::string, NodeCounts> part_nodes;
  for (const auto& [name, idx] : parts) {
    auto& pc = part_nodes[name];
    for (NodeId i : *idx) pc.add(*nodes.get(i));
  }

  Writer w(f);
  if (groups & kMetricsJobs) {
    w.gauge1("slurm_jobs", "Number of jobs (array tasks not started count one each)",
             static_cast<double>(all.total));
    const std::pair<const char*, uint64_t JobCounts::*> states[] = {
        {"pending", &JobCounts::pending},         {"running", &JobCounts::running},
        {"suspended", &JobCounts::suspended},     {"completing", &JobCounts::completing},
        {"completed", &JobCounts::completed},     {"cancelled", &JobCounts::cancelled},
        {"failed", &JobCounts::failed},           {"timeout", &JobCounts::timeout},
        {"node_failed", &JobCounts::node_failed}, {"preempted", &JobCounts::preempted},
        {"bootfail", &JobCounts::bootfail},       {"deadline", &JobCounts::deadline},
        {"outofmemory", &JobCounts::outofmemory}, {"hold", &JobCounts::hold},
    };
    for (const auto& [state, field] : states)
      w.gauge1(std::string("slurm_jobs_") + state,
               std::string("Number of jobs in ") + state + " state",
               static_cast<double>(all.*field));
    w.gauge1("slurm_jobs_cpus_alloc", "CPUs allocated to jobs",
             static_cast<double>(all.cpus_alloc));
    w.gauge1("slurm_jobs_memory_alloc", "Memory bytes allocated to jobs",
             static_cast<double>(all.mem_alloc_mb * kMiB));
    w.gauge1("slurm_jobs_nodes_alloc", "Nodes allocated to jobs (a node per job holding it)",
             static_cast<double>(all.nodes_alloc));
    w.gauge1("drover_jobs_gpus_alloc", "GPUs allocated to jobs",
             static_cast<double>(all.gpus_alloc));
    w.counter("drover_jobs_submitted", "Jobs submitted since the controller started");
    w.sample("drover_jobs_submitted_total", static_cast<double>(st.jobs_submitted));
    w.counter("drover_jobs_started", "Jobs started since the controller started");
    w.sample("drover_jobs_started_total", static_cast<double>(st.jobs_started));
  }

  if (groups & kMetricsNodes) {
    w.gauge1("slurm_nodes", "Number of nodes", static_cast<double>(cluster.total));
    const std::pair<const char*, uint64_t NodeCounts::*> states[] = {
        {"idle", &NodeCounts::idle},       {"alloc", &NodeCounts::alloc},
        {"mixed", &NodeCounts::mixed},     {"down", &NodeCounts::down},
        {"unknown", &NodeCounts::unknown}, {"drain", &NodeCounts::drain},
        {"drained", &NodeCounts::drained}, {"draining", &NodeCounts::draining},
        {"noresp", &NodeCounts::noresp},   {"resv", &NodeCounts::resv},
        {"maint", &NodeCounts::maint},
    };
    for (const auto& [state, field] : states)
      w.gauge1(std::string("slurm_nodes_") + state,
               std::string("Number of nodes in ") + state + " state or with that flag",
               static_cast<double>(cluster.*field));
    w.gauge1("drover_cpus", "CPUs of all nodes", static_cast<double>(cluster.cpus));
    w.gauge1("drover_cpus_alloc", "CPUs allocated to jobs",
             static_cast<double>(cluster.cpus_alloc));
    w.gauge1("drover_cpus_idle", "Unallocated CPUs on nodes that take jobs",
             static_cast<double>(cluster.cpus_idle));
    w.gauge1("drover_cpus_other", "Unallocated CPUs on nodes down, drained or not registered",
             static_cast<double>(cluster.cpus_other));
    w.gauge1("drover_gpus", "GPUs of all nodes", static_cast<double>(cluster.gpus));
    w.gauge1("drover_gpus_alloc", "GPUs allocated to jobs",
             static_cast<double>(cluster.gpus_alloc));
    w.gauge1("drover_memory_bytes", "Memory of all nodes (RealMemory)",
             static_cast<double>(cluster.mem_mb * kMiB), "bytes");
    w.gauge1("drover_memory_alloc_bytes", "Memory allocated to jobs",
             static_cast<double>(cluster.mem_alloc_mb * kMiB), "bytes");
    std::vector<std::pair<std::string, const NodeCounts*>> per_node;
    for (auto it = nodes.begin(); it != nodes.end(); ++it)
      per_node.emplace_back(it->name, &node_counts[static_cast<size_t>(it.id())]);
    labelled(w, "slurm_node_cpus", "CPUs of the node", "node", per_node,
             [](const NodeCounts* c) { return c->cpus; });
    labelled(w, "slurm_node_cpus_alloc", "CPUs of the node allocated to jobs", "node", per_node,
             [](const NodeCounts* c) { return c->cpus_alloc; });
    labelled(w, "slurm_node_cpus_idle", "CPUs of the node not allocated", "node", per_node,
             [](const NodeCounts* c) { return c->cpus - c->cpus_alloc; });
    w.gauge("slurm_node_memory_bytes", "Memory of the node", "bytes");
    for (const auto& [name, c] : per_node)
      w.sample("slurm_node_memory_bytes", "node", name, static_cast<double>(c->mem_mb * kMiB));
    w.gauge("slurm_node_memory_alloc_bytes", "Memory of the node allocated to jobs", "bytes");
    for (const auto& [name, c] : per_node)
      w.sample("slurm_node_memory_alloc_bytes", "node", name,
               static_cast<double>(c->mem_alloc_mb * kMiB));
    labelled(w, "drover_node_gpus", "GPUs of the node", "node", per_node,
             [](const NodeCounts* c) { return c->gpus; });
    labelled(w, "drover_node_gpus_alloc", "GPUs of the node allocated to jobs", "node", per_node,
             [](const NodeCounts* c) { return c->gpus_alloc; });
  }

  if (groups & kMetricsPartitions) {
    auto pj = sorted(by_part);
    auto pn = sorted(part_nodes);
    w.gauge1("slurm_partitions", "Number of partitions", static_cast<double>(parts.size()));
    labelled(w, "slurm_partition_jobs", "Jobs in the partition", "partition", pj,
             [](const JobCounts& c) { return c.total; });
    labelled(w, "slurm_partition_jobs_pending", "Pending jobs in the partition", "partition", pj,
             [](const JobCounts& c) { return c.pending; });
    labelled(w, "slurm_partition_jobs_running", "Running jobs in the partition", "partition", pj,
             [](const JobCounts& c) { return c.running; });
    labelled(w, "slurm_partition_jobs_completing", "Completing jobs in the partition", "partition",
             pj, [](const JobCounts& c) { return c.completing; });
    labelled(w, "slurm_partition_jobs_hold", "Held pending jobs in the partition", "partition", pj,
             [](const JobCounts& c) { return c.hold; });
    labelled(w, "slurm_partition_jobs_cpus_alloc", "CPUs allocated to the partition's jobs",
             "partition", pj, [](const JobCounts& c) { return c.cpus_alloc; });
    labelled(w, "slurm_partition_jobs_memory_alloc",
             "Memory bytes allocated to the partition's jobs", "partition", pj,
             [](const JobCounts& c) { return c.mem_alloc_mb * kMiB; });
    labelled(w, "drover_partition_jobs_gpus_alloc", "GPUs allocated to the partition's jobs",
             "partition", pj, [](const JobCounts& c) { return c.gpus_alloc; });
    labelled(w, "slurm_partition_nodes", "Nodes of the partition", "partition", pn,
             [](const NodeCounts& c) { return c.total; });
    labelled(w, "slurm_partition_nodes_idle", "Idle nodes of the partition", "partition", pn,
             [](const NodeCounts& c) { return c.idle; });
    labelled(w, "slurm_partition_nodes_alloc", "Allocated nodes of the partition", "partition", pn,
             [](const NodeCounts& c) { return c.alloc; });
    labelled(w, "slurm_partition_nodes_mixed", "Mixed nodes of the partition", "partition", pn,
             [](const NodeCounts& c) { return c.mixed; });
    labelled(w, "slurm_partition_nodes_down", "Down nodes of the partition", "partition", pn,
             [](const NodeCounts& c) { return c.down; });
    labelled(w, "slurm_partition_nodes_drain", "Nodes of the partition with the drain flag",
             "partition", pn, [](const NodeCounts& c) { return c.drain; });
    labelled(w, "slurm_partition_cpus", "CPUs of the partition's nodes", "partition", pn,
             [](const NodeCounts& c) { return c.cpus; });
    labelled(w, "slurm_partition_nodes_cpus_alloc", "Allocated CPUs of the partition's nodes",
             "partition", pn, [](const NodeCounts& c) { return c.cpus_alloc; });
    labelled(w, "slurm_partition_nodes_cpus_idle",
             "Unallocated CPUs of the partition's nodes that take jobs", "partition", pn,
             [](const NodeCounts& c) { return c.cpus_idle; });
    labelled(w, "slurm_partition_nodes_mem_tot", "Memory (MB) of the partition's nodes",
             "partition", pn, [](const NodeCounts& c) { return c.mem_mb; });
    labelled(w, "slurm_partition_nodes_mem_alloc", "Allocated memory (MB) of the partition's nodes",
             "partition", pn, [](const NodeCounts& c) { return c.mem_alloc_mb; });
    labelled(w, "drover_partition_gpus", "GPUs of the partition's nodes", "partition", pn,
             [](const NodeCounts& c) { return c.gpus; });
    labelled(w, "drover_partition_gpus_alloc", "Allocated GPUs of the partition's nodes",
             "partition", pn, [](const NodeCounts& c) { return c.gpus_alloc; });
  }

  if (groups & kMetricsUsersAccounts) {
    auto u = sorted(by_user);
    if (!audience.all_users)
      std::erase_if(u, [&](const auto& entry) { return entry.first != audience.user; });
    auto a = sorted(by_account);
    if (!audience.accounts) a.clear();
    labelled(w, "slurm_user_jobs", "Jobs of the user", "user", u,
             [](const JobCounts& c) { return c.total; });
    labelled(w, "slurm_user_jobs_pending", "Pending jobs of the user", "user", u,
             [](const JobCounts& c) { return c.pending; });
    labelled(w, "slurm_user_jobs_running", "Running jobs of the user", "user", u,
             [](const JobCounts& c) { return c.running; });
    labelled(w, "slurm_user_jobs_cpus_alloc", "CPUs allocated to the user's jobs", "user", u,
             [](const JobCounts& c) { return c.cpus_alloc; });
    labelled(w, "slurm_account_jobs", "Jobs of the account", "account", a,
             [](const JobCounts& c) { return c.total; });
    labelled(w, "slurm_account_jobs_pending", "Pending jobs of the account", "account", a,
             [](const JobCounts& c) { return c.pending; });
    labelled(w, "slurm_account_jobs_running", "Running jobs of the account", "account", a,
             [](const JobCounts& c) { return c.running; });
    labelled(w, "slurm_account_jobs_cpus_alloc", "CPUs allocated to the account's jobs", "account",
             a, [](const JobCounts& c) { return c.cpus_alloc; });
  }

  if (groups & kMetricsScheduler) {
    const double mean = st.cycles ? st.total_s / static_cast<double>(st.cycles) : 0;
    w.gauge1("slurm_schedule_cycle_last", "Last scheduling pass (microseconds)", st.last_s * 1e6);
    w.gauge1("slurm_schedule_cycle_max", "Longest scheduling pass (microseconds)", st.max_s * 1e6);
    w.gauge1("slurm_sched_mean_cycle", "Mean scheduling pass (microseconds)", mean * 1e6);
    w.gauge1("slurm_schedule_cycle_cnt", "Scheduling passes run", static_cast<double>(st.cycles));
    w.gauge1("slurm_schedule_queue_len", "Pending jobs", static_cast<double>(all.pending));
    w.gauge1("drover_sched_cycle_last_seconds", "Last scheduling pass", st.last_s, "seconds");
    w.gauge1("drover_sched_cycle_mean_seconds", "Mean scheduling pass", mean, "seconds");
    w.gauge1("drover_sched_cycle_max_seconds", "Longest scheduling pass", st.max_s, "seconds");
    w.counter("drover_sched_cycles", "Scheduling passes run");
    w.sample("drover_sched_cycles_total", static_cast<double>(st.cycles));
    w.gauge1("drover_sched_backlog", "Pending jobs the last scheduling pass considered",
             static_cast<double>(st.last_backlog));
    w.counter("drover_sched_passes_out_of_time",
              "Scheduling passes bf_max_time ended before every pending job was considered");
    w.sample("drover_sched_passes_out_of_time_total", static_cast<double>(st.passes_out_of_time));
  }
  return w.finish();
}

}  // namespace drover::ctld
