// sacct: job accounting records from the controller's accounting store, printed as Slurm
// 22.05's sacct prints them (cli/print_fields: every cell followed by a space, JobID
// left-justified, the rest right-justified, text too wide cut with a '+', numbers and durations
// never cut); checked against real sacct by tests/sacct_golden_test.cpp.
#include "cli/sacct.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <tuple>

#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/json_output.hpp"
#include "cli/print_fields.hpp"
#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "core/job.hpp"
#include "core/memsize.hpp"
#include "core/text.hpp"
#include "core/time_spec.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

constexpr uint32_t kNoTask = 0xfffffffe;
// A record's time limit when the job never started without one of its own (store/accounting.hpp).
constexpr int64_t kPartitionLimit = -2;
constexpr const char* kDefaultFields = "jobid,jobname,partition,account,alloccpus,state,exitcode";
constexpr const char* kBriefFields = "jobid,state,exitcode";
constexpr const char* kLongFields =
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,"
    "maxrssnode,maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,"
    "mincputask,avecpu,ntasks,alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,"
    "reqcpufreqmax,reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,"
    "maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,maxdiskwritetask,avediskwrite,"
    "reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxnode,tresusageinmaxtask,"
    "tresusageinmin,tresusageinminnode,tresusageinmintask,tresusageintot,tresusageoutmax,"
    "tresusageoutmaxnode,tresusageoutmaxtask,tresusageoutave,tresusageouttot";

// One line of output: a job, or one of its steps.
struct Row {
  const json* job;
  const json* step;  // null for the job's own line
  int64_t now;
  std::string cluster;
};

// A value: text (cut to the width with a '+'), or a number or duration, which sacct prints
// whole however narrow the column.
struct Value {
  std::string text;
  bool whole = false;
};
Value text(std::string s) { return {std::move(s), false}; }
Value whole(std::string s) { return {std::move(s), true}; }
Value number(long long n) { return {std::to_string(n), true}; }
Value blank() { return {}; }

int64_t i64(const json& j, const char* key) { return j.value(key, int64_t{0}); }
std::string str(const json& j, const char* key) { return j.value(key, std::string()); }

std::string job_id_text(const json& j) {
  const uint64_t array = j.value("array_job_id", uint64_t{0});
  const uint32_t task = j.value("array_task_id", kNoTask);
  if (array != 0 && task != kNoTask) return std::to_string(array) + "_" + std::to_string(task);
  return std::to_string(j.value("job_id", uint64_t{0}));
}

const json& source(const Row& r) { return r.step ? *r.step : *r.job; }
bool is_batch(const Row& r) { return r.step && str(*r.step, "name") == "batch"; }

int64_t elapsed(const Row& r) {
  const int64_t start = i64(source(r), "start_time");
  if (start == 0) return 0;
  int64_t end = i64(source(r), "end_time");
  if (end == 0) end = r.now;
  return std::max<int64_t>(0, end - start);
}

// A job never allocated counts the CPUs it asked for.
int64_t cpus(const Row& r) {
  if (r.step) return i64(*r.step, "ncpus");
  const int64_t n = i64(*r.job, "alloc_cpus");
  return n ? n : i64(*r.job, "req_cpus");
}

std::string exit_text(const json& j) {
  return std::to_string(j.value("exit_code", 0)) + ":" + std::to_string(j.value("exit_signal", 0));
}

std::string time_text(int64_t t) { return core::format_timestamp(t); }

Value state(const Row& r) {
  if (r.step) return text(str(*r.step, "state"));
  std::string s = str(*r.job, "state");
  const int64_t by = r.job->value("cancelled_by", int64_t{-1});
  if (s == "CANCELLED" && by >= 0) s += " by " + std::to_string(by);
  return text(s);
}

// The highest exit code of the job's srun steps (and the signal that went with it); the batch
// step's is the job's own ExitCode and does not count.
Value derived_exit(const Row& r) {
  if (r.step) return blank();
  int code = 0, sig = 0;
  for (const auto& s : r.job->value("steps", json::array())) {
    if (str(s, "name") == "batch") continue;
    if (s.value("exit_code", 0) > code ||
        (s.value("exit_code", 0) == code && s.value("exit_signal", 0) > sig)) {
      code = s.value("exit_code", 0);
      sig = s.value("exit_signal", 0);
    }
  }
  return text(std::to_string(code) + ":" + std::to_string(sig));
}

// The time the job waited from eligible to start (now while it waits).
int64_t reserved(const json& j) {
  const int64_t eligible = i64(j, "eligible_time");
  if (eligible == 0) return 0;
  const int64_t start = i64(j, "start_time");
  return std::max<int64_t>(0, (start ? start : i64(j, "end_time")) - eligible);
}

struct FieldDef {
  const char* name;
  int len;  // negative: left-justified
  std::function<Value(const Row&)> get;
};

Value job_only(const Row& r, const std::function<Value(const json&)>& f) {
  return r.step ? blank() : f(*r.job);
}
// What job_acct_gather would have measured: nothing is gathered (Slurm's default
// JobAcctGatherType=jobacct_gather/none), so these print blank.
Value not_gathered(const Row&) { return blank(); }
// CPU times: with nothing gathered Slurm prints zero for jobs and steps alike.
Value zero_time(const Row&) { return text("00:00:00"); }
// Per-step figures gathering would fill: 0 on step lines, blank on the job's.
Value step_zero(const Row& r) { return r.step ? number(0) : blank(); }

// Peak memory where the agent measured it (the batch step's cgroup), as sacct prints sizes in
// KB: the largest unit that divides it exactly ("102396K", "100M"); blank where not gathered.
Value max_rss(const Row& r) {
  if (!r.step) return blank();
  int64_t v = r.step->value("max_rss_kb", int64_t{-1});
  if (v < 0) return blank();
  if (v == 0) return number(0);
  const char* units = "KMGTP";
  int u = 0;
  while (v % 1024 == 0 && u < 4) {
    v /= 1024;
    ++u;
  }
  return text(std::to_string(v) + units[u]);
}
// The steps that have a MaxRSS (the batch step) are one task: its average is its peak, and
// the peak is task 0's.
Value ave_rss(const Row& r) { return max_rss(r); }
Value max_rss_task(const Row& r) {
  return r.step && r.step->value("max_rss_kb", int64_t{-1}) >= 0 ? number(0) : blank();
}

// ".NAME" after a step's job id ("batch", "0", ...), nothing on the job's own line.
std::string step_suffix(const Row& r) { return r.step ? "." + str(*r.step, "name") : ""; }

// Every field, in sacct's order (--helpformat lists them so; -o matches names in this order).
const std::vector<FieldDef>& field_defs() {
  static const std::vector<FieldDef> defs = {
      {"Account", 10, [](const Row& r) { return text(str(*r.job, "account")); }},
      {"AdminComment", 15, [](const Row&) { return blank(); }},
      {"AllocCPUS", 10, [](const Row& r) { return number(cpus(r)); }},
      {"AllocNodes", 10,
       [](const Row& r) {
         if (r.step) return number(i64(*r.step, "nnodes"));
         return number(i64(*r.job, "alloc_cpus") > 0 ? i64(*r.job, "nnodes") : 0);
       }},
      {"AllocTRES", 10, [](const Row& r) { return text(str(source(r), "alloc_tres")); }},
      {"AssocID", 7, [](const Row&) { return blank(); }},
      {"AveCPU", 10, not_gathered},
      {"AveCPUFreq", 10, step_zero},
      {"AveDiskRead", 14, not_gathered},
      {"AveDiskWrite", 14, not_gathered},
      {"AvePages", 10, not_gathered},
      {"AveRSS", 10, ave_rss},
      {"AveVMSize", 10, not_gathered},
      {"BlockID", 16, [](const Row&) { return blank(); }},
      {"Cluster", 10, [](const Row& r) { return text(r.cluster); }},
      {"Comment", 14, [](const Row&) { return blank(); }},
      {"Constraints", 19, [](const Row&) { return blank(); }},
      {"ConsumedEnergy", 14, step_zero},
      {"ConsumedEnergyRaw", 17, step_zero},
      {"Container", 19, [](const Row&) { return blank(); }},
      {"CPUTime", 10, [](const Row& r) { return whole(core::format_hms(elapsed(r) * cpus(r))); }},
      {"CPUTimeRAW", 10, [](const Row& r) { return number(elapsed(r) * cpus(r)); }},
      {"DBIndex", -10, [](const Row&) { return blank(); }},
      {"DerivedExitCode", 15, derived_exit},
      {"Elapsed", 10, [](const Row& r) { return whole(core::format_hms(elapsed(r))); }},
      {"ElapsedRaw", 10, [](const Row& r) { return number(elapsed(r)); }},
      {"Eligible", 19,
       [](const Row& r) {
         return text(time_text(r.step ? i64(*r.step, "start_time") : i64(*r.job, "eligible_time")));
       }},
      {"End", 19, [](const Row& r) { return text(time_text(i64(source(r), "end_time"))); }},
      {"ExitCode", 8, [](const Row& r) { return text(exit_text(source(r))); }},
      {"Flags", 19, [](const Row&) { return blank(); }},
      {"GID", 6,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return number(i64(j, "gid")); });
       }},
      {"Group", 9,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "group")); });
       }},
      {"JobID", -12, [](const Row& r) { return text(job_id_text(*r.job) + step_suffix(r)); }},
      {"JobIDRaw", -12,
       [](const Row& r) {
         return text(std::to_string(r.job->value("job_id", uint64_t{0})) + step_suffix(r));
       }},
      {"JobName", 10,
       [](const Row& r) {
         if (!r.step) return text(str(*r.job, "name"));
         const std::string name = str(*r.step, "job_name");  // records before steps had one
         return text(name.empty() ? str(*r.step, "name") : name);
       }},
      {"Layout", 9, [](const Row&) { return blank(); }},
      {"MaxDiskRead", 12, not_gathered},
      {"MaxDiskReadNode", 15, not_gathered},
      {"MaxDiskReadTask", 15, not_gathered},
      {"MaxDiskWrite", 12, not_gathered},
      {"MaxDiskWriteNode", 16, not_gathered},
      {"MaxDiskWriteTask", 16, not_gathered},
      {"MaxPages", 8, not_gathered},
      {"MaxPagesNode", 12, not_gathered},
      {"MaxPagesTask", 14, not_gathered},
      {"MaxRSS", 10, max_rss},
      {"MaxRSSNode", 10, not_gathered},
      {"MaxRSSTask", 10, max_rss_task},
      {"MaxVMSize", 10, not_gathered},
      {"MaxVMSizeNode", 14, not_gathered},
      {"MaxVMSizeTask", 14, not_gathered},
      {"McsLabel", 12, [](const Row&) { return blank(); }},
      {"MinCPU", 10, not_gathered},
      {"MinCPUNode", 10, not_gathered},
      {"MinCPUTask", 10, not_gathered},
      {"NCPUS", 10, [](const Row& r) { return number(cpus(r)); }},
      {"NNodes", 8, [](const Row& r) { return text(std::to_string(i64(source(r), "nnodes"))); }},
      {"NodeList", 15,
       [](const Row& r) {
         std::string n = str(source(r), "nodelist");
         return text(n.empty() ? "None assigned" : n);
       }},
      {"NTasks", 8,
       [](const Row& r) { return r.step ? number(r.step->value("ntasks", 1)) : blank(); }},
      {"Partition", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "partition")); });
       }},
      {"Priority", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return number(i64(j, "priority")); });
       }},
      {"QOS", 10,
       [](const Row& r) { return job_only(r, [](const json& j) { return text(str(j, "qos")); }); }},
      {"QOSRAW", 6, [](const Row&) { return blank(); }},
      {"Reason", 22,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "reason")); });
       }},
      // No frequency was asked for: "Unknown", but 0 on the batch step.
      {"ReqCPUFreq", 10, [](const Row& r) { return is_batch(r) ? number(0) : text("Unknown"); }},
      {"ReqCPUFreqGov", 13, [](const Row& r) { return is_batch(r) ? number(0) : text("Unknown"); }},
      {"ReqCPUFreqMax", 13, [](const Row& r) { return is_batch(r) ? number(0) : text("Unknown"); }},
      {"ReqCPUFreqMin", 13, [](const Row& r) { return is_batch(r) ? number(0) : text("Unknown"); }},
      {"ReqCPUS", 8,
       [](const Row& r) {
         return number(r.step ? i64(*r.step, "ncpus") : i64(*r.job, "req_cpus"));
       }},
      {"ReqMem", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) {
           const int64_t mb = i64(j, "req_mem_mb");
           return text(mb > 0 ? core::format_mem_mb(mb) : "0");
         });
       }},
      {"ReqNodes", 8,
       [](const Row& r) {
         return number(r.step ? i64(*r.step, "nnodes") : i64(*r.job, "req_nodes"));
       }},
      {"ReqTRES", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "req_tres")); });
       }},
      {"Reservation", 20, [](const Row&) { return blank(); }},
      {"ReservationId", 8, [](const Row&) { return blank(); }},
      {"Reserved", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return whole(core::format_hms(reserved(j))); });
       }},
      {"ResvCPU", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) {
           return whole(core::format_hms(reserved(j) * i64(j, "req_cpus")));
         });
       }},
      {"ResvCPURAW", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return number(reserved(j) * i64(j, "req_cpus")); });
       }},
      {"Start", 19,
       [](const Row& r) {
         const int64_t t = i64(source(r), "start_time");
         return text(t ? time_text(t) : "None");  // never started
       }},
      {"State", 10, state},
      {"Submit", 19,
       [](const Row& r) {
         return text(time_text(r.step ? i64(*r.step, "start_time") : i64(*r.job, "submit_time")));
       }},
      {"SubmitLine", 20, [](const Row&) { return blank(); }},
      {"Suspended", 10, [](const Row&) { return whole("00:00:00"); }},
      {"SystemComment", 15,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "system_comment")); });
       }},
      {"SystemCPU", 10, zero_time},
      {"Timelimit", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) {
           const int64_t tl = j.value("time_limit_min", int64_t{-1});
           return text(tl == kPartitionLimit ? "Partition_Limit"
                       : tl < 0              ? "UNLIMITED"
                                             : core::format_hms(tl * 60));
         });
       }},
      {"TimelimitRaw", 10,
       [](const Row& r) {
         return job_only(r, [](const json& j) {
           const int64_t tl = j.value("time_limit_min", int64_t{-1});
           if (tl == kPartitionLimit) return text("Partition_Limit");
           return tl < 0 ? text("UNLIMITED") : number(tl);
         });
       }},
      {"TotalCPU", 10, zero_time},
      {"TRESUsageInAve", 14, not_gathered},
      {"TRESUsageInMax", 14, not_gathered},
      {"TRESUsageInMaxNode", 18, not_gathered},
      {"TRESUsageInMaxTask", 18, not_gathered},
      {"TRESUsageInMin", 14, not_gathered},
      {"TRESUsageInMinNode", 18, not_gathered},
      {"TRESUsageInMinTask", 18, not_gathered},
      {"TRESUsageInTot", 14, not_gathered},
      {"TRESUsageOutAve", 15, not_gathered},
      {"TRESUsageOutMax", 15, not_gathered},
      {"TRESUsageOutMaxNode", 19, not_gathered},
      {"TRESUsageOutMaxTask", 19, not_gathered},
      {"TRESUsageOutMin", 15, not_gathered},
      {"TRESUsageOutMinNode", 19, not_gathered},
      {"TRESUsageOutMinTask", 19, not_gathered},
      {"TRESUsageOutTot", 15, not_gathered},
      {"UID", 6,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return number(i64(j, "uid")); });
       }},
      {"User", 9,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "user")); });
       }},
      {"UserCPU", 10, zero_time},
      {"WCKey", 10, [](const Row&) { return blank(); }},
      {"WCKeyID", 10,
       [](const Row& r) { return job_only(r, [](const json&) { return number(0); }); }},
      {"WorkDir", 20,
       [](const Row& r) {
         return job_only(r, [](const json& j) { return text(str(j, "workdir")); });
       }},
  };
  return defs;
}

struct Field {
  const FieldDef* def;
  int len;
};

bool iequals_prefix(const std::string& name, const std::string& given) {
  if (given.size() > name.size()) return false;
  for (size_t i = 0; i < given.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) !=
        std::tolower(static_cast<unsigned char>(given[i])))
      return false;
  return true;
}

// "jobid,state%20,jobname%-30": names matched as sacct matches them (case-insensitive, the first
// field the given text begins), "ALL" for every field. Returns the bad name on error.
std::optional<std::string> parse_fields(const std::string& spec, std::vector<Field>& out) {
  for (const FormatItem& item : parse_format_list(spec)) {
    if (item.name.empty()) continue;
    if (core::to_upper(item.name) == "ALL") {
      for (const auto& d : field_defs()) out.push_back({&d, d.len});
      continue;
    }
    const FieldDef* found = nullptr;
    for (const auto& d : field_defs())
      if (iequals_prefix(d.name, item.name)) {
        found = &d;
        break;
      }
    if (!found) return item.name;
    out.push_back({found, item.has_width && item.width != 0 ? item.width : found->len});
  }
  return std::nullopt;
}

std::string render(const json& jobs, const std::vector<Field>& fields, const PrintOptions& o,
                   bool allocations, int64_t now, const std::string& cluster) {
  std::vector<PrintColumn> columns;
  for (const auto& f : fields) columns.push_back({f.def->name, f.len});
  const FieldPrinter printer(std::move(columns), o);
  std::string out = printer.header();
  auto line = [&](const Row& r) {
    std::vector<PrintCell> cells;
    for (const auto& f : fields) {
      Value v = f.def->get(r);
      cells.push_back({std::move(v.text), v.whole});
    }
    out += printer.row(cells);
  };
  for (const auto& j : jobs) {
    // A job named only by some of its steps (-j N.0) shows just those.
    if (j.value("show_full", true)) line({&j, nullptr, now, cluster});
    if (allocations) continue;
    for (const auto& s : j.value("steps", json::array())) line({&j, &s, now, cluster});
  }
  return out;
}

// sacct prints each name in 19 columns, a space between them and a newline after every
// fourth and at the end.
std::string help_format() {
  std::string out;
  const auto& defs = field_defs();
  for (size_t i = 0; i < defs.size(); ++i) {
    std::string name = defs[i].name;
    name.resize(std::max<size_t>(name.size(), 19), ' ');
    out += name + ((i + 1) % 4 == 0 || i + 1 == defs.size() ? "\n" : " ");
  }
  return out;
}

// --help: Slurm 22.05's layout and option set, drover's words.
constexpr const char* kHelp =
    "sacct [<OPTION>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a, --allusers:\n"
    "                   jobs of every user (by default only your own;\n"
    "                   root sees everyone's by default).\n"
    "     -A, --accounts:\n"
    "                   only jobs charged to these accounts (comma\n"
    "                   separated).\n"
    "     -b, --brief:\n"
    "                   a short report: job id, state and exit code.\n"
    "     -B, --batch-script:\n"
    "                   print the batch script of the job(s).\n"
    "     -c, --completion:\n"
    "                   read job completion records instead of\n"
    "                   accounting records.\n"
    "     -C, --constraints:\n"
    "                   only jobs that asked for these node features.\n"
    "     --delimiter:\n"
    "                   the separator -p and -P put between fields\n"
    "                   (default '|').\n"
    "     -D, --duplicates:\n"
    "                   every record of a job id reused or requeued,\n"
    "                   not only the last.\n"
    "     -e, --helpformat:\n"
    "                   list the field names --format takes.\n"
    "     -E, --endtime:\n"
    "                   only jobs in a state of the -s list before this\n"
    "                   time; for the time forms see -S.\n"
    "     --env-vars:\n"
    "                   print the environment the batch job had.\n"
    "     --federation:\n"
    "                   jobs of the whole federation, if in one.\n"
    "     -f, --file:\n"
    "                   read the records from this file instead of the\n"
    "                   accounting store.\n"
    "     -F, --flags:\n"
    "                   flags for the query (see the man page).\n"
    "     -g, --gid, --group:\n"
    "                   only jobs of these groups (names or ids).\n"
    "     -h, --help:\n"
    "                   print this help.\n"
    "     -i, --nnodes:\n"
    "                   only jobs that ran on this many nodes\n"
    "                   (N or min-max).\n"
    "     -I, --ncpus:\n"
    "                   only jobs that had this many CPUs (N or min-max).\n"
    "     -j, --jobs:\n"
    "                   only these jobs or steps: job[.step] or\n"
    "                   job_arraytask[.step], comma separated.\n"
    "     --json:\n"
    "                   print the records as a data_parser JSON document.\n"
    "     -k, --timelimit-min:\n"
    "                   only jobs with at least this time limit; with -K\n"
    "                   a range.\n"
    "     -K, --timelimit-max:\n"
    "                   only jobs with at most this time limit.\n"
    "     -l, --long:\n"
    "                   the long report (many fields).\n"
    "     -L, --allclusters:\n"
    "                   jobs of every cluster, not only this one.\n"
    "     --local:\n"
    "                   jobs of this cluster only.\n"
    "     -M, --clusters:\n"
    "                   jobs of these clusters (comma separated).\n"
    "     -n, --noheader:\n"
    "                   leave out the header lines.\n"
    "     --name:\n"
    "                   only jobs with these names (comma separated).\n"
    "     -N, --nodelist:\n"
    "                   only jobs that ran on these nodes.\n"
    "     --noconvert:\n"
    "                   print sizes in the units they were recorded in.\n"
    "     -o, --format:\n"
    "                   fields to print, comma separated; a field may\n"
    "                   end with %NUMBER for its width (see -e).\n"
    "     -p, --parsable:\n"
    "                   fields split by '|', one more '|' at the end.\n"
    "     -P, --parsable2:\n"
    "                   fields split by '|', none at the end.\n"
    "     -q, --qos:\n"
    "                   only jobs with these QOS (comma separated).\n"
    "     -r, --partition:\n"
    "                   only jobs in these partitions.\n"
    "     -R, --reason:\n"
    "                   only jobs that pended for these reasons.\n"
    "     -s, --state:\n"
    "                   only jobs in these states (comma separated),\n"
    "                   e.g. pending, running, completed, failed,\n"
    "                   timeout, cancelled, node_fail, out_of_memory.\n"
    "     -S, --starttime:\n"
    "                   only jobs in a state of the -s list after this\n"
    "                   time: HH:MM[:SS][AM|PM], MMDD[YY],\n"
    "                   MM/DD[/YY], MM.DD[.YY] or YYYY-MM-DD[THH:MM[:SS]];\n"
    "                   without -s, jobs that were eligible then.\n"
    "     -T, --truncate:\n"
    "                   clip the start and end times to -S and -E.\n"
    "     -u, --uid, --user:\n"
    "                   only jobs of these users (names or ids).\n"
    "     --units=[KMGTP]:\n"
    "                   print sizes in this unit.\n"
    "     --usage:\n"
    "                   print a short synopsis.\n"
    "     --use-local-uid:\n"
    "                   look user names up locally.\n"
    "     -v, --verbose:\n"
    "                   more detail about what sacct does.\n"
    "     -V, --version:\n"
    "                   print the version and exit.\n"
    "     -W, --wckeys:\n"
    "                   only jobs with these workload keys.\n"
    "     --whole-hetjob=[yes|no]:\n"
    "                   a component of a heterogeneous job selects\n"
    "                   every component of it (yes, the default).\n"
    "     -x, --associations:\n"
    "                   only jobs of these association ids.\n"
    "     -X, --allocations:\n"
    "                   only the jobs' allocations, not their steps.\n"
    "     --yaml:\n"
    "                   print the records as YAML.\n"
    "\n"
    "  Without -S, -E and -j, sacct lists the jobs since midnight; see the man\n"
    "  page for the time forms and for the fields -o takes (sacct -e lists them).\n";

constexpr const char* kUsage =
    "Usage: sacct [-a] [-b] [-D] [-E time] [-j job[.step]] [-n] [-N nodes] [-o fields]\n"
    "             [-p|-P] [-s states] [-S time] [-u users] [-X] [--helpformat]\n";

enum LongOnly {
  kHelpOpt = 0x100,
  kUsageOpt,
  kName,
  kLocal,
  kFederation,
  kNoconvert,
  kUnits,
  kJson,
  kYaml,
  kDelimiter,
  kEnvVars,
  kUseLocalUid,
  kWholeHetjob,
  kReason,
};

const std::vector<LongOption> kLongOptions = {
    {"allusers", ArgKind::None, 'a'},
    {"accounts", ArgKind::Required, 'A'},
    {"allocations", ArgKind::None, 'X'},
    {"brief", ArgKind::None, 'b'},
    {"batch-script", ArgKind::None, 'B'},
    {"completion", ArgKind::None, 'c'},
    {"constraints", ArgKind::Required, 'C'},
    {"delimiter", ArgKind::Required, kDelimiter},
    {"duplicates", ArgKind::None, 'D'},
    {"federation", ArgKind::None, kFederation},
    {"helpformat", ArgKind::None, 'e'},
    {"help-fields", ArgKind::None, 'e'},
    {"endtime", ArgKind::Required, 'E'},
    {"env-vars", ArgKind::None, kEnvVars},
    {"file", ArgKind::Required, 'f'},
    {"flags", ArgKind::Required, 'F'},
    {"gid", ArgKind::Required, 'g'},
    {"group", ArgKind::Required, 'g'},
    {"help", ArgKind::None, kHelpOpt},
    {"local", ArgKind::None, kLocal},
    {"name", ArgKind::Required, kName},
    {"nnodes", ArgKind::Required, 'i'},
    {"ncpus", ArgKind::Required, 'I'},
    {"jobs", ArgKind::Required, 'j'},
    {"timelimit-min", ArgKind::Required, 'k'},
    {"timelimit-max", ArgKind::Required, 'K'},
    {"long", ArgKind::None, 'l'},
    {"allclusters", ArgKind::None, 'L'},
    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'},
    {"nodelist", ArgKind::Required, 'N'},
    {"noconvert", ArgKind::None, kNoconvert},
    {"units", ArgKind::Required, kUnits},
    {"noheader", ArgKind::None, 'n'},
    {"fields", ArgKind::Required, 'o'},
    {"format", ArgKind::Required, 'o'},
    {"parsable", ArgKind::None, 'p'},
    {"parsable2", ArgKind::None, 'P'},
    {"qos", ArgKind::Required, 'q'},
    {"partition", ArgKind::Required, 'r'},
    {"reason", ArgKind::Required, kReason},
    {"state", ArgKind::Required, 's'},
    {"starttime", ArgKind::Required, 'S'},
    {"truncate", ArgKind::None, 'T'},
    {"uid", ArgKind::Required, 'u'},
    {"use-local-uid", ArgKind::None, kUseLocalUid},
    {"usage", ArgKind::None, kUsageOpt},
    {"user", ArgKind::Required, 'u'},
    {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
    {"wckeys", ArgKind::Required, 'W'},
    {"whole-hetjob", ArgKind::Optional, kWholeHetjob},
    {"associations", ArgKind::Required, 'x'},
    {"json", ArgKind::Optional, kJson},
    {"yaml", ArgKind::Optional, kYaml},
};

// Options drover's sacct refuses rather than print a different report than the one asked for.
std::string refused_option(int id) {
  switch (id) {
    case 'B':
      return "-B/--batch-script";
    case 'F':
      return "-F/--flags";
    case 'k':
      return "-k/--timelimit-min";
    case 'K':
      return "-K/--timelimit-max";
    case kReason:
      return "-R/--reason";
    case kDelimiter:
      return "--delimiter";
    case kEnvVars:
      return "--env-vars";
    default:
      return "";
  }
}

CommandResult fail(CommandResult r, const std::string& msg, int rc = 1) {
  r.err += msg;
  r.rc = rc;
  return r;
}

}  // namespace

extern const CommandHelp kSacctHelp{
    "sacct", "reports on jobs and job steps from the accounting records", kUsage, kHelp,
    "Options follow getopt_long's rules: any unique prefix of a long option is taken.\n\n"
    "drover keeps its accounting records in the controller's own store; there is no slurmdbd. "
    "-M/--clusters therefore fails as Slurm's does without a database. "
    "-B/--batch-script, --env-vars, -F/--flags, -k/-K (time limit ranges), -R/--reason and "
    "--delimiter are refused with \"not supported by drover\"; -c, -C, -f, -i, -I, -q, -W, "
    "-x, --use-local-uid and --whole-hetjob are accepted and do not filter yet.\n\n"
    "-V prints \"slurm 22.05.8\", the release drover's commands follow."};

int64_t local_midnight(int64_t now) {
  std::time_t t = static_cast<std::time_t>(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(std::mktime(&tm));
}

int64_t parse_past_time(const std::string& text, int64_t now) {
  int64_t t = core::parse_time_spec(text, now);
  const std::string lower = core::to_lower(text);
  if (t <= now || lower.rfind("now", 0) == 0 || lower.find("tomorrow") != std::string::npos)
    return t;
  // parse_time_spec moves a time of day that has passed to tomorrow and a date without a year
  // that has passed to next year; sacct means the past ones.
  if (t - now <= 86400) return t - 86400;
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  tm.tm_year -= 1;
  tm.tm_isdst = -1;
  return static_cast<int64_t>(std::mktime(&tm));
}

CommandResult run_sacct(const std::vector<std::string>& args, const CommandEnv& env, int64_t now) {
  CommandResult res;
  const ParsedArgs parsed = parse_options(
      "sacct", args, "aA:bBcC:DeE:f:F:g:hi:I:j:k:K:lLM:nN:o:pPq:r:s:S:Ttu:vVW:x:X", kLongOptions);
  if (!parsed.error.empty())
    return fail(std::move(res), parsed.error + "\nTry \"sacct --help\" for more information\n");
  bool all_users = false, allocations = false, brief = false, long_format = false,
       format_set = false, duplicates = false;
  PrintOptions print;
  std::string format;
  std::optional<int64_t> start, end;
  proto::QueryRequest req{.what = "acct_jobs"};
  std::vector<uint64_t> job_ids;
  std::vector<std::pair<uint64_t, uint32_t>> tasks;  // -j N_M
  struct Selected {
    uint64_t id;
    std::optional<uint32_t> task;
    std::optional<std::string> step;  // -j N.S: that step only
  };
  std::vector<Selected> selected;
  bool jobs_given = false, states_given = false;
  std::vector<std::string> names;
  JsonRequest json_req;
  for (const ParsedOption& o : parsed.options) {
    const std::string v = o.value.value_or("");
    switch (o.id) {
      case 'a':
        all_users = true;
        break;
      case 'A':
        req.accounts = core::split_list(v, ',');
        break;
      case 'b':
        brief = true;
        break;
      case 'D':
        duplicates = true;
        break;
      case 'e':
        res.out = help_format();
        return res;
      case 'E':
      case 'S':
        try {
          (o.id == 'S' ? start : end) = parse_past_time(v, now);
        } catch (const core::ParseError& e) {
          std::string why = e.what();
          return fail(std::move(res), why.empty() ? "" : why + "\n");
        }
        break;
      case 'g': {
        std::vector<uint32_t> gids;
        for (const auto& g : core::split_list(v, ',')) {
          if (g.empty() || g.find_first_not_of("0123456789") != std::string::npos)
            return fail(std::move(res), "sacct: error: Invalid group id: " + g + "\n");
          gids.push_back(static_cast<uint32_t>(std::stoul(g)));
        }
        req.gids = gids;
        break;
      }
      case kHelpOpt:
      case 'h':
        res.out = kHelp;
        return res;
      case kUsageOpt:
        res.out = kUsage;
        return res;
      case 'j':
        jobs_given = true;
        for (const auto& item : core::split_list(v, ',')) {
          std::string id = item.substr(0, item.find('.'));
          std::optional<uint32_t> task;
          if (auto us = id.find('_'); us != std::string::npos) {
            const std::string t = id.substr(us + 1);
            id = id.substr(0, us);
            if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
              return fail(std::move(res), "sacct: fatal: Bad job/step specified: " + item + "\n");
            task = static_cast<uint32_t>(std::stoul(t));
          }
          if (id.empty() || id.size() > 10 ||
              id.find_first_not_of("0123456789") != std::string::npos)
            return fail(std::move(res), "sacct: fatal: Bad job/step specified: " + item + "\n");
          job_ids.push_back(std::stoull(id));
          if (task) tasks.emplace_back(job_ids.back(), *task);
          std::optional<std::string> step;
          if (const auto dot = item.find('.'); dot != std::string::npos)
            step = item.substr(dot + 1);
          selected.push_back({job_ids.back(), task, step});
        }
        break;
      case 'l':
        long_format = true;
        break;
      case 'M':
        if (v != "all" && v != "-1")
          return fail(std::move(res),
                      "sacct: error: Problem talking to the database: Connection refused\n");
        break;
      case 'n':
        print.no_header = true;
        break;
      case 'N': {
        try {
          req.nodes = core::expand_hostlist(v);
        } catch (const std::exception&) {
          return fail(std::move(res), "sacct: error: Invalid node list: " + v + "\n");
        }
        break;
      }
      case 'o':
        format += (format.empty() ? "" : ",") + v;
        format_set = true;
        break;
      case 'p':
        print.parsable = true;
        break;
      case 'P':
        print.parsable2 = true;
        break;
      case 'r':
        req.partitions = core::split_list(v, ',');
        break;
      case 's': {
        states_given = true;
        std::vector<std::string> states;
        for (const auto& s : core::split_list(v, ',')) {
          auto st = core::parse_job_state(s);
          if (!st)
            return fail(std::move(res), "sacct: fatal: unrecognized job state value '" + s + "'\n");
          states.emplace_back(core::job_state_name(*st));
        }
        req.states = states;
        break;
      }
      case 'u': {
        std::vector<uint32_t> uids;
        for (const auto& name : core::split_list(v, ',')) {
          if (name == "-1") {
            all_users = true;
            continue;
          }
          auto uid = env.uid_of(name);
          if (!uid) return fail(std::move(res), "sacct: error: Invalid user id: " + name + "\n");
          uids.push_back(*uid);
        }
        if (!uids.empty()) req.uids = uids;
        break;
      }
      case 'V':
        res.out = version_text();
        return res;
      case 'X':
        allocations = true;
        break;
      case kName:
        names = core::split_list(v, ',');
        break;
      case kJson:
      case kYaml:
        (o.id == kJson ? json_req.json : json_req.yaml) = true;
        json_req.parser = o.value;
        break;
      default:  // -c -C -D -f -i -I -L -q -T -t -v -W -x, --local, --federation, --units...
        if (const std::string name = refused_option(o.id); !name.empty())
          return fail(std::move(res), "sacct: error: " + name + " is not supported by drover\n");
        break;
    }
  }
  if (!parsed.operands.empty())
    return fail(
        std::move(res), "sacct: error: Unknown arguments:" + [&] {
          std::string s;
          for (const auto& a : parsed.operands) s += " " + a;
          return s;
        }() + "\n");

  if (auto done = json_preamble("sacct", json_req)) return *done;

  // Fields: -b, then -o, then -l, then SACCT_FORMAT, then the default.
  if (brief) {
    format = kBriefFields;
  } else if (!format_set && long_format) {
    format = kLongFields;
  } else if (!format_set) {
    auto it = env.env.find("SACCT_FORMAT");
    format = it != env.env.end() && !it->second.empty() ? it->second : kDefaultFields;
  }
  std::vector<Field> fields;
  if (auto bad = parse_fields(format, fields))
    return fail(std::move(res), "sacct: error: Invalid field requested: \"" + *bad + "\"\n");

  // The default window (man sacct, DEFAULT TIME WINDOW).
  if (!start) start = jobs_given ? 0 : states_given ? now : local_midnight(now);
  if (!end) end = states_given ? *start : now;
  if (states_given && *end < *start) end = start;
  if (*end < *start)
    return fail(std::move(res), "sacct: error: Start time (" + core::format_timestamp(*start) +
                                    ") requested is after end time (" +
                                    core::format_timestamp(*end) + ").\n");
  req.start = *start;
  req.end = *end;
  if (jobs_given) {
    req.job_ids = job_ids;
    if (!states_given) req.include_ineligible = true;
  }
  // Users see their own jobs unless -a or -u; root sees everyone's.
  const std::optional<uint32_t> me = env.uid_of(env.user);
  if (all_users || (me && *me == 0)) {
    if (!req.uids) req.all_users = true;
  } else if (!req.uids && me) {
    req.uids = std::vector<uint32_t>{*me};
  }

  const std::optional<json> answer =
      query_controller(env, req.to_json(), "job accounting data", res);
  if (!answer) return res;
  json jobs = json::array();
  for (const auto& j : answer->value("jobs", json::array())) {
    if (!names.empty() &&
        std::find(names.begin(), names.end(), j.value("name", std::string())) == names.end())
      continue;
    if (!tasks.empty()) {
      const uint64_t id = j.value("job_id", uint64_t{0});
      const uint64_t array = j.value("array_job_id", uint64_t{0});
      const uint32_t task = j.value("array_task_id", kNoTask);
      bool keep = false;
      for (uint64_t want : job_ids) {
        bool whole = std::none_of(tasks.begin(), tasks.end(),
                                  [&](const auto& t) { return t.first == want; });
        if (whole && (id == want || array == want)) keep = true;
      }
      for (const auto& [a, t] : tasks)
        if ((array == a && task == t) || (array == 0 && id == a)) keep = true;
      if (!keep) continue;
    }
    jobs.push_back(j);
    // -N: of the job's steps only those that ran on one of the nodes.
    if (req.nodes) {
      const std::vector<std::string>& wanted = *req.nodes;
      json steps = json::array();
      for (const auto& s : jobs.back().value("steps", json::array())) {
        std::vector<std::string> ran;
        try {
          ran = core::expand_hostlist(str(s, "nodelist"));
        } catch (const std::exception&) {
        }
        if (std::any_of(ran.begin(), ran.end(), [&](const std::string& n) {
              return std::find(wanted.begin(), wanted.end(), n) != wanted.end();
            }))
          steps.push_back(s);
      }
      jobs.back()["steps"] = std::move(steps);
    }
    // Steps named with -j N.S: unless the job is also named whole, only those.
    const uint64_t id = j.value("job_id", uint64_t{0});
    const uint64_t array = j.value("array_job_id", uint64_t{0});
    const uint32_t task = j.value("array_task_id", kNoTask);
    bool whole = selected.empty();
    std::vector<std::string> wanted_steps;
    for (const auto& sel : selected) {
      const bool names_it =
          sel.task ? (array == sel.id && task == *sel.task) || (array == 0 && id == sel.id)
                   : id == sel.id || array == sel.id;
      if (!names_it) continue;
      if (sel.step)
        wanted_steps.push_back(*sel.step);
      else
        whole = true;
    }
    if (!whole && !wanted_steps.empty()) {
      json& kept = jobs.back();
      json steps = json::array();
      for (const auto& s : kept.value("steps", json::array()))
        if (std::find(wanted_steps.begin(), wanted_steps.end(), str(s, "name")) !=
            wanted_steps.end())
          steps.push_back(s);
      kept["steps"] = std::move(steps);
      kept["show_full"] = false;
    }
  }
  // A requeued job has a record per run (the earlier ones REQUEUED); without -D only the
  // latest of those selected.
  if (!duplicates) {
    auto rank = [](const json& j) {
      return std::make_pair(str(j, "state") != "REQUEUED", i64(j, "submit_time"));
    };
    std::map<uint64_t, std::pair<bool, int64_t>> latest;
    for (const auto& j : jobs) {
      auto [it, fresh] = latest.emplace(j.value("job_id", uint64_t{0}), rank(j));
      if (!fresh) it->second = std::max(it->second, rank(j));
    }
    json kept = json::array();
    for (auto& j : jobs)
      if (rank(j) == latest[j.value("job_id", uint64_t{0})]) kept.push_back(std::move(j));
    jobs = std::move(kept);
  }
  const std::string cluster = answer->value("cluster_name", std::string());
  if (json_req.json) {
    // The selected jobs with their steps (none with -X), as Slurm's sacct --json gives them.
    std::vector<json> records;
    for (auto& j : jobs) {
      if (allocations) j["steps"] = json::array();
      records.push_back(std::move(j));
    }
    res.out = json_text(acct_jobs_document(command_meta("sacct", args, cluster), records, cluster));
    return res;
  }
  res.out = render(jobs, fields, print, allocations, now, cluster);
  return res;
}

int sacct_main(const std::vector<std::string>& args) {
  CommandEnv env = system_env();
  if (const char* v = std::getenv("SACCT_FORMAT")) env.env["SACCT_FORMAT"] = v;
  const CommandResult r = run_sacct(args, env, static_cast<int64_t>(std::time(nullptr)));
  std::cerr << r.err;
  std::cout << r.out;
  return r.rc;
}

}  // namespace drover::cli
