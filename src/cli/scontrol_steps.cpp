// Running job steps for scontrol show step[s] and squeue -s, in Slurm 22.05's layouts.
#include "cli/scontrol_steps.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>

#include "cli/format.hpp"
#include "cli/job_info.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/memsize.hpp"
#include "core/text.hpp"

namespace drover::cli {
namespace {

constexpr const char* kDefaultStepFormat = "%.15i %.8j %.9P %.8u %.9M %N";

// Whether a step is the one srun ran on an allocation it made for itself (step 0 of an
// interactive job whose command and name are the step's; salloc's jobs run something else).
bool own_allocation_step(const json& job, const json& step) {
  const auto& spec = job.at("spec");
  if (!spec.value("interactive", false) || step.value("id", 0u) != 0 ||
      step.value("name", "") != spec.value("name", ""))
    return false;
  std::string argv;
  for (const auto& a : spec.value("argv", std::vector<std::string>{})) argv += " " + a;
  const std::string command = step.value("command", std::string());
  return !argv.empty() && command.size() >= argv.size() &&
         command.compare(command.size() - argv.size(), argv.size(), argv) == 0;
}

// Slurm 22.05's default distribution for a step without -m, as scontrol shows it: Cyclic when
// the step has no more tasks than nodes, else Block; Block for the step srun runs on an
// allocation of its own. srun sends "block" when -m is not given, so a stored block is read by
// that rule (an explicit -m block with one task per node lays tasks out the same either way).
std::string dist_name(const json& job, const json& step) {
  if (step.value("distribution", "block") == "cyclic") return "Cyclic";
  if (!own_allocation_step(job, step) && step.value("ntasks", 0) <= step.value("nnodes", 0))
    return "Cyclic";
  return "Block";
}

std::string step_tres(const json& step) {
  std::string s = "cpu=" + std::to_string(step.value("cpus", 0));
  if (const int64_t mem = step.value("mem_mb", int64_t{0}); mem > 0)
    s += ",mem=" + core::format_mem_mb(mem);
  s += ",node=" + std::to_string(step.value("nnodes", 0));
  if (const int64_t gpus = step.value("gpus", int64_t{0}); gpus > 0)
    s += ",gres/gpu=" + std::to_string(gpus);
  return s;
}

StepView job_part(const json& job, const std::string& cluster) {
  StepView v;
  v.job_id = job.at("id").get<uint64_t>();
  v.array_job_id = job.value("array_job_id", uint64_t{0});
  v.array_task_id = job.value("array_task_id", core::kNoArrayTask);
  if (v.array_task_id == core::kNoArrayTask) v.array_job_id = 0;
  v.partition = job.value("partition", "");
  v.user = job.value("user", "");
  v.uid = job.value("uid", 0u);
  v.cluster = cluster;
  return v;
}

// strtol's reading: the number at the start (0 if none) and where it stopped.
uint64_t leading_number(const std::string& s, size_t& pos) {
  size_t i = pos;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  uint64_t n = 0;
  bool any = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    n = n * 10 + static_cast<uint64_t>(s[i++] - '0');
    any = true;
  }
  pos = any ? i : pos;
  return n;
}

struct StepIdSpec {
  uint64_t job_id = 0;
  std::optional<uint32_t> array_task;
  uint32_t step_id = kNoStepId;
};

StepIdSpec parse_step_id(const std::string& id) {
  StepIdSpec s;
  size_t pos = 0;
  s.job_id = leading_number(id, pos);
  if (pos < id.size() && id[pos] == '_') {
    ++pos;
    s.array_task = static_cast<uint32_t>(leading_number(id, pos));
  }
  if (pos < id.size() && id[pos] == '.') {
    ++pos;
    s.step_id = static_cast<uint32_t>(leading_number(id, pos));
  }
  return s;
}

bool same_job(const StepView& v, uint64_t job_id, const std::optional<uint32_t>& task) {
  if (task) return v.array_job_id == job_id && v.array_task_id == *task;
  return v.job_id == job_id || (v.array_job_id == job_id && v.array_job_id != 0);
}

// squeue -s columns: the -o letter, the -O name, the title, the value.
struct StepField {
  char code;
  const char* name;
  const char* header;
  std::function<std::string(const StepView&, int64_t now)> get;
};

std::string time_used(const StepView& s, int64_t now) {
  return core::format_elapsed(std::max<int64_t>(0, now - s.start_time));
}

const std::vector<StepField>& step_fields() {
  static const std::vector<StepField> fields = {
      {0, "arrayjobid", "ARRAY_JOB_ID",
       [](const StepView& s, int64_t) { return std::to_string(s.array_job_id); }},
      {0, "arraytaskid", "ARRAY_TASK_ID",
       [](const StepView& s, int64_t) {
         return s.array_job_id ? std::to_string(s.array_task_id) : std::string("N/A");
       }},
      {0, "cluster", "CLUSTER", [](const StepView& s, int64_t) { return s.cluster; }},
      {0, "container", "CONTAINER", [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "containerid", "CONTAINER",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "cpufreq", "CPU_FREQ",
       [](const StepView& s, int64_t) {
         return std::string(s.step_id == kBatchStepId ? "0-0:0" : "Unknown-Unknown:Unknown");
       }},
      {0, "cpus-per-tres", "CPUS_PER_TRES",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "gres", "TRES_PER_JOB", [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "jobid", "JOB_ID", [](const StepView& s, int64_t) { return std::to_string(s.job_id); }},
      {0, "mem-per-tres", "MEM_PER_TRES",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "network", "NETWORK", [](const StepView&, int64_t) { return std::string("(null)"); }},
      {'N', "nodes", "NODELIST", [](const StepView& s, int64_t) { return s.nodelist; }},
      {0, "numcpus", "NUM_CPUS", [](const StepView& s, int64_t) { return std::to_string(s.cpus); }},
      {'A', "numtasks", "TASKS",
       [](const StepView& s, int64_t) { return std::to_string(s.ntasks); }},
      {'P', "partition", "PARTITION", [](const StepView& s, int64_t) { return s.partition; }},
      {0, "resvports", "RESERVED_PORTS",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {'S', "starttime", "START_TIME",
       [](const StepView& s, int64_t) { return core::format_timestamp(s.start_time); }},
      {'i', "stepid", "STEPID", [](const StepView& s, int64_t) { return s.id_text(); }},
      {'j', "stepname", "NAME", [](const StepView& s, int64_t) { return s.name; }},
      {0, "stepstate", "STATE", [](const StepView&, int64_t) { return std::string("RUNNING"); }},
      {'l', "timelimit", "TIME_LIMIT",
       [](const StepView& s, int64_t) {
         return s.time_limit_min < 0 ? std::string("UNLIMITED")
                                     : core::format_elapsed(s.time_limit_min * 60);
       }},
      {'M', "timeused", "TIME", time_used},
      {0, "tres-bind", "TRES_BIND", [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "tres-freq", "TRES_FREQ", [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "tres-per-job", "TRES_PER_STEP",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      // %b: the step's --gres (vestigial in 22.05), titled TRES_PER_JOB.
      {'b', "tres-per-node", "TRES_PER_JOB",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "tres-per-socket", "TRES_PER_SOCKET",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "tres-per-step", "TRES_PER_STEP",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {0, "tres-per-task", "TRES_PER_TASK",
       [](const StepView&, int64_t) { return std::string("(null)"); }},
      {'U', "userid", "UID", [](const StepView& s, int64_t) { return std::to_string(s.uid); }},
      {'u', "username", "USER", [](const StepView& s, int64_t) { return s.user; }},
  };
  return fields;
}

const StepField* field_by_code(char c) {
  for (const auto& f : step_fields())
    if (f.code == c) return &f;
  return nullptr;
}

const StepField* field_by_name(const std::string& name) {
  for (const auto& f : step_fields())
    if (core::iequals(name, f.name)) return &f;
  return nullptr;
}

struct Column {
  std::string literal;
  const StepField* field = nullptr;
  int width = 0;
  bool right = false;
};

bool step_before(const StepView& a, const StepView& b) {
  if (a.job_id != b.job_id) return a.job_id < b.job_id;
  return a.step_id < b.step_id;
}

}  // namespace

std::string StepView::id_text() const {
  std::string s = array_job_id ? std::to_string(array_job_id) + "_" + std::to_string(array_task_id)
                               : std::to_string(job_id);
  return s + "." + (step_id == kBatchStepId ? std::string("batch") : std::to_string(step_id));
}

std::vector<StepView> running_steps(const json& reply) {
  const std::string cluster = reply.value("cluster_name", std::string());
  std::vector<const json*> jobs;
  if (auto it = reply.find("jobs"); it != reply.end() && it->is_array())
    for (const auto& j : *it) jobs.push_back(&j);
  std::stable_sort(jobs.begin(), jobs.end(), [](const json* a, const json* b) {
    return a->at("id").get<uint64_t>() < b->at("id").get<uint64_t>();
  });
  std::vector<StepView> out;
  for (const json* jp : jobs) {
    const json& job = *jp;
    if (job.value("state", "") != "RUNNING" || job.value("completing", false)) continue;
    const json& spec = job.at("spec");
    if (!spec.value("interactive", false) && !job.value("batch_host", "").empty()) {
      StepView b = job_part(job, cluster);
      b.step_id = kBatchStepId;
      b.name = "batch";
      b.start_time = job.value("start_time", int64_t{0});
      b.nodelist = job.value("batch_host", "");
      b.nnodes = 1;
      b.cpus = 0;  // as Slurm 22.05 reports its batch step
      b.ntasks = 1;
      b.tres = "(null)";
      b.srun_host = "(null)";
      out.push_back(std::move(b));
    }
    std::vector<StepView> numbered;
    for (const auto& s : job.value("steps", json::array())) {
      if (s.value("state", "RUNNING") != "RUNNING") continue;
      StepView v = job_part(job, cluster);
      v.step_id = s.value("id", 0u);
      v.name = s.value("name", "");
      v.start_time = s.value("start_time", int64_t{0});
      v.time_limit_min = s.value("time_limit_min", int64_t{-1});
      v.nodelist = s.value("nodelist", "");
      v.nnodes = s.value("nnodes", 0);
      v.cpus = s.value("cpus", 0);
      v.ntasks = s.value("ntasks", 0);
      v.tres = step_tres(s);
      v.dist = dist_name(job, s);
      v.srun_host = s.value("srun_host", "");
      if (v.srun_host.empty()) v.srun_host = "(null)";
      v.srun_pid = s.value("srun_pid", int64_t{0});
      numbered.push_back(std::move(v));
    }
    std::stable_sort(numbered.begin(), numbered.end(), step_before);
    for (auto& v : numbered) out.push_back(std::move(v));
  }
  return out;
}

std::string format_step(const StepView& s, bool one_liner) {
  const std::vector<std::string> lines = {
      "StepId=" + s.id_text() + " UserId=" + std::to_string(s.uid) +
          " StartTime=" + core::format_timestamp(s.start_time) + " TimeLimit=" +
          (s.time_limit_min < 0 ? std::string("UNLIMITED")
                                : core::format_hms(s.time_limit_min * 60)),
      "State=RUNNING Partition=" + s.partition + " NodeList=" + s.nodelist,
      "Nodes=" + std::to_string(s.nnodes) + " CPUs=" + std::to_string(s.cpus) +
          " Tasks=" + std::to_string(s.ntasks) + " Name=" + s.name + " Network=(null)",
      "TRES=" + s.tres,
      "ResvPorts=(null)",
      "CPUFreqReq=Default" + (s.dist.empty() ? std::string() : " Dist=" + s.dist),
      "SrunHost:Pid=" + s.srun_host + ":" + std::to_string(s.srun_pid),
  };
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (one_liner)
      out += (i ? " " : "") + lines[i];
    else
      out += (i ? "   " : "") + lines[i] + "\n";
  }
  return out + "\n";
}

uint64_t step_query_job_id(const std::string& id) { return parse_step_id(id).job_id; }

CommandResult scontrol_show_steps(const std::string& id, const json& reply, bool one_liner) {
  CommandResult r;
  if (!reply.value("ok", false)) {
    r.err =
        "slurm_get_job_steps error: " + reply.value("error", std::string("Unknown error")) + "\n";
    r.rc = 1;
    return r;
  }
  const StepIdSpec want = parse_step_id(id);
  for (const StepView& s : running_steps(reply)) {
    if (want.job_id != 0 && !same_job(s, want.job_id, want.array_task)) continue;
    if (want.step_id != kNoStepId && s.step_id != want.step_id) continue;
    r.out += format_step(s, one_liner);
  }
  if (!r.out.empty()) return r;
  if (id.empty()) {
    r.out = "No job steps in the system\n";
    return r;
  }
  const std::string step = want.step_id == kNoStepId ? "" : std::to_string(want.step_id);
  r.out = "Job step " + std::to_string(want.job_id) +
          (want.array_task ? "_" + std::to_string(*want.array_task) : "") + "." + step +
          " not found\n";
  r.rc = 1;
  return r;
}

bool parse_step_list(const std::string& text, std::vector<StepRef>& out, std::string& error) {
  for (const std::string& item : core::split_list(text, ',')) {
    if (item.empty()) continue;
    const size_t dot = item.find('.');
    const std::string job = item.substr(0, dot);
    // strtok: the step is what follows the first '.', up to the next one.
    std::string step;
    if (dot != std::string::npos) {
      size_t from = item.find_first_not_of('.', dot);
      if (from != std::string::npos) step = item.substr(from, item.find('.', from) - from);
    }
    if (job.empty()) break;
    StepRef ref;
    size_t pos = 0;
    const long long job_id = static_cast<long long>(leading_number(job, pos));
    if (pos < job.size() && job[pos] == '_') {
      ++pos;
      ref.array_task = static_cast<uint32_t>(leading_number(job, pos));
    }
    if (step.empty()) {
      error = "squeue: error: Invalid job_step id: " + job + ".??\n";
      return false;
    }
    size_t spos = 0;
    const uint64_t step_id = leading_number(step, spos);
    if (job_id <= 0) {
      error = "squeue: error: Invalid job_step id: " + job + "." + step + "\n";
      return false;
    }
    ref.job_id = static_cast<uint64_t>(job_id);
    ref.step_id = static_cast<uint32_t>(step_id);
    out.push_back(ref);
  }
  return true;
}

CommandResult squeue_steps(const json& reply, const StepListOptions& o) {
  CommandResult r;
  const int64_t now = reply.value("now", int64_t{0});
  // The columns: -O names, else -o codes (an unknown code is printed as written).
  std::vector<Column> columns;
  if (!o.named_format.empty()) {
    for (const auto& item : core::split_list(o.named_format, ',')) {
      std::string name = item, size;
      if (auto colon = item.find(':'); colon != std::string::npos) {
        name = item.substr(0, colon);
        size = item.substr(colon + 1);
      }
      const StepField* f = field_by_name(name);
      if (!f) {
        r.err += "squeue: error: Invalid job step format specification: " + name + "\n";
        continue;
      }
      Column c;
      c.field = f;
      c.width = 20;
      if (!size.empty() && size[0] == '.') {
        c.right = true;
        size.erase(0, 1);
      }
      if (!size.empty() && std::isdigit(static_cast<unsigned char>(size[0])))
        c.width = parse_width(size);
      columns.push_back(c);
    }
  } else {
    std::vector<char> unknown;
    for (auto& f : parse_format(
             o.format.empty() ? kDefaultStepFormat : o.format,
             [](char c) { return field_by_code(c) != nullptr; }, unknown))
      columns.push_back(
          {std::move(f.literal), f.code ? field_by_code(f.code) : nullptr, f.width, f.right});
    for (char c : unknown)
      r.err += "squeue: error: Invalid job step format specification: " + std::string(1, c) + "\n";
  }

  std::vector<StepView> rows;
  for (StepView& s : running_steps(reply)) {
    if (!o.jobs.empty() && std::none_of(o.jobs.begin(), o.jobs.end(), [&](const core::JobRef& j) {
          if (j.tasks) return s.array_job_id == j.job_id && j.tasks->contains(s.array_task_id);
          return s.job_id == j.job_id || (s.array_job_id != 0 && s.array_job_id == j.job_id);
        }))
      continue;
    if (!o.steps.empty() && std::none_of(o.steps.begin(), o.steps.end(), [&](const StepRef& w) {
          return same_job(s, w.job_id, w.array_task) && s.step_id == w.step_id;
        }))
      continue;
    if (!o.users.empty() && !o.users.count(s.user) && !o.users.count(std::to_string(s.uid)))
      continue;
    if (!o.partitions.empty() && !o.partitions.count(s.partition)) continue;
    if (!o.nodes.empty()) {
      const auto on = core::expand_hostlist(s.nodelist);
      if (std::none_of(on.begin(), on.end(), [&](const std::string& n) {
            return std::find(o.nodes.begin(), o.nodes.end(), n) != o.nodes.end();
          }))
        continue;
    }
    rows.push_back(std::move(s));
  }

  // Slurm's order: partition, then job and step id (the batch step after numbered ones), or -S.
  std::string sort = o.sort.empty() ? "P,i" : o.sort;
  struct Key {
    char code;
    bool desc;
  };
  std::vector<Key> keys;
  for (const auto& k : core::split_list(sort, ',')) {
    if (k.empty()) continue;
    const bool desc = k[0] == '-';
    const std::string code = k.substr(desc || k[0] == '+' ? 1 : 0);
    if (!code.empty()) keys.push_back({code[0], desc});
  }
  auto compare = [&](const StepView& a, const StepView& b, char code) -> int {
    auto cmp = [](auto x, auto y) { return x < y ? -1 : y < x ? 1 : 0; };
    switch (code) {
      case 'i':
        return step_before(a, b) ? -1 : step_before(b, a) ? 1 : 0;
      case 'A':
        return cmp(a.ntasks, b.ntasks);
      case 'j':
        return cmp(a.name, b.name);
      case 'l':
        return cmp(a.time_limit_min, b.time_limit_min);
      case 'M':
      case 'S':
        return code == 'M' ? cmp(b.start_time, a.start_time) : cmp(a.start_time, b.start_time);
      case 'N':
        return cmp(a.nodelist, b.nodelist);
      case 'P':
        return cmp(a.partition, b.partition);
      case 'u':
        return cmp(a.user, b.user);
      case 'U':
        return cmp(a.uid, b.uid);
      default:
        return 0;
    }
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const StepView& a, const StepView& b) {
    for (const auto& k : keys)
      if (int c = compare(a, b, k.code); c != 0) return k.desc ? c > 0 : c < 0;
    return false;
  });

  auto line = [&](const std::function<std::string(const StepField&)>& cell) {
    for (const auto& c : columns) {
      r.out += c.literal;
      if (c.field) r.out += fit(cell(*c.field), c.width, c.right);
    }
    r.out += '\n';
  };
  if (o.header) line([](const StepField& f) { return std::string(f.header); });
  for (const auto& s : rows) line([&](const StepField& f) { return f.get(s, now); });
  return r;
}

}  // namespace drover::cli
