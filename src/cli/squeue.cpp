// squeue: the job queue.
#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli/args.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/job_info.hpp"
#include "core/array_spec.hpp"
#include "core/duration.hpp"
#include "core/job.hpp"
#include "core/text.hpp"

namespace drover::cli {
namespace {

constexpr const char* kDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
// --start: pending jobs with their expected start and the nodes planned for them.
constexpr const char* kStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
constexpr const char* kLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";

std::set<std::string> split_set(const std::string& s) {
  std::set<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.insert(item);
  return out;
}

std::string header_for(char code) {
  switch (code) {
    case 'i':
    case 'A':
    case 'F':
      return "JOBID";
    case 'K':
      return "ARRAY_TASK_ID";
    case 'E':
      return "DEPENDENCY";
    case 'y':
      return "NICE";
    case 'P':
      return "PARTITION";
    case 'j':
      return "NAME";
    case 'u':
      return "USER";
    case 't':
      return "ST";
    case 'T':
      return "STATE";
    case 'M':
      return "TIME";
    case 'l':
      return "TIME_LIMIT";
    case 'D':
      return "NODES";
    case 'R':
      return "NODELIST(REASON)";
    case 'N':
      return "NODELIST";
    case 'r':
      return "REASON";
    case 'C':
      return "CPUS";
    case 'Q':
      return "PRIORITY";
    case 'V':
      return "SUBMIT_TIME";
    case 'S':
      return "START_TIME";
    case 'e':
      return "END_TIME";
    case 'Z':
      return "WORK_DIR";
    case 'a':
      return "ACCOUNT";
    case 'q':
      return "QOS";
    case 'U':
      return "UID";
    case 'g':
      return "GROUP";
    case 'o':
      return "COMMAND";
    case 'k':
      return "COMMENT";
    case 'Y':
      return "SCHEDNODES";
    case 'B':
      return "EXEC_HOST";
    default:
      return std::string(1, code);
  }
}

std::string time_or(int64_t t, const char* none) {
  return t == core::kNoTime ? none : core::format_timestamp(t);
}

std::string field(char code, const json& job) {
  const auto& spec = job.at("spec");
  switch (code) {
    case 'i':
      return job_display_id(job);
    case 'A':  // the record's own job id (a task's, not its array's)
      return std::to_string(job.at("id").get<uint64_t>());
    case 'F':
      return std::to_string(job.value("array_job_id", uint64_t{0}) != 0
                                ? job.value("array_job_id", uint64_t{0})
                                : job.at("id").get<uint64_t>());
    case 'K':
      return job.value("array_job_id", uint64_t{0}) != 0 ? array_task_field(job) : "N/A";
    case 'E': {
      std::string d = job.value("dependency_text", std::string());
      return d.empty() ? "(null)" : d;
    }
    case 'y':
      return std::to_string(job.value("nice", 0));
    case 'P':
      return job.value("partition", "");
    case 'j':
      return spec.value("name", "");
    case 'u':
      return job.value("user", "");
    case 'U':
      return std::to_string(job.value("uid", 0u));
    case 'g':
      return job.value("group", "");
    case 't':
      return job_state_short(job);
    case 'T':
      return job_state_long(job);
    case 'M':
      return core::format_elapsed(job.value("run_time", int64_t{0}));
    case 'l': {
      int64_t m = job.value("time_limit_min", int64_t{-1});
      return m < 0 ? "UNLIMITED" : core::format_elapsed(m * 60);
    }
    case 'D':
      return std::to_string(job_node_count(job));
    case 'C':
      return std::to_string(job_cpu_count(job));
    case 'N':
      return job.value("nodelist", "");
    case 'r':
      return job.value("reason", "None");
    case 'R': {
      if (job.value("state", "") == "PENDING") return "(" + job.value("reason", "None") + ")";
      if (!job.at("alloc").empty()) return job.value("nodelist", "");
      std::string reason = job.value("reason", "None");
      return reason == "None" ? "" : "(" + reason + ")";
    }
    case 'Q':
      return std::to_string(job.value("priority", 0u));
    case 'V':
      return time_or(job.value("submit_time", int64_t{0}), "N/A");
    case 'S':
      return time_or(job.value("start_time", int64_t{0}), "N/A");
    case 'e':
      return time_or(job.value("end_time", int64_t{0}), "N/A");
    case 'Z':
      return spec.value("workdir", "");
    case 'a':
      return spec.value("account", "").empty() ? "(null)" : spec.value("account", "");
    case 'q':
      return spec.value("qos", "").empty() ? "(null)" : spec.value("qos", "");
    case 'o':
      return spec.value("command", "").empty() ? "(null)" : spec.value("command", "");
    case 'k':
      return spec.value("comment", "").empty() ? "(null)" : spec.value("comment", "");
    case 'Y': {
      const std::string planned = job.value("sched_nodes", "");
      return planned.empty() ? "(null)" : planned;
    }
    case 'B':
      return job.value("batch_host", "").empty() ? "n/a" : job.value("batch_host", "");
    default:
      return "";
  }
}

}  // namespace

int squeue_main(const std::vector<std::string>& args) {
  std::string format = kDefaultFormat;
  bool header = true, long_format = false, start_format = false;
  std::set<std::string> users, partitions, states, names;
  std::vector<core::JobRef> job_refs;
  bool expand_arrays = false;
  std::string sort_spec;
  if (const char* e = std::getenv("SQUEUE_SORT"); e && *e) sort_spec = e;
  if (const char* f = std::getenv("SQUEUE_FORMAT"); f && *f) format = f;
  ArgReader r("squeue", args);
  while (r.next()) {
    const std::string& a = r.arg();
    const std::string& value = r.value();
    if (a == "-h" || a == "--noheader")
      header = false;
    else if (a == "-l" || a == "--long")
      long_format = true;
    else if (a == "--start")
      start_format = true;
    else if (a == "-a" || a == "--all")
      continue;
    else if (a == "--me")
      users.insert(std::getenv("USER") ? std::getenv("USER") : "");
    else if (r.take("-u", "--user"))
      for (auto& u : split_set(value)) users.insert(u);
    else if (r.take("-p", "--partition"))
      partitions = split_set(value);
    else if (r.take("-t", "--states"))
      states = split_set(value);
    else if (r.take("-n", "--name"))
      names = split_set(value);
    else if (r.take("-o", "--format"))
      format = value;
    else if (a == "-r" || a == "--array")
      expand_arrays = true;
    else if (r.take("-S", "--sort"))
      sort_spec = value;
    else if (r.take("-j", "--jobs")) {
      for (const auto& id : split_set(value)) {
        try {
          job_refs.push_back(core::parse_job_ref(id));
        } catch (const core::ParseError&) {
          std::cerr << "squeue: error: Invalid job id: " << id << '\n';
          return 1;
        }
      }
    } else {
      std::cerr << "squeue: unrecognized option '" << a << "'\n"
                << "Try \"squeue --help\" for more information\n";
      return 1;
    }
  }
  if (long_format) format = kLongFormat;
  if (start_format) {
    // As Slurm: only pending jobs, soonest expected start first.
    if (!long_format) format = kStartFormat;
    if (states.empty()) states = {"PD"};
    if (sort_spec.empty()) sort_spec = "S";
  }

  json reply;
  try {
    json req = {
        {"op", "query"}, {"what", "jobs"}, {"detail", false}, {"active_only", states.empty()}};
    if (job_refs.size() == 1) req["job_id"] = job_refs.front().job_id;
    reply = call_controller(req);
  } catch (const ControllerUnreachable&) {
    std::cerr << "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    return 1;
  }
  if (!reply.value("ok", false)) {
    std::cerr << "slurm_load_jobs error: " << reply.value("error", "Unknown error") << '\n';
    return 1;
  }

  // State filter: names or short codes, "all" for everything; default the active states.
  bool all_states = false;
  std::set<std::string> want_states;
  for (const auto& s : states) {
    const std::string up = core::to_upper(s);
    if (up == "ALL")
      all_states = true;
    else if (auto st = core::parse_job_state(up))
      want_states.insert(std::string(core::job_state_name(*st)));
    else if (up == "CG" || up == "COMPLETING")
      want_states.insert("COMPLETING");
    else {
      std::cerr << "squeue: error: Invalid job state specified: " << s << '\n';
      return 1;
    }
  }
  std::vector<json> rows;
  for (const auto& job : reply.at("jobs")) {
    if (!job_refs.empty() &&
        std::none_of(job_refs.begin(), job_refs.end(),
                     [&](const core::JobRef& ref) { return job_matches_ref(job, ref); }))
      continue;
    if (!users.empty() && !users.count(job.value("user", ""))) continue;
    if (!partitions.empty() && !partitions.count(job.value("partition", ""))) continue;
    if (!names.empty() && !names.count(job.at("spec").value("name", ""))) continue;
    if (!want_states.empty()) {
      if (!want_states.count(job.value("state", "")) &&
          !(job.value("completing", false) && want_states.count("COMPLETING")))
        continue;
    } else if (!all_states && !job_active(job)) {
      // As Slurm: finished jobs only with -t, even when named with -j.
      continue;
    }
    if (expand_arrays && !job.value("array_pending", std::string()).empty()) {
      // -r: one line per pending task instead of the compact remainder.
      for (uint32_t t :
           core::IndexSet::parse(job.value("array_pending", std::string())).to_vector(1u << 20)) {
        json task = job;
        task["array_pending"] = "";
        task["array_task_id"] = t;
        rows.push_back(std::move(task));
      }
      continue;
    }
    rows.push_back(job);
  }
  // Slurm's default order: partition, then state, then priority (highest first).
  std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
    auto pa = a.value("partition", ""), pb = b.value("partition", "");
    if (pa != pb) return pa < pb;
    auto sa = job_state_long(a), sb = job_state_long(b);
    if (sa != sb) return sa < sb;
    if (a.value("priority", 0u) != b.value("priority", 0u))
      return a.value("priority", 0u) > b.value("priority", 0u);
    // Equal priorities (an array's tasks): the array's own record, then the newest first,
    // the order Slurm's controller keeps them in.
    const uint64_t ia = a.at("id").get<uint64_t>(), ib = b.at("id").get<uint64_t>();
    const uint64_t arr_a = a.value("array_job_id", uint64_t{0});
    if (arr_a != 0 && arr_a == b.value("array_job_id", uint64_t{0}) &&
        (ia == arr_a) != (ib == arr_a))
      return ia == arr_a;
    return ia > ib;
  });

  // Without -r, the pending records of one array share a line: their tasks together and
  // their reasons joined, oldest record first (as Slurm's squeue shows them).
  if (!expand_arrays) {
    std::map<uint64_t, std::vector<size_t>> pending_by_array;
    for (size_t i = 0; i < rows.size(); ++i)
      if (rows[i].value("array_job_id", uint64_t{0}) != 0 && job_state_long(rows[i]) == "PENDING")
        pending_by_array[rows[i]["array_job_id"].get<uint64_t>()].push_back(i);
    std::vector<bool> drop(rows.size(), false);
    for (auto& [array_id, idx] : pending_by_array) {
      if (idx.size() < 2) continue;
      std::vector<size_t> by_age = idx;
      std::sort(by_age.begin(), by_age.end(), [&](size_t a, size_t b) {
        return rows[a]["id"].get<uint64_t>() < rows[b]["id"].get<uint64_t>();
      });
      core::IndexSet tasks;
      std::string reasons;
      uint32_t throttle = 0;
      for (size_t i : by_age) {
        const json& r = rows[i];
        const std::string pending = r.value("array_pending", std::string());
        if (!pending.empty()) {
          const core::IndexSet set = core::IndexSet::parse(pending);
          for (const auto& rg : set.ranges()) tasks.insert(rg.first, rg.last, rg.step);
        } else {
          tasks.insert(r.value("array_task_id", 0u));
        }
        throttle = std::max(throttle, r.value("array_max_running", 0u));
        const std::string reason = r.value("reason", "None");
        if (("," + reasons + ",").find("," + reason + ",") == std::string::npos)
          reasons += (reasons.empty() ? "" : ",") + reason;
      }
      json& first = rows[idx.front()];
      first["array_pending"] = tasks.format_ranges();
      first["array_task_id"] = core::kNoArrayTask;
      first["array_max_running"] = throttle;
      first["reason"] = reasons;
      for (size_t k = 1; k < idx.size(); ++k) drop[idx[k]] = true;
    }
    std::vector<json> kept;
    for (size_t i = 0; i < rows.size(); ++i)
      if (!drop[i]) kept.push_back(std::move(rows[i]));
    rows = std::move(kept);
  }

  if (!sort_spec.empty()) {
    // -S: keys in order, each a format code, '-' for descending. Numeric keys compare as
    // numbers.
    struct Key {
      char code;
      bool desc;
    };
    std::vector<Key> keys;
    for (const auto& k : core::split_list(sort_spec, ',')) {
      bool desc = k[0] == '-';
      std::string code = k.substr(desc || k[0] == '+' ? 1 : 0);
      if (!code.empty()) keys.push_back({code[0], desc});
    }
    auto numeric = [](char c) {
      return c == 'i' || c == 'A' || c == 'F' || c == 'p' || c == 'Q' || c == 'D' || c == 'C' ||
             c == 'U';
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const json& a, const json& b) {
      for (const auto& k : keys) {
        int cmp = 0;
        if (k.code == 'i' || k.code == 'A') {
          auto ia = a.at("id").get<uint64_t>(), ib = b.at("id").get<uint64_t>();
          cmp = ia < ib ? -1 : ia > ib ? 1 : 0;
        } else if (numeric(k.code)) {
          const char c = k.code == 'p' ? 'Q' : k.code;
          double fa = std::stod("0" + field(c, a)), fb = std::stod("0" + field(c, b));
          cmp = fa < fb ? -1 : fa > fb ? 1 : 0;
        } else {
          cmp = field(k.code, a).compare(field(k.code, b));
        }
        if (cmp != 0) return k.desc ? cmp > 0 : cmp < 0;
      }
      return false;
    });
  }

  if (long_format && header) {
    std::time_t now = reply.value("now", int64_t{0});
    char buf[64];
    std::tm tm{};
    localtime_r(&now, &tm);
    std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
    std::cout << buf << '\n';
  }
  auto fields = parse_format(format);
  std::cout << render_table(
      fields, rows.size(), [&](char c, size_t r) { return field(c, rows[r]); },
      [&](char c) { return header_for(c); }, header);
  return 0;
}

}  // namespace drover::cli
