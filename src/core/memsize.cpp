#include "core/memsize.hpp"

#include <limits>

#include "core/error.hpp"

namespace drover::core {

int64_t parse_mem_mb(std::string_view s) { return parse_mem_mb(s, "--mem"); }

int64_t parse_mem_mb(std::string_view s, std::string_view option) {
  auto fail = [&]() -> int64_t {
    throw ParseError("Invalid " + std::string(option) + " specification");
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
  if (i < s.size() && s[i] == '+') ++i;
  std::size_t digits_start = i;
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    int d = s[i] - '0';
    if (v > (kMax - d) / 10) return fail();
    v = v * 10 + d;
  }
  if (i == digits_start) return fail();
  if (i == s.size()) return v;

  int64_t mult = 1;
  bool kilo = false;
  switch (s[i]) {
    case 'K':
    case 'k':
      kilo = true;
      break;
    case 'M':
    case 'm':
      break;
    case 'G':
    case 'g':
      mult = 1024;
      break;
    case 'T':
    case 't':
      mult = int64_t{1024} * 1024;
      break;
    default:
      return fail();
  }
  ++i;
  if (i < s.size() && (s[i] == 'B' || s[i] == 'b')) ++i;
  if (i != s.size()) return fail();
  if (kilo) return v / 1024 + (v % 1024 != 0);
  if (v > kMax / mult) return fail();
  return v * mult;
}

std::string format_mem_mb(int64_t mb) {
  if (mb == 0) return "0";
  static constexpr char kUnits[] = {'M', 'G', 'T', 'P', 'E'};
  std::size_t unit = 0;
  while (unit + 1 < sizeof kUnits && mb % 1024 == 0) {
    mb /= 1024;
    ++unit;
  }
  return std::to_string(mb) + kUnits[unit];
}

}  // namespace drover::core
