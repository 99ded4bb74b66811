#pragma once
// The commands parse options with core's getopt_long (sbatch's #SBATCH lines use it too).
#include "core/getopt.hpp"

namespace drover::cli {
using core::ArgKind;
using core::LongOption;
using core::parse_options;
using core::ParsedArgs;
using core::ParsedOption;
}  // namespace drover::cli
