#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/array_spec.hpp"
#include "core/error.hpp"

namespace drover::core {

// --dependency as Slurm 22.05 understands it.
enum class DepType : uint8_t {
  After,
  AfterAny,
  AfterOk,
  AfterNotOk,
  AfterCorr,
  AfterBurstBuffer,
  Singleton
};
enum class DepState : uint8_t { Unfulfilled, Satisfied, Failed };

struct DepEntry {
  DepType type = DepType::AfterAny;
  uint64_t job_id = 0;                 // 0 for singleton
  uint32_t array_task = kNoArrayTask;  // "123_4": one task; kNoArrayTask: the job / whole array
  int64_t delay_min = 0;               // "after:123+5": minutes after the condition
  DepState state = DepState::Unfulfilled;
  bool operator==(const DepEntry&) const = default;
};

struct Dependency {
  std::vector<DepEntry> entries;
  bool any = false;  // entries separated by '?' (any one suffices) instead of ',' (all)
  bool empty() const { return entries.empty(); }
  bool operator==(const Dependency&) const = default;
};

// Parses --dependency as slurmctld 22.05 does (sbatch checks nothing itself):
//  - "afterok:12:13,afterany:14+5", "afternotok:12_3?after:14", "singleton", "12" (afterany).
//    Type names are case-insensitive; "+N" (minutes, > 0) is accepted on every after* type and
//    carries over to the ids after it in the same item ("afterok:1+5:2" = 1+5 and 2+5).
//  - Both separators may appear: any '?' makes the whole list "any" (Slurm 22.05 accepts
//    "afterok:1,afterany:2?after:3" and shows it joined by '?').
//  - A spec starting with a digit is a ','-list of plain job ids (afterany), no '?' or types.
//  - "12_3" one task, "12_*" (or "12_-1") the whole array, "12_[1-3,7]" one entry per task
//    (indices < max_array_size; no steps). Ids are read like strtoul and kept as 32 bits.
//  - Repeated (type, job, task) entries are dropped after the first.
// Every error throws ParseError("Job dependency problem"), except the obsolete "expand:N":
// ParseError("Requested operation not supported on this system"). sbatch prints
// "sbatch: error: Batch job submission failed: " + what() and exits 1.
// Whether the jobs exist is not checked here: Slurm 22.05 accepts unknown job ids and treats
// such an entry as satisfied when it next evaluates dependencies.
Dependency parse_dependency(std::string_view text);  // max_array_size 1001
Dependency parse_dependency(std::string_view text, uint32_t max_array_size);

// As scontrol/squeue show it: "afterok:20(unfulfilled),afterany:21_3(unfulfilled)",
// "after:20+5(unfulfilled)", "afterok:20(failed)", "singleton(unfulfilled)", joined by '?' for
// `any`. Satisfied entries are not shown (Slurm drops them); an empty dependency formats as ""
// (Slurm shows "(null)"). Slurm writes a whole-array entry as "21_*": pass is_array to say
// which job ids are arrays (the one-argument form writes plain "21").
std::string format_dependency(const Dependency& dep);
std::string format_dependency(const Dependency& dep,
                              const std::function<bool(uint64_t job_id)>& is_array);
// Every entry (satisfied ones too) in the form --dependency takes, without states:
// parse_dependency(format_dependency_spec(d)) has d's entries (states reset to unfulfilled).
std::string format_dependency_spec(const Dependency& dep);

std::string_view dep_type_name(DepType t);  // "afterok", ...

}  // namespace drover::core
