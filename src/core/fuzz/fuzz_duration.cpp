// libFuzzer entry for time-limit parsing and formatting.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/duration.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  int64_t minutes = 0;
  try {
    minutes = drover::core::parse_time_limit_minutes(in);
  } catch (const drover::core::ParseError&) {
    return 0;
  }
  if (minutes < drover::core::kInfinite) std::abort();
  // What scontrol prints must parse back to the same limit.
  std::string shown = drover::core::format_time_limit(minutes, true);
  if (drover::core::parse_time_limit_minutes(shown) != minutes) std::abort();
  drover::core::format_time_limit(minutes, false);
  if (size >= 8) {
    uint64_t bits = 0;
    for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | data[i];
    int64_t secs = static_cast<int64_t>(bits);
    drover::core::format_elapsed(secs);
    drover::core::format_hms(secs);
  }
  return 0;
}
