// libFuzzer entry for memory sizes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/memsize.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  int64_t mb = 0;
  try {
    mb = drover::core::parse_mem_mb(in);
  } catch (const drover::core::ParseError&) {
    return 0;
  }
  if (mb < 0) std::abort();
  // The TRES form parses back to the same size when its unit is one --mem accepts.
  std::string shown = drover::core::format_mem_mb(mb);
  char unit = shown.back();
  if ((unit == 'M' || unit == 'G' || unit == 'T' || shown == "0") &&
      drover::core::parse_mem_mb(shown) != mb)
    std::abort();
  return 0;
}
