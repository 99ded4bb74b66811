// squeue: the job queue.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include "cli/args.hpp"
#include "cli/client.hpp"
#include "cli/commands.hpp"
#include "cli/format.hpp"
#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "cli/iterate.hpp"
#include "cli/job_info.hpp"
#include "cli/json_output.hpp"
#include "cli/scontrol_steps.hpp"
#include "cli/squeue_filter.hpp"
#include "cli/squeue_rows.hpp"
#include "core/array_spec.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/job.hpp"
#include "core/memsize.hpp"
#include "core/text.hpp"
#include "proto/job_list.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

// --usage and --help: Slurm 22.05's layout and option set, drover's words.
constexpr const char* kUsageText =
    "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
    "              [-n name] [-o format] [-p partitions] [--qos qos]\n"
    "              [--reservation reservation] [--sort fields] [--start]\n"
    "              [--step step_id] [-t states] [-u user_name] [--usage]\n"
    "              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n"
    "\t      [-ahjlrsv]\n";

constexpr const char* kHelpText =
    "Usage: squeue [OPTIONS]\n"
    "  -A, --account=account(s)        only jobs charged to these accounts\n"
    "  -a, --all                       include jobs of hidden partitions\n"
    "      --array-unique              one line per unique pending array task\n"
    "      --federation                federated view (drover: one cluster)\n"
    "  -h, --noheader                  leave out the header line\n"
    "      --hide                      leave out jobs of hidden partitions\n"
    "  -i, --iterate=seconds           report again every so many seconds\n"
    "  -j, --job=job(s)                only these jobs (comma separated)\n"
    "      --json                      print a data_parser JSON document\n"
    "      --local                     this cluster only (the default)\n"
    "  -l, --long                      the long report\n"
    "  -L, --licenses=(license names)  only jobs using these licenses\n"
    "  -M, --clusters=cluster_name     ask another cluster (needs slurmdbd)\n"
    "      --me                        only my jobs\n"
    "  -n, --name=job_name(s)          only jobs with these names\n"
    "      --noconvert                 print sizes in the units they were given\n"
    "  -o, --format=format             output format (%-codes)\n"
    "  -O, --Format=format             output format (field names)\n"
    "  -p, --partition=partition(s)    only jobs in these partitions\n"
    "  -q, --qos=qos(s)                only jobs with these QOS\n"
    "  -R, --reservation=name          only jobs in this reservation\n"
    "  -r, --array                     one line per array task\n"
    "      --sibling                   federated sibling jobs (drover: none)\n"
    "  -s, --step=step(s)              list job steps (these, or all)\n"
    "  -S, --sort=fields               sort by these fields\n"
    "      --start                     expected start times of pending jobs\n"
    "  -t, --states=states             only jobs in these states (default: pending\n"
    "                                  and running; 'all' for every state)\n"
    "  -u, --user=user_name(s)         only jobs of these users\n"
    "      --name=job_name(s)          only jobs with these names\n"
    "  -v, --verbose                   more detail about what squeue does\n"
    "  -V, --version                   print the version and exit\n"
    "  -w, --nodelist=hostlist         only jobs on these nodes\n"
    "      --yaml                      YAML output (drover: not supported)\n"
    "\n"
    "Help options:\n"
    "  --help                          print this help\n"
    "  --usage                         print a short synopsis\n"
    "\n"
    "drover's squeue, compatible with Slurm 22.05's.\n";

enum LongOnly {
  kArrayUnique = 0x100,
  kFederation,
  kHelp,
  kHide,
  kJson,
  kLocal,
  kMe,
  kNoConvert,
  kSibling,
  kStart,
  kUsage,
  kYaml
};

// squeue 22.05's long options (getopt_long: any unique prefix is taken too).
const std::vector<LongOption> kLongOptions = {
    {"accounts", ArgKind::Required, 'A'},
    {"account", ArgKind::Required, 'A'},
    {"all", ArgKind::None, 'a'},
    {"array", ArgKind::None, 'r'},
    {"array-unique", ArgKind::None, kArrayUnique},
    {"Format", ArgKind::Required, 'O'},
    {"format", ArgKind::Required, 'o'},
    {"federation", ArgKind::None, kFederation},
    {"help", ArgKind::None, kHelp},
    {"hide", ArgKind::None, kHide},
    {"iterate", ArgKind::Required, 'i'},
    {"jobs", ArgKind::Optional, 'j'},
    {"json", ArgKind::Optional, kJson},
    {"local", ArgKind::None, kLocal},
    {"long", ArgKind::None, 'l'},
    {"licenses", ArgKind::Required, 'L'},
    {"cluster", ArgKind::Required, 'M'},
    {"clusters", ArgKind::Required, 'M'},
    {"me", ArgKind::None, kMe},
    {"name", ArgKind::Required, 'n'},
    {"noconvert", ArgKind::None, kNoConvert},
    {"node", ArgKind::Required, 'w'},
    {"nodes", ArgKind::Required, 'w'},
    {"nodelist", ArgKind::Required, 'w'},
    {"noheader", ArgKind::None, 'h'},
    {"partitions", ArgKind::Required, 'p'},
    {"priority", ArgKind::None, 'P'},
    {"qos", ArgKind::Required, 'q'},
    {"reservation", ArgKind::Required, 'R'},
    {"sib", ArgKind::None, kSibling},
    {"sibling", ArgKind::None, kSibling},
    {"sort", ArgKind::Required, 'S'},
    {"start", ArgKind::None, kStart},
    {"steps", ArgKind::Optional, 's'},
    {"states", ArgKind::Required, 't'},
    {"usage", ArgKind::None, kUsage},
    {"user", ArgKind::Required, 'u'},
    {"users", ArgKind::Required, 'u'},
    {"verbose", ArgKind::None, 'v'},
    {"version", ArgKind::None, 'V'},
    {"yaml", ArgKind::Optional, kYaml},
};

constexpr const char* kDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
// --start: pending jobs with their expected start and the nodes planned for them.
constexpr const char* kStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
constexpr const char* kLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";

std::string time_or(int64_t t, const char* none) {
  return t == core::kNoTime ? none : core::format_timestamp(t);
}

std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }

// What a field needs besides the job.
struct Context {
  int64_t now = 0;
  std::string cluster;
};

using Getter = std::string (*)(const json& job, const Context& ctx);

// One column squeue can show: its -O name (lower case), title and value.
struct FieldDef {
  const char* name;
  const char* header;
  Getter get;
};

#define SPEC job.at("spec")
// clang-format off
const FieldDef kFields[] = {
  {"account", "ACCOUNT", [](const json& job, const Context&) { return or_null(SPEC.value("account", "")); }},
  {"accruetime", "ACCRUE_TIME", [](const json& job, const Context&) { return time_or(job.value("eligible_time", int64_t{0}), "N/A"); }},
  {"allocnodes", "ALLOC_NODES", [](const json& job, const Context&) { return job.value("alloc_node", SPEC.value("submit_host", "")); }},
  {"allocsid", "ALLOC_SID", [](const json& job, const Context&) { return std::to_string(SPEC.value("submit_sid", int64_t{0})); }},
  {"arrayjobid", "ARRAY_JOB_ID", [](const json& job, const Context&) {
     const uint64_t a = job.value("array_job_id", uint64_t{0});
     return std::to_string(a != 0 ? a : job.at("id").get<uint64_t>()); }},
  {"arraytaskid", "ARRAY_TASK_ID", [](const json& job, const Context&) {
     return job.value("array_job_id", uint64_t{0}) != 0 ? array_task_field(job) : std::string("N/A"); }},
  {"associd", "ASSOC_ID", [](const json&, const Context&) { return std::string("0"); }},
  {"batchflag", "BATCH_FLAG", [](const json& job, const Context&) { return std::string(SPEC.value("interactive", false) ? "0" : "1"); }},
  {"batchhost", "EXEC_HOST", [](const json& job, const Context&) {
     return job.value("batch_host", "").empty() ? std::string("n/a") : job.value("batch_host", ""); }},
  {"boardspernode", "BOARDS_PER_NODE", [](const json&, const Context&) { return std::string("0"); }},
  {"burstbuffer", "BURST_BUFFER", [](const json&, const Context&) { return std::string("(null)"); }},
  {"burstbufferstate", "BURST_BUFFER_STATE", [](const json&, const Context&) { return std::string("(null)"); }},
  {"cluster", "CLUSTER", [](const json&, const Context& ctx) { return ctx.cluster; }},
  {"clusterfeature", "CLUSTER_FEATURES", [](const json&, const Context&) { return std::string("(null)"); }},
  {"command", "COMMAND", [](const json& job, const Context&) { return or_null(SPEC.value("command", "")); }},
  {"comment", "COMMENT", [](const json& job, const Context&) { return or_null(SPEC.value("comment", "")); }},
  {"contiguous", "CONTIGUOUS", [](const json&, const Context&) { return std::string("0"); }},
  {"container", "CONTAINER", [](const json&, const Context&) { return std::string("(null)"); }},
  {"cores", "CORES_PER_SOCKET", [](const json&, const Context&) { return std::string("*"); }},
  {"corespec", "CORE_SPEC", [](const json&, const Context&) { return std::string("N/A"); }},
  {"deadline", "DEADLINE", [](const json& job, const Context&) {
     const int64_t d = SPEC.value("deadline", int64_t{0});
     return d == 0 ? std::string("N/A") : core::format_timestamp(d); }},
  {"delayboot", "DELAY_BOOT", [](const json&, const Context&) { return std::string("0:00"); }},
  {"dependency", "DEPENDENCY", [](const json& job, const Context&) { return or_null(job.value("dependency_text", std::string())); }},
  {"derivedec", "DERIVED_EC", [](const json&, const Context&) { return std::string("0"); }},
  {"eligibletime", "ELIGIBLE_TIME", [](const json& job, const Context&) { return time_or(job.value("eligible_time", int64_t{0}), "N/A"); }},
  {"endtime", "END_TIME", [](const json& job, const Context&) { return time_or(job.value("end_time", int64_t{0}), "N/A"); }},
  {"feature", "FEATURES", [](const json& job, const Context&) { return or_null(SPEC.value("constraint", std::string())); }},
  {"groupid", "GROUP", [](const json& job, const Context&) { return std::to_string(job.value("gid", 0u)); }},
  {"groupname", "GROUP", [](const json& job, const Context&) { return job.value("group", ""); }},
  {"hetjobid", "HET_JOB_ID", [](const json&, const Context&) { return std::string("N/A"); }},
  {"hetjobidset", "HET_JOB_ID_SET", [](const json&, const Context&) { return std::string("N/A"); }},
  {"hetjoboffset", "HET_JOB_OFFSET", [](const json&, const Context&) { return std::string("N/A"); }},
  {"jobarrayid", "JOBID", [](const json& job, const Context&) { return job_display_id(job); }},
  {"jobid", "JOBID", [](const json& job, const Context&) { return std::to_string(job.at("id").get<uint64_t>()); }},
  {"lastschedeval", "LAST_SCHED_EVAL", [](const json& job, const Context&) { return time_or(job.value("last_sched_eval", int64_t{0}), "N/A"); }},
  {"licenses", "LICENSES", [](const json&, const Context&) { return std::string("(null)"); }},
  {"maxcpus", "MAX_CPUS", [](const json& job, const Context&) { return std::to_string(job_cpu_count(job)); }},
  {"maxnodes", "MAX_NODES", [](const json& job, const Context&) {
     const int n = SPEC.value("nodes_max", 0);
     return std::to_string(n > 0 ? n : job_node_count(job)); }},
  {"mcslabel", "MCSLABEL", [](const json&, const Context&) { return std::string("(null)"); }},
  {"mincpus", "MIN_CPUS", [](const json& job, const Context&) {
     return std::to_string(std::max(SPEC.value("cpus_per_task", 1), SPEC.value("min_cpus", 0))); }},
  {"minmemory", "MIN_MEMORY", [](const json& job, const Context&) {
     const int64_t per_cpu = SPEC.value("mem_per_cpu_mb", int64_t{-1});
     const int64_t per_node = SPEC.value("mem_per_node_mb", int64_t{-1});
     return per_cpu > 0 ? core::format_mem_mb(per_cpu)
                        : per_node > 0 ? core::format_mem_mb(per_node) : std::string("0"); }},
  {"mintime", "TIME_MIN", [](const json&, const Context&) { return std::string("0:00"); }},
  {"mintmpdisk", "MIN_TMP_DISK", [](const json& job, const Context&) { return std::to_string(SPEC.value("tmp_disk_mb", int64_t{0})); }},
  {"name", "NAME", [](const json& job, const Context&) { return SPEC.value("name", ""); }},
  {"network", "NETWORK", [](const json&, const Context&) { return std::string("(null)"); }},
  {"nice", "NICE", [](const json& job, const Context&) { return std::to_string(job.value("nice", 0)); }},
  {"nodelist", "NODELIST", [](const json& job, const Context&) { return job.value("nodelist", ""); }},
  {"ntperboard", "NTASKS_PER_BOARD", [](const json&, const Context&) { return std::string("0"); }},
  {"ntpercore", "NTASKS_PER_CORE", [](const json&, const Context&) { return std::string("N/A"); }},
  {"ntpernode", "NTASKS_PER_NODE", [](const json& job, const Context&) { return std::to_string(SPEC.value("ntasks_per_node", 0)); }},
  {"ntpersocket", "NTASKS_PER_SOCKET", [](const json&, const Context&) { return std::string("N/A"); }},
  {"numcpus", "CPUS", [](const json& job, const Context&) { return std::to_string(job_cpu_count(job)); }},
  {"numnodes", "NODES", [](const json& job, const Context&) { return std::to_string(job_node_count(job)); }},
  {"numtasks", "TASKS", [](const json& job, const Context&) { return std::to_string(SPEC.value("ntasks", 1)); }},
  {"originraw", "ORIGIN_RAW", [](const json&, const Context&) { return std::string("NA"); }},
  {"oversubscribe", "OVER_SUBSCRIBE", [](const json& job, const Context&) {
     return std::string(SPEC.value("exclusive", false) ? "NO" : "OK"); }},
  {"partition", "PARTITION", [](const json& job, const Context&) { return job.value("partition", ""); }},
  {"pendingtime", "PENDING_TIME", [](const json& job, const Context& ctx) {
     const int64_t eligible = job.value("eligible_time", int64_t{0});
     const int64_t start = job.value("state", "") == "PENDING" ? ctx.now : job.value("start_time", int64_t{0});
     return std::to_string(eligible == core::kNoTime || eligible == 0 || start < eligible ? 0 : start - eligible); }},
  {"preempttime", "PREEMPT_TIME", [](const json&, const Context&) { return std::string("N/A"); }},
  {"priority", "PRIORITY", [](const json& job, const Context&) {
     char buf[32];
     std::snprintf(buf, sizeof buf, "%.14f", static_cast<double>(job.value("priority", 0u)) / 4294967295.0);
     return std::string(buf); }},
  {"prioritylong", "PRIORITY", [](const json& job, const Context&) { return std::to_string(job.value("priority", 0u)); }},
  {"profile", "PROFILE", [](const json&, const Context&) { return std::string("NotSet"); }},
  {"qos", "QOS", [](const json& job, const Context&) { return or_null(SPEC.value("qos", "")); }},
  {"reason", "REASON", [](const json& job, const Context&) { return job.value("reason", "None"); }},
  {"reasonlist", "NODELIST(REASON)", [](const json& job, const Context&) {
     if (job.value("state", "") == "PENDING") return "(" + job.value("reason", "None") + ")";
     if (!job.at("alloc").empty()) return job.value("nodelist", "");
     std::string reason = job.value("reason", "None");
     return reason == "None" ? std::string() : "(" + reason + ")"; }},
  {"reqnodes", "REQ_NODES", [](const json& job, const Context&) { return SPEC.value("nodelist", std::string()); }},
  {"reqswitch", "REQ_SWITCH", [](const json&, const Context&) { return std::string("0"); }},
  {"requeue", "REQUEUE", [](const json& job, const Context&) { return std::to_string(job.value("requeue_effective", 1)); }},
  {"reservation", "RESERVATION", [](const json& job, const Context&) { return or_null(SPEC.value("reservation", std::string())); }},
  {"resizetime", "RESIZE_TIME", [](const json&, const Context&) { return std::string("N/A"); }},
  {"restartcnt", "RESTART_COUNT", [](const json& job, const Context&) { return std::to_string(job.value("restarts", 0u)); }},
  {"schednodes", "SCHEDNODES", [](const json& job, const Context&) { return or_null(job.value("sched_nodes", "")); }},
  {"sct", "S:C:T", [](const json&, const Context&) { return std::string("*:*:*"); }},
  {"selectjobinfo", "", [](const json&, const Context&) { return std::string(); }},
  {"siblingsactive", "ACTIVE_SIBLINGS", [](const json&, const Context&) { return std::string("NA"); }},
  {"siblingsactiveraw", "ACTIVE_SIBLINGS_RAW", [](const json&, const Context&) { return std::string("NA"); }},
  {"siblingsviable", "VIABLE_SIBLINGS", [](const json&, const Context&) { return std::string("NA"); }},
  // (sic) Slurm 22.05's title
  {"siblingsviableraw", "VIALBLE_SIBLINGS_RAW", [](const json&, const Context&) { return std::string("NA"); }},
  {"sockets", "SOCKETS_PER_NODE", [](const json&, const Context&) { return std::string("*"); }},
  {"sperboard", "SOCKETS_PER_BOARD", [](const json&, const Context&) { return std::string("0"); }},
  {"starttime", "START_TIME", [](const json& job, const Context&) { return time_or(job.value("start_time", int64_t{0}), "N/A"); }},
  {"state", "STATE", [](const json& job, const Context&) { return job_state_long(job); }},
  {"statecompact", "ST", [](const json& job, const Context&) { return job_state_short(job); }},
  {"stdin", "STDIN", [](const json& job, const Context&) {
     const std::string in = SPEC.value("std_in", std::string());
     return in.empty() ? std::string("/dev/null") : in; }},
  {"submittime", "SUBMIT_TIME", [](const json& job, const Context&) { return time_or(job.value("submit_time", int64_t{0}), "N/A"); }},
  {"threads", "THREADS_PER_CORE", [](const json&, const Context&) { return std::string("*"); }},
  {"timeleft", "TIME_LEFT", [](const json& job, const Context&) {
     const int64_t limit = job.value("time_limit_min", int64_t{-1});
     if (limit < 0) return std::string("UNLIMITED");
     return core::format_elapsed(std::max<int64_t>(0, limit * 60 - job.value("run_time", int64_t{0}))); }},
  {"timelimit", "TIME_LIMIT", [](const json& job, const Context&) {
     const int64_t m = job.value("time_limit_min", int64_t{-1});
     return m < 0 ? std::string("UNLIMITED") : core::format_elapsed(m * 60); }},
  {"timeused", "TIME", [](const json& job, const Context&) { return core::format_elapsed(job.value("run_time", int64_t{0})); }},
  {"userid", "UID", [](const json& job, const Context&) { return std::to_string(job.value("uid", 0u)); }},
  {"username", "USER", [](const json& job, const Context&) { return job.value("user", ""); }},
  {"wckey", "WCKEY", [](const json&, const Context&) { return std::string("(null)"); }},
  {"workdir", "WORK_DIR", [](const json& job, const Context&) { return SPEC.value("workdir", ""); }},
};
// clang-format on
#undef SPEC

// -o's letters, each a field above.
const std::map<char, std::string_view> kCodes = {
    {'a', "account"},      {'A', "jobid"},         {'B', "batchhost"},  {'c', "mincpus"},
    {'C', "numcpus"},      {'d', "mintmpdisk"},    {'D', "numnodes"},   {'e', "endtime"},
    {'E', "dependency"},   {'f', "feature"},       {'F', "arrayjobid"}, {'g', "groupname"},
    {'G', "groupid"},      {'h', "oversubscribe"}, {'H', "sockets"},    {'i', "jobarrayid"},
    {'I', "cores"},        {'j', "name"},          {'J', "threads"},    {'k', "comment"},
    {'K', "arraytaskid"},  {'l', "timelimit"},     {'L', "timeleft"},   {'m', "minmemory"},
    {'M', "timeused"},     {'n', "reqnodes"},      {'N', "nodelist"},   {'o', "command"},
    {'O', "contiguous"},   {'p', "priority"},      {'P', "partition"},  {'q', "qos"},
    {'Q', "prioritylong"}, {'r', "reason"},        {'R', "reasonlist"}, {'s', "selectjobinfo"},
    {'S', "starttime"},    {'t', "statecompact"},  {'T', "state"},      {'u', "username"},
    {'U', "userid"},       {'v', "reservation"},   {'V', "submittime"}, {'w', "wckey"},
    {'W', "licenses"},     {'x', "excnodes_"},     {'X', "corespec"},   {'y', "nice"},
    {'Y', "schednodes"},   {'z', "sct"},           {'Z', "workdir"},
};

// %x has no -O name in Slurm 22.05 (ExcNodes is refused there).
const FieldDef kExcludedNodes = {"excnodes_", "EXC_NODES", [](const json& job, const Context&) {
                                   return job.at("spec").value("exclude", std::string());
                                 }};

const FieldDef* find_field(std::string_view name) {
  if (name == kExcludedNodes.name) return &kExcludedNodes;
  for (const auto& f : kFields)
    if (name == f.name) return &f;
  return nullptr;
}

// The common fields: what each reads of a job ("spec.x": the spec's key x), so that a listing
// made of them only can ask the controller for just those keys (a tenth of each job's record
// for the default format), and the same field read from a typed row (squeue_rows.hpp), so that
// such a listing needs no json tree per job. Fields not listed here get the whole record.
using RowGetter = std::string (*)(const JobRow& job, const Context& ctx);
struct CommonField {
  std::vector<std::string_view> keys;
  RowGetter row;
};
std::string priority_fraction(uint32_t priority) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.14f", static_cast<double>(priority) / 4294967295.0);
  return buf;
}
// clang-format off
const std::map<std::string_view, CommonField> kCommon = {
  {"account", {{"spec.account"}, [](const JobRow& job, const Context&) { return or_null(job.account); }}},
  {"jobarrayid", {{"array_job_id", "array_task_id", "array_pending", "array_max_running"},
                  [](const JobRow& job, const Context&) { return job_display_id(job.array()); }}},
  {"jobid", {{}, [](const JobRow& job, const Context&) { return std::to_string(job.id); }}},
  {"name", {{"spec.name"}, [](const JobRow& job, const Context&) { return job.name; }}},
  {"nodelist", {{"nodelist"}, [](const JobRow& job, const Context&) { return job.nodelist; }}},
  {"numcpus", {{"alloc", "spec.ntasks", "spec.nodes_min", "spec.cpus_per_task"},
               [](const JobRow& job, const Context&) { return std::to_string(job_cpu_count(job)); }}},
  {"numnodes", {{"alloc", "spec.nodes_min"},
                [](const JobRow& job, const Context&) { return std::to_string(job_node_count(job)); }}},
  {"partition", {{"partition"}, [](const JobRow& job, const Context&) { return job.partition; }}},
  {"priority", {{"priority"}, [](const JobRow& job, const Context&) { return priority_fraction(job.priority); }}},
  {"prioritylong", {{"priority"}, [](const JobRow& job, const Context&) { return std::to_string(job.priority); }}},
  {"qos", {{"spec.qos"}, [](const JobRow& job, const Context&) { return or_null(job.qos); }}},
  {"reason", {{"reason"}, [](const JobRow& job, const Context&) { return job.reason; }}},
  {"reasonlist", {{"state", "reason", "alloc", "nodelist"}, [](const JobRow& job, const Context&) {
     if (job.state == "PENDING") return "(" + job.reason + ")";
     if (job.alloc_nodes > 0) return job.nodelist;
     return job.reason == "None" ? std::string() : "(" + job.reason + ")"; }}},
  {"schednodes", {{"sched_nodes"}, [](const JobRow& job, const Context&) { return or_null(job.sched_nodes); }}},
  {"starttime", {{"start_time"}, [](const JobRow& job, const Context&) { return time_or(job.start_time, "N/A"); }}},
  {"state", {{"state", "completing"}, [](const JobRow& job, const Context&) { return job_state_long(job); }}},
  {"statecompact", {{"state", "completing"}, [](const JobRow& job, const Context&) { return job_state_short(job); }}},
  {"timelimit", {{"time_limit_min"}, [](const JobRow& job, const Context&) {
     return job.time_limit_min < 0 ? std::string("UNLIMITED") : core::format_elapsed(job.time_limit_min * 60); }}},
  {"timeused", {{"run_time"}, [](const JobRow& job, const Context&) { return core::format_elapsed(job.run_time); }}},
  {"userid", {{"uid"}, [](const JobRow& job, const Context&) { return std::to_string(job.uid); }}},
  {"username", {{"user"}, [](const JobRow& job, const Context&) { return job.user; }}},
};
// clang-format on
// What squeue itself reads of every job: its filters, the default order, the joining of an
// array's pending records.
const std::vector<std::string_view> kListingKeys = {
    "alloc",      "array_job_id", "array_max_running", "array_pending", "array_task_id",
    "completing", "nodelist",     "partition",         "priority",      "reason",
    "state",      "user",         "spec.name",         "spec.account",  "spec.qos"};

// Adds "keys"/"spec_keys" to a job query when every field to print is one of kCommon's
// (nullptr: a field squeue has no definition of; it gets the whole record too); true then.
bool ask_only_for(proto::QueryRequest& req, const std::vector<const FieldDef*>& fields) {
  std::set<std::string> keys, spec_keys;
  auto add = [&](std::string_view k) {
    if (k.rfind("spec.", 0) == 0)
      spec_keys.insert(std::string(k.substr(5)));
    else
      keys.insert(std::string(k));
  };
  for (const FieldDef* f : fields) {
    if (f == nullptr) return false;
    auto it = kCommon.find(f->name);
    if (it == kCommon.end()) return false;  // the whole record
    for (auto k : it->second.keys) add(k);
  }
  for (auto k : kListingKeys) add(k);
  req.keys.emplace(keys.begin(), keys.end());
  req.spec_keys.emplace(spec_keys.begin(), spec_keys.end());
  return true;
}

// A field's reader for json records and for typed rows (only the common fields have one).
template <class Row>
auto getter_for(const FieldDef& f) {
  if constexpr (std::is_same_v<Row, json>)
    return f.get;
  else
    return kCommon.at(f.name).row;
}

// What the listing reads and changes of a record, json or typed row alike.
uint64_t row_id(const json& j) { return j.at("id").get<uint64_t>(); }
uint64_t row_id(const JobRow& r) { return r.id; }
uint64_t row_array_id(const json& j) { return j.value("array_job_id", uint64_t{0}); }
uint64_t row_array_id(const JobRow& r) { return r.array_job_id; }
std::string row_partition(const json& j) { return j.value("partition", ""); }
const std::string& row_partition(const JobRow& r) { return r.partition; }
uint32_t row_priority(const json& j) { return j.value("priority", 0u); }
uint32_t row_priority(const JobRow& r) { return r.priority; }
std::string row_pending(const json& j) { return j.value("array_pending", std::string()); }
const std::string& row_pending(const JobRow& r) { return r.array_pending; }
uint32_t row_task(const json& j) { return j.value("array_task_id", 0u); }
uint32_t row_task(const JobRow& r) { return r.array_task_id; }
uint32_t row_throttle(const json& j) { return j.value("array_max_running", 0u); }
uint32_t row_throttle(const JobRow& r) { return r.array_max_running; }
std::string row_reason(const json& j) { return j.value("reason", "None"); }
const std::string& row_reason(const JobRow& r) { return r.reason; }
// -r: one pending task of an array's remainder.
void set_task(json& j, uint32_t task) {
  j["array_pending"] = "";
  j["array_task_id"] = task;
}
void set_task(JobRow& r, uint32_t task) {
  r.array_pending.clear();
  r.array_task_id = task;
}
// The pending records of an array joined into one.
void set_joined(json& j, std::string pending, uint32_t throttle, std::string reasons) {
  j["array_pending"] = std::move(pending);
  j["array_task_id"] = core::kNoArrayTask;
  j["array_max_running"] = throttle;
  j["reason"] = std::move(reasons);
}
void set_joined(JobRow& r, std::string pending, uint32_t throttle, std::string reasons) {
  r.array_pending = std::move(pending);
  r.array_task_id = core::kNoArrayTask;
  r.array_max_running = throttle;
  r.reason = std::move(reasons);
}

// -S: keys in order, each a format code, '-' for descending.
struct SortKey {
  char code;
  bool desc;
};
std::vector<SortKey> parse_sort(const std::string& spec) {
  std::vector<SortKey> keys;
  for (const auto& k : core::split_list(spec, ',')) {
    bool desc = k[0] == '-';
    std::string code = k.substr(desc || k[0] == '+' ? 1 : 0);
    if (!code.empty()) keys.push_back({code[0], desc});
  }
  return keys;
}

// A column of the output: literal text before it, then a field (or nothing at the end).
struct Column {
  std::string literal;
  const FieldDef* field = nullptr;
  int width = 0;  // 0: the value's own width
  bool right = false;
};

// -o: "%[.][width]code" with text between; an unknown code is printed as written and reported.
std::vector<Column> parse_percent_format(const std::string& spec, std::string& errors) {
  std::vector<char> unknown;
  std::vector<Column> out;
  for (auto& f : parse_format(
           spec, [](char c) { return kCodes.count(c) > 0; }, unknown))
    out.push_back(
        {std::move(f.literal), f.code ? find_field(kCodes.at(f.code)) : nullptr, f.width, f.right});
  for (char c : unknown)
    errors += "squeue: error: Invalid job format specification: " + std::string(1, c) + "\n";
  return out;
}

// -O: "name[:[.]width]" separated by commas; 20 characters unless given; no separators.
std::vector<Column> parse_named_format(const std::string& spec, std::string& errors) {
  std::vector<Column> out;
  for (const auto& item : core::split_list(spec, ',')) {
    std::string name = item, size;
    if (auto colon = item.find(':'); colon != std::string::npos) {
      name = item.substr(0, colon);
      size = item.substr(colon + 1);
    }
    const FieldDef* f =
        core::to_lower(name) == kExcludedNodes.name ? nullptr : find_field(core::to_lower(name));
    if (!f) {
      errors += "squeue: error: Invalid job format specification: " + name + "\n";
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
    out.push_back(c);
  }
  return out;
}

// fit(value, width, right) appended to `out`; a value of printable ASCII needs no copy.
void append_fit(std::string& out, const std::string& value, int width, bool right) {
  for (const char c : value)
    if (c < 0x20 || c > 0x7e) {
      out += fit(value, width, right);
      return;
    }
  const size_t w = static_cast<size_t>(std::max(width, 0));
  if (w == 0) {
    out += value;
  } else if (value.size() >= w) {
    out.append(value, 0, w);
  } else {
    if (right) out.append(w - value.size(), ' ');
    out += value;
    if (!right) out.append(w - value.size(), ' ');
  }
}

template <class Row>
std::string render(const std::vector<Column>& columns, const std::vector<Row*>& rows,
                   const Context& ctx, bool with_header) {
  std::string out;
  if (with_header) {
    for (const auto& c : columns) {
      out += c.literal;
      if (c.field) append_fit(out, c.field->header, c.width, c.right);
    }
    out += '\n';
  }
  // Each column's reader once, not per cell.
  std::vector<decltype(getter_for<Row>(*columns.front().field))> get;
  for (const auto& c : columns) get.push_back(c.field ? getter_for<Row>(*c.field) : nullptr);
  size_t line = 1;
  for (const auto& c : columns)
    line += c.literal.size() + static_cast<size_t>(std::max(c.width, 8));
  out.reserve(out.size() + rows.size() * line);
  for (const Row* job : rows) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const Column& c = columns[i];
      out += c.literal;
      if (get[i]) append_fit(out, get[i](*job, ctx), c.width, c.right);
    }
    out += '\n';
  }
  return out;
}

// The state the default order compares: a typed row's without a copy.
std::string state_key(const json& j) { return job_state_long(j); }
std::string_view state_key(const JobRow& r) {
  if (r.completing) return "COMPLETING";
  return r.state.empty() ? std::string_view("PENDING") : std::string_view(r.state);
}

// The text listing of the rows that passed the filter: -r, Slurm's default order, the
// joining of an array's pending records, -S, the columns. The rows stay where they are; the
// order is one of pointers to them (moving 100,000 rows twice cost more than ordering them).
template <class Row>
std::string listing(std::vector<Row>& rows, const std::vector<Column>& columns,
                    const std::vector<SortKey>& sort_keys, bool expand_arrays, const Context& ctx,
                    bool header) {
  auto value_of = [&](char code, const Row& job) {
    auto it = kCodes.find(code);
    const FieldDef* f = it == kCodes.end() ? nullptr : find_field(it->second);
    return f ? getter_for<Row>(*f)(job, ctx) : std::string();
  };
  if (expand_arrays) {
    // -r: one line per pending task instead of the compact remainder.
    std::vector<Row> expanded;
    for (auto& job : rows) {
      if (row_pending(job).empty()) {
        expanded.push_back(std::move(job));
        continue;
      }
      for (uint32_t t : core::IndexSet::parse(row_pending(job)).to_vector(1u << 20)) {
        Row task = job;
        set_task(task, t);
        expanded.push_back(std::move(task));
      }
    }
    rows = std::move(expanded);
  }
  std::vector<Row*> order;
  // Slurm's default order: partition, then state, then priority (highest first). Keys are
  // read once per row, not per comparison (100,000 rows: a second less).
  {
    // Partitions and states compare by their rank among the few distinct values (comparing
    // the texts themselves was a fifth of squeue's time over 100,000 rows).
    using Text = decltype(state_key(std::declval<const Row&>()));
    struct Ranks {
      std::map<Text, uint32_t> of;
      const Text* last = nullptr;
      uint32_t* last_rank = nullptr;
      uint32_t* find(const Text& v) {  // most rows repeat the row before's value
        if (last == nullptr || *last != v) {
          auto it = of.try_emplace(v, 0).first;
          last = &it->first;
          last_rank = &it->second;
        }
        return last_rank;
      }
    } partitions, states;
    struct SortKey {
      uint32_t* partition;
      uint32_t* state;
      uint32_t priority;
      uint64_t id, array_id;
      Row* row;
    };
    std::vector<SortKey> keys;
    keys.reserve(rows.size());
    for (Row& j : rows)
      keys.push_back({partitions.find(Text(row_partition(j))), states.find(state_key(j)),
                      row_priority(j), row_id(j), row_array_id(j), &j});
    for (Ranks* r : {&partitions, &states}) {
      uint32_t rank = 0;
      for (auto& [value, n] : r->of) n = rank++;
    }
    std::stable_sort(keys.begin(), keys.end(), [](const SortKey& a, const SortKey& b) {
      if (*a.partition != *b.partition) return *a.partition < *b.partition;
      if (*a.state != *b.state) return *a.state < *b.state;
      if (a.priority != b.priority) return a.priority > b.priority;
      // Equal priorities (an array's tasks): the array's own record, then the newest first,
      // the order Slurm's controller keeps them in.
      if (a.array_id != 0 && a.array_id == b.array_id &&
          (a.id == a.array_id) != (b.id == b.array_id))
        return a.id == a.array_id;
      return a.id > b.id;
    });
    order.reserve(keys.size());
    for (const SortKey& k : keys) order.push_back(k.row);
  }

  // Without -r, the pending records of one array share a line: their tasks together and
  // their reasons joined, oldest record first (as Slurm's squeue shows them).
  if (!expand_arrays) {
    std::map<uint64_t, std::vector<size_t>> pending_by_array;
    for (size_t i = 0; i < order.size(); ++i)
      if (row_array_id(*order[i]) != 0 && state_key(*order[i]) == "PENDING")
        pending_by_array[row_array_id(*order[i])].push_back(i);
    std::vector<bool> drop(order.size(), false);
    bool dropped = false;
    for (auto& [array_id, idx] : pending_by_array) {
      if (idx.size() < 2) continue;
      std::vector<size_t> by_age = idx;
      std::sort(by_age.begin(), by_age.end(),
                [&](size_t a, size_t b) { return row_id(*order[a]) < row_id(*order[b]); });
      core::IndexSet tasks;
      std::string reasons;
      uint32_t throttle = 0;
      for (size_t i : by_age) {
        const Row& r = *order[i];
        const std::string pending = row_pending(r);
        if (!pending.empty()) {
          const core::IndexSet set = core::IndexSet::parse(pending);
          for (const auto& rg : set.ranges()) tasks.insert(rg.first, rg.last, rg.step);
        } else {
          tasks.insert(row_task(r));
        }
        throttle = std::max(throttle, row_throttle(r));
        const std::string reason = row_reason(r);
        if (("," + reasons + ",").find("," + reason + ",") == std::string::npos)
          reasons += (reasons.empty() ? "" : ",") + reason;
      }
      set_joined(*order[idx.front()], tasks.format_ranges(), throttle, reasons);
      for (size_t k = 1; k < idx.size(); ++k) drop[idx[k]] = dropped = true;
    }
    if (dropped) {
      std::vector<Row*> kept;
      kept.reserve(order.size());
      for (size_t i = 0; i < order.size(); ++i)
        if (!drop[i]) kept.push_back(order[i]);
      order = std::move(kept);
    }
  }

  if (!sort_keys.empty()) {
    // Numeric keys compare as numbers.
    auto numeric = [](char c) {
      return c == 'i' || c == 'A' || c == 'F' || c == 'p' || c == 'Q' || c == 'D' || c == 'C' ||
             c == 'U';
    };
    std::stable_sort(order.begin(), order.end(), [&](const Row* pa, const Row* pb) {
      const Row& a = *pa;
      const Row& b = *pb;
      for (const auto& k : sort_keys) {
        int cmp = 0;
        if (k.code == 'i' || k.code == 'A') {
          auto ia = row_id(a), ib = row_id(b);
          cmp = ia < ib ? -1 : ia > ib ? 1 : 0;
        } else if (numeric(k.code)) {
          const char c = k.code == 'p' ? 'Q' : k.code;
          double fa = std::stod("0" + value_of(c, a)), fb = std::stod("0" + value_of(c, b));
          cmp = fa < fb ? -1 : fa > fb ? 1 : 0;
        } else {
          cmp = value_of(k.code, a).compare(value_of(k.code, b));
        }
        if (cmp != 0) return k.desc ? cmp > 0 : cmp < 0;
      }
      return false;
    });
  }

  return render(columns, order, ctx, header);
}

}  // namespace

extern const CommandHelp kSqueueHelp{
    "squeue", "lists the jobs and job steps in the queue", kUsageText, kHelpText,
    "Options follow getopt_long's rules: any unique prefix of a long option is taken (--state for "
    "--states, --part for --partitions).\n\n--yaml is refused (drover writes JSON documents only); "
    "-M/--clusters needs slurmdbd and fails as Slurm's does when it cannot reach one; "
    "--federation, --sibling and --local change nothing on drover's single cluster; -L and -R are "
    "accepted and do not filter."};

int squeue_main(const std::vector<std::string>& args) {
  std::string format = kDefaultFormat, named_format;
  bool header = true, long_format = false, start_format = false, steps = false;
  bool format_given = false;
  std::string step_list;
  SqueueFilter filter;
  JsonRequest json_req;
  bool expand_arrays = false;
  int iterate_s = 0;
  std::string sort_spec;
  auto env = [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
  if (auto e = env("SQUEUE_SORT")) sort_spec = *e;
  if (auto e = env("SQUEUE_FORMAT")) format = *e;
  if (auto e = env("SQUEUE_FORMAT2")) named_format = *e;
  if (auto e = env("SQUEUE_STATES")) filter.states = split_set(*e);
  if (auto e = env("SQUEUE_USERS")) filter.users = split_set(*e);
  if (auto e = env("SQUEUE_PARTITION")) filter.partitions = split_set(*e);
  if (auto e = env("SQUEUE_ACCOUNT")) filter.accounts = split_set(*e);
  if (auto e = env("SQUEUE_QOS")) filter.qos = split_set(*e);
  if (auto e = env("SQUEUE_NAMES")) filter.names = split_set(*e);
  if (env("SQUEUE_ARRAY")) expand_arrays = true;
  bool jobs_flag = false;
  auto add_jobs = [&](const std::string& list) {
    for (const auto& id : split_set(list)) {
      try {
        filter.jobs.push_back(core::parse_job_ref(id));
      } catch (const core::ParseError&) {
        std::cerr << "squeue: error: Invalid job id: " << id << '\n';
        return false;
      }
    }
    return true;
  };
  const ParsedArgs parsed =
      parse_options("squeue", args, "A:ahi:j::lL:M:n:o:O:p:Pq:R:rs::S:t:u:vVw:", kLongOptions);
  for (const ParsedOption& o : parsed.options) {
    const std::string value = o.value.value_or("");
    switch (o.id) {
      case 'h':
        header = false;
        break;
      case kJson:
      case kYaml:
        (o.id == kJson ? json_req.json : json_req.yaml) = true;
        if (o.value) json_req.parser = value;
        break;
      case 'l':
        long_format = true;
        break;
      case kStart:
        start_format = true;
        break;
      case kMe:
        filter.users.insert(std::getenv("USER") ? std::getenv("USER") : "");
        break;
      case 'u':
        for (auto& u : split_set(value)) filter.users.insert(u);
        break;
      case 'p':
        filter.partitions = split_set(value);
        break;
      case 't':
        filter.states = split_set(value);
        break;
      case 'n':
        filter.names = split_set(value);
        break;
      case 'o':
        format = value;
        named_format.clear();
        format_given = true;
        break;
      case 'O':
        named_format = value;
        format_given = true;
        break;
      case 'A':
        filter.accounts = split_set(value);
        break;
      case 'q':
        filter.qos = split_set(value);
        break;
      case 'w':
        for (const auto& item : split_set(value))
          for (auto& n : core::expand_hostlist(item)) filter.nodes.push_back(std::move(n));
        break;
      case 's':  // -s[LIST], --steps[=LIST]; a LIST may also follow as an operand
        steps = true;
        if (o.value) step_list = value;
        break;
      case 'i':
        iterate_s = iterate_seconds(value);
        if (iterate_s <= 0) {
          std::cerr << "squeue: error: --iterate=" << value << "\n\n";
          return 1;
        }
        break;
      case 'r':
        expand_arrays = true;
        break;
      case 'S':
        sort_spec = value;
        break;
      case 'j':  // -j[LIST], --jobs[=LIST]; a LIST may also follow as an operand
        jobs_flag = true;
        if (o.value && !add_jobs(value)) return 1;
        break;
      case 'M':
        std::cerr << cluster_unreachable("squeue", value);
        return 1;
      case 'V':
        std::cout << version_text();
        return 0;
      case kHelp:
        std::cout << kHelpText;
        return 0;
      case kUsage:
        std::cout << kUsageText;
        return 0;
      default:  // -a, -v, -P, -L, -R, --hide, --noconvert, --federation, --local, --sibling,
        break;  // --array-unique: nothing to change on one cluster without those features
    }
  }
  if (!parsed.error.empty()) {
    std::cerr << parsed.error << '\n' << try_help("squeue");
    return 1;
  }
  {
    size_t next = 0;
    // An operand is the list of an optional-argument -j or -s given without one, -j's first.
    if (jobs_flag && filter.jobs.empty() && next < parsed.operands.size()) {
      if (!add_jobs(parsed.operands[next++])) return 1;
    } else if (steps && step_list.empty() && next < parsed.operands.size())
      step_list = parsed.operands[next++];
    if (next < parsed.operands.size()) {
      std::cerr << "squeue: error: Unrecognized option: " << parsed.operands[next] << '\n';
      std::cout << kUsageText;
      return 1;
    }
  }
  if (auto done = json_preamble("squeue", json_req)) {
    std::cerr << done->err;
    std::cout << done->out;
    return done->rc;
  }
  if (steps && json_req.json) {
    std::cerr << "squeue: error: --json with --steps is not supported by drover yet\n";
    return 1;
  }
  if (steps) {
    // One line per running step (scontrol_steps.cpp); SQUEUE_FORMAT is for jobs.
    StepListOptions so;
    if (format_given) {
      so.format = named_format.empty() ? format : "";
      so.named_format = named_format;
    }
    so.header = header;
    so.sort = sort_spec;
    so.jobs = filter.jobs;
    so.users = filter.users;
    so.partitions = filter.partitions;
    so.nodes = filter.nodes;
    std::string error;
    if (!step_list.empty() && !parse_step_list(step_list, so.steps, error)) {
      std::cerr << error;
      return 1;
    }
    auto report = [&]() -> CommandResult {
      CommandResult out;
      json reply;
      try {
        reply = call_controller(
            proto::QueryRequest{.what = "jobs", .detail = false, .active_only = true});
      } catch (const ControllerUnreachable&) {
        out.err =
            "slurm_get_job_steps error: Unable to contact slurm controller (connect failure)\n";
        out.rc = 1;
        return out;
      }
      if (!reply.value("ok", false)) {
        out.err = "slurm_get_job_steps error: " + reply.value("error", "Unknown error") + '\n';
        out.rc = 1;
        return out;
      }
      return squeue_steps(reply, so);
    };
    return run_reports(iterate_s, (long_format || iterate_s > 0) && header, report,
                       system_iterate_io());
  }
  if (long_format) format = kLongFormat;
  if (start_format) {
    // As Slurm: only pending jobs, soonest expected start first.
    if (!long_format) format = kStartFormat;
    if (filter.states.empty()) filter.states = {"PD"};
    if (sort_spec.empty()) sort_spec = "S";
  }

  if (const std::string err = filter.compile(); !err.empty()) {
    std::cerr << err;
    return 1;
  }
  std::string errors;
  const std::vector<Column> columns = named_format.empty()
                                          ? parse_percent_format(format, errors)
                                          : parse_named_format(named_format, errors);
  if (!json_req.json) std::cerr << errors;
  const std::vector<SortKey> sort_keys = parse_sort(sort_spec);
  // The listing reads typed rows instead of a json tree per job when every field it prints
  // and sorts by has a typed reader; DROVER_SQUEUE_TREE=1 keeps the tree (tests compare both).
  const bool tree_only = std::getenv("DROVER_SQUEUE_TREE") != nullptr;
  auto report = [&]() -> CommandResult {
    CommandResult out;
    std::string text;
    bool typed = false;
    // --json needs the detailed view (output paths), as Slurm's squeue asks for it.
    proto::QueryRequest req{
        .what = "jobs", .detail = json_req.json, .active_only = filter.states.empty()};
    if (filter.jobs.size() == 1) req.job_id = filter.jobs.front().job_id;
    // The controller leaves out other users' (partitions', ...) jobs: `squeue -u` over a
    // million jobs gets only that user's. squeue still applies its whole filter to what comes.
    auto narrow = [&](std::optional<std::vector<std::string>>& field,
                      const std::set<std::string>& values) {
      if (!values.empty()) field.emplace(values.begin(), values.end());
    };
    narrow(req.users, filter.users);
    narrow(req.partitions, filter.partitions);
    narrow(req.names, filter.names);
    narrow(req.accounts, filter.accounts);
    narrow(req.qos, filter.qos);
    if (!json_req.json) {
      std::vector<const FieldDef*> shown;
      for (const Column& c : columns)
        if (c.field) shown.push_back(c.field);
      for (const SortKey& k : sort_keys) {  // -S reads its fields too
        auto it = kCodes.find(k.code);
        shown.push_back(it == kCodes.end() ? nullptr : find_field(it->second));
      }
      typed = ask_only_for(req, shown) && !tree_only;
      // The compact form: the same fields, a third of the bytes (proto/job_list.hpp).
      if (typed && std::getenv("DROVER_SQUEUE_OBJECTS") == nullptr)
        req.form = std::string(proto::kJobRowsForm);
    }
    const char* const unreachable =
        "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n";
    try {
      text = call_controller_text(req);
    } catch (const ControllerUnreachable&) {
      out.err = unreachable;
      out.rc = 1;
      return out;
    }
    if (typed) {
      JobList list;
      if (!read_job_list(text, list)) {
        out.err = unreachable;  // what a reply that is not json gets on the tree's path
        out.rc = 1;
        return out;
      }
      if (!list.ok) {
        out.err =
            "slurm_load_jobs error: " + (list.error.empty() ? "Unknown error" : list.error) + '\n';
        out.rc = 1;
        return out;
      }
      // Filtered in place: nothing moves while every row passes.
      std::erase_if(list.jobs, [&](const JobRow& job) { return !filter.matches_row(job); });
      text = {};
      out.out = listing(list.jobs, columns, sort_keys, expand_arrays,
                        Context{list.now, list.cluster_name}, header);
      return out;
    }
    json reply;
    try {
      reply = json::parse(text);
    } catch (const json::exception&) {
      out.err = unreachable;
      out.rc = 1;
      return out;
    }
    if (!reply.value("ok", false)) {
      out.err = "slurm_load_jobs error: " + reply.value("error", "Unknown error") + '\n';
      out.rc = 1;
      return out;
    }
    const Context ctx{reply.value("now", int64_t{0}), reply.value("cluster_name", std::string())};
    std::vector<json> rows;
    for (auto& job : reply.at("jobs"))
      if (filter.matches(job)) rows.push_back(std::move(job));
    if (json_req.json) {
      // The records as the controller keeps them: formats, sorting, -r and the joining of an
      // array's pending records are the text listing's (Slurm's squeue --json likewise).
      out.out = json_text(jobs_document(command_meta("squeue", args, ctx.cluster), reply, rows));
      return out;
    }
    out.out = listing(rows, columns, sort_keys, expand_arrays, ctx, header);
    return out;
  };
  return run_reports(iterate_s, (long_format || iterate_s > 0) && header && !json_req.json, report,
                     system_iterate_io());
}

}  // namespace drover::cli
