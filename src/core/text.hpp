#pragma once
// ASCII case helpers shared by the parsers (Slurm's keywords are case-insensitive ASCII).
#include <string>
#include <string_view>

namespace drover::core {

std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);

}  // namespace drover::core
