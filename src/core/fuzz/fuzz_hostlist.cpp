// libFuzzer entry for the hostlist parser. Checks that expansion either succeeds or throws
// ParseError, and that compressing and re-expanding gives back the same set of names.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.hpp"
#include "core/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> names;
  try {
    names = drover::core::expand_hostlist(in);
  } catch (const drover::core::ParseError&) {
    return 0;
  }
  if (names.size() > 10000) return 0;  // keep iterations fast
  std::string compressed = drover::core::compress_hostlist(names);
  std::vector<std::string> again = drover::core::expand_hostlist(compressed);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::sort(again.begin(), again.end());
  if (names != again) std::abort();
  return 0;
}
