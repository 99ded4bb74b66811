// libFuzzer entry for the accounting file parser (sacctmgr dump format). Whatever parses must
// format to text that parses again, to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/acct_dump.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    drover::core::parse_tres_counts(text);
  } catch (const drover::core::ParseError&) {
  }
  drover::core::AcctDump dump;
  try {
    dump = drover::core::parse_acct_dump(text);
  } catch (const drover::core::ParseError&) {
    return 0;
  }
  const std::string formatted = drover::core::format_acct_dump(dump);
  try {
    if (drover::core::format_acct_dump(drover::core::parse_acct_dump(formatted)) != formatted)
      std::abort();
  } catch (const drover::core::ParseError&) {
    std::abort();
  }
  return 0;
}
