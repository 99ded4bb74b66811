#pragma once
#include "core/error.hpp"
#include <cstdint>
#include <string_view>

namespace drover::core {

// Parses an absolute or relative point in time as --begin, --deadline and scontrol's
// StartTime= take it (slurm_compat.md 1.3), in the local time zone:
//   HH:MM[:SS] [AM|PM]  (today, or tomorrow if already past), MMDD[YY], MM/DD[/YY], MM.DD[.YY],
//   YYYY-MM-DD[THH:MM[:SS]], now[+count[seconds|minutes|hours|days|weeks]] (default unit
//   seconds), today, tomorrow, midnight, noon, elevenses, fika, teatime, and the combination
//   "date time" / "dateTtime" forms Slurm allows.
// `now` is the current Unix time (no clock inside). Returns Unix seconds. Throws ParseError
// ("Invalid time specification" or what real Slurm prints) on anything else.
int64_t parse_time_spec(std::string_view text, int64_t now);

}  // namespace drover::core
