#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace drover::core {

// A time limit with no bound: "UNLIMITED", "INFINITE" or "-1" in Slurm's syntax.
inline constexpr int64_t kInfinite = -1;

// Timestamp sentinel that format_timestamp shows as "None" (Slurm prints "None" for e.g. a job's
// end time while it is pending, and "Unknown" for a zero timestamp).
inline constexpr int64_t kTimestampNone = std::numeric_limits<int64_t>::min();

// Parses Slurm's time-limit forms into minutes: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S"
// (also "D-" for whole days), or "UNLIMITED"/"INFINITE" (any case) and "-1" for kInfinite.
// Seconds round up to the next minute ("0:30" -> 1). "0" returns 0: sbatch turns a zero --time
// into UNLIMITED itself, while slurm.conf keeps 0 as zero. Results above INT32_MAX minutes and
// negative values other than "-1" are rejected (real Slurm wraps them around).
// Throws ParseError("Invalid --time specification") on anything else.
int64_t parse_time_limit_minutes(std::string_view s);

// Same, with the option named in the error: ("1x", "--time-min") -> "Invalid --time-min
// specification".
int64_t parse_time_limit_minutes(std::string_view s, std::string_view option);

// squeue TIME / sinfo TIMELIMIT style: "0:00", "5:07", "1:02:03", "1-02:03:04". Negative
// values give "INVALID" as squeue does.
std::string format_elapsed(int64_t seconds);

// scontrol style: "00:00:05", "01:00:00", "1-02:03:04". Negative values give "INVALID".
std::string format_hms(int64_t seconds);

// kInfinite -> "UNLIMITED" (scontrol) or "infinite" (sinfo/squeue); otherwise format_hms or
// format_elapsed of minutes*60.
std::string format_time_limit(int64_t minutes, bool scontrol_style);

// "2026-11-21T20:33:05" in the local time zone; 0 -> "Unknown", kTimestampNone -> "None".
std::string format_timestamp(int64_t unix_seconds);

}  // namespace drover::core
