#include "cli/squeue_filter.hpp"

#include <algorithm>

#include "cli/job_info.hpp"
#include "core/hostlist.hpp"
#include "core/job.hpp"
#include "core/text.hpp"

namespace drover::cli {

std::string SqueueFilter::compile() {
  want_states_.clear();
  all_states_ = false;
  for (const auto& s : states) {
    const std::string up = core::to_upper(s);
    if (up == "ALL")
      all_states_ = true;
    else if (auto st = core::parse_job_state(up))
      want_states_.insert(std::string(core::job_state_name(*st)));
    else if (up == "CG" || up == "COMPLETING")
      want_states_.insert("COMPLETING");
    else
      return "squeue: error: Invalid job state specified: " + s + "\n";
  }
  return "";
}

bool SqueueFilter::matches(const nlohmann::json& job) const {
  if (!jobs.empty() && std::none_of(jobs.begin(), jobs.end(), [&](const core::JobRef& ref) {
        return job_matches_ref(job, ref);
      }))
    return false;
  if (!users.empty() && !users.count(job.value("user", ""))) return false;
  if (!partitions.empty() && !partitions.count(job.value("partition", ""))) return false;
  const auto& spec = job.at("spec");
  if (!names.empty() && !names.count(spec.value("name", ""))) return false;
  if (!accounts.empty() && !accounts.count(spec.value("account", ""))) return false;
  if (!qos.empty() && !qos.count(spec.value("qos", ""))) return false;
  if (!nodes.empty()) {
    const auto held = core::expand_hostlist(job.value("nodelist", ""));
    if (std::none_of(held.begin(), held.end(), [&](const std::string& n) {
          return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
        }))
      return false;
  }
  if (!want_states_.empty())
    return want_states_.count(job.value("state", "")) ||
           (job.value("completing", false) && want_states_.count("COMPLETING"));
  return all_states_ || job_active(job);
}

}  // namespace drover::cli
