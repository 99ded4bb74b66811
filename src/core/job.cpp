#include "core/job.hpp"

#include <array>

#include "core/text.hpp"

namespace drover::core {
namespace {
struct StateName {
  JobState state;
  std::string_view name, short_name;
};
constexpr std::array<StateName, 12> kStates{{
    {JobState::Pending, "PENDING", "PD"},
    {JobState::Running, "RUNNING", "R"},
    {JobState::Suspended, "SUSPENDED", "S"},
    {JobState::Completed, "COMPLETED", "CD"},
    {JobState::Cancelled, "CANCELLED", "CA"},
    {JobState::Failed, "FAILED", "F"},
    {JobState::Timeout, "TIMEOUT", "TO"},
    {JobState::NodeFail, "NODE_FAIL", "NF"},
    {JobState::Preempted, "PREEMPTED", "PR"},
    {JobState::BootFail, "BOOT_FAIL", "BF"},
    {JobState::Deadline, "DEADLINE", "DL"},
    {JobState::OutOfMemory, "OUT_OF_MEMORY", "OOM"},
}};

}  // namespace

std::string_view job_state_name(JobState s) { return kStates[static_cast<size_t>(s)].name; }
std::string_view job_state_short(JobState s) { return kStates[static_cast<size_t>(s)].short_name; }

std::optional<JobState> parse_job_state(std::string_view name) {
  for (const auto& e : kStates)
    if (iequals(name, e.name) || iequals(name, e.short_name)) return e.state;
  return std::nullopt;
}

bool is_finished(JobState s) {
  return s != JobState::Pending && s != JobState::Running && s != JobState::Suspended;
}

int Job::alloc_cpus() const {
  int n = 0;
  for (const auto& a : alloc) n += a.cpus;
  return n;
}

int64_t Job::alloc_mem_mb() const {
  int64_t n = 0;
  for (const auto& a : alloc) n += a.mem_mb;
  return n;
}

namespace {
std::vector<std::string> names_of(const std::vector<NodeAlloc>& alloc) {
  std::vector<std::string> names;
  names.reserve(alloc.size());
  for (const auto& a : alloc) names.push_back(a.node);
  return names;
}
}  // namespace

std::vector<std::string> Job::node_names() const { return names_of(alloc); }
std::vector<std::string> Step::node_names() const { return names_of(alloc); }

}  // namespace drover::core
