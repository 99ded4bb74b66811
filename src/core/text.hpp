#pragma once
// ASCII case helpers shared by the parsers (Slurm's keywords are case-insensitive ASCII).
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
// Splits at `sep`, dropping empty items ("a,,b" -> {"a","b"}).
std::vector<std::string> split_list(std::string_view s, char sep);

}  // namespace drover::core
