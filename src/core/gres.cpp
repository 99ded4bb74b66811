#include "core/gres.hpp"

#include <algorithm>
#include <cctype>

#include "core/text.hpp"

namespace drover::core {
namespace {

[[noreturn]] void invalid() { throw ParseError("Invalid generic resource (gres) specification"); }

bool parse_count(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 12) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  out = v;
  return true;
}

bool valid_word(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

int64_t used_of(const std::vector<GresCount>& used, const GresCount& entry) {
  int64_t n = 0;
  for (const auto& u : used)
    if (u.name == entry.name && u.type == entry.type) n += u.count;
  return n;
}

}  // namespace

std::vector<GresCount> parse_gres_list(std::string_view text) {
  std::vector<GresCount> out;
  for (std::string item : split_list(text, ',')) {
    if (auto paren = item.find('('); paren != std::string::npos) item.resize(paren);
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
      size_t colon = item.find(':', start);
      parts.push_back(
          item.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    GresCount g;
    g.name = parts[0];
    if (!valid_word(g.name) || parts.size() > 3) invalid();
    if (parts.size() == 2) {
      if (!parse_count(parts[1], g.count)) {
        if (!valid_word(parts[1])) invalid();
        g.type = parts[1];  // "gpu:a100": one of that type
      }
    } else if (parts.size() == 3) {
      g.type = parts[1];
      if (!valid_word(g.type) || !parse_count(parts[2], g.count)) invalid();
    }
    out.push_back(std::move(g));
  }
  if (out.empty()) invalid();
  return out;
}

GresCount parse_gpu_count(std::string_view text) {
  GresCount g{"gpu", "", 0};
  std::string_view count = text;
  if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
    g.type = std::string(text.substr(0, colon));
    count = text.substr(colon + 1);
    if (!valid_word(g.type)) invalid();
  }
  if (!parse_count(count, g.count) || g.count < 1) invalid();
  return g;
}

std::string format_gres_list(const std::vector<GresCount>& items) {
  std::string out;
  for (const auto& g : items) {
    if (!out.empty()) out += ',';
    out += g.name;
    if (!g.type.empty()) out += ":" + g.type;
    out += ":" + std::to_string(g.count);
  }
  return out;
}

int64_t gres_free(const std::vector<GresCount>& have, const std::vector<GresCount>& used,
                  const GresCount& want) {
  int64_t n = 0;
  for (const auto& h : have) {
    if (h.name != want.name || (!want.type.empty() && h.type != want.type)) continue;
    n += std::max<int64_t>(0, h.count - used_of(used, h));
  }
  return n;
}

void gres_take(const std::vector<GresCount>& have, std::vector<GresCount>& used,
               const GresCount& want, int64_t n, std::vector<GresCount>* taken) {
  for (const auto& h : have) {
    if (n <= 0) break;
    if (h.name != want.name || (!want.type.empty() && h.type != want.type)) continue;
    const int64_t take = std::min(n, std::max<int64_t>(0, h.count - used_of(used, h)));
    if (take <= 0) continue;
    used.push_back({h.name, h.type, take});
    if (taken) taken->push_back({h.name, h.type, take});
    n -= take;
  }
}

void gres_give_back(std::vector<GresCount>& used, const std::vector<GresCount>& items) {
  for (const auto& item : items) {
    int64_t left = item.count;
    for (auto& u : used) {
      if (left <= 0) break;
      if (u.name != item.name || u.type != item.type) continue;
      const int64_t back = std::min(left, u.count);
      u.count -= back;
      left -= back;
    }
    used.erase(
        std::remove_if(used.begin(), used.end(), [](const GresCount& u) { return u.count <= 0; }),
        used.end());
  }
}

}  // namespace drover::core
