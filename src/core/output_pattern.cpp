#include "core/output_pattern.hpp"

#include <algorithm>
#include <optional>

namespace drover::core {
namespace {

constexpr std::size_t kMaxWidth = 10;

std::string padded(uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
}

// The expansion of one pattern code at a zero-padding width, or nothing for a character that
// is not a code.
std::optional<std::string> code_value(char code, const PatternContext& ctx, std::size_t width) {
  switch (code) {
    case 'A':
      return padded(ctx.array_task_id ? ctx.array_job_id : ctx.job_id, width);
    case 'a':
      return padded(ctx.array_task_id.value_or(kPatternNoArrayTask), width);
    case 'J':
      return padded(ctx.job_id, width) +
             (ctx.step_id ? "." + std::to_string(*ctx.step_id) : std::string());
    case 'j':
      return padded(ctx.job_id, width);
    case 'N':
      return ctx.first_node.substr(0, ctx.first_node.find('.'));
    case 'n':
      return padded(ctx.node_index, width);
    case 's':
      return ctx.step_id ? padded(*ctx.step_id, width) : std::string("batch");
    case 't':
      return padded(ctx.task_id, width);
    case 'u':
      return ctx.user;
    case 'x':
      return ctx.job_name;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string expand_output_pattern(std::string_view pattern, const PatternContext& ctx) {
  std::string out;
  if (pattern.find('\\') != std::string_view::npos) {
    for (char c : pattern)
      if (c != '\\') out += c;
    return out;
  }
  std::size_t i = 0;
  while (i < pattern.size()) {
    char c = pattern[i];
    if (c != '%') {
      out += c;
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    std::size_t width = 0;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
      width = std::min<std::size_t>(width * 10 + static_cast<std::size_t>(pattern[j] - '0'), 1000);
      ++j;
    }
    width = std::min(width, kMaxWidth);
    const char code = j < pattern.size() ? pattern[j] : '\0';
    if (code == '%' && j == i + 1) {  // "%%"
      out += '%';
      i = j + 1;
      continue;
    }
    if (auto value = code_value(code, ctx, width)) {
      out += *value;
      i = j + 1;
      continue;
    }
    // Not a code (or the end): Slurm keeps the character just before it -- the '%' itself,
    // or the last digit of a width -- and carries on at the character ("%z" -> "%z",
    // "%4z" -> "4z", "%12" -> "2", "%3%x" -> "3" then "%x").
    out += pattern[j - 1];
    i = j;
  }
  return out;
}

std::string default_output_pattern(bool is_array) {
  return is_array ? "slurm-%A_%a.out" : "slurm-%j.out";
}

std::string expand_output_pattern_for_display(std::string_view pattern, const PatternContext& ctx) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    const char code = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (c != '%') {
      out += c;
      continue;
    }
    // Only the bare codes Slurm's controller fills in; everything else stays as written.
    const bool shown = std::string_view("AaJjux").find(code) != std::string_view::npos;
    std::optional<std::string> value = shown ? code_value(code, ctx, 0) : std::nullopt;
    if (!value) {
      out += c;
      continue;
    }
    out += *value;
    ++i;
  }
  return out;
}

bool pattern_varies_by_task(std::string_view pattern) {
  if (pattern.find('\\') != std::string_view::npos) return false;  // taken literally
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    std::size_t j = i + 1;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') ++j;
    if (j >= pattern.size()) return false;
    const char code = pattern[j];
    if (code == 't' || code == 'n' || code == 'N') return true;
    if (code == '%' && j == i + 1) ++j;  // "%%": a literal '%', skip both
    i = j - 1;
  }
  return false;
}

}  // namespace drover::core
