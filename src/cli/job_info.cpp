#include "cli/job_info.hpp"

#include "core/array_spec.hpp"
#include "core/job.hpp"

namespace drover::cli {

std::string job_state_short(std::string_view state, bool completing) {
  if (completing) return "CG";
  // The states of nearly every row, without parse_job_state's case-blind search.
  if (state == "PENDING") return "PD";
  if (state == "RUNNING") return "R";
  auto s = core::parse_job_state(state);
  return std::string(core::job_state_short(s.value_or(core::JobState::Pending)));
}

bool job_active(std::string_view state, bool completing) {
  if (completing || state == "PENDING" || state == "RUNNING") return true;
  auto s = core::parse_job_state(state);
  return s && !core::is_finished(*s);
}

std::string job_state_short(const json& job) {
  return job_state_short(job.value("state", "PENDING"), job.value("completing", false));
}

std::string job_state_long(const json& job) {
  if (job.value("completing", false)) return "COMPLETING";
  return job.value("state", "PENDING");
}

bool job_active(const json& job) {
  return job_active(job.value("state", "PENDING"), job.value("completing", false));
}

int job_node_count(const json& job) {
  const auto& alloc = job.at("alloc");
  if (!alloc.empty()) return static_cast<int>(alloc.size());
  return job.at("spec").value("nodes_min", 1);
}

int job_cpu_count(const json& job) {
  const auto& alloc = job.at("alloc");
  int n = 0;
  for (const auto& a : alloc) n += a.value("cpus", 0);
  if (n > 0) return n;
  const auto& spec = job.at("spec");
  return std::max(spec.value("ntasks", 1), spec.value("nodes_min", 1)) *
         spec.value("cpus_per_task", 1);
}

namespace {
bool is_array(const ArrayFields& job) { return job.array_job_id != 0; }
bool is_remainder(const ArrayFields& job) { return !job.array_pending.empty(); }

// The json record's array fields; `pending` holds the text the view points into.
ArrayFields array_fields(const json& job, std::string& pending, uint32_t no_task) {
  pending = job.value("array_pending", std::string());
  return {job.at("id").get<uint64_t>(), job.value("array_job_id", uint64_t{0}),
          job.value("array_task_id", no_task), job.value("array_max_running", 0u), pending};
}
}  // namespace

std::string array_task_field(const ArrayFields& job) {
  if (is_remainder(job)) {
    core::ArraySpec spec;
    spec.tasks = core::IndexSet::parse(job.array_pending);
    spec.max_running = job.array_max_running;
    return core::format_array_spec_display(spec);
  }
  return std::to_string(job.array_task_id);
}

std::string array_task_text(const ArrayFields& job) {
  if (!is_array(job)) return "N/A";
  const std::string tasks = array_task_field(job);
  // One pending task is shown like a task of its own ("36_4"), as Slurm does.
  const bool single = tasks.find_first_of(",-%") == std::string::npos;
  if (is_remainder(job) && !single) return "[" + tasks + "]";
  return tasks;
}

std::string job_display_id(const ArrayFields& job) {
  if (!is_array(job)) return std::to_string(job.id);
  // squeue cuts a long "36_[...]" to 31 characters (checked against Slurm 22.05).
  std::string id = std::to_string(job.array_job_id) + "_" + array_task_text(job);
  return id.substr(0, 31);
}

bool job_matches_ref(const ArrayFields& job, const core::JobRef& ref) {
  if (job.id != ref.job_id && job.array_job_id != ref.job_id) return false;
  if (!ref.tasks) return true;
  if (!is_remainder(job)) return ref.tasks->contains(job.array_task_id);
  // Do the two task sets meet? Walk the smaller one.
  const core::IndexSet pending = core::IndexSet::parse(job.array_pending);
  const bool walk_ref = ref.tasks->size() <= pending.size();
  const core::IndexSet& walked = walk_ref ? *ref.tasks : pending;
  const core::IndexSet& other = walk_ref ? pending : *ref.tasks;
  for (uint32_t t : walked.to_vector(1u << 20))
    if (other.contains(t)) return true;
  return false;
}

std::string array_task_field(const json& job) {
  std::string pending;
  return array_task_field(array_fields(job, pending, 0));
}

std::string array_task_text(const json& job) {
  std::string pending;
  return array_task_text(array_fields(job, pending, 0));
}

std::string job_display_id(const json& job) {
  std::string pending;
  return job_display_id(array_fields(job, pending, 0));
}

bool job_matches_ref(const json& job, const core::JobRef& ref) {
  std::string pending;
  return job_matches_ref(array_fields(job, pending, core::kNoArrayTask), ref);
}

int64_t job_mem_mb(const json& job) {
  int64_t n = 0;
  for (const auto& a : job.at("alloc")) n += a.value("mem_mb", int64_t{0});
  if (n > 0) return n;
  const auto& spec = job.at("spec");
  int64_t per_node = spec.value("mem_per_node_mb", int64_t{-1});
  if (per_node > 0) return per_node * spec.value("nodes_min", 1);
  int64_t per_cpu = spec.value("mem_per_cpu_mb", int64_t{-1});
  if (per_cpu > 0) return per_cpu * job_cpu_count(job);
  return job.value("default_mem_mb", int64_t{0});
}

}  // namespace drover::cli
