#include "core/duration.hpp"

#include <cstdio>
#include <ctime>
#include <vector>

#include "core/error.hpp"

namespace drover::core {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
    if (x != y) return false;
  }
  return true;
}

// Non-empty run of digits; caps the value so later arithmetic cannot overflow.
bool parse_field(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
    if (v > (int64_t{1} << 40)) return false;
  }
  out = v;
  return true;
}

bool split_fields(std::string_view s, std::vector<int64_t>& out) {
  std::size_t pos = 0;
  while (true) {
    std::size_t colon = s.find(':', pos);
    int64_t v = 0;
    if (!parse_field(s.substr(pos, colon == std::string_view::npos ? colon : colon - pos), v))
      return false;
    out.push_back(v);
    if (colon == std::string_view::npos) return true;
    pos = colon + 1;
  }
}

// Returns seconds, or -1 when the text is not a time limit.
int64_t parse_seconds(std::string_view s) {
  std::size_t dash = s.find('-');
  std::vector<int64_t> f;
  if (dash == std::string_view::npos) {
    if (!split_fields(s, f) || f.size() > 3) return -1;
    if (f.size() == 1) return f[0] * 60;         // M
    if (f.size() == 2) return f[0] * 60 + f[1];  // M:S
    return f[0] * 3600 + f[1] * 60 + f[2];       // H:M:S
  }
  int64_t days = 0;
  if (!parse_field(s.substr(0, dash), days)) return -1;
  std::string_view rest = s.substr(dash + 1);
  int64_t secs = days * 86400;
  if (rest.empty()) return secs;  // "D-"
  if (!split_fields(rest, f) || f.size() > 3) return -1;
  secs += f[0] * 3600;                  // D-H
  if (f.size() > 1) secs += f[1] * 60;  // D-H:M
  if (f.size() > 2) secs += f[2];       // D-H:M:S
  return secs;
}

std::string two(int64_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", static_cast<int>(v));
  return buf;
}

}  // namespace

int64_t parse_time_limit_minutes(std::string_view s) {
  return parse_time_limit_minutes(s, "--time");
}

int64_t parse_time_limit_minutes(std::string_view s, std::string_view option) {
  if (s == "-1" || iequals(s, "UNLIMITED") || iequals(s, "INFINITE")) return kInfinite;
  int64_t secs = parse_seconds(s);
  int64_t mins = secs < 0 ? -1 : (secs + 59) / 60;
  if (mins < 0 || mins > std::numeric_limits<int32_t>::max())
    throw ParseError("Invalid " + std::string(option) + " specification");
  return mins;
}

std::string format_elapsed(int64_t seconds) {
  if (seconds < 0) return "INVALID";
  int64_t d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  if (d > 0) return std::to_string(d) + "-" + two(h) + ":" + two(m) + ":" + two(s);
  if (h > 0) return std::to_string(h) + ":" + two(m) + ":" + two(s);
  return std::to_string(m) + ":" + two(s);
}

std::string format_hms(int64_t seconds) {
  if (seconds < 0) return "INVALID";
  int64_t d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  std::string hms = two(h) + ":" + two(m) + ":" + two(s);
  return d > 0 ? std::to_string(d) + "-" + hms : hms;
}

std::string format_time_limit(int64_t minutes, bool scontrol_style) {
  if (minutes == kInfinite) return scontrol_style ? "UNLIMITED" : "infinite";
  if (minutes < 0 || minutes > std::numeric_limits<int64_t>::max() / 60) return "INVALID";
  return scontrol_style ? format_hms(minutes * 60) : format_elapsed(minutes * 60);
}

std::string format_timestamp(int64_t unix_seconds) {
  if (unix_seconds == kTimestampNone) return "None";
  if (unix_seconds == 0) return "Unknown";
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  if (localtime_r(&t, &tm) == nullptr) return "Unknown";
  char buf[64];
  if (std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0) return "Unknown";
  return buf;
}

}  // namespace drover::core
