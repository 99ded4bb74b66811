#include "core/output_pattern.hpp"

#include <algorithm>

namespace drover::core {
namespace {

constexpr std::size_t kMaxWidth = 10;

std::string padded(uint64_t v, std::size_t width) {
  std::string s = std::to_string(v);
  if (s.size() < width) s.insert(0, width - s.size(), '0');
  return s;
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
    switch (code) {
      case 'A':
        out += padded(ctx.array_task_id ? ctx.array_job_id : ctx.job_id, width);
        break;
      case 'a':
        out += padded(ctx.array_task_id.value_or(kPatternNoArrayTask), width);
        break;
      case 'J':
        out += padded(ctx.job_id, width);
        if (ctx.step_id) out += "." + std::to_string(*ctx.step_id);
        break;
      case 'j':
        out += padded(ctx.job_id, width);
        break;
      case 'N':
        out += ctx.first_node.substr(0, ctx.first_node.find('.'));
        break;
      case 'n':
        out += padded(ctx.node_index, width);
        break;
      case 's':
        out += ctx.step_id ? padded(*ctx.step_id, width) : std::string("batch");
        break;
      case 't':
        out += padded(ctx.task_id, width);
        break;
      case 'u':
        out += ctx.user;
        break;
      case 'x':
        out += ctx.job_name;
        break;
      default:
        // Not a code (or the end): Slurm keeps the character just before it -- the '%' itself,
        // or the last digit of a width -- and carries on at the character ("%z" -> "%z",
        // "%4z" -> "4z", "%12" -> "2", "%3%x" -> "3" then "%x").
        out += pattern[j - 1];
        i = j;
        continue;
    }
    i = j + 1;
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
    switch (code) {
      case 'A':
        out += std::to_string(ctx.array_task_id ? ctx.array_job_id : ctx.job_id);
        break;
      case 'a':
        out += std::to_string(ctx.array_task_id.value_or(kPatternNoArrayTask));
        break;
      case 'J':
      case 'j':
        out += std::to_string(ctx.job_id);
        break;
      case 'u':
        out += ctx.user;
        break;
      case 'x':
        out += ctx.job_name;
        break;
      default:
        out += c;
        continue;
    }
    ++i;
  }
  return out;
}

}  // namespace drover::core
