// scontrol: show job|node|partition|step|hostnames|hostlist, ping, token.
#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/job_info.hpp"
#include "cli/json_output.hpp"
#include "cli/scontrol_config.hpp"
#include "cli/scontrol_hostlist.hpp"
#include "cli/scontrol_json.hpp"
#include "cli/scontrol_partition.hpp"
#include "cli/scontrol_resv.hpp"
#include "cli/scontrol_steps.hpp"
#include "cli/scontrol_token.hpp"
#include "core/array_spec.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/job.hpp"
#include "core/memsize.hpp"
#include "core/text.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

// scontrol prints records as "Key=Value" items, several per line with a three-space
// indent; -o joins them onto one line.
class Record {
 public:
  explicit Record(bool one_liner) : one_liner_(one_liner) {}
  Record& line(std::initializer_list<std::string> items) {
    std::string s;
    for (const auto& it : items) {
      if (!s.empty()) s += ' ';
      s += printable(it);  // a newline in a name must not start a line of its own
    }
    lines_.push_back(s);
    return *this;
  }
  std::string str(bool trailing_blank) const {
    std::string out;
    for (size_t i = 0; i < lines_.size(); ++i) {
      if (one_liner_) {
        out += lines_[i];
        out += ' ';
      } else {
        out += (i == 0 ? "" : "   ") + lines_[i] + "\n";
      }
    }
    if (one_liner_) return out + "\n";
    return trailing_blank ? out + "   \n\n" : out + "\n";
  }

 private:
  bool one_liner_;
  std::vector<std::string> lines_;
};

std::string ts(int64_t t, const char* none = "Unknown") {
  return t == core::kNoTime ? none : core::format_timestamp(t);
}

std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }

// Ids as Slurm writes a bitmap: runs of consecutive ids ("0-1,4").
std::string id_runs(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t k = i;
    while (k + 1 < ids.size() && ids[k + 1] == ids[k] + 1) ++k;
    out += (out.empty() ? "" : ",") + std::to_string(ids[i]);
    if (k > i) out += "-" + std::to_string(ids[k]);
    i = k + 1;
  }
  return out;
}

// GRES held as -d lists them: "gpu:1(IDX:0)" per node, "gpu:2" for the job.
std::string gres_text(const json& gres, const json* gpu_ids) {
  std::string out;
  for (const auto& g : gres) {
    std::string item = g.value("name", "");
    if (!g.value("type", "").empty()) item += ":" + g.value("type", "");
    item += ":" + std::to_string(g.value("count", int64_t{0}));
    if (gpu_ids && g.value("name", "") == "gpu" && !gpu_ids->empty())
      item += "(IDX:" + id_runs(gpu_ids->get<std::vector<int>>()) + ")";
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

// scontrol -d: the job's GRES and, per run of nodes holding the same CPUs, memory and GRES,
// what it holds there ("  Nodes=node[1-2] CPU_IDs=0-1 Mem=1000 GRES=").
void allocation_details(const json& j, Record& r) {
  const json alloc = j.value("alloc", json::array());
  std::map<std::string, const json*> by_node;
  std::map<std::string, int64_t> job_gres;  // "gpu" or "gpu:a100" -> count
  std::vector<std::string> gres_order;
  for (const auto& a : alloc) {
    by_node[a.value("node", "")] = &a;
    for (const auto& g : a.value("gres", json::array())) {
      std::string key = g.value("name", "");
      if (!g.value("type", "").empty()) key += ":" + g.value("type", "");
      if (!job_gres.count(key)) gres_order.push_back(key);
      job_gres[key] += g.value("count", int64_t{0});
    }
  }
  std::string total;
  for (const auto& k : gres_order)
    total += (total.empty() ? "" : ",") + k + ":" + std::to_string(job_gres[k]);
  r.line({"JOB_GRES=" + or_null(total)});
  std::vector<std::string> run;
  std::string held;
  auto flush = [&] {
    if (!run.empty()) r.line({"  Nodes=" + core::compress_hostlist(run) + " " + held});
    run.clear();
  };
  // In the order of the node list (Slurm's node table order).
  for (const auto& name : core::expand_hostlist(j.value("nodelist", ""))) {
    auto it = by_node.find(name);
    if (it == by_node.end()) continue;
    const json& a = *it->second;
    const json gpu_ids = a.value("gpu_ids", json::array());
    // A node given none of a job's GRES (--gpus over more nodes than GPUs) shows "(null)",
    // a job without GRES nothing.
    std::string gres = gres_text(a.value("gres", json::array()), &gpu_ids);
    if (gres.empty() && !total.empty()) gres = "(null)";
    const std::string here = "CPU_IDs=" + id_runs(a.value("cpu_ids", std::vector<int>{})) +
                             " Mem=" + std::to_string(a.value("mem_mb", int64_t{0})) +
                             " GRES=" + gres;
    if (here != held) flush();
    held = here;
    run.push_back(name);
  }
  flush();
}

std::string show_job(const json& j, bool one_liner, bool details) {
  const auto& spec = j.at("spec");
  const bool pending = j.value("state", "") == "PENDING";
  const int nodes = job_node_count(j);
  const int cpus = job_cpu_count(j);
  const int64_t tl = j.value("time_limit_min", int64_t{-1});
  const int64_t mem_node = spec.value("mem_per_node_mb", int64_t{-1});
  const int64_t mem_cpu = spec.value("mem_per_cpu_mb", int64_t{-1});
  std::string min_mem =
      mem_cpu > 0 ? "MinMemoryCPU=" + core::format_mem_mb(mem_cpu)
                  : "MinMemoryNode=" + (mem_node > 0 ? core::format_mem_mb(mem_node) : "0");
  std::string num_nodes = std::to_string(nodes);
  if (pending) {
    int nmax = spec.value("nodes_max", 0);
    num_nodes = std::to_string(spec.value("nodes_min", 1));
    if (nmax > 0) num_nodes += "-" + std::to_string(nmax);
  }
  std::ostringstream tres;
  tres << "cpu=" << cpus << ",mem=" << core::format_mem_mb(job_mem_mb(j)) << ",node=" << nodes
       << ",billing=" << cpus;
  Record r(one_liner);
  std::string first = "JobId=" + std::to_string(j.at("id").get<uint64_t>());
  if (j.value("array_job_id", uint64_t{0}) != 0) {
    first += " ArrayJobId=" + std::to_string(j.value("array_job_id", uint64_t{0})) +
             " ArrayTaskId=" + array_task_field(j);
    if (uint32_t max = j.value("array_max_running", 0u); max > 0)
      first += " ArrayTaskThrottle=" + std::to_string(max);
  }
  r.line({first, "JobName=" + spec.value("name", "")});
  r.line({"UserId=" + j.value("user", "") + "(" + std::to_string(j.value("uid", 0u)) + ")",
          "GroupId=" + j.value("group", "") + "(" + std::to_string(j.value("gid", 0u)) + ")",
          "MCS_label=N/A"});
  r.line({"Priority=" + std::to_string(j.value("priority", 0u)),
          "Nice=" + std::to_string(j.value("nice", 0)),
          "Account=" + or_null(spec.value("account", "")),
          "QOS=" + or_null(spec.value("qos", ""))});
  // scontrol writes a reason's spaces as underscores (ReqNodeNotAvail,_UnavailableNodes:...).
  std::string reason = j.value("reason", "None");
  std::replace(reason.begin(), reason.end(), ' ', '_');
  // COMPLETING while its processes may still run (as Slurm 22.05), e.g. cancelled on a node
  // whose agent is away.
  r.line({"JobState=" + job_state_long(j), "Reason=" + reason,
          "Dependency=" + or_null(j.value("dependency_text", std::string()))});
  r.line({"Requeue=" + std::to_string(j.value("requeue_effective", 1)),
          "Restarts=" + std::to_string(j.value("restarts", 0u)),
          // 0 for an allocation without a batch script (salloc, srun's own)
          std::string("BatchFlag=") + (spec.value("interactive", false) ? "0" : "1"), "Reboot=0",
          "ExitCode=" + std::to_string(j.value("exit_code", 0)) + ":" +
              std::to_string(j.value("exit_signal", 0))});
  if (details)
    r.line({"DerivedExitCode=" + std::to_string(j.value("derived_exit_code", 0)) + ":" +
            std::to_string(j.value("derived_exit_signal", 0))});
  r.line({"RunTime=" + core::format_hms(j.value("run_time", int64_t{0})),
          "TimeLimit=" + (tl < 0 ? std::string("UNLIMITED") : core::format_hms(tl * 60)),
          "TimeMin=N/A"});
  const int64_t eligible = j.value("eligible_time", int64_t{0});
  const int64_t deadline = spec.value("deadline", int64_t{0});
  r.line({"SubmitTime=" + ts(j.value("submit_time", int64_t{0})), "EligibleTime=" + ts(eligible)});
  r.line({"AccrueTime=" + ts(eligible)});
  r.line({"StartTime=" + ts(j.value("start_time", int64_t{0})),
          "EndTime=" + ts(j.value("end_time", int64_t{0})),
          "Deadline=" + (deadline == 0 ? std::string("N/A") : ts(deadline))});
  r.line({"SuspendTime=None", "SecsPreSuspend=0",
          "LastSchedEval=" + ts(j.value("last_sched_eval", int64_t{0})), "Scheduler=Main"});
  // A pending job that may run in several partitions lists them all.
  std::string partition = j.value("partition", "");
  if (pending && spec.value("partitions", std::vector<std::string>{}).size() > 1) {
    partition.clear();
    for (const auto& p : spec["partitions"])
      partition += (partition.empty() ? "" : ",") + p.get<std::string>();
  }
  r.line({"Partition=" + partition,
          "AllocNode:Sid=" + j.value("alloc_node", spec.value("submit_host", "")) + ":" +
              std::to_string(spec.value("submit_sid", int64_t{0}))});
  if (!spec.value("reservation", std::string()).empty())
    r.line({"Reservation=" + spec.value("reservation", std::string())});
  r.line({"ReqNodeList=" + or_null(spec.value("nodelist", std::string())),
          "ExcNodeList=" + or_null(spec.value("exclude", std::string()))});
  r.line({"NodeList=" + j.value("nodelist", "")});
  if (!j.value("batch_host", "").empty()) r.line({"BatchHost=" + j.value("batch_host", "")});
  r.line({"NumNodes=" + num_nodes, "NumCPUs=" + std::to_string(cpus),
          "NumTasks=" + std::to_string(spec.value("ntasks", 1)),
          "CPUs/Task=" + std::to_string(spec.value("cpus_per_task", 1)), "ReqB:S:C:T=0:0:*:*"});
  r.line({"TRES=" + tres.str()});
  r.line({"Socks/Node=*",
          "NtasksPerN:B:S:C=" + std::to_string(spec.value("ntasks_per_node", 0)) + ":0:*:*",
          "CoreSpec=*"});
  if (details && !j.value("alloc", json::array()).empty()) allocation_details(j, r);
  r.line({"MinCPUsNode=" +
              std::to_string(std::max(spec.value("cpus_per_task", 1), spec.value("min_cpus", 0))),
          min_mem, "MinTmpDiskNode=" + std::to_string(spec.value("tmp_disk_mb", int64_t{0}))});
  r.line({"Features=" + or_null(spec.value("constraint", std::string())), "DelayBoot=00:00:00"});
  r.line({std::string("OverSubscribe=") + (spec.value("exclusive", false) ? "NO" : "OK"),
          "Contiguous=0", "Licenses=(null)", "Network=(null)"});
  r.line({"Command=" + or_null(spec.value("command", ""))});
  r.line({"WorkDir=" + spec.value("workdir", "")});
  if (!j.value("system_comment", "").empty())
    r.line({"SystemComment=" + j.value("system_comment", "")});
  if (!spec.value("comment", "").empty()) r.line({"Comment=" + spec.value("comment", "")});
  r.line({"StdErr=" + j.value("std_err_path", "")});
  r.line({"StdIn=" + j.value("std_in_path", "")});
  r.line({"StdOut=" + j.value("std_out_path", "")});
  r.line({"Power="});
  // GRES requests, in Slurm's TRES-per-* form.
  const int64_t mem_per_gpu = spec.value("mem_per_gpu_mb", int64_t{-1});
  if (mem_per_gpu >= 0) r.line({"MemPerTres=gres:gpu:" + std::to_string(mem_per_gpu)});
  auto gpu = [](const std::string& v) { return "gres:gpu:" + v; };
  if (!spec.value("gpus", std::string()).empty())
    r.line({"TresPerJob=" + gpu(spec.value("gpus", std::string()))});
  std::string per_node;
  if (!spec.value("gres", std::string()).empty()) {
    for (const auto& item : core::split_list(spec.value("gres", std::string()), ','))
      per_node += (per_node.empty() ? "" : ",") + std::string("gres:") + item;
  }
  if (!spec.value("gpus_per_node", std::string()).empty())
    per_node += (per_node.empty() ? "" : ",") + gpu(spec.value("gpus_per_node", std::string()));
  if (!per_node.empty()) r.line({"TresPerNode=" + per_node});
  if (!spec.value("gpus_per_task", std::string()).empty())
    r.line({"TresPerTask=" + gpu(spec.value("gpus_per_task", std::string()))});
  return r.str(true);
}

std::string show_node(const json& n, bool one_liner, bool details) {
  struct utsname u {};
  uname(&u);
  std::string features, active;
  for (const auto& f : n.value("features", std::vector<std::string>{}))
    features += (features.empty() ? "" : ",") + f;
  for (const auto& f : n.value("active_features", std::vector<std::string>{}))
    active += (active.empty() ? "" : ",") + f;
  std::string partitions;
  for (const auto& p : n.at("partitions"))
    partitions += (partitions.empty() ? "" : ",") + p.get<std::string>();
  const int cpus = n.value("cpus", 1), alloc_cpus = n.value("alloc_cpus", 0);
  const int64_t mem = n.value("real_memory_mb", int64_t{1}),
                alloc_mem = n.value("alloc_mem_mb", int64_t{0});
  const double cpu_load = n.value("cpu_load", -1.0);
  const int64_t free_mem_mb = n.value("free_mem_mb", int64_t{-1});
  char load_text[32] = "N/A";
  if (cpu_load >= 0) std::snprintf(load_text, sizeof load_text, "%.2f", cpu_load);
  const std::string load = load_text;
  const std::string free_mem = free_mem_mb < 0 ? "N/A" : std::to_string(free_mem_mb);
  std::string alloc_tres;
  if (alloc_cpus > 0)
    alloc_tres = "cpu=" + std::to_string(alloc_cpus) + ",mem=" + core::format_mem_mb(alloc_mem);
  // The machine, its OS and the release come from a registered agent: Slurm leaves them out
  // for a node whose slurmd never registered.
  const std::string version = n.value("version", "");
  std::string first = "NodeName=" + n.value("name", "");
  if (!version.empty()) first += std::string(" Arch=") + u.machine;
  std::string address =
      "NodeAddr=" +
      (n.value("address", "").empty() ? n.value("name", "") : n.value("address", "")) +
      " NodeHostName=" + n.value("hostname", n.value("name", ""));
  if (!version.empty()) address += " Version=" + version;
  Record r(one_liner);
  r.line({first, "CoresPerSocket=" + std::to_string(n.value("cores_per_socket", 1)) + " "});
  r.line({"CPUAlloc=" + std::to_string(alloc_cpus), "CPUEfctv=" + std::to_string(cpus),
          "CPUTot=" + std::to_string(cpus), "CPULoad=" + load});
  r.line({"AvailableFeatures=" + or_null(features)});
  r.line({"ActiveFeatures=" + or_null(active)});
  r.line({"Gres=" + or_null(n.value("gres", ""))});
  if (details) r.line({"GresDrain=N/A"});
  r.line({address});
  if (!version.empty())
    r.line({std::string("OS=") + u.sysname + " " + u.release + " " + u.version + " "});
  r.line({"RealMemory=" + std::to_string(mem), "AllocMem=" + std::to_string(alloc_mem),
          "FreeMem=" + free_mem, "Sockets=" + std::to_string(n.value("sockets", 1)), "Boards=1"});
  // Dynamic nodes carry Slurm's DYNAMIC_NORM flag.
  const std::string flags = n.value("dynamic", false) ? "+DYNAMIC_NORM" : "";
  r.line({"State=" + n.value("state_long", "UNKNOWN") + flags,
          "ThreadsPerCore=" + std::to_string(n.value("threads_per_core", 1)),
          "TmpDisk=" + std::to_string(n.value("tmp_disk_mb", int64_t{0})),
          "Weight=" + std::to_string(n.value("weight", 1)), "Owner=N/A", "MCS_label=N/A"});
  r.line({"Partitions=" + partitions + " "});
  r.line({"BootTime=" + ts(n.value("boot_time", int64_t{0}), "None"),
          "SlurmdStartTime=" + ts(n.value("agent_start_time", int64_t{0}), "None")});
  r.line({"LastBusyTime=" + ts(n.value("last_heartbeat", int64_t{0}), "None")});
  r.line({"CfgTRES=cpu=" + std::to_string(cpus) + ",mem=" + core::format_mem_mb(mem) +
          ",billing=" + std::to_string(cpus)});
  r.line({"AllocTRES=" + alloc_tres});
  r.line({"CapWatts=n/a"});
  r.line({"CurrentWatts=0", "AveWatts=0"});
  r.line({"ExtSensorsJoules=n/s", "ExtSensorsWatts=0", "ExtSensorsTemp=n/s"});
  if (!n.value("reason", "").empty())
    r.line({"Reason=" + n.value("reason", "") + " [" + user_name(n.value("reason_uid", 0u)) + "@" +
            ts(n.value("reason_time", int64_t{0}), "None") + "]"});
  std::string out = r.str(false);
  // Slurm's one-liner ends right after the Reason (other records end with a space).
  if (one_liner && !n.value("reason", "").empty() && out.size() >= 2 && out[out.size() - 2] == ' ')
    out.erase(out.size() - 2, 1);
  return out;
}

std::string show_partition(const json& p, bool one_liner) {
  auto limit = [](int64_t m, const char* none) {
    return m < 0 ? std::string(none) : core::format_hms(m * 60);
  };
  auto list_or_all = [](const json& a) {
    std::string s;
    for (const auto& x : a) s += (s.empty() ? "" : ",") + x.get<std::string>();
    return s.empty() ? std::string("ALL") : s;
  };
  const int max_nodes = p.value("max_nodes", -1);
  const int cpus = p.value("total_cpus", 0);
  Record r(one_liner);
  r.line({"PartitionName=" + p.value("name", "")});
  const std::string alloc_nodes = p.value("alloc_nodes", "");
  const int64_t max_cpus = p.value("max_cpus_per_node", int64_t{-1});
  r.line({"AllowGroups=" + list_or_all(p.value("allow_groups", json::array())),
          "AllowAccounts=" + list_or_all(p.at("allow_accounts")),
          "AllowQos=" + list_or_all(p.at("allow_qos"))});
  r.line({"AllocNodes=" + (alloc_nodes.empty() ? std::string("ALL") : alloc_nodes),
          std::string("Default=") + (p.value("is_default", false) ? "YES" : "NO"), "QoS=N/A"});
  r.line({"DefaultTime=" + limit(p.value("default_time_min", int64_t{-1}), "NONE"),
          "DisableRootJobs=NO", "ExclusiveUser=NO", "GraceTime=0",
          std::string("Hidden=") + (p.value("hidden", false) ? "YES" : "NO")});
  r.line(
      {"MaxNodes=" + (max_nodes < 0 ? std::string("UNLIMITED") : std::to_string(max_nodes)),
       "MaxTime=" + limit(p.value("max_time_min", int64_t{-1}), "UNLIMITED"),
       "MinNodes=" + std::to_string(p.value("min_nodes", 0)), "LLN=NO",
       "MaxCPUsPerNode=" + (max_cpus < 0 ? std::string("UNLIMITED") : std::to_string(max_cpus))});
  r.line({"Nodes=" + p.value("nodelist", "")});
  r.line({"PriorityJobFactor=" + std::to_string(p.value("priority_job_factor", 1)),
          "PriorityTier=" + std::to_string(p.value("priority_tier", 1)),
          std::string("RootOnly=") + (p.value("root_only", false) ? "YES" : "NO"), "ReqResv=NO",
          "OverSubscribe=" + p.value("over_subscribe", "NO")});
  r.line({"OverTimeLimit=NONE", "PreemptMode=" + p.value("preempt_mode", "OFF")});
  r.line({"State=" + p.value("state", "UP"), "TotalCPUs=" + std::to_string(cpus),
          "TotalNodes=" + std::to_string(p.value("total_nodes", 0)), "SelectTypeParameters=NONE"});
  r.line({"JobDefaults=(null)"});
  r.line({"DefMemPerNode=UNLIMITED", "MaxMemPerNode=UNLIMITED"});
  r.line({"TRES=cpu=" + std::to_string(cpus) +
          ",mem=" + core::format_mem_mb(p.value("total_mem_mb", int64_t{0})) + ",node=" +
          std::to_string(p.value("total_nodes", 0)) + ",billing=" + std::to_string(cpus)});
  return r.str(false);
}

// --help, -h, --usage and the help command: Slurm 22.05's layout, drover's words, and only the
// commands drover has.
constexpr const char* kHelpText =
    "scontrol [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a, --all      show hidden partitions too (drover: none are hidden)\n"
    "     -d, --details  more detail in \"show\"\n"
    "     --federation   federated view (drover: one cluster)\n"
    "     -F, --future   nodes in the FUTURE state too\n"
    "     -h, --help     this help\n"
    "     --hide         leave out hidden partitions\n"
    "     --json         \"show\" as a data_parser JSON document\n"
    "     --local        this cluster only (the default)\n"
    "     -M, --cluster  ask another cluster (needs slurmdbd)\n"
    "     -o, --oneliner one line per record\n"
    "     -Q, --quiet    errors only\n"
    "     --sibling      federated sibling jobs (drover: none)\n"
    "     -u,--uid       act as another user (drover: refused; the OS says who you are)\n"
    "     -v, --verbose  more detail about what scontrol does\n"
    "     -V, --version  print the version and exit\n"
    "\n"
    "  drover's scontrol runs one command from its command line; it has no\n"
    "  interactive mode.\n"
    "\n"
    "    Valid <COMMAND> values are:\n"
    "     create <SPECIFICATIONS>  create a node or a reservation\n"
    "     delete <SPECIFICATIONS>  delete a node or a reservation\n"
    "     help                     this help\n"
    "     hold <job_list>          keep jobs from starting (priority 0)\n"
    "     ping                     is the controller up\n"
    "     reconfigure              the controller reads slurm.conf again\n"
    "     release <job_list>       let held jobs start\n"
    "     requeue <job_id>         stop a batch job and queue it again\n"
    "     requeuehold <job_id>     requeue a batch job and hold it\n"
    "     show <ENTITY> [<ID>]     show records, all of them without an ID\n"
    "     token [lifespan=] [username=] a JWT for the REST API\n"
    "     uhold <job_list>         a hold the job's user may release\n"
    "     update <SPECIFICATIONS>  change a job, node, partition or reservation\n"
    "     version                  print the version\n"
    "\n"
    "  <ENTITY> may be \"config\", \"hostlist\", \"hostlistsorted\", \"hostnames\", \"job\",\n"
    "       \"node\", \"partition\", \"reservation\" or \"step\".\n"
    "\n"
    "  <SPECIFICATIONS> take slurm.conf's Key=Value form, as \"show\" prints records.\n"
    "  Node names may be given as ranges (\"lx[10-20]\"); a step id is the job id, a\n"
    "  period and the step number.\n"
    "\n"
    "drover's scontrol, compatible with Slurm 22.05's.\n";

enum LongOnly { kFederation = 0x100, kHide, kJson, kLocal, kSibling, kUsage, kYaml };

// scontrol 22.05's long options (getopt_long: any unique prefix is taken too).
const std::vector<LongOption> kLongOptions = {
    {"all", ArgKind::None, 'a'},
    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'},
    {"details", ArgKind::None, 'd'},
    {"federation", ArgKind::None, kFederation},
    {"future", ArgKind::None, 'F'},
    {"help", ArgKind::None, 'h'},
    {"hide", ArgKind::None, kHide},
    {"json", ArgKind::Optional, kJson},
    {"local", ArgKind::None, kLocal},
    {"oneliner", ArgKind::None, 'o'},
    {"quiet", ArgKind::None, 'Q'},
    {"sibling", ArgKind::None, kSibling},
    {"uid", ArgKind::Required, 'u'},
    {"usage", ArgKind::None, kUsage},
    {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
    {"yaml", ArgKind::Optional, kYaml},
};

int usage_error(const std::string& msg) {
  std::cerr << "scontrol: error: " << msg << '\n';
  return 1;
}

// Slurm's wording for a failed job operation: "<error> for job <id>", or "<ref>: <error>" when
// the reference names array tasks.
std::string job_error_line(const std::string& ref, const std::string& error) {
  if (ref.find('_') != std::string::npos) return ref + ": " + error;
  return error + " for job " + ref;
}

// hold, uhold, release, requeue, requeuehold JOB_LIST
int job_control(const std::string& action, const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << "too few arguments for keyword:" << action << '\n';
    return 1;
  }
  proto::ControlRequest req{.action = action};
  for (const auto& a : args)
    for (const auto& id : core::split_list(a, ',')) req.jobs.push_back(id);
  const auto r = ask(req);
  if (const proto::ErrorReply* refused = r.refusal()) {
    std::cerr << refused->error.message << '\n';
    return 1;
  }
  int rc = 0;
  for (const auto& [ref, error] : r->errors) {
    std::cerr << job_error_line(ref, error.message) << '\n';
    // hold and release go through Slurm's suspend call, which adds its own line.
    if (action != "requeue" && action != "requeuehold" && ref.find('_') == std::string::npos)
      std::cerr << "slurm_suspend error: " << error.message << '\n';
    rc = 1;
  }
  return rc;
}

// update JobId=LIST Key=Value ...
int job_update(const std::vector<std::string>& args) {
  proto::JobUpdateRequest req;
  std::vector<std::string>& jobs = req.jobs;
  std::map<std::string, std::string>& set = req.set;
  for (const auto& a : args) {
    auto eq = a.find('=');
    if (eq == std::string::npos) {
      std::cerr << "scontrol: error: Invalid input: " << a << "\nRequest aborted\n";
      return 1;
    }
    std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    if (core::iequals(key, "TimeLimit")) {
      // Checked here, as scontrol does, before anything is sent.
      try {
        std::string v = value;
        if (!v.empty() && (v[0] == '+' || v[0] == '-')) v = v.substr(1);
        (void)core::parse_time_limit_minutes(v);
      } catch (const core::ParseError&) {
        std::cerr << "scontrol: error: Invalid TimeLimit value\n";
        return 1;
      }
    }
    if (auto bad = job_update_number_error(key, value)) {
      std::cerr << bad->err;
      return bad->rc;
    }
    if (core::iequals(key, "JobId")) {
      for (const auto& id : core::split_list(value, ',')) jobs.push_back(id);
    } else {
      set[key] = value;
    }
  }
  if (jobs.empty()) {
    std::cerr << "No job identification provided\nRequest aborted\n";
    return 1;
  }
  const auto r = ask(req);
  if (!r.ok()) return 0;  // refused as a whole: as before, nothing to report per job
  int rc = 0;
  for (const auto& [ref, e] : r->errors) {
    const std::string& error = e.message;
    if (error.rfind("Update of this parameter is not supported", 0) == 0)
      std::cerr << error << "\nRequest aborted\n";
    else
      std::cerr << job_error_line(ref, error) << '\n';
    rc = 1;
  }
  return rc;
}

// update NodeName=LIST State=... Reason=... AvailableFeatures=... ActiveFeatures=...: an operator
// drains, downs or resumes nodes, or sets their features.
int node_update(const std::vector<std::string>& args) {
  proto::NodeUpdateRequest req;
  for (const auto& a : args) {
    auto eq = a.find('=');
    if (eq == std::string::npos) {
      std::cerr << "Invalid input: " << a << "\nRequest aborted\n";
      return 1;
    }
    const std::string key = a.substr(0, eq), value = a.substr(eq + 1);
    if (core::iequals(key, "NodeName")) {
      req.nodes = value;
    } else if (core::iequals(key, "State")) {
      const std::string state = core::to_upper(value);
      static const std::set<std::string> known = {"DOWN",       "DRAIN",   "FAIL",   "RESUME",
                                                  "UNDRAIN",    "IDLE",    "NORESP", "FUTURE",
                                                  "POWER_DOWN", "POWER_UP"};
      if (!known.count(state)) {
        std::cerr << "Invalid input: " << a << "\nRequest aborted\n"
                  << "Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP "
                     "UNDRAIN\n"
                  << "Not all states are valid given a node's prior state\n";
        return 1;
      }
      req.state = state;
    } else if (core::iequals(key, "Reason")) {
      req.reason = value;
    } else if (core::iequals(key, "AvailableFeatures") || core::iequals(key, "Features") ||
               core::iequals(key, "Feature")) {
      req.features = value;
    } else if (core::iequals(key, "ActiveFeatures")) {
      req.features_act = value;
    } else {
      std::cerr << "Update of this parameter is not supported: " << a << "\nRequest aborted\n";
      return 1;
    }
  }
  const std::string state = req.state.value_or("");
  if ((state == "DOWN" || state == "DRAIN" || state == "FAIL") && req.reason.value_or("").empty()) {
    std::cerr << "You must specify a reason when DOWNING or DRAINING a node. Request denied\n";
    return 1;
  }
  const auto r = ask(req);
  if (const proto::ErrorReply* refused = r.refusal()) {
    std::cerr << "slurm_update error: " << refused->error.message << '\n';
    return 1;
  }
  return 0;
}

// create NodeName=... State=FUTURE|CLOUD ...: the words are the node's slurm.conf line.
int node_create(const std::vector<std::string>& args) {
  std::string line;
  for (const auto& a : args) line += (line.empty() ? "" : " ") + a;
  const auto r = ask(proto::NodeCreateRequest{.line = line});
  const proto::ErrorReply* refused = r.refusal();
  if (refused == nullptr) return 0;
  if (!refused->detail.value_or("").empty())
    std::cerr << "scontrol: error: " << *refused->detail << '\n';
  std::cerr << "Error creating the node(s): " << refused->error.message << '\n';
  return 1;
}

// delete NodeName=LIST.
int node_delete(const std::string& nodes) {
  const auto r = ask(proto::NodeDeleteRequest{.nodes = nodes});
  const proto::ErrorReply* refused = r.refusal();
  if (refused == nullptr) return 0;
  std::cerr << "scontrol: error: failed to delete nodes " << nodes << '\n'
            << "delete_node NodeName=" << nodes << ": " << refused->error.message << '\n';
  return 1;
}

// reconfigure: the controller reads slurm.conf again; silent on success, as Slurm's (which
// also ignores any words after it).
int reconfigure() {
  json r;
  try {
    r = call_controller(proto::ReconfigureRequest{});
  } catch (const ControllerUnreachable&) {
    std::cerr << "slurm_reconfigure error: Unable to contact slurm controller (connect failure)\n";
    return 1;
  }
  if (r.value("ok", false)) return 0;
  std::cerr << "slurm_reconfigure error: " << r.value("error", "Unknown error") << '\n';
  return 1;
}

}  // namespace

extern const CommandHelp kScontrolHelp{
    "scontrol", "shows and changes the state of jobs, nodes, partitions and reservations",
    "scontrol [<OPTION>] [<COMMAND>]\n", kHelpText,
    "drover's scontrol runs the one command given on its command line; it has no interactive mode, "
    "and only the commands listed are implemented.\n\n-u/--uid is refused: a request acts as the "
    "user the operating system says is asking. -M/--cluster needs slurmdbd."};

int scontrol_main(const std::vector<std::string>& all_args) {
  bool one_liner = false, details = false, future = false;
  JsonRequest json_req;
  const ParsedArgs parsed = parse_options("scontrol", all_args, "adFhM:oQu:vV", kLongOptions);
  for (const ParsedOption& o : parsed.options) {
    switch (o.id) {
      case 'o':
        one_liner = true;
        break;
      case 'd':
        details = true;
        break;
      case 'F':
        future = true;
        break;
      case kJson:
      case kYaml:
        (o.id == kJson ? json_req.json : json_req.yaml) = true;
        if (o.value) json_req.parser = *o.value;
        break;
      case 'h':
      case kUsage:
        std::cout << kHelpText;
        return 0;
      case 'V':
        std::cout << version_text();
        return 0;
      case 'M':
        std::cerr << cluster_unreachable("scontrol", o.value.value_or(""));
        return 1;
      case 'u':
        return usage_error(
            "-u/--uid is not supported by drover: a request acts as the user "
            "the operating system says sent it");
      default:  // -a, -Q, -v, --hide, --local, --federation, --sibling: nothing to change
        break;  // on one cluster without hidden partitions
    }
  }
  if (!parsed.error.empty()) {
    std::cerr << parsed.error << '\n' << try_help("scontrol");
    return 1;
  }
  std::vector<std::string> args = parsed.operands;
  if (!args.empty() && core::iequals(args[0], "help")) {
    std::cout << kHelpText;
    return 0;
  }
  if (!args.empty() && core::iequals(args[0], "version")) {
    std::cout << version_text();
    return 0;
  }
  if (auto done = json_preamble("scontrol", json_req)) {
    std::cerr << done->err;
    std::cout << done->out;
    return done->rc;
  }
  if (args.empty())
    return usage_error("no command given (drover's scontrol has no interactive mode)");
  try {
    // --json: show job|node|partition|reservation write documents; commands that change
    // things print nothing either way (Slurm ignores --json there), the other listings refuse.
    if (json_req.json) {
      const std::string& cmd = args[0];
      if (cmd == "show" && args.size() >= 2 && scontrol_shows_json(args[1])) {
        if (args.size() > 3) {
          std::cerr << "too many arguments for keyword:show\n";
          return 1;
        }
        const CommandResult r =
            scontrol_show_json(args[1], args.size() > 2 ? args[2] : "", all_args, system_env());
        std::cerr << r.err;
        std::cout << r.out;
        return r.rc;
      }
      if (cmd == "show" || cmd == "ping" || cmd == "token")
        return usage_error("--json is supported for show job|node|partition|reservation only");
    }
    if (args[0] == "ping") {
      json r;
      bool up = true;
      try {
        r = call_controller(proto::QueryRequest{.what = "ping"});
      } catch (const ControllerUnreachable&) {
        up = false;
      }
      std::string host = up ? r.value("control_host", "localhost") : "localhost";
      std::cout << "Slurmctld(primary) at " << host << " is " << (up ? "UP" : "DOWN") << '\n';
      return up ? 0 : 1;
    }
    const std::string& cmd = args[0];
    if (cmd == "token") return scontrol_token({args.begin() + 1, args.end()});
    // Any abbreviation of three letters or more, as Slurm takes it.
    if (cmd.size() >= 3 && cmd.size() <= 11 &&
        core::iequals(cmd, std::string("reconfigure").substr(0, cmd.size())))
      return reconfigure();
    if (cmd == "hold" || cmd == "uhold" || cmd == "release" || cmd == "requeue" ||
        cmd == "requeuehold")
      return job_control(cmd, {args.begin() + 1, args.end()});
    // Reservation words: "reservation", "res", ... or "ReservationName=x" / "Reservation=x".
    auto names_reservation = [](const std::string& word) {
      const std::string w = core::to_lower(word.substr(0, word.find('=')));
      return w.size() >= 3 && (std::string("reservation").rfind(w, 0) == 0 ||
                               std::string("reservationname").rfind(w, 0) == 0);
    };
    if (cmd == "update") {
      // The record type is implied by its first key (JobId=..., ReservationName=...).
      if (args.size() > 1 && args[1].find('=') != std::string::npos && names_reservation(args[1]))
        return reservation_create_or_update(false, {args.begin() + 1, args.end()});
      if (args.size() > 1 && core::iequals(args[1].substr(0, args[1].find('=')), "NodeName"))
        return node_update({args.begin() + 1, args.end()});
      if (args.size() > 1 && core::iequals(args[1].substr(0, args[1].find('=')), "PartitionName"))
        return scontrol_partition_update({args.begin() + 1, args.end()});
      return job_update({args.begin() + 1, args.end()});
    }
    auto names_node = [](const std::string& word) {
      return core::iequals(word.substr(0, word.find('=')), "NodeName");
    };
    if (cmd == "create" && args.size() > 1 && names_node(args[1]))
      return node_create({args.begin() + 1, args.end()});
    if (cmd == "delete" && args.size() > 1 && names_node(args[1]) &&
        args[1].find('=') != std::string::npos)
      return node_delete(args[1].substr(args[1].find('=') + 1));
    if (cmd == "create") {
      if (args.size() < 2 || !names_reservation(args[1]))
        return usage_error("invalid entity: " + (args.size() > 1 ? args[1] : "") +
                           " for keyword: create");
      // "create reservation K=V..." or "create ReservationName=x K=V...".
      const size_t first = args[1].find('=') == std::string::npos ? 2 : 1;
      return reservation_create_or_update(true, {args.begin() + first, args.end()});
    }
    if (cmd == "delete") {
      if (args.size() < 2 || !names_reservation(args[1]))
        return usage_error("invalid entity: " + (args.size() > 1 ? args[1] : "") +
                           " for keyword: delete");
      const size_t eq = args[1].find('=');
      if (eq != std::string::npos) return reservation_delete(args[1], args[1].substr(eq + 1));
      if (args.size() < 3) return usage_error("too few arguments for keyword:delete");
      return reservation_delete(args[1], args[2]);
    }
    if (args[0] != "show" || args.size() < 2) return usage_error("invalid command: " + args[0]);
    std::string what = args[1];
    std::string id = args.size() > 2 ? args[2] : "";
    if (what == "job" || what == "jobs" || what == "jobid") {
      proto::QueryRequest req{.what = "jobs"};
      std::optional<core::JobRef> ref;
      if (!id.empty()) {
        try {
          ref = core::parse_job_ref(id);
          req.job_id = ref->job_id;
        } catch (const core::ParseError&) {
          // Slurm asks the controller about any number (too large ones too); other text it
          // refuses itself.
          const bool number = std::isdigit(static_cast<unsigned char>(id[0])) != 0;
          std::cerr << (number ? "slurm_load_jobs" : "scontrol_print_job")
                    << " error: Invalid job id specified\n";
          return 1;
        }
      }
      json r = call_controller(req);
      if (!r.value("ok", false)) {
        std::cerr << "slurm_load_jobs error: " << r.value("error", "") << '\n';
        return 1;
      }
      if (r.at("jobs").empty()) {
        std::cout << "No jobs in the system\n";
        return 0;
      }
      bool shown = false;
      for (const auto& j : r.at("jobs")) {
        // "36_5": that task, whether split off or still in the remainder.
        if (ref && !job_matches_ref(j, *ref)) continue;
        shown = true;
        std::cout << show_job(j, one_liner, details);
      }
      if (!shown) {
        std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
        return 1;
      }
      return 0;
    }
    if (what == "step" || what == "steps") {
      if (args.size() > 3) {
        std::cerr << "too many arguments for keyword:show\n";
        return 1;
      }
      proto::QueryRequest req{.what = "jobs", .detail = false};
      if (const uint64_t job = step_query_job_id(id); job != 0) req.job_id = job;
      const CommandResult r = scontrol_show_steps(id, call_controller(req), one_liner);
      std::cerr << r.err;
      std::cout << r.out;
      return r.rc;
    }
    if (what == "node" || what == "nodes") {
      proto::QueryRequest req{.what = "nodes"};
      if (future) req.future = true;  // FUTURE nodes too
      json r = call_controller(req);
      bool found = false;
      for (const auto& n : r.at("nodes")) {
        if (!id.empty() && n.value("name", "") != id) continue;
        found = true;
        std::cout << show_node(n, one_liner, details);
      }
      if (!found && !id.empty()) {
        std::cout << "Node " << id << " not found\n";
        return 1;
      }
      return 0;
    }
    if (what == "partition" || what == "partitions") {
      json r = call_controller(proto::QueryRequest{.what = "partitions"});
      bool found = false;
      for (const auto& p : r.at("partitions")) {
        if (!id.empty() && p.value("name", "") != id) continue;
        found = true;
        std::cout << show_partition(p, one_liner);
      }
      if (!found && !id.empty()) {
        std::cout << "Partition " << id << " not found\n";
        return 1;
      }
      return 0;
    }
    if (names_reservation(what)) return reservation_show(id, one_liner);
    // "config" or any prefix of it ("c", "conf"); one further word is ignored, as by Slurm.
    if (!what.empty() && std::string("config").rfind(what, 0) == 0) {
      if (args.size() > 3) {
        std::cerr << "too many arguments for keyword:show\n";
        return 1;
      }
      const CommandResult r =
          scontrol_show_config(call_controller(proto::QueryRequest{.what = "config"}));
      std::cerr << r.err;
      std::cout << r.out;
      return r.rc;
    }
    if (what == "hostnames" || what == "hostlist" || what == "hostlistsorted") {
      if (args.size() > 3) {
        std::cerr << "too many arguments for keyword:show\n";
        return 1;
      }
      std::map<std::string, std::string> env;
      if (const char* v = std::getenv("SLURM_NODELIST")) env["SLURM_NODELIST"] = v;
      const CommandResult r = scontrol_show_hostlist(what, id, env);
      std::cerr << r.err;
      std::cout << r.out;
      return r.rc;
    }
    return usage_error("invalid entity: " + what + " for keyword: show");
  } catch (const ControllerUnreachable&) {
    std::cerr << "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    return 1;
  }
}

}  // namespace drover::cli
