#pragma once
// Trace replay: an SWF trace runs through the scheduling engine (sched::Scheduler) on a
// virtual clock, without a controller or agents.
//
// The model (each point is printed by the report where it matters):
// - Cluster: `nodes` nodes named node1..nodeN with `cpus_per_node` CPUs each, one partition
//   "sim" holding them all. Nodes default to the header's MaxNodes, else MaxProcs, else the
//   largest job; CPUs per node to MaxProcs / MaxNodes when both are known (at least 1), else 1.
//   Memory never binds: DefMemPerCPU is 1 MB and every node has 1 TB.
// - A job asks for procs = requested processors (field 8), else allocated (field 5), as that
//   many one-CPU tasks. Its time limit is the requested time (field 9) rounded up to whole
//   minutes (Slurm's granularity), at least 1; without a requested time the run time is used
//   (an exact estimate). Its run time (field 4) is cut at the limit, as Slurm kills it there.
// - Skipped (counted by reason): unknown submit time, unknown (negative) run time, no
//   processor count, more processors than the cluster has.
// - Clock: the engine sees UnixStartTime + trace seconds (2000-01-01 UTC when the header has
//   no UnixStartTime); outcomes are reported in trace seconds.
// - Events: at each distinct time, ends first (resources freed as the controller's release()
//   does), then submissions, then one schedule() pass over every pending and running job.
//   Passes are skipped when no job is pending, or when nothing was freed since the last pass
//   and no CPU is free; with a fixed priority order also when nothing was freed and every job
//   submitted since asks for more CPUs than are free (a lower-priority job that cannot fit
//   changes nothing for the jobs ahead of it).
// - Priority: fcfs/easy/conservative use Slurm's priority/basic: the k-th job by submit time
//   (ties: file order) gets 0xffff0000 - k, so the engine's (priority, submit, id) order is
//   submit order. multifactor runs the conservative policy with a priority callback called
//   for every pending job before every pass; see PriorityFn.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"
#include "sched/scheduler.hpp"
#include "sim/metrics.hpp"
#include "sim/swf.hpp"

namespace drover::sim {

enum class SimPolicy : uint8_t { Fcfs, Easy, Conservative, Multifactor };
std::optional<SimPolicy> parse_sim_policy(std::string_view name);
std::string_view sim_policy_name(SimPolicy p);
sched::Policy engine_policy(SimPolicy p);

// A job's priority at `now` (engine clock), called for each pending job before each pass of
// --policy multifactor; and what to do as a job ends (charge its usage). Unset, multifactor
// uses SimMultifactor (sim/multifactor.hpp): the controller's age, job size and Fair Tree
// fair-share formulas over the trace's users.
using PriorityFn = std::function<uint32_t(const core::Job& job, int64_t now)>;
using EndFn = std::function<void(const core::Job& job, int64_t now)>;
// Slurm's age factor alone, PriorityWeightAge 10000 over PriorityMaxAge 7 days:
// 1 + 10000 * min(now - submit, 7 d) / 7 d. Order-equivalent to submit order (tests).
uint32_t age_priority(const core::Job& job, int64_t now);

// How many nodes exist over time. Static: all of them, all the time. The others start with
// `min_nodes` and grow to at most the cluster's size, one NodeSet of the cluster's node shape;
// a node started takes `start_delay_s` to take jobs and is billed from its start (its pod's
// creation) to its removal. Only idle nodes are removed: no policy ends a job.
enum class ScalePolicy : uint8_t {
  Static,
  // Slinky's KEDA recipe, read generously: every poll the wanted replicas are the nodes
  // running jobs plus the nodes the pending jobs' CPUs fill, at once upwards; downwards to the
  // most wanted over the last cooldown, taking idle nodes (those still starting first). (The
  // recipe's metric, the pending job count, never starts a job wider than the replicas it
  // asks for: Slinky says it suits single-node jobs only.)
  Keda,
  // drover's autoscaler (sched/autoscale.hpp) after every pass that leaves jobs pending, and
  // when its idle timeouts or deferred nodes come due.
  Drover,
};
std::optional<ScalePolicy> parse_scale_policy(std::string_view name);
std::string_view scale_policy_name(ScalePolicy p);

struct ScaleOptions {
  ScalePolicy policy = ScalePolicy::Static;
  int min_nodes = 0;
  int64_t start_delay_s = 60;
  int64_t idle_timeout_s = 300;  // drover
  int64_t lookahead_s = 60;      // drover: AutoscaleParams::lookahead_s
  int64_t poll_s = 30;           // keda
  int64_t cooldown_s = 300;      // keda
  double cost_per_node_hour = 1;
};

struct ReplayOptions {
  int nodes = 0;          // 0: from the trace
  int cpus_per_node = 0;  // 0: from the trace
  SimPolicy policy = SimPolicy::Fcfs;
  PriorityFn priority;  // multifactor only; empty: SimMultifactor
  EndFn on_end;         // with `priority`
  // false: a pass at every event time with a job pending (checks that skipping is sound).
  bool skip_passes = true;
  ScaleOptions scale;
};

enum class SkipReason : uint8_t { UnknownSubmit, UnknownRunTime, NoProcessors, TooLarge };
inline constexpr size_t kSkipReasons = 4;
std::string_view skip_reason_text(SkipReason r);

inline constexpr int kMaxNodes = 1'000'000;
inline constexpr int64_t kDefaultEpoch = 946684800;  // 2000-01-01T00:00:00Z

struct ReplayResult {
  SimPolicy policy = SimPolicy::Fcfs;
  std::string priority;  // how priorities were set, for the report
  int nodes = 0, cpus_per_node = 0;
  std::string nodes_from, cpus_from;  // where the sizes came from ("MaxNodes", "--nodes", ...)
  int64_t epoch = 0;                  // engine clock at trace second 0
  uint64_t jobs_read = 0;
  std::array<uint64_t, kSkipReasons> skipped{};
  uint64_t rounded_values = 0;       // fractional trace values rounded by the parser
  uint64_t no_requested_time = 0;    // limit taken from the run time (exact estimate)
  uint64_t cut_at_limit = 0;         // run time longer than the limit, cut to it
  uint64_t never_started = 0;        // left pending at the end (an engine fault)
  std::vector<JobOutcome> outcomes;  // replayed jobs in submit order (ties: file order)
  // The engine: passes made and skipped, the deterministic work counter it reports, and the
  // wall time spent inside schedule() (not deterministic: print it apart).
  uint64_t passes = 0, passes_skipped = 0, engine_work = 0, max_pending = 0;
  int64_t engine_ns = 0;
  // Nodes over time: seconds billed (from a node's start to its removal, or to the last end;
  // a static cluster from the first submission), the most at once, how many were started,
  // and the autoscaler's decisions (and their wall time, as engine_ns).
  ScaleOptions scale;
  double node_seconds = 0;
  int peak_nodes = 0;
  uint64_t nodes_started = 0, scale_decisions = 0;
  int64_t scale_ns = 0;
  std::vector<int64_t> scale_decision_ns;  // each drover decision's wall time
  double node_hours() const { return node_seconds / 3600.0; }

  int64_t cpus() const { return int64_t{nodes} * cpus_per_node; }
  uint64_t skipped_total() const;
};

// Replays `trace`. Throws std::invalid_argument for impossible options (no nodes) and
// std::logic_error when the engine's decisions are inconsistent (start of a job that is not
// pending, more CPUs than a node has).
ReplayResult replay(const SwfTrace& trace, const ReplayOptions& opts);

// The deterministic report (stdout) and the --jobs-csv file.
std::string format_report(std::string_view trace_name, const ReplayResult& r, const Metrics& m);
std::string format_jobs_csv(const ReplayResult& r);
// The engine's wall time and the whole replay's (`total_ns`), for stderr.
std::string format_timing(const ReplayResult& r, int64_t total_ns);

}  // namespace drover::sim
