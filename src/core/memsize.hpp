#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace drover::core {

// Parses a memory size as sbatch's --mem does, into megabytes (MiB): a decimal number with an
// optional unit K, M, G or T (any case, optionally followed by "B"/"b": "2GB", "2Gb"). No unit
// means megabytes. Kilobytes round up to whole megabytes ("10K" -> 1, "1025K" -> 2, "0K" -> 0).
// "0" is allowed (Slurm: all memory of the node). Leading blanks and a '+' sign are accepted as
// sbatch's strtoll does; anything after the unit, fractions, other units and negative values are
// not. Values that overflow int64 megabytes are refused (sbatch wraps them).
// Throws ParseError("Invalid --mem specification").
int64_t parse_mem_mb(std::string_view s);

// Same, naming the option in the error: ("x", "--mem-per-cpu") -> "Invalid --mem-per-cpu
// specification".
int64_t parse_mem_mb(std::string_view s, std::string_view option);

// As scontrol prints memory in TRES strings: the largest unit that divides exactly,
// "4000M", "2G", "1536M", "1T"; 0 -> "0".
std::string format_mem_mb(int64_t mb);

}  // namespace drover::core
