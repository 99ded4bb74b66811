#pragma once
// Generic resources (GPUs and the like) as counts: what a node has (slurm.conf Gres=) and what
// a job asks for (--gres, --gpus, --gpus-per-node, --gpus-per-task).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace drover::core {

struct GresCount {
  std::string name;  // "gpu"
  std::string type;  // "a100", "1g.10gb"; "" untyped
  int64_t count = 1;
  bool operator==(const GresCount&) const = default;
};

// "gpu:2,gpu:a100:1,nic" (a missing count is 1; a node's "(S:0-1)" socket suffix is ignored).
// Throws ParseError("Invalid generic resource (gres) specification").
std::vector<GresCount> parse_gres_list(std::string_view text);

// --gpus / --gpus-per-node / --gpus-per-task value: "[type:]N" as a "gpu" GresCount.
GresCount parse_gpu_count(std::string_view text);

// "gpu:2,gpu:a100:1" (Slurm's TRES form without the "gres:" prefix).
std::string format_gres_list(const std::vector<GresCount>& items);

// How many of `want` (name, and type if it names one) are in `have` beyond `used`.
int64_t gres_free(const std::vector<GresCount>& have, const std::vector<GresCount>& used,
                  const GresCount& want);

// Adds `n` of `want` to `used`, charged against the matching entries of `have` in order
// (a request without a type takes whichever type is free first). Precondition:
// gres_free(have, used, want) >= n.
void gres_take(const std::vector<GresCount>& have, std::vector<GresCount>& used,
               const GresCount& want, int64_t n, std::vector<GresCount>* taken = nullptr);
// Removes `items` from `used`.
void gres_give_back(std::vector<GresCount>& used, const std::vector<GresCount>& items);

}  // namespace drover::core
