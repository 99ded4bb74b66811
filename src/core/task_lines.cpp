#include "core/task_lines.hpp"

#include <algorithm>

namespace drover::core {

TaskLines::TaskLines(uint32_t ntasks, bool label, bool unbuffered)
    : label_(label), unbuffered_(unbuffered) {
  for (uint32_t n = ntasks > 0 ? ntasks - 1 : 0; n >= 10; n /= 10) ++width_;
}

std::string TaskLines::prefix(uint32_t task) const {
  if (!label_) return "";
  const std::string id = std::to_string(task);
  return std::string(static_cast<size_t>(std::max(0, width_ - static_cast<int>(id.size()))), ' ') +
         id + ": ";
}

std::string TaskLines::add(uint32_t task, int fd, std::string_view data) {
  if (unbuffered_ && !label_) return std::string(data);
  std::string& partial = partial_[{task, fd}];
  partial.append(data);
  std::string out;
  size_t start = 0, nl;
  while ((nl = partial.find('\n', start)) != std::string::npos) {
    out += prefix(task);
    out.append(partial, start, nl + 1 - start);
    start = nl + 1;
  }
  partial.erase(0, start);
  if (unbuffered_ && !partial.empty()) {
    out += prefix(task) + partial;
    partial.clear();
  }
  return out;
}

std::string TaskLines::flush(uint32_t task, int fd) {
  auto it = partial_.find({task, fd});
  if (it == partial_.end() || it->second.empty()) return "";
  std::string out = prefix(task) + it->second + (label_ ? "\n" : "");
  partial_.erase(it);
  return out;
}

}  // namespace drover::core
