#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drover::core {

// Slurm's "no value" for a non-array job's task id, printed by %a (4294967294).
inline constexpr uint32_t kPatternNoArrayTask = 0xfffffffe;
// Slurm's numeric step id of the batch script (4294967291); %s prints "batch" for it.
inline constexpr uint32_t kPatternBatchStep = 0xfffffffb;

struct PatternContext {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;
  std::optional<uint32_t> array_task_id;  // unset: not an array job
  std::string job_name, user;
  std::string first_node;  // %N: the batch node's host name (see below)
  uint32_t node_index = 0;
  uint32_t task_id = 0;
  std::optional<uint32_t> step_id;  // unset: the batch step
};

// Expands sbatch's filename pattern codes as Slurm 22.05 does for the batch step (checked
// against real Slurm 22.05): %% %A %a %J %j %N %n %s %t %u %x. A number between '%' and the
// letter zero-pads numeric codes to that width (capped at 10: "%12j" -> "0000000121") and is
// ignored for text codes (%x %u %N) and for %s of the batch step. %A is the job id for a
// non-array job and %a is 4294967294 for one; in an array task %A is the array's id and %j/%J
// the task's own job id. %J is "jobid.stepid", just "jobid" for the batch step; %s is "batch"
// for the batch step. %N is the short host name of the node running the shell (Slurm 22.05
// uses the machine's hostname up to the first '.', not the NodeName). Anything else after '%'
// is not a code (22.05 has no %b or %r): the character before it -- the '%', or the width's
// last digit -- is kept and expansion carries on from it: "%z" -> "%z", "%4z" -> "4z",
// "%4%" -> "4%", a trailing "%" stays and a trailing "%12" becomes "2". A backslash anywhere
// turns expansion off; the backslashes are then removed and the rest is used literally.
std::string expand_output_pattern(std::string_view pattern, const PatternContext& ctx);

// What scontrol show job prints for StdOut/StdErr/StdIn: Slurm 22.05's controller expands only
// a bare %A, %a, %J, %j, %u and %x there (no widths); every other code, "%%", widths and
// backslashes are shown as written (checked against Slurm 22.05).
std::string expand_output_pattern_for_display(std::string_view pattern, const PatternContext& ctx);

// Whether a name from this pattern can differ between the tasks of a step (%t, %n or %N):
// srun opens a name that cannot itself, the nodes open the others (as Slurm's srun and stepd).
bool pattern_varies_by_task(std::string_view pattern);

// sbatch's default --output: "slurm-%j.out", or "slurm-%A_%a.out" for an array job.
std::string default_output_pattern(bool is_array);

}  // namespace drover::core
