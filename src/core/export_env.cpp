#include "core/export_env.hpp"

#include <string_view>
#include <vector>

#include "core/text.hpp"

namespace drover::core {
namespace {

bool is_default(const std::optional<std::string>& spec) { return !spec || iequals(*spec, "ALL"); }

// Splits at commas outside single or double quotes; the quotes stay in the items.
std::vector<std::string> split_items(std::string_view spec) {
  std::vector<std::string> items;
  std::string cur;
  char quote = 0;
  for (char c : spec) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ',') {
      items.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  items.push_back(std::move(cur));
  return items;
}

}  // namespace

bool export_wants_user_env(const std::optional<std::string>& export_spec) {
  return !is_default(export_spec);
}

std::map<std::string, std::string> exported_environment(
    const std::optional<std::string>& export_spec,
    const std::map<std::string, std::string>& submit_env) {
  if (is_default(export_spec)) return submit_env;
  const std::string& spec = *export_spec;

  std::map<std::string, std::string> out;
  for (const std::string& item : split_items(spec)) {
    if (iequals(item, "ALL")) {
      for (const auto& [k, v] : submit_env) out[k] = v;
    } else if (item.empty() || iequals(item, "NONE") || iequals(item, "NIL")) {
      continue;
    } else if (auto eq = item.find('='); eq != std::string::npos) {
      if (eq > 0) out[item.substr(0, eq)] = item.substr(eq + 1);
    } else if (auto it = submit_env.find(item); it != submit_env.end()) {
      out[item] = it->second;
    }
  }

  // Slurm's own variables always come from the submit environment, over the list's values.
  const std::string_view prefix = iequals(spec, "NONE") ? "SLURM" : "SLURM_";
  for (const auto& [k, v] : submit_env)
    if (k.starts_with(prefix)) out[k] = v;

  out.emplace("SLURM_EXPORT_ENV", spec);  // a submitted one (nested sbatch) is kept
  out["SLURM_GET_USER_ENV"] = "1";
  return out;
}

void add_login_environment(std::map<std::string, std::string>& env,
                           const std::map<std::string, std::string>& login_env) {
  for (const auto& [k, v] : login_env) env.emplace(k, v);
}

}  // namespace drover::core
