#include "core/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "core/error.hpp"

namespace drover::core {
namespace {

// 18 digits always fit in uint64_t; longer numbers are not host numbers we can range.
constexpr std::size_t kMaxDigits = 18;

[[noreturn]] void invalid(std::string_view expr) {
  throw ParseError("Invalid hostlist: " + std::string(expr));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string pad(uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

bool parse_number(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > kMaxDigits) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

// "1-3,05" -> {"1","2","3","05"}.
std::vector<std::string> expand_brackets(std::string_view body, std::string_view expr) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    std::size_t comma = body.find(',', pos);
    std::string_view item =
        body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    std::size_t dash = item.find('-');
    std::string_view lo_s = item.substr(0, dash);
    std::string_view hi_s = dash == std::string_view::npos ? lo_s : item.substr(dash + 1);
    uint64_t lo = 0, hi = 0;
    if (!parse_number(lo_s, lo) || !parse_number(hi_s, hi) || hi < lo) invalid(expr);
    if (hi - lo >= kMaxHostsPerRange || out.size() + (hi - lo) >= kMaxHostsPerExpr) invalid(expr);
    for (uint64_t v = lo; v <= hi; ++v) out.push_back(pad(v, lo_s.size()));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

// One comma-free item such as "r[1-2]n[01-02]x".
void expand_item(std::string_view item, std::string_view expr, std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  std::size_t pos = 0;
  while (pos < item.size()) {
    std::size_t open = item.find_first_of("[]", pos);
    std::string_view lit = item.substr(pos, open == std::string_view::npos ? open : open - pos);
    for (auto& n : names) n += lit;
    if (open == std::string_view::npos) break;
    if (item[open] == ']') invalid(expr);
    std::size_t close = item.find_first_of("[]", open + 1);
    if (close == std::string_view::npos || item[close] == '[') invalid(expr);
    std::vector<std::string> parts = expand_brackets(item.substr(open + 1, close - open - 1), expr);
    if (names.size() * parts.size() + out.size() > kMaxHostsPerExpr) invalid(expr);
    std::vector<std::string> next;
    next.reserve(names.size() * parts.size());
    for (const auto& n : names)
      for (const auto& p : parts) next.push_back(n + p);
    names = std::move(next);
    pos = close + 1;
  }
  for (auto& n : names) out.push_back(std::move(n));
}

struct HostKey {
  std::string prefix;
  bool has_num = false;
  std::size_t digits = 0;  // length of the written number, leading zeros included
  uint64_t num = 0;
  bool padded() const { return digits > 1 && pad(num, 0).size() < digits; }
};

HostKey split_host(const std::string& name) {
  std::size_t i = name.size();
  while (i > 0 && is_digit(name[i - 1])) --i;
  HostKey k;
  uint64_t v = 0;
  if (i < name.size() && parse_number(std::string_view(name).substr(i), v)) {
    k.prefix = name.substr(0, i);
    k.has_num = true;
    k.digits = name.size() - i;
    k.num = v;
  } else {
    k.prefix = name;
  }
  return k;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expr) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < expr.size()) {
    // An item ends at a comma or blank outside brackets.
    std::size_t end = pos;
    bool in_bracket = false;
    while (end < expr.size()) {
      char c = expr[end];
      if (c == '[') in_bracket = true;
      if (c == ']') in_bracket = false;
      if (!in_bracket && (c == ',' || is_space(c))) break;
      if (in_bracket && is_space(c)) invalid(expr);
      ++end;
    }
    if (end > pos) expand_item(expr.substr(pos, end - pos), expr, out);
    pos = end + 1;
  }
  return out;
}

namespace {

std::vector<HostKey> keys_of(const std::vector<std::string>& names) {
  std::vector<HostKey> keys;
  keys.reserve(names.size());
  for (const auto& n : names)
    if (!n.empty()) keys.push_back(split_host(n));
  return keys;
}

auto key_tie(const HostKey& k) { return std::tie(k.prefix, k.has_num, k.digits, k.num); }

void sort_keys(std::vector<HostKey>& keys) {
  std::stable_sort(keys.begin(), keys.end(),
                   [](const HostKey& a, const HostKey& b) { return key_tie(a) < key_tie(b); });
}

// Ranges of consecutive numbers in the given order; neighbouring ranges of one prefix share a
// bracket.
std::string ranged(const std::vector<HostKey>& keys) {
  std::string out;
  std::size_t i = 0;
  while (i < keys.size()) {
    if (!out.empty()) out += ',';
    const HostKey& first = keys[i];
    if (!first.has_num) {
      out += first.prefix;
      ++i;
      continue;
    }
    // Collect the ranges sharing this prefix.
    std::vector<std::string> ranges;
    std::size_t hosts = 0;
    while (i < keys.size() && keys[i].has_num && keys[i].prefix == first.prefix) {
      const HostKey& lo = keys[i];
      std::size_t width = lo.padded() ? lo.digits : 0;
      std::size_t j = i;
      while (j + 1 < keys.size()) {
        const HostKey& cur = keys[j];
        const HostKey& nx = keys[j + 1];
        if (!nx.has_num || nx.prefix != lo.prefix || nx.num != cur.num + 1) break;
        // Same written width, or both unpadded (9 -> 10 keeps a natural range).
        if (nx.digits != cur.digits && (cur.padded() || nx.padded())) break;
        ++j;
      }
      std::string r = pad(lo.num, width);
      if (j > i) r += "-" + pad(keys[j].num, width);
      ranges.push_back(std::move(r));
      hosts += j - i + 1;
      i = j + 1;
    }
    out += first.prefix;
    if (hosts == 1) {
      out += ranges.front();
    } else {
      out += '[';
      for (std::size_t r = 0; r < ranges.size(); ++r) {
        if (r) out += ',';
        out += ranges[r];
      }
      out += ']';
    }
  }
  return out;
}

}  // namespace

std::string compress_hostlist(const std::vector<std::string>& names) {
  std::vector<HostKey> keys = keys_of(names);
  sort_keys(keys);
  keys.erase(
      std::unique(keys.begin(), keys.end(),
                  [](const HostKey& a, const HostKey& b) { return key_tie(a) == key_tie(b); }),
      keys.end());
  return ranged(keys);
}

std::string ranged_hostlist(const std::vector<std::string>& names, bool sorted) {
  std::vector<HostKey> keys = keys_of(names);
  if (sorted) sort_keys(keys);
  return ranged(keys);
}

}  // namespace drover::core
