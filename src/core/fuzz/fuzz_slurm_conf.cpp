// libFuzzer entry for the slurm.conf parser; includes resolve to the input itself so nesting
// limits are exercised too.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/slurm_conf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    drover::core::SlurmConf c = drover::core::parse_slurm_conf(text);
    c.default_partition();
    for (const auto& [k, v] : c.options) {
      try {
        c.get_int(k, 0);
      } catch (const drover::core::ParseError&) {
      }
    }
  } catch (const drover::core::ParseError&) {
  }
  try {
    drover::core::IncludeResolver self = [&](std::string_view) { return std::optional(text); };
    drover::core::parse_slurm_conf(text, "slurm.conf", self);
  } catch (const drover::core::ParseError&) {
  }
  return 0;
}
