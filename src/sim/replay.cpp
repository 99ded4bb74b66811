#include "sim/replay.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <optional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "core/gres.hpp"
#include "sched/autoscale.hpp"
#include "sim/multifactor.hpp"

namespace drover::sim {
namespace {

constexpr int64_t kNodeMemMb = 1'000'000;  // 1 TB: memory never binds
constexpr int64_t kDefMemPerCpuMb = 1;
constexpr const char* kPartition = "sim";
constexpr int64_t kAgeWeight = 10000;
constexpr int64_t kMaxAgeS = 7 * 24 * 3600;

// A job that will be replayed, as the replay needs it.
struct SimJob {
  int64_t trace_id = 0;
  int64_t submit = 0;  // trace seconds
  int64_t run = 0;     // seconds, cut at the limit
  int64_t limit_min = 1;
  int64_t procs = 0;
  int64_t user = -1, group = -1;
  size_t file_index = 0;
};

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, format);
  std::vsnprintf(out.data(), out.size(), format, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(n));
  return out;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::optional<SimPolicy> parse_sim_policy(std::string_view name) {
  if (name == "fcfs") return SimPolicy::Fcfs;
  if (name == "easy") return SimPolicy::Easy;
  if (name == "conservative") return SimPolicy::Conservative;
  if (name == "multifactor") return SimPolicy::Multifactor;
  return std::nullopt;
}

std::string_view sim_policy_name(SimPolicy p) {
  switch (p) {
    case SimPolicy::Fcfs:
      return "fcfs";
    case SimPolicy::Easy:
      return "easy";
    case SimPolicy::Conservative:
      return "conservative";
    case SimPolicy::Multifactor:
      return "multifactor";
  }
  return "?";
}

sched::Policy engine_policy(SimPolicy p) {
  switch (p) {
    case SimPolicy::Fcfs:
      return sched::Policy::Fifo;
    case SimPolicy::Easy:
      return sched::Policy::Easy;
    case SimPolicy::Conservative:
    case SimPolicy::Multifactor:
      return sched::Policy::Conservative;
  }
  return sched::Policy::Fifo;
}

std::optional<ScalePolicy> parse_scale_policy(std::string_view name) {
  if (name == "static") return ScalePolicy::Static;
  if (name == "keda") return ScalePolicy::Keda;
  if (name == "drover") return ScalePolicy::Drover;
  return std::nullopt;
}

std::string_view scale_policy_name(ScalePolicy p) {
  switch (p) {
    case ScalePolicy::Static:
      return "static";
    case ScalePolicy::Keda:
      return "keda";
    case ScalePolicy::Drover:
      return "drover";
  }
  return "?";
}

uint32_t age_priority(const core::Job& job, int64_t now) {
  int64_t age = std::clamp<int64_t>(now - job.submit_time, 0, kMaxAgeS);
  return static_cast<uint32_t>(1 + kAgeWeight * age / kMaxAgeS);
}

std::string_view skip_reason_text(SkipReason r) {
  switch (r) {
    case SkipReason::UnknownSubmit:
      return "unknown submit time";
    case SkipReason::UnknownRunTime:
      return "unknown run time";
    case SkipReason::NoProcessors:
      return "no processor count";
    case SkipReason::TooLarge:
      return "more processors than the cluster has";
  }
  return "?";
}

uint64_t ReplayResult::skipped_total() const {
  uint64_t n = 0;
  for (uint64_t s : skipped) n += s;
  return n;
}

ReplayResult replay(const SwfTrace& trace, const ReplayOptions& opts) {
  ReplayResult r;
  r.policy = opts.policy;
  r.jobs_read = trace.jobs.size();
  r.rounded_values = trace.rounded_values;
  const SwfHeader& h = trace.header;
  auto procs_of = [](const SwfJob& j) { return j.req_procs > 0 ? j.req_procs : j.alloc_procs; };

  // The cluster.
  if (opts.nodes < 0 || opts.cpus_per_node < 0)
    throw std::invalid_argument("node and CPU counts must be positive");
  int64_t nodes = 0;
  if (opts.nodes > 0) {
    nodes = opts.nodes;
    r.nodes_from = "--nodes";
  } else if (h.max_nodes > 0) {
    nodes = h.max_nodes;
    r.nodes_from = "MaxNodes";
  } else if (h.max_procs > 0) {
    nodes = h.max_procs;
    r.nodes_from = "MaxProcs";
  } else {
    for (const SwfJob& j : trace.jobs) nodes = std::max(nodes, procs_of(j));
    r.nodes_from = "the largest job";
    if (nodes <= 0) {
      nodes = 1;
      r.nodes_from = "default";
    }
  }
  int64_t cpn = 1;
  r.cpus_from = "default";
  if (opts.cpus_per_node > 0) {
    cpn = opts.cpus_per_node;
    r.cpus_from = "--cpus-per-node";
  } else if (h.max_nodes > 0 && h.max_procs > 0) {
    cpn = std::max<int64_t>(1, h.max_procs / h.max_nodes);
    r.cpus_from = "MaxProcs/MaxNodes";
  }
  if (nodes > kMaxNodes)
    throw std::invalid_argument(std::to_string(nodes) + " nodes: at most " +
                                std::to_string(kMaxNodes) + " are simulated");
  if (nodes * cpn > INT_MAX)
    throw std::invalid_argument(std::to_string(nodes) + " nodes x " + std::to_string(cpn) +
                                " CPUs: too many CPUs");
  r.nodes = static_cast<int>(nodes);
  r.cpus_per_node = static_cast<int>(cpn);
  const int64_t cluster_cpus = r.cpus();
  r.epoch = h.unix_start_time > 0 ? h.unix_start_time : kDefaultEpoch;

  // The jobs to replay, in submit order (ties: file order).
  std::vector<SimJob> jobs;
  jobs.reserve(trace.jobs.size());
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const SwfJob& j = trace.jobs[i];
    const int64_t procs = procs_of(j);
    std::optional<SkipReason> skip;
    if (j.submit < 0)
      skip = SkipReason::UnknownSubmit;
    else if (j.run < 0)
      skip = SkipReason::UnknownRunTime;
    else if (procs <= 0)
      skip = SkipReason::NoProcessors;
    else if (procs > cluster_cpus)
      skip = SkipReason::TooLarge;
    if (skip) {
      ++r.skipped[static_cast<size_t>(*skip)];
      continue;
    }
    SimJob s;
    s.trace_id = j.job_number;
    s.submit = j.submit;
    s.procs = procs;
    s.user = j.user;
    s.group = j.group;
    s.file_index = i;
    s.run = j.run;
    if (j.req_time > 0) {
      s.limit_min = std::max<int64_t>(1, ceil_div(j.req_time, 60));
      if (s.run > s.limit_min * 60) {
        s.run = s.limit_min * 60;
        ++r.cut_at_limit;
      }
    } else {
      ++r.no_requested_time;
      s.limit_min = std::max<int64_t>(1, ceil_div(s.run, 60));
    }
    jobs.push_back(s);
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const SimJob& a, const SimJob& b) { return a.submit < b.submit; });
  const size_t n = jobs.size();

  // Nodes, partition and the view the engine sees; the view's pending and running lists are
  // kept up to date in place.
  std::vector<core::Node> node_store(static_cast<size_t>(r.nodes));
  std::unordered_map<std::string, size_t> node_index;
  node_index.reserve(node_store.size());
  sched::ClusterView view;
  sched::PartitionView part;
  part.name = kPartition;
  for (size_t i = 0; i < node_store.size(); ++i) {
    core::Node& nd = node_store[i];
    nd.name = "node" + std::to_string(i + 1);
    nd.cpus = r.cpus_per_node;
    nd.cores_per_socket = r.cpus_per_node;
    nd.real_memory_mb = kNodeMemMb;
    nd.registered = true;
    node_index.emplace(nd.name, i);
    view.nodes.push_back(&nd);
    part.nodes.push_back(static_cast<int>(i));
  }
  view.partitions.push_back(part);
  view.def_mem_per_cpu_mb = kDefMemPerCpuMb;
  view.params.policy = engine_policy(opts.policy);

  const bool multifactor = opts.policy == SimPolicy::Multifactor;
  std::optional<SimMultifactor> mf;
  if (multifactor && !opts.priority)
    mf.emplace(static_cast<uint32_t>(int64_t{r.nodes} * r.cpus_per_node),
               static_cast<uint32_t>(r.nodes));
  const PriorityFn priority_fn =
      !multifactor ? PriorityFn{}
      : opts.priority
          ? opts.priority
          : PriorityFn([&mf](const core::Job& j, int64_t t) { return mf->priority(j, t); });
  const EndFn end_fn = !multifactor ? EndFn{}
                       : opts.priority
                           ? opts.on_end
                           : EndFn([&mf](const core::Job& j, int64_t t) { mf->job_ended(j, t); });
  r.priority = !multifactor    ? "priority/basic, submit order"
               : opts.priority ? "callback"
                               : "multifactor: age 1000, fair share 10000 (Fair Tree, users "
                                 "under root, half-life 7 days), job size 1000";
  std::unique_ptr<sched::Scheduler> engine = sched::make_scheduler();

  // Live core::Job records exist from submission to end; engine job id = index + 1.
  std::vector<std::unique_ptr<core::Job>> live(n);
  std::vector<JobOutcome> outcomes(n);
  std::vector<bool> finished(n, false);
  using End = std::pair<int64_t, size_t>;  // (trace time, job index)
  std::priority_queue<End, std::vector<End>, std::greater<>> ends;
  std::vector<size_t> ended;
  int64_t free_cpus = cluster_cpus;
  bool freed_since_pass = false;
  bool submitted_since_pass = false;
  int64_t min_new_procs = INT64_MAX;  // smallest job submitted since the last pass
  size_t next = 0;

  // Nodes over time (every node is up all the time in a static cluster).
  const ScaleOptions& so = opts.scale;
  r.scale = so;
  const bool scaled = so.policy != ScalePolicy::Static;
  if (scaled && (so.min_nodes < 0 || so.start_delay_s < 0 || so.idle_timeout_s < 0 ||
                 so.poll_s <= 0 || so.cooldown_s < 0))
    throw std::invalid_argument("autoscaling: negative times or counts");
  enum class NodeState : uint8_t { Off, Starting, Up };
  const size_t n_nodes = node_store.size();
  const int64_t t_first = n > 0 ? jobs[0].submit : 0;
  std::vector<NodeState> nstate(n_nodes, NodeState::Up);
  std::vector<int64_t> ready_at(n_nodes, t_first), idle_since(n_nodes, t_first),
      alive_since(n_nodes, t_first);
  int alive = static_cast<int>(n_nodes);
  using Timed = std::pair<int64_t, size_t>;  // (trace time, node)
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> readies;
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> checks;  // drover
  std::deque<std::pair<int64_t, int>> wanted_history;                         // keda
  int64_t next_poll = t_first;
  int64_t last_event = t_first;
  constexpr int64_t kStallS = 7 * 24 * 3600;
  sched::Autoscaler autoscaler;
  if (scaled) {
    const int min_up = std::min<int>(so.min_nodes, static_cast<int>(n_nodes));
    for (size_t i = static_cast<size_t>(min_up); i < n_nodes; ++i) {
      nstate[i] = NodeState::Off;
      node_store[i].registered = false;
    }
    alive = min_up;
    free_cpus = int64_t{min_up} * r.cpus_per_node;
  }
  r.peak_nodes = alive;
  auto boot = [&](size_t i, int64_t t) {
    nstate[i] = NodeState::Starting;
    node_store[i].registered = true;  // known, kept from jobs until up (starting_node_windows)
    ready_at[i] = t + so.start_delay_s;
    alive_since[i] = t;
    readies.push({ready_at[i], i});
    ++alive;
    ++r.nodes_started;
    r.peak_nodes = std::max(r.peak_nodes, alive);
  };
  auto boot_some = [&](int count, int64_t t) {
    for (size_t i = 0; i < n_nodes && count > 0; ++i)
      if (nstate[i] == NodeState::Off) {
        boot(i, t);
        --count;
      }
  };
  auto remove = [&](size_t i, int64_t t) {
    if (nstate[i] == NodeState::Up) {
      if (node_store[i].running_jobs > 0)
        throw std::logic_error("autoscaler removed " + node_store[i].name + ", which runs jobs");
      free_cpus -= r.cpus_per_node;
    }
    r.node_seconds += static_cast<double>(t - alive_since[i]);
    nstate[i] = NodeState::Off;
    node_store[i].registered = false;
    --alive;
  };
  auto up_idle = [&](size_t i) {
    return nstate[i] == NodeState::Up && node_store[i].running_jobs == 0;
  };
  // Whether a poll could change anything: jobs wait, or nodes could go.
  auto keda_active = [&]() {
    if (!view.pending.empty()) return true;
    for (size_t i = 0; i < n_nodes; ++i)
      if (nstate[i] == NodeState::Starting || up_idle(i)) return true;
    return false;
  };

  auto schedule_pass = [&](int64_t t, int64_t now) {
    if (view.pending.empty()) return;
    r.max_pending = std::max<uint64_t>(r.max_pending, view.pending.size());
    bool skip = false;
    if (opts.skip_passes && !freed_since_pass) {
      if (!submitted_since_pass || free_cpus == 0) skip = true;
      if (!multifactor && min_new_procs > free_cpus) skip = true;
    }
    if (skip) {
      ++r.passes_skipped;
      return;
    }
    if (mf)
      for (const core::Job* p : view.pending) mf->see(*p);
    if (priority_fn)
      for (const core::Job* p : view.pending) {
        core::Job& job = *live[p->id - 1];
        job.priority = priority_fn(job, now);
      }
    if (scaled) {
      // Nodes starting are planned on from when they are up (as the controller shows them).
      std::vector<std::pair<int, int64_t>> starting;
      for (size_t i = 0; i < n_nodes; ++i)
        if (nstate[i] == NodeState::Starting)
          starting.emplace_back(static_cast<int>(i), r.epoch + ready_at[i]);
      view.reservations = sched::starting_node_windows(starting, now);
    }
    auto t0 = std::chrono::steady_clock::now();
    sched::Decisions d = engine->schedule(view, now);
    auto t1 = std::chrono::steady_clock::now();
    r.engine_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    ++r.passes;
    r.engine_work += d.work;
    freed_since_pass = false;
    submitted_since_pass = false;
    min_new_procs = INT64_MAX;

    for (sched::Start& s : d.starts) {
      auto fault = [&](const std::string& what) {
        throw std::logic_error("engine started job " + std::to_string(s.job_id) + what);
      };
      if (s.job_id == 0 || s.job_id > n || !live[s.job_id - 1] ||
          live[s.job_id - 1]->state != core::JobState::Pending)
        fault(", which is not pending");
      const size_t k = s.job_id - 1;
      core::Job& job = *live[k];
      int64_t cpus = 0;
      for (const auto& a : s.alloc) {
        auto it = node_index.find(a.node);
        if (it == node_index.end()) fault(" on unknown node " + a.node);
        core::Node& nd = node_store[it->second];
        if (nstate[it->second] != NodeState::Up) fault(" on " + nd.name + ", which is not up");
        nd.charge(a);
        if (nd.alloc_cpus > nd.cpus) fault(": " + nd.name + " has more CPUs allocated than it has");
        cpus += a.cpus;
      }
      if (cpus < jobs[k].procs)
        fault(" on " + std::to_string(cpus) + " CPUs; it asked for " +
              std::to_string(jobs[k].procs));
      free_cpus -= cpus;
      job.state = core::JobState::Running;
      job.reason = "None";
      job.partition = s.partition;
      job.start_time = now;
      job.alloc = std::move(s.alloc);
      engine->plans().forget(job.id);
      outcomes[k].start = t;
      ends.push({t + jobs[k].run, k});
      view.running.push_back(&job);
    }
    if (!d.starts.empty())
      std::erase_if(view.pending,
                    [](const core::Job* j) { return j->state != core::JobState::Pending; });
  };

  // drover: the what-if planner on one NodeSet of the cluster's node shape.
  auto drover_decision = [&](int64_t t, int64_t now) {
    // Every node there and busy: nothing to add or remove, no question to ask.
    bool could = false;
    for (size_t i = 0; i < n_nodes && !could; ++i)
      could = nstate[i] == NodeState::Off || up_idle(i);
    if (!could) return;
    sched::NodeSetView set;
    set.name = "sim";
    set.shape.cpus = r.cpus_per_node;
    set.shape.cores_per_socket = r.cpus_per_node;
    set.shape.real_memory_mb = kNodeMemMb;
    set.partitions = {kPartition};
    set.min_replicas = so.min_nodes;
    set.max_replicas = static_cast<int>(n_nodes);
    set.start_delay_s = so.start_delay_s;
    set.idle_timeout_s = so.idle_timeout_s;
    std::vector<size_t> member_node;
    for (size_t i = 0; i < n_nodes; ++i) {
      if (nstate[i] == NodeState::Off) continue;
      set.members.push_back(
          {static_cast<int>(i), r.epoch + ready_at[i], up_idle(i) ? r.epoch + idle_since[i] : -1});
      member_node.push_back(i);
    }
    const std::vector<sched::NodeSetView> sets{std::move(set)};
    auto t0 = std::chrono::steady_clock::now();
    const sched::AutoscaleDecision d =
        autoscaler.decide(view, sets, now, sched::AutoscaleParams{so.lookahead_s});
    auto t1 = std::chrono::steady_clock::now();
    const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    r.scale_ns += took;
    r.scale_decision_ns.push_back(took);
    ++r.scale_decisions;
    for (int m : d.sets[0].remove) remove(member_node[static_cast<size_t>(m)], t);
    boot_some(d.sets[0].add, t);
    if (d.next_check != sched::AutoscaleDecision::kNoCheck)
      checks.push(std::max(t + 1, d.next_check - r.epoch));
  };

  // keda: replicas from the pending count, scale-down held to the cooldown's highest.
  auto keda_poll = [&](int64_t t) {
    ++r.scale_decisions;
    int busy = 0;
    for (size_t i = 0; i < n_nodes; ++i)
      if (nstate[i] == NodeState::Up && node_store[i].running_jobs > 0) ++busy;
    int64_t pending_cpus = 0;
    for (const core::Job* j : view.pending) pending_cpus += jobs[j->id - 1].procs;
    const int64_t cpn = r.cpus_per_node;
    const int wanted = static_cast<int>(std::clamp<int64_t>(
        busy + (pending_cpus + cpn - 1) / cpn, so.min_nodes, static_cast<int64_t>(n_nodes)));
    // Polls skipped while nothing could change (all nodes busy, nothing pending) wanted
    // what the last one did: the latest of them counts in the cooldown.
    if (!wanted_history.empty() && wanted_history.back().first < t - so.poll_s)
      wanted_history.emplace_back(t - so.poll_s, wanted_history.back().second);
    wanted_history.emplace_back(t, wanted);
    while (!wanted_history.empty() && wanted_history.front().first < t - so.cooldown_s)
      wanted_history.pop_front();
    if (wanted > alive) {
      boot_some(wanted - alive, t);
      return;
    }
    int keep = 0;
    for (const auto& [when, w] : wanted_history) keep = std::max(keep, w);
    int extra = alive - keep;
    // Pods still starting go first, then the nodes idle longest.
    for (size_t i = n_nodes; i-- > 0 && extra > 0;)
      if (nstate[i] == NodeState::Starting) {
        remove(i, t);
        --extra;
      }
    std::vector<std::pair<int64_t, size_t>> idle;
    for (size_t i = 0; i < n_nodes; ++i)
      if (up_idle(i)) idle.emplace_back(idle_since[i], i);
    std::sort(idle.begin(), idle.end());
    for (size_t k = 0; k < idle.size() && extra > 0; ++k, --extra) remove(idle[k].second, t);
  };

  while (next < n || !ends.empty() || !view.pending.empty()) {
    int64_t t = next < n ? jobs[next].submit : INT64_MAX;
    if (!ends.empty()) t = std::min(t, ends.top().first);
    if (!readies.empty()) t = std::min(t, readies.top().first);
    if (!checks.empty()) t = std::min(t, checks.top());
    const bool polling = so.policy == ScalePolicy::Keda && keda_active();
    if (polling) t = std::min(t, next_poll);
    if (t == INT64_MAX) break;  // jobs pending and nothing can happen: never started
    // Polls alone for a week of trace time: nothing will ever start them.
    if (polling && t == next_poll && t > last_event + kStallS) break;
    if (so.policy == ScalePolicy::Keda && next_poll < t)
      next_poll = (t + so.poll_s - 1) / so.poll_s * so.poll_s;  // the first poll from t
    const int64_t now = r.epoch + t;
    bool changed = false;  // anything the autoscaler's answer may depend on
    if ((next < n && jobs[next].submit == t) || (!ends.empty() && ends.top().first == t) ||
        (!readies.empty() && readies.top().first == t))
      last_event = t;

    // Ends first: free what they held (Node::discharge, as the controller's release()).
    ended.clear();
    while (!ends.empty() && ends.top().first == t) {
      const size_t k = ends.top().second;
      ends.pop();
      core::Job& job = *live[k];
      for (const auto& a : job.alloc) {
        const size_t i = node_index.at(a.node);
        node_store[i].discharge(a);
        free_cpus += a.cpus;
        if (node_store[i].running_jobs == 0) {
          idle_since[i] = t;
          if (so.policy == ScalePolicy::Drover) checks.push(t + so.idle_timeout_s);
        }
      }
      job.state = core::JobState::Completed;
      job.end_time = now;
      outcomes[k].end = t;
      finished[k] = true;
      ended.push_back(k);
    }
    if (!ended.empty()) {
      freed_since_pass = true;
      std::erase_if(view.running,
                    [](const core::Job* j) { return j->state != core::JobState::Running; });
      for (size_t k : ended) {
        if (end_fn) end_fn(*live[k], now);
        live[k].reset();
      }
    }

    // Then nodes that come up.
    while (!readies.empty() && readies.top().first == t) {
      const size_t i = readies.top().second;
      readies.pop();
      if (nstate[i] != NodeState::Starting || ready_at[i] != t) continue;  // removed meanwhile
      nstate[i] = NodeState::Up;
      node_store[i].registered = true;
      idle_since[i] = t;
      free_cpus += r.cpus_per_node;
      freed_since_pass = true;
      changed = true;
      if (so.policy == ScalePolicy::Drover) checks.push(t + so.idle_timeout_s);
    }
    if (!ended.empty()) changed = true;
    bool check_due = false;
    while (!checks.empty() && checks.top() <= t) {
      checks.pop();
      check_due = true;
    }

    // Then submissions.
    for (; next < n && jobs[next].submit == t; ++next) {
      const SimJob& s = jobs[next];
      auto job = std::make_unique<core::Job>();
      job->id = next + 1;
      job->partition = kPartition;
      job->spec.ntasks = static_cast<int>(s.procs);
      job->spec.ntasks_set = true;
      job->spec.cpus_per_task = 1;
      job->spec.time_limit_min = s.limit_min;
      job->time_limit_min = s.limit_min;
      job->submit_time = now;
      job->eligible_time = now;
      job->priority =
          static_cast<uint32_t>(std::max<int64_t>(1, 0xffff0000LL - static_cast<int64_t>(next)));
      if (s.user >= 0 && s.user <= UINT32_MAX) {
        job->uid = static_cast<uint32_t>(s.user);
        job->user = "user" + std::to_string(s.user);
      }
      if (s.group >= 0 && s.group <= UINT32_MAX) job->gid = static_cast<uint32_t>(s.group);
      outcomes[next] = {s.trace_id, s.submit, 0, 0, s.procs};
      view.pending.push_back(job.get());
      live[next] = std::move(job);
      submitted_since_pass = true;
      changed = true;
      min_new_procs = std::min(min_new_procs, s.procs);
    }

    // Then one pass, unless it cannot start anything; then the autoscaler.
    schedule_pass(t, now);
    if (so.policy == ScalePolicy::Drover && (check_due || (changed && !view.pending.empty())))
      drover_decision(t, now);
    if (so.policy == ScalePolicy::Keda && polling && t >= next_poll) {
      keda_poll(t);
      next_poll = (t / so.poll_s + 1) * so.poll_s;
    }
  }

  r.never_started = view.pending.size();
  int64_t last_end = t_first;
  for (size_t k = 0; k < n; ++k)
    if (finished[k]) last_end = std::max(last_end, outcomes[k].end);
  for (size_t i = 0; i < n_nodes; ++i)
    if (nstate[i] != NodeState::Off && last_end > alive_since[i])
      r.node_seconds += static_cast<double>(last_end - alive_since[i]);
  r.outcomes.reserve(n);
  for (size_t k = 0; k < n; ++k)
    if (finished[k]) r.outcomes.push_back(outcomes[k]);
  return r;
}

std::string format_report(std::string_view trace_name, const ReplayResult& r, const Metrics& m) {
  std::string out;
  out += "trace: " + std::string(trace_name) + "\n";
  out += printf_string("cluster: %d nodes x %d cpus = %lld cpus (nodes: %s; cpus per node: %s)\n",
                       r.nodes, r.cpus_per_node, static_cast<long long>(r.cpus()),
                       r.nodes_from.c_str(), r.cpus_from.c_str());
  const char* engine = r.policy == SimPolicy::Fcfs   ? "Fifo"
                       : r.policy == SimPolicy::Easy ? "Easy"
                                                     : "Conservative";
  out += printf_string("policy: %.*s (engine Policy::%s); priority: %s\n",
                       static_cast<int>(sim_policy_name(r.policy).size()),
                       sim_policy_name(r.policy).data(), engine, r.priority.c_str());
  out += printf_string("jobs: %llu in trace, %llu replayed, %llu skipped\n",
                       static_cast<unsigned long long>(r.jobs_read),
                       static_cast<unsigned long long>(r.outcomes.size()),
                       static_cast<unsigned long long>(r.skipped_total()));
  for (size_t i = 0; i < kSkipReasons; ++i)
    if (r.skipped[i] > 0) {
      std::string_view why = skip_reason_text(static_cast<SkipReason>(i));
      out += printf_string("  skipped %llu: %.*s\n", static_cast<unsigned long long>(r.skipped[i]),
                           static_cast<int>(why.size()), why.data());
    }
  if (r.never_started > 0)
    out += printf_string("  never started %llu: left pending by the engine with nothing running\n",
                         static_cast<unsigned long long>(r.never_started));
  if (r.rounded_values > 0)
    out += printf_string("parse: %llu fractional values rounded to the nearest integer\n",
                         static_cast<unsigned long long>(r.rounded_values));
  out += printf_string(
      "time limits: requested time rounded up to whole minutes; %llu jobs without one use "
      "their run time so rounded (an exact estimate); %llu runs cut at the limit\n",
      static_cast<unsigned long long>(r.no_requested_time),
      static_cast<unsigned long long>(r.cut_at_limit));
  out += printf_string("wait: mean %.2f s, p95 %.2f s\n", m.wait.mean, m.wait.p95);
  out += printf_string("bounded slowdown (tau %lld s): mean %.2f, p95 %.2f\n",
                       static_cast<long long>(kBsldTau), m.bsld.mean, m.bsld.p95);
  out += printf_string("utilization: %.2f%% (%.0f cpu-s over %lld cpus x %lld s)\n",
                       100.0 * m.utilization, m.cpu_seconds, static_cast<long long>(r.cpus()),
                       static_cast<long long>(m.makespan));
  out +=
      printf_string("makespan: %lld s (%.2f days; first submit %lld, last end %lld)\n",
                    static_cast<long long>(m.makespan), static_cast<double>(m.makespan) / 86400.0,
                    static_cast<long long>(m.first_submit), static_cast<long long>(m.last_end));
  const ScaleOptions& so = r.scale;
  if (so.policy == ScalePolicy::Static) {
    out += printf_string("nodes: static, %d nodes from the first submission to the last end\n",
                         r.nodes);
  } else if (so.policy == ScalePolicy::Keda) {
    out += printf_string(
        "nodes: keda, %d to %d nodes; every %lld s: nodes running jobs + pending CPUs / "
        "CPUs per node, scale-down to the most wanted over %lld s; start delay %lld s\n",
        std::min(so.min_nodes, r.nodes), r.nodes, static_cast<long long>(so.poll_s),
        static_cast<long long>(so.cooldown_s), static_cast<long long>(so.start_delay_s));
  } else {
    out += printf_string(
        "nodes: drover, %d to %d nodes; the engine's what-if plan after each pass; idle "
        "timeout %lld s, lookahead %lld s; start delay %lld s\n",
        std::min(so.min_nodes, r.nodes), r.nodes, static_cast<long long>(so.idle_timeout_s),
        static_cast<long long>(so.lookahead_s), static_cast<long long>(so.start_delay_s));
  }
  out += printf_string(
      "node-hours: %.2f (cost %.2f at %g per node-hour); peak %d nodes, %llu started, %llu "
      "scaling decisions\n",
      r.node_hours(), r.node_hours() * so.cost_per_node_hour, so.cost_per_node_hour, r.peak_nodes,
      static_cast<unsigned long long>(r.nodes_started),
      static_cast<unsigned long long>(r.scale_decisions));
  out += printf_string(
      "engine: %llu schedule() passes, %llu skipped (nothing could start), max pending %llu, "
      "work %llu\n",
      static_cast<unsigned long long>(r.passes), static_cast<unsigned long long>(r.passes_skipped),
      static_cast<unsigned long long>(r.max_pending),
      static_cast<unsigned long long>(r.engine_work));
  return out;
}

std::string format_jobs_csv(const ReplayResult& r) {
  std::string out = "id,submit,start,end,wait,run,procs,bsld\n";
  for (const JobOutcome& j : r.outcomes)
    out += printf_string("%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.4f\n", static_cast<long long>(j.id),
                         static_cast<long long>(j.submit), static_cast<long long>(j.start),
                         static_cast<long long>(j.end), static_cast<long long>(j.wait()),
                         static_cast<long long>(j.run()), static_cast<long long>(j.procs),
                         bounded_slowdown(j.wait(), j.run()));
  return out;
}

std::string format_timing(const ReplayResult& r, int64_t total_ns) {
  const double engine_s = static_cast<double>(r.engine_ns) / 1e9;
  const double per_pass_us =
      r.passes > 0 ? static_cast<double>(r.engine_ns) / 1e3 / static_cast<double>(r.passes) : 0;
  std::string out = printf_string(
      "drover sim: engine wall time %.3f s in %llu schedule() passes (%.1f us per pass); "
      "whole replay %.3f s\n",
      engine_s, static_cast<unsigned long long>(r.passes), per_pass_us,
      static_cast<double>(total_ns) / 1e9);
  if (r.scale.policy == ScalePolicy::Drover && !r.scale_decision_ns.empty()) {
    std::vector<int64_t> ns = r.scale_decision_ns;
    std::sort(ns.begin(), ns.end());
    auto pct = [&](double p) {  // nearest rank
      size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(ns.size())));
      return static_cast<double>(ns[std::clamp<size_t>(rank, 1, ns.size()) - 1]) / 1e3;
    };
    out += printf_string(
        "drover sim: autoscaler wall time %.3f s in %llu decisions (%.1f us each; p50 %.1f us, "
        "p99 %.1f us, max %.1f us)\n",
        static_cast<double>(r.scale_ns) / 1e9, static_cast<unsigned long long>(r.scale_decisions),
        static_cast<double>(r.scale_ns) / 1e3 / static_cast<double>(r.scale_decisions), pct(50),
        pct(99), static_cast<double>(ns.back()) / 1e3);
  }
  return out;
}

}  // namespace drover::sim
