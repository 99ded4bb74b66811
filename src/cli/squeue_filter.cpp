#include "cli/squeue_filter.hpp"

#include <algorithm>

#include "cli/job_info.hpp"
#include "cli/squeue_rows.hpp"
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

namespace {
// A json record and a typed row read the same way.
struct JsonJob {
  const nlohmann::json& j;
  bool matches_ref(const core::JobRef& ref) const { return job_matches_ref(j, ref); }
  std::string user() const { return j.value("user", ""); }
  std::string partition() const { return j.value("partition", ""); }
  std::string name() const { return j.at("spec").value("name", ""); }
  std::string account() const { return j.at("spec").value("account", ""); }
  std::string qos() const { return j.at("spec").value("qos", ""); }
  std::string nodelist() const { return j.value("nodelist", ""); }
  std::string state() const { return j.value("state", ""); }
  bool completing() const { return j.value("completing", false); }
  bool active() const { return job_active(j); }
};
struct RowJob {
  const JobRow& r;
  bool matches_ref(const core::JobRef& ref) const { return job_matches_ref(r.array(), ref); }
  const std::string& user() const { return r.user; }
  const std::string& partition() const { return r.partition; }
  const std::string& name() const { return r.name; }
  const std::string& account() const { return r.account; }
  const std::string& qos() const { return r.qos; }
  const std::string& nodelist() const { return r.nodelist; }
  const std::string& state() const { return r.state; }
  bool completing() const { return r.completing; }
  bool active() const { return job_active(r); }
};
}  // namespace

template <class Job>
static bool filter_matches(const SqueueFilter& f, const std::set<std::string>& want_states,
                           bool all_states, const Job& job) {
  if (!f.jobs.empty() && std::none_of(f.jobs.begin(), f.jobs.end(), [&](const core::JobRef& ref) {
        return job.matches_ref(ref);
      }))
    return false;
  if (!f.users.empty() && !f.users.count(job.user())) return false;
  if (!f.partitions.empty() && !f.partitions.count(job.partition())) return false;
  if (!f.names.empty() && !f.names.count(job.name())) return false;
  if (!f.accounts.empty() && !f.accounts.count(job.account())) return false;
  if (!f.qos.empty() && !f.qos.count(job.qos())) return false;
  if (!f.nodes.empty()) {
    const auto held = core::expand_hostlist(job.nodelist());
    if (std::none_of(held.begin(), held.end(), [&](const std::string& n) {
          return std::find(f.nodes.begin(), f.nodes.end(), n) != f.nodes.end();
        }))
      return false;
  }
  if (!want_states.empty())
    return want_states.count(job.state()) || (job.completing() && want_states.count("COMPLETING"));
  return all_states || job.active();
}

bool SqueueFilter::matches(const nlohmann::json& job) const {
  return filter_matches(*this, want_states_, all_states_, JsonJob{job});
}

bool SqueueFilter::matches_row(const JobRow& job) const {
  return filter_matches(*this, want_states_, all_states_, RowJob{job});
}

}  // namespace drover::cli
