// libFuzzer entry for --begin/--deadline time specs, in UTC. The first 5 bytes give `now`
// (0 .. ~35000 years of seconds); the rest is the spec. Checks that parsing succeeds or throws
// ParseError with Slurm's message shape, that it is deterministic, and that a result within
// years 1000-9999 written as YYYY-MM-DDTHH:MM:SS parses back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/time_spec.hpp"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TZ", "UTC", 1);
  tzset();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 5) return 0;
  int64_t now = 0;
  for (size_t i = 0; i < 5; ++i) now = (now << 8) | data[i];
  now %= int64_t{253402300800};  // before year 10000
  std::string_view in(reinterpret_cast<const char*>(data + 5), size - 5);
  int64_t t = 0;
  try {
    t = drover::core::parse_time_spec(in, now);
  } catch (const drover::core::ParseError& e) {
    std::string_view what = e.what();
    check(what.empty() || what.rfind("Invalid time specification (pos=", 0) == 0);
    if (!what.empty() && in.find('\0') == std::string_view::npos)  // what() stops at a NUL
      check(what.size() >= in.size() && what.substr(what.size() - in.size()) == in);
    return 0;
  }
  check(drover::core::parse_time_spec(in, now) == t);
  auto tt = static_cast<time_t>(t);
  std::tm tm{};
  if (gmtime_r(&tt, &tm) == nullptr) return 0;
  if (tm.tm_year + 1900 < 1000 || tm.tm_year + 1900 > 9999) return 0;
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  check(drover::core::parse_time_spec(buf, now) == t);
  return 0;
}
