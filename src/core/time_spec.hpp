#pragma once
#include <cstdint>
#include <string_view>

#include "core/error.hpp"

namespace drover::core {

// Parses an absolute or relative point in time as --begin, --deadline and scontrol's
// StartTime= take it (slurm_compat.md 1.3), in the local time zone, the way Slurm 22.05 does
// (checked against it; see time_spec_test.cpp):
//   HH:MM[:SS][ ][AM|PM] (hour 1-2 digits; today, or tomorrow if not after `now`),
//   MM/DD[/YY], MM.DD[.YY], MMDD[YY], M/D (a date without a year that is not after `now` is
//   next year; YY is 20YY), YYYY-MM-DD, now[[ ]+|-[ ]N[ ][seconds|minutes|hours|days|weeks]]
//   (singular or plural, any case; no unit: seconds; no abbreviations such as "min" or "h"),
//   today, tomorrow, midnight, noon, fika (15:00), teatime (16:00); "elevenses" is not
//   accepted by 22.05. Components combine left to right, each overriding the date or the
//   time of day so far, separated by nothing, blanks, 'T' or '-': "2026-12-01T10:00",
//   "12/01-10:00", "tomorrow 16:00", "16:00 tomorrow", "now+1day 10:00". "now" must come first.
// `now` is the current Unix time (no clock inside). Returns Unix seconds (may be in the past:
// "today", "now-1hour", "11/20/26"; huge offsets saturate).
// Errors throw ParseError whose what() is the line Slurm prints before its own error, e.g.
// "Invalid time specification (pos=4): now+5min"; for blank input (or only 'T'/'-') Slurm
// prints no such line and what() is "". sbatch then prints
// "sbatch: error: Invalid --begin specification" (or --deadline) and exits 255; scontrol
// update prints "No changes specified" and exits 1. All of these go to stderr.
int64_t parse_time_spec(std::string_view text, int64_t now);

}  // namespace drover::core
