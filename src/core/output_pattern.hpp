#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drover::core {

// Slurm's "no value" for a non-array job's task id, printed by %a (4294967294).
inline constexpr uint32_t kPatternNoArrayTask = 0xfffffffe;
// Slurm's step id of the batch script, printed by %s for the batch step (4294967291).
inline constexpr uint32_t kPatternBatchStep = 0xfffffffb;

struct PatternContext {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;
  std::optional<uint32_t> array_task_id;  // unset: not an array job
  std::string job_name, user, first_node;
  uint32_t node_index = 0;
  uint32_t task_id = 0;
  std::optional<uint32_t> step_id;  // unset: the batch step
};

// Expands sbatch's filename pattern codes: %% %A %a %J %j %N %n %s %t %u %x. A number between
// '%' and the letter zero-pads numeric codes to that width (capped at 10, as Slurm does), and is
// ignored for text codes. As in Slurm: %A is the job id for a non-array job, %a is 4294967294
// for one, %J is "jobid.stepid" but just "jobid" for the batch step, %s is 4294967291 for the
// batch step, %N is the first node's name up to its first '.'. Unknown codes (and a lone
// trailing '%') are left as written. A backslash anywhere turns expansion off; the backslashes
// are then removed and the rest is used literally.
std::string expand_output_pattern(std::string_view pattern, const PatternContext& ctx);

// sbatch's default --output: "slurm-%j.out", or "slurm-%A_%a.out" for an array job.
std::string default_output_pattern(bool is_array);

}  // namespace drover::core
