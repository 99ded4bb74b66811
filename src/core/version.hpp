#pragma once
#include <string_view>

namespace drover::core {

// The Slurm release whose behaviour drover reproduces (what --version, SLURM_VERSION and the
// REST API's meta report).
inline constexpr std::string_view kSlurmVersion = "22.05.8";

}  // namespace drover::core
