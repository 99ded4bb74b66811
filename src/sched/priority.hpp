#pragma once
// Multifactor job priority (Slurm 22.05's priority/multifactor): the slurm.conf knobs, the
// per-job factors, the weighted sum, and sprio's display. Pure: no I/O, no clock ("now" is an
// argument). priority/basic (FIFO numbering) stays in the controller.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/duration.hpp"
#include "core/slurm_conf.hpp"

namespace drover::sched {

enum class PriorityType : uint8_t { Basic, Multifactor };

// PriorityUsageResetPeriod. Only meaningful with PriorityDecayHalfLife=0; the calendar
// arithmetic (next local midnight, Sunday, ...) belongs to the caller that owns the clock.
enum class UsageResetPeriod : uint8_t { None, Now, Daily, Weekly, Monthly, Quarterly, Yearly };

// PriorityFlags, one bool per documented keyword.
struct PriorityFlags {
  bool accrue_always = false;           // age grows despite holds and dependencies
  bool small_relative_to_time = false;  // job size = (CPUs / time limit) / cluster CPUs
  bool calculate_running = false;       // recompute running jobs too
  bool depth_oblivious = false;         // classic fair share with depth-oblivious usage
  bool no_fair_tree = false;            // classic fair share (set by DEPTH_OBLIVIOUS too)
  bool incr_only = false;               // priorities never decrease (caller keeps the max)
  bool max_tres = false;                // billing = max of node TRES + sum of global TRES
  bool no_normal_assoc = false;         // NO_NORMAL_ASSOC (and NO_NORMAL_ALL)
  bool no_normal_part = false;          // NO_NORMAL_PART (and NO_NORMAL_ALL)
  bool no_normal_qos = false;           // NO_NORMAL_QOS (and NO_NORMAL_ALL)
  bool no_normal_tres = false;          // NO_NORMAL_TRES (and NO_NORMAL_ALL)
};

// TRES weights as slurm.conf writes them ("CPU=1000,Mem=2000,GRES/gpu=3000"), keyed by the
// TRES's lower-case name ("cpu", "mem", "gres/gpu", "license/matlab"). A unit suffix divides
// the weight as Slurm does (Mem=1G: 1/1024 per MB; K/M/G/T/P are powers of 1024 above the
// TRES's base unit, which is MB for mem and bb and a plain count otherwise). Negative weights
// are allowed. Unknown TRES types and malformed items throw core::ParseError naming `key`.
std::map<std::string, double> parse_tres_weights(std::string_view text, std::string_view key);

struct PriorityConfig {
  PriorityType type = PriorityType::Basic;
  uint32_t weight_age = 0;
  uint32_t weight_assoc = 0;
  uint32_t weight_fairshare = 0;
  uint32_t weight_job_size = 0;
  uint32_t weight_partition = 0;
  uint32_t weight_qos = 0;
  std::map<std::string, double> weight_tres;  // parse_tres_weights of PriorityWeightTRES
  std::string weight_tres_text;               // PriorityWeightTRES as written (sprio -w)
  // PriorityMaxAge in seconds. UNLIMITED is what Slurm's uint32 arithmetic makes of it
  // (2^32 - 60 s), so the age factor then stays near 0.
  int64_t max_age_s = 7 * 86400;
  bool favor_small = false;  // PriorityFavorSmall
  PriorityFlags flags;
  // PriorityDecayHalfLife in seconds; 0: no decay (UNLIMITED: 2^32 - 60 s, as for max_age_s).
  int64_t decay_half_life_s = 7 * 86400;
  UsageResetPeriod usage_reset_period = UsageResetPeriod::None;
  uint32_t fairshare_dampening_factor = 1;  // FairShareDampeningFactor, 1..65535
  int64_t calc_period_s = 300;              // PriorityCalcPeriod (minutes in slurm.conf)

  bool multifactor() const { return type == PriorityType::Multifactor; }
  bool fair_tree() const { return !flags.no_fair_tree; }
};

// Reads the Priority* keys and FairShareDampeningFactor from slurm.conf, with Slurm's
// defaults. Weights are uint32 as Slurm reads them (decimal, 0x hex or 0 octal, a K suffix
// multiplies by 1024, UNLIMITED/INFINITE is 4294967295). Times are Slurm time strings in
// minutes ("7-0", "30", "1:00:00"). Throws core::ParseError naming the key for bad values,
// unknown PriorityFlags keywords and PriorityDecayHalfLife=0 without a
// PriorityUsageResetPeriod (slurmctld refuses that configuration too).
PriorityConfig parse_priority_config(const core::SlurmConf& conf);

// The normalised factors of one job in one partition. age, assoc, fairshare, job_size,
// partition and qos are in [0, 1] (assoc, partition, qos and tres are raw values instead
// under the matching NO_NORMAL_* flag); site and nice are plain integers added and subtracted.
struct PriorityFactors {
  double age = 0;
  double assoc = 0;
  double fairshare = 0;
  double job_size = 0;
  double partition = 0;
  double qos = 0;
  std::map<std::string, double> tres;  // per weighted TRES name
  int64_t site = 0;                    // site factor (scontrol update SiteFactor=)
  int64_t nice = 0;                    // the job's nice (positive lowers priority)
};

// What the factors of a job are computed from; all plain values the controller has.
struct JobPriorityInput {
  int64_t now = 0;
  int64_t submit_time = 0;
  // When the job last became eligible: its begin time passed, its dependencies were met and it
  // was released from any hold (0: not eligible). Age accrues from here, or from submit_time
  // under ACCRUE_ALWAYS.
  int64_t eligible_time = 0;
  bool held = false;                // priority 0 / JobHeldUser / JobHeldAdmin
  bool dependency_pending = false;  // waiting for a dependency

  // Job size: CPUs allocated, or requested while pending (0: unknown), and minimum nodes.
  uint32_t cpus = 0;
  uint32_t min_nodes = 1;
  int64_t time_limit_min = core::kInfinite;  // the job's limit; kInfinite: UNLIMITED
  uint32_t cluster_cpus = 0;                 // CPUs of all nodes in the cluster
  uint32_t cluster_nodes = 0;                // nodes in the cluster

  // Partition factor: PriorityJobFactor of the job's partition and the largest of all.
  uint32_t partition_job_factor = 0;
  uint32_t max_partition_job_factor = 0;
  // QOS and association priorities and the largest of each.
  uint32_t qos_priority = 0;
  uint32_t max_qos_priority = 0;
  uint32_t assoc_priority = 0;
  uint32_t max_assoc_priority = 0;

  double fairshare = 0;  // the job's association's fair-share factor (see fairshare.hpp)

  // TRES the job asks for (or holds) and what the partition has, by lower-case TRES name.
  std::map<std::string, double> job_tres;
  std::map<std::string, double> partition_tres;

  int64_t site = 0;
  int64_t nice = 0;
};

// The factors as priority/multifactor computes them (all of them, whatever their weights).
PriorityFactors compute_priority_factors(const JobPriorityInput& in, const PriorityConfig& conf);

// The factors multiplied by their weights, as sprio shows them.
struct WeightedFactors {
  double age = 0, assoc = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  std::map<std::string, double> tres;  // weight * factor per TRES
  double tres_sum = 0;
};
WeightedFactors weigh_factors(const PriorityFactors& f, const PriorityConfig& conf);

// site + sum(weight * factor) - nice, computed in double as Slurm does, then: below 1 becomes
// 1 (0 is reserved for held jobs), the rest is truncated toward zero and capped at 2^32 - 1.
uint32_t multifactor_priority(const PriorityFactors& f, const PriorityConfig& conf);

// ---- sprio ----

struct SprioRow {
  uint32_t job_id = 0;
  std::string partition;
  std::string user;
  PriorityFactors factors;
  // Priority set by an administrator (scontrol update Priority=); sprio then shows it with
  // every factor, the site and nice as 0. 0: none.
  uint32_t admin_priority = 0;
};

struct SprioOptions {
  bool long_format = false;  // -l
  bool normalized = false;   // -n
  bool users = false;        // -u given: the short formats gain a USER column
  bool weights = false;      // -w: the header and the configured weights only
  bool no_header = false;    // -h
};

// An sprio -o format: text before the first field, then "%[.][width]type" fields, each with the
// literal text after it. Types sprio 22.05 does not know are dropped together with their text
// and listed in `invalid` (sprio says "Invalid job format specification: X" and goes on).
struct SprioField {
  char type = 0;
  int width = 0;       // 0: as wide as the value
  bool right = false;  // '.': right-justified
  std::string suffix;
};
struct SprioFormat {
  std::string prefix;
  std::vector<SprioField> fields;
  std::vector<char> invalid;
};
SprioFormat parse_sprio_format(std::string_view format);

// sprio 22.05's built-in format for the options and weights: the short formats show SITE and
// the factors whose weight is not zero; -l shows every column.
std::string sprio_default_format(const PriorityConfig& conf, const SprioOptions& opt);

// sprio's output for `rows` in the order given (sprio sorts by job id): the header (unless -h),
// then the weights line (-w) or one line per row. A value wider than its field is cut; '.'
// right-justifies. Each line ends with '\n'.
std::string format_sprio(const std::vector<SprioRow>& rows, const PriorityConfig& conf,
                         const SprioFormat& format, const SprioOptions& opt);
// The same with sprio_default_format.
std::string format_sprio(const std::vector<SprioRow>& rows, const PriorityConfig& conf,
                         const SprioOptions& opt = {});

}  // namespace drover::sched
