#include "core/rlimits.hpp"

#include <sys/resource.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/text.hpp"

namespace drover::core {

const std::vector<RlimitName>& rlimit_names() {
  static const std::vector<RlimitName> names = {
      {"AS", RLIMIT_AS},         {"CORE", RLIMIT_CORE},   {"CPU", RLIMIT_CPU},
      {"DATA", RLIMIT_DATA},     {"FSIZE", RLIMIT_FSIZE}, {"MEMLOCK", RLIMIT_MEMLOCK},
      {"NOFILE", RLIMIT_NOFILE}, {"NPROC", RLIMIT_NPROC}, {"RSS", RLIMIT_RSS},
      {"STACK", RLIMIT_STACK}};
  return names;
}

std::vector<int> parse_rlimit_list(const std::string& list) {
  std::vector<int> out;
  if (list == "ALL") {
    for (const auto& n : rlimit_names()) out.push_back(n.resource);
    return out;
  }
  if (list == "NONE") return out;
  std::vector<bool> wanted(rlimit_names().size(), false);
  for (const auto& word : split_list(list, ',')) {
    const auto& names = rlimit_names();
    auto it = std::find_if(names.begin(), names.end(),
                           [&](const RlimitName& n) { return word == n.name; });
    if (it == names.end()) throw ParseError("Bad rlimit name: " + word);
    wanted[static_cast<size_t>(it - names.begin())] = true;
  }
  for (size_t i = 0; i < wanted.size(); ++i)
    if (wanted[i]) out.push_back(rlimit_names()[i].resource);
  return out;
}

std::vector<int> conf_rlimits(const std::string& propagate, const std::string& except) {
  std::vector<int> out = parse_rlimit_list(propagate.empty() ? "ALL" : propagate);
  if (!except.empty() && except != "(null)") {
    const std::vector<int> drop = parse_rlimit_list(except);
    std::erase_if(out, [&](int r) { return std::find(drop.begin(), drop.end(), r) != drop.end(); });
  }
  return out;
}

std::string rlimit_env_name(int resource) {
  for (const auto& n : rlimit_names())
    if (n.resource == resource) return std::string("SLURM_RLIMIT_") + n.name;
  return "";
}

}  // namespace drover::core
