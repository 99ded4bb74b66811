#pragma once
#include "core/error.hpp"
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/array_spec.hpp"

namespace drover::core {

// --dependency as Slurm 22.05 understands it.
enum class DepType : uint8_t { After, AfterAny, AfterOk, AfterNotOk, AfterCorr, AfterBurstBuffer, Singleton };
enum class DepState : uint8_t { Unfulfilled, Satisfied, Failed };

struct DepEntry {
  DepType type = DepType::AfterAny;
  uint64_t job_id = 0;                  // 0 for singleton
  uint32_t array_task = kNoArrayTask;   // "123_4": one task; kNoArrayTask: the job / whole array
  int64_t delay_min = 0;                // "after:123+5": minutes after the condition
  DepState state = DepState::Unfulfilled;
  bool operator==(const DepEntry&) const = default;
};

struct Dependency {
  std::vector<DepEntry> entries;
  bool any = false;  // entries separated by '?' (any one suffices) instead of ',' (all)
  bool empty() const { return entries.empty(); }
  bool operator==(const Dependency&) const = default;
};

// Parses "afterok:12:13,afterany:14+5", "afternotok:12_3?after:14", "singleton",
// "after:12+10", ... Mixing ',' and '?' is an error, as in Slurm. Throws ParseError with the
// text real sbatch prints for a malformed spec (the caller adds "sbatch: error: ").
Dependency parse_dependency(std::string_view text);

// As scontrol/squeue show it: "afterok:20(unfulfilled),afterany:21_3(unfulfilled)",
// "after:20+5(unfulfilled)", "singleton(unfulfilled)", joined by '?' for `any`.
// Satisfied entries are not shown (Slurm drops them); an empty dependency formats as "".
std::string format_dependency(const Dependency& dep);

std::string_view dep_type_name(DepType t);  // "afterok", ...

}  // namespace drover::core
