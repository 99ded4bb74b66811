#include "core/cgroup_conf.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "core/error.hpp"
#include "core/hostlist.hpp"

namespace drover::core {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

enum class Kind { Bool, Float, Uint64, Text };

struct Key {
  const char* name;
  Kind kind;
};

// Slurm 22.05's cgroup.conf keys (others, such as TaskAffinity, are unknown to it).
constexpr Key kKeys[] = {
    {"CgroupAutomount", Kind::Bool},        {"CgroupMountpoint", Kind::Text},
    {"CgroupPlugin", Kind::Text},           {"IgnoreSystemd", Kind::Bool},
    {"IgnoreSystemdOnFailure", Kind::Bool}, {"AllowedKmemSpace", Kind::Float},
    {"AllowedRAMSpace", Kind::Float},       {"AllowedSwapSpace", Kind::Float},
    {"ConstrainCores", Kind::Bool},         {"ConstrainDevices", Kind::Bool},
    {"ConstrainKmemSpace", Kind::Bool},     {"ConstrainRAMSpace", Kind::Bool},
    {"ConstrainSwapSpace", Kind::Bool},     {"MaxRAMPercent", Kind::Float},
    {"MaxSwapPercent", Kind::Float},        {"MaxKmemPercent", Kind::Float},
    {"MemorySwappiness", Kind::Uint64},     {"MinKmemSpace", Kind::Uint64},
    {"MinRAMSpace", Kind::Uint64},
};

const Key* find_key(std::string_view name) {
  const std::string l = lower(name);
  for (const Key& k : kKeys)
    if (lower(k.name) == l) return &k;
  return nullptr;
}

// Slurm's booleans: yes/up/true/1 and no/down/false/0, any case.
std::optional<bool> parse_bool(std::string_view v) {
  const std::string l = lower(v);
  if (l == "yes" || l == "up" || l == "true" || l == "1") return true;
  if (l == "no" || l == "down" || l == "false" || l == "0") return false;
  return std::nullopt;
}

bool infinite(std::string_view v) {
  const std::string l = lower(v);
  return l == "unlimited" || l == "infinite";
}

std::optional<double> parse_float(const std::string& v) {
  if (infinite(v)) return INFINITY;
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return d;
}

}  // namespace

CgroupConf parse_cgroup_conf(std::string_view text, std::string_view path) {
  const std::string fatal = "Could not open/read/parse cgroup.conf file " + std::string(path);
  auto fail = [&](const std::string& why) { throw ParseError(why + "\n" + fatal); };
  CgroupConf c;
  std::map<std::string, std::string> values;  // canonical key -> last value
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    size_t i = 0;
    while (true) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i >= line.size()) break;
      const size_t start = i;
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      const std::string word = line.substr(start, i - start);
      const size_t eq = word.find('=');
      std::string key = word.substr(0, eq);
      const Key* k = find_key(key);
      if (!k) fail("_parse_next_key: Parsing error at unrecognized key: " + key);
      std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      if (eq == std::string::npos || value.empty()) {
        std::string shown = line;
        while (!shown.empty() && std::isspace(static_cast<unsigned char>(shown.back())))
          shown.pop_back();
        fail("Parse error in file " + std::string(path) + " line " + std::to_string(line_no) +
             ": \"" + shown.substr(shown.find_first_not_of(" \t")) + "\"");
      }
      if (values.count(k->name)) {
        // slurmd's own wording, with the earlier value as it stored it.
        std::string before = values[k->name];
        if (k->kind == Kind::Bool)
          if (auto b = parse_bool(before)) before = *b ? "1" : "0";
        c.warnings.push_back(std::string(k->name) + " " + before +
                             " specified more than once, latest value used");
      }
      switch (k->kind) {
        case Kind::Bool:
          if (!parse_bool(value))
            fail("\"" + value + "\" is not a valid option for \"" + k->name + "\"");
          break;
        case Kind::Float:
          if (!parse_float(value))
            fail(std::string(k->name) + " value (" + value + ") is not a valid number");
          break;
        case Kind::Uint64: {
          if (infinite(value)) break;
          char* end = nullptr;
          errno = 0;
          const long long n = std::strtoll(value.c_str(), &end, 10);
          if (*end != '\0' || errno == ERANGE)
            fail(std::string(k->name) + " value (" + value + ") is not a valid number");
          if (n < 0) fail(std::string(k->name) + " value (" + value + ") is less than zero");
          break;
        }
        case Kind::Text:
          break;
      }
      values[k->name] = value;
    }
    if (nl == text.size()) break;
  }

  auto flag = [&](const char* key, bool& out) {
    if (auto it = values.find(key); it != values.end()) out = *parse_bool(it->second);
  };
  auto pct = [&](const char* key, double& out) {
    if (auto it = values.find(key); it != values.end()) out = *parse_float(it->second);
  };
  auto count = [&](const char* key) -> std::optional<uint64_t> {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    if (infinite(it->second)) return UINT64_MAX;
    return std::strtoull(it->second.c_str(), nullptr, 10);
  };
  flag("CgroupAutomount", c.automount);
  flag("IgnoreSystemd", c.ignore_systemd);
  flag("IgnoreSystemdOnFailure", c.ignore_systemd_on_failure);
  flag("ConstrainCores", c.constrain_cores);
  flag("ConstrainRAMSpace", c.constrain_ram);
  flag("ConstrainSwapSpace", c.constrain_swap);
  flag("ConstrainDevices", c.constrain_devices);
  flag("ConstrainKmemSpace", c.constrain_kmem);
  pct("AllowedRAMSpace", c.allowed_ram_pct);
  pct("AllowedSwapSpace", c.allowed_swap_pct);
  pct("MaxRAMPercent", c.max_ram_pct);
  pct("MaxSwapPercent", c.max_swap_pct);
  pct("MaxKmemPercent", c.max_kmem_pct);
  if (auto it = values.find("AllowedKmemSpace"); it != values.end())
    c.allowed_kmem_bytes = *parse_float(it->second);
  if (auto n = count("MinRAMSpace")) c.min_ram_mb = *n;
  if (auto n = count("MinKmemSpace")) c.min_kmem_mb = *n;
  if (auto n = count("MemorySwappiness")) {
    if (*n > 100) {
      c.warnings.push_back("Value for MemorySwappiness is too high, rounding down to 100.");
      *n = 100;
    }
    c.swappiness = *n;
  }
  if (auto it = values.find("CgroupMountpoint"); it != values.end()) c.mountpoint = it->second;
  if (auto it = values.find("CgroupPlugin"); it != values.end()) c.plugin = it->second;
  return c;
}

MemoryLimits memory_limits(const CgroupConf& conf, int64_t job_mem_mb, int64_t node_mem_mb) {
  MemoryLimits l;
  if (!conf.constrain_ram && !conf.constrain_swap) return l;
  constexpr double kMiB = 1024.0 * 1024.0;
  // With only swap constrained, RAM+swap is 100% of the job's memory plus the allowed swap.
  const double allowed_ram = conf.constrain_ram ? conf.allowed_ram_pct : 100.0;
  const double total = static_cast<double>(std::max<int64_t>(node_mem_mb, 0)) * kMiB;
  const double max_ram = total * conf.max_ram_pct / 100.0;
  const double max_swap = total * conf.max_swap_pct / 100.0 + max_ram;
  const double min_ram =
      conf.min_ram_mb == UINT64_MAX ? INFINITY : static_cast<double>(conf.min_ram_mb) * kMiB;
  const double mem = static_cast<double>(job_mem_mb > 0 ? job_mem_mb : node_mem_mb) * kMiB;
  auto clamp_ram = [&](double bytes) {
    if (bytes < min_ram) return min_ram;
    if (bytes > max_ram) return max_ram;
    return bytes;
  };
  auto to_bytes = [](double b) {
    return std::isfinite(b) ? static_cast<int64_t>(b) : static_cast<int64_t>(INT64_MAX);
  };
  const double hard = clamp_ram(mem * allowed_ram / 100.0);
  double soft = clamp_ram(mem);
  if (soft > hard) soft = hard;
  double memsw = hard + mem * conf.allowed_swap_pct / 100.0;
  if (memsw < min_ram) memsw = min_ram;
  if (memsw > max_swap) memsw = max_swap;
  l.hard = to_bytes(hard);
  l.soft = to_bytes(soft);
  if (conf.constrain_swap) l.memsw = to_bytes(memsw);
  if (!conf.constrain_ram) l.hard = l.memsw;
  return l;
}

std::vector<std::string> gres_gpu_files(std::string_view gres_conf, std::string_view node) {
  std::vector<std::string> files;
  size_t pos = 0;
  while (pos < gres_conf.size()) {
    size_t nl = gres_conf.find('\n', pos);
    if (nl == std::string_view::npos) nl = gres_conf.size();
    std::string line(gres_conf.substr(pos, nl - pos));
    pos = nl + 1;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::string name, file, nodes;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      const size_t start = i;
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      const std::string word = line.substr(start, i - start);
      const size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = lower(word.substr(0, eq)), value = word.substr(eq + 1);
      if (key == "name")
        name = value;
      else if (key == "file" || key == "files")
        file = value;
      else if (key == "nodename")
        nodes = value;
    }
    if (name != "gpu" || file.empty()) continue;
    if (!nodes.empty()) {
      const auto names = expand_hostlist(nodes);
      if (std::find(names.begin(), names.end(), node) == names.end()) continue;
    }
    for (auto& f : expand_hostlist(file)) files.push_back(std::move(f));
  }
  return files;
}

}  // namespace drover::core
