#include "cli/run_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "cli/getopt.hpp"
#include "cli/help.hpp"
#include "core/duration.hpp"
#include "core/export_env.hpp"
#include "core/memsize.hpp"
#include "core/rlimits.hpp"
#include "core/sbatch_options.hpp"
#include "core/text.hpp"

extern char** environ;

namespace drover::cli {
namespace {

enum Id : int {
  kMem = 300,
  kMemPerCpu,
  kNtasksPerNode,
  kExclusive,
  kOverlap,
  kExact,
  kMultiProg,
  kMpi,
  kCpuBind,
  kGres,
  kGpusPerNode,
  kGpusPerTask,
  kExport,
  kJobid,
  kComment,
  kReservation,
  kBegin,
  kSignal,
  kOpenMode,
  kPty,
  kTestOnly,
  kNoShell,
  kIgnored,  // accepted, no effect here (binding, accounting frequency, ...)
  kUsage,
  kGetUserEnv,
  kClusters,
  kMinCpus,
  kTmp,
  kQuitOnInterrupt,
  kPropagate,
  kTaskProlog,
  kTaskEpilog,
  kRefusedBase = 1000,  // + the index in kRefused
};

// Options of Slurm's that drover refuses rather than run a different job or step than the one
// asked for (the rest of what drover does not act on only tunes hardware, mail, power or
// profiling, and is accepted with no effect).
constexpr const char* kRefused[] = {
    "bcast",        "bcast-exclude", "container",       "prolog",          "epilog",
    "het-group",    "relative",      "no-allocate",     "licenses",        "deadline",
    "cpus-per-gpu", "mem-per-gpu",   "gpus-per-socket", "kill-command",    "nodefile",
    "uid",          "gid",           "ntasks-per-gpu",  "ntasks-per-tres", "pack-group",
    "x11",          "debugger-test",
};

int refused(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kRefused); ++i)
    if (name == kRefused[i]) return kRefusedBase + static_cast<int>(i);
  return kIgnored;
}

// A refused option's name as the error gives it: "-Z/--no-allocate" or "--bcast".
std::string refused_name(int id) {
  const std::string name = kRefused[id - kRefusedBase];
  static const std::map<std::string, char> shorts = {{"relative", 'r'},
                                                     {"no-allocate", 'Z'},
                                                     {"licenses", 'L'},
                                                     {"kill-command", 'K'},
                                                     {"nodefile", 'F'}};
  auto it = shorts.find(name);
  return (it == shorts.end() ? "" : std::string("-") + it->second + "/") + "--" + name;
}

// What each long option of srun's or salloc's takes and does here (the same for both commands
// where both have it; `-K` is --kill-on-bad-exit in srun and --kill-command in salloc).
const std::map<std::string_view, std::pair<ArgKind, int>>& run_option_defs() {
  using enum ArgKind;
  static const std::map<std::string_view, std::pair<ArgKind, int>> defs = {
      {"accel-bind", {Required, kIgnored}},
      {"account", {Required, 'A'}},
      {"acctg-freq", {Required, kIgnored}},
      {"bb", {Required, kIgnored}},
      {"bbf", {Required, kIgnored}},
      {"bcast", {Optional, refused("bcast")}},
      {"bcast-exclude", {Required, refused("bcast-exclude")}},
      {"begin", {Required, kBegin}},
      {"bell", {None, kIgnored}},
      {"chdir", {Required, 'D'}},
      {"cluster", {Required, kClusters}},
      {"cluster-constraint", {Required, kIgnored}},
      {"clusters", {Required, kClusters}},
      {"comment", {Required, kComment}},
      {"compress", {Optional, kIgnored}},
      {"constraint", {Required, 'C'}},
      {"container", {Required, refused("container")}},
      {"context", {Required, kIgnored}},  // an SELinux context: none here
      {"contiguous", {None, kIgnored}},
      {"core-spec", {Required, 'S'}},
      {"cores-per-socket", {Required, kIgnored}},
      {"cpu-bind", {Required, kCpuBind}},
      {"cpu-freq", {Required, kIgnored}},
      {"cpu_bind", {Required, kCpuBind}},
      {"cpus-per-gpu", {Required, refused("cpus-per-gpu")}},
      {"cpus-per-task", {Required, 'c'}},
      {"deadline", {Required, refused("deadline")}},
      {"debugger-test", {None, refused("debugger-test")}},
      {"delay-boot", {Required, kIgnored}},
      {"dependency", {Required, 'd'}},
      {"disable-status", {None, 'X'}},
      {"distribution", {Required, 'm'}},
      {"epilog", {Required, refused("epilog")}},
      {"error", {Required, 'e'}},
      {"exact", {None, kExact}},
      {"exclude", {Required, 'x'}},
      {"exclusive", {Optional, kExclusive}},
      {"export", {Required, kExport}},
      {"extra-node-info", {Required, 'B'}},
      {"get-user-env", {Optional, kGetUserEnv}},
      {"gid", {Required, refused("gid")}},
      {"gpu-bind", {Required, kIgnored}},
      {"gpu-freq", {Required, kIgnored}},
      {"gpus", {Required, 'G'}},
      {"gpus-per-node", {Required, kGpusPerNode}},
      {"gpus-per-socket", {Required, refused("gpus-per-socket")}},
      {"gpus-per-task", {Required, kGpusPerTask}},
      {"gres", {Required, kGres}},
      {"gres-flags", {Required, kIgnored}},
      {"help", {None, 'h'}},
      {"het-group", {Required, refused("het-group")}},
      {"hint", {Required, kIgnored}},
      {"hold", {None, 'H'}},
      {"immediate", {Optional, 'I'}},
      {"input", {Required, 'i'}},
      {"interactive", {None, kIgnored}},
      {"job-name", {Required, 'J'}},
      {"jobid", {Required, kJobid}},
      {"kill-command", {Optional, refused("kill-command")}},
      {"kill-on-bad-exit", {Optional, 'K'}},
      {"label", {None, 'l'}},
      {"licenses", {Required, refused("licenses")}},
      {"mail-type", {Required, kIgnored}},
      {"mail-user", {Required, kIgnored}},
      {"mcs-label", {Required, kIgnored}},
      {"mem", {Required, kMem}},
      {"mem-bind", {Required, kIgnored}},
      {"mem-per-cpu", {Required, kMemPerCpu}},
      {"mem-per-gpu", {Required, refused("mem-per-gpu")}},
      {"mincpus", {Required, kMinCpus}},
      {"mpi", {Required, kMpi}},
      {"msg-timeout", {Required, kIgnored}},
      {"multi-prog", {None, kMultiProg}},
      {"network", {Required, kIgnored}},
      {"nice", {Optional, kIgnored}},
      {"no-allocate", {None, refused("no-allocate")}},
      {"no-bell", {None, kIgnored}},
      {"no-kill", {Optional, 'k'}},
      {"no-shell", {None, kNoShell}},
      {"nodefile", {Required, refused("nodefile")}},
      {"nodelist", {Required, 'w'}},
      {"nodes", {Required, 'N'}},
      {"ntasks", {Required, 'n'}},
      {"ntasks-per-core", {Required, kIgnored}},
      {"ntasks-per-gpu", {Required, refused("ntasks-per-gpu")}},
      {"ntasks-per-node", {Required, kNtasksPerNode}},
      {"ntasks-per-socket", {Required, kIgnored}},
      {"ntasks-per-tres", {Required, refused("ntasks-per-tres")}},
      {"open-mode", {Required, kOpenMode}},
      {"output", {Required, 'o'}},
      {"overcommit", {None, 'O'}},
      {"overlap", {Optional, kOverlap}},
      {"oversubscribe", {None, 's'}},
      {"pack-group", {Required, refused("pack-group")}},
      {"partition", {Required, 'p'}},
      {"power", {Required, kIgnored}},
      {"prefer", {Required, kIgnored}},  // a soft preference: any node that fits may be used
      {"preserve-env", {None, 'E'}},
      {"priority", {Required, kIgnored}},
      {"profile", {Required, kIgnored}},
      {"prolog", {Required, refused("prolog")}},
      {"propagate", {Optional, kPropagate}},
      {"pty", {None, kPty}},
      {"qos", {Required, 'q'}},
      {"quiet", {None, 'Q'}},
      {"quit-on-interrupt", {None, kQuitOnInterrupt}},
      {"reboot", {None, kIgnored}},
      {"relative", {Required, refused("relative")}},
      {"reservation", {Required, kReservation}},
      {"resv-ports", {Optional, kIgnored}},
      {"send-libs", {Optional, kIgnored}},
      {"signal", {Required, kSignal}},
      {"slurmd-debug", {Required, kIgnored}},
      {"sockets-per-node", {Required, kIgnored}},
      {"spread-job", {None, kIgnored}},
      {"switches", {Required, kIgnored}},
      {"task-epilog", {Required, kTaskEpilog}},
      {"task-prolog", {Required, kTaskProlog}},
      {"tasks-per-node", {Required, kNtasksPerNode}},
      {"test-only", {None, kTestOnly}},
      {"thread-spec", {Required, kIgnored}},
      {"threads", {Required, 'T'}},
      {"threads-per-core", {Required, kIgnored}},
      {"time", {Required, 't'}},
      {"time-min", {Required, kIgnored}},
      {"tmp", {Required, kTmp}},
      {"uid", {Required, refused("uid")}},
      {"unbuffered", {None, 'u'}},
      {"usage", {None, kUsage}},
      {"use-min-nodes", {None, kIgnored}},
      {"verbose", {None, 'v'}},
      {"version", {None, 'V'}},
      {"wait", {Required, 'W'}},
      {"wait-all-nodes", {Required, kIgnored}},  // nodes here take jobs as soon as they are up
      {"wckey", {Required, kIgnored}},
      {"whole", {None, kIgnored}},
      {"x11", {Optional, refused("x11")}},
  };
  return defs;
}

// Slurm 22.05's long options of each command, in the order of its getopt table (the order
// getopt lists them in when a prefix is ambiguous).
constexpr std::string_view kSrunOrder[] = {"accel-bind",
                                           "account",
                                           "acctg-freq",
                                           "bcast",
                                           "bcast-exclude",
                                           "begin",
                                           "bb",
                                           "bbf",
                                           "cluster-constraint",
                                           "chdir",
                                           "cluster",
                                           "clusters",
                                           "comment",
                                           "compress",
                                           "container",
                                           "context",
                                           "contiguous",
                                           "constraint",
                                           "core-spec",
                                           "cores-per-socket",
                                           "cpu-bind",
                                           "cpu_bind",
                                           "cpu-freq",
                                           "cpus-per-gpu",
                                           "cpus-per-task",
                                           "deadline",
                                           "debugger-test",
                                           "delay-boot",
                                           "dependency",
                                           "disable-status",
                                           "distribution",
                                           "epilog",
                                           "error",
                                           "exact",
                                           "exclude",
                                           "exclusive",
                                           "export",
                                           "extra-node-info",
                                           "gid",
                                           "gpu-bind",
                                           "gpu-freq",
                                           "gpus",
                                           "gpus-per-node",
                                           "gpus-per-socket",
                                           "gpus-per-task",
                                           "gres",
                                           "gres-flags",
                                           "help",
                                           "het-group",
                                           "hint",
                                           "hold",
                                           "immediate",
                                           "input",
                                           "interactive",
                                           "jobid",
                                           "job-name",
                                           "kill-on-bad-exit",
                                           "label",
                                           "licenses",
                                           "mail-type",
                                           "mail-user",
                                           "threads",
                                           "mcs-label",
                                           "mem",
                                           "mem-bind",
                                           "mem-per-cpu",
                                           "mem-per-gpu",
                                           "mincpus",
                                           "mpi",
                                           "msg-timeout",
                                           "multi-prog",
                                           "network",
                                           "nice",
                                           "no-allocate",
                                           "no-kill",
                                           "nodefile",
                                           "nodelist",
                                           "nodes",
                                           "ntasks",
                                           "ntasks-per-core",
                                           "ntasks-per-gpu",
                                           "ntasks-per-node",
                                           "ntasks-per-socket",
                                           "ntasks-per-tres",
                                           "open-mode",
                                           "output",
                                           "overcommit",
                                           "overlap",
                                           "oversubscribe",
                                           "pack-group",
                                           "partition",
                                           "power",
                                           "prefer",
                                           "preserve-env",
                                           "priority",
                                           "profile",
                                           "prolog",
                                           "propagate",
                                           "pty",
                                           "qos",
                                           "quiet",
                                           "quit-on-interrupt",
                                           "reboot",
                                           "relative",
                                           "reservation",
                                           "resv-ports",
                                           "send-libs",
                                           "signal",
                                           "slurmd-debug",
                                           "sockets-per-node",
                                           "spread-job",
                                           "switches",
                                           "task-epilog",
                                           "task-prolog",
                                           "tasks-per-node",
                                           "test-only",
                                           "thread-spec",
                                           "threads-per-core",
                                           "time",
                                           "time-min",
                                           "tmp",
                                           "uid",
                                           "unbuffered",
                                           "use-min-nodes",
                                           "verbose",
                                           "version",
                                           "usage",
                                           "wait",
                                           "wckey",
                                           "whole",
                                           "x11"};

constexpr std::string_view kSallocOrder[] = {"account",
                                             "acctg-freq",
                                             "begin",
                                             "bell",
                                             "bb",
                                             "bbf",
                                             "cluster-constraint",
                                             "chdir",
                                             "cluster",
                                             "clusters",
                                             "comment",
                                             "container",
                                             "context",
                                             "contiguous",
                                             "constraint",
                                             "core-spec",
                                             "cores-per-socket",
                                             "cpu-freq",
                                             "cpus-per-gpu",
                                             "cpus-per-task",
                                             "deadline",
                                             "delay-boot",
                                             "dependency",
                                             "distribution",
                                             "exclude",
                                             "exclusive",
                                             "extra-node-info",
                                             "get-user-env",
                                             "gid",
                                             "gpu-bind",
                                             "gpu-freq",
                                             "gpus",
                                             "gpus-per-node",
                                             "gpus-per-socket",
                                             "gpus-per-task",
                                             "gres",
                                             "gres-flags",
                                             "help",
                                             "hint",
                                             "hold",
                                             "immediate",
                                             "job-name",
                                             "kill-command",
                                             "licenses",
                                             "mail-type",
                                             "mail-user",
                                             "mcs-label",
                                             "mem",
                                             "mem-bind",
                                             "mem-per-cpu",
                                             "mem-per-gpu",
                                             "mincpus",
                                             "network",
                                             "nice",
                                             "no-bell",
                                             "no-kill",
                                             "no-shell",
                                             "nodefile",
                                             "nodelist",
                                             "nodes",
                                             "ntasks",
                                             "ntasks-per-core",
                                             "ntasks-per-gpu",
                                             "ntasks-per-node",
                                             "ntasks-per-socket",
                                             "ntasks-per-tres",
                                             "overcommit",
                                             "oversubscribe",
                                             "partition",
                                             "power",
                                             "prefer",
                                             "priority",
                                             "profile",
                                             "qos",
                                             "quiet",
                                             "reboot",
                                             "reservation",
                                             "signal",
                                             "sockets-per-node",
                                             "spread-job",
                                             "switches",
                                             "tasks-per-node",
                                             "thread-spec",
                                             "threads-per-core",
                                             "time",
                                             "time-min",
                                             "tmp",
                                             "uid",
                                             "use-min-nodes",
                                             "verbose",
                                             "version",
                                             "usage",
                                             "wait-all-nodes",
                                             "wckey",
                                             "x11"};

std::vector<LongOption> run_long_options(bool is_srun) {
  const auto& defs = run_option_defs();
  std::vector<LongOption> longs;
  auto add = [&](std::string_view name) {
    const auto& [kind, id] = defs.at(name);
    longs.push_back({name.data(), kind, id});
  };
  if (is_srun)
    for (std::string_view n : kSrunOrder) add(n);
  else
    for (std::string_view n : kSallocOrder) add(n);
  return longs;
}

int positive(const std::string& value, const char* what) {
  char* end = nullptr;
  long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || n <= 0 || n > 1 << 24)
    throw RunUsageError("Invalid numeric value \"" + value + "\" for " + what + ".", false);
  return static_cast<int>(n);
}

void nodes_range(const std::string& value, RunOptions& o) {
  const auto dash = value.find('-');
  auto count = [&](const std::string& s) {
    char* end = nullptr;
    long n = std::strtol(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || n <= 0)
      throw RunUsageError("\"" + value + "\" is not a valid node count", false);
    return static_cast<int>(n);
  };
  o.nodes_min = count(value.substr(0, dash));
  o.nodes_max = dash == std::string::npos ? *o.nodes_min : count(value.substr(dash + 1));
}

bool env_flag(const std::map<std::string, std::string>& env, const char* name) {
  auto it = env.find(name);
  return it != env.end() && (it->second.empty() || it->second != "0");
}

}  // namespace

RunOptions parse_run_options(const std::string& program, const std::vector<std::string>& args,
                             const std::map<std::string, std::string>& env) {
  RunOptions o;
  const bool is_srun = program == "srun";
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  // Input variables first; the command line overrides them.
  const std::string pfx = is_srun ? "SLURM_" : "SALLOC_";
  if (is_srun) {
    if (auto v = get("SLURM_NTASKS"); v && !v->empty())
      o.ntasks = positive(*v, "SLURM_NTASKS");
    else if (auto p = get("SLURM_NPROCS"); p && !p->empty())
      o.ntasks = positive(*p, "SLURM_NPROCS");
    if (auto v = get("SLURM_NNODES")) nodes_range(*v, o);
    if (auto v = get("SLURM_NTASKS_PER_NODE"))
      o.ntasks_per_node = positive(*v, "SLURM_NTASKS_PER_NODE");
    if (auto v = get("SRUN_CPUS_PER_TASK")) o.cpus_per_task = positive(*v, "SRUN_CPUS_PER_TASK");
    if (auto v = get("SLURM_DISTRIBUTION")) o.distribution = *v;
    if (auto v = get("SLURM_JOB_ID"))
      o.jobid = *v;
    else if (auto j = get("SLURM_JOBID"))
      o.jobid = *j;
    o.label = env_flag(env, "SLURM_LABELIO");
    o.kill_on_bad_exit = get("SLURM_KILL_BAD_EXIT").value_or("0") == "1";
    if (auto v = get("SLURM_TASK_PROLOG")) o.task_prolog = *v;
    if (auto v = get("SLURM_NO_KILL")) o.no_kill = core::to_lower(*v) != "off";
    if (auto v = get("SLURM_TASK_EPILOG")) o.task_epilog = *v;
    o.overlap = env_flag(env, "SLURM_OVERLAP");
    o.unbuffered = env_flag(env, "SLURM_UNBUFFEREDIO");
    if (auto v = get("SLURM_EXPORT_ENV")) o.export_env = *v;
    if (auto v = get("SLURM_PARTITION")) o.partition = *v;
    if (auto v = get("SLURM_ACCOUNT")) o.account = *v;
    if (auto v = get("SLURM_TIMELIMIT"))
      o.time_limit_min = core::parse_time_limit_minutes(*v, "time");
  } else {
    if (auto v = get("SALLOC_PARTITION")) o.partition = *v;
    if (auto v = get("SALLOC_NO_KILL")) o.no_kill = core::to_lower(*v) != "off";
    if (auto v = get("SALLOC_ACCOUNT")) o.account = *v;
    if (auto v = get("SALLOC_TIMELIMIT"))
      o.time_limit_min = core::parse_time_limit_minutes(*v, "time");
  }

  const std::string shorts =
      is_srun ? "+A:b:B:c:C:d:D:e:EF:G:hHi:I::J:k::K::lL:m:M:n:N:o:Op:q:Qr:sS:t:T:uvVw:W:x:XZ"
              : "+A:b:B:c:C:d:D:F:G:hHI::J:k::K::L:m:M:n:N:Op:q:QsS:t:vVw:x:";
  ParsedArgs parsed = parse_options(program, args, shorts, run_long_options(is_srun));
  if (!parsed.error.empty()) throw RunUsageError(parsed.error, true, 255);
  for (const auto& [id, value_opt] : parsed.options) {
    const std::string value = value_opt.value_or("");
    switch (id) {
      case 'A':
        o.account = value;
        break;
      case 'c':
        o.cpus_per_task = positive(value, "--cpus-per-task");
        break;
      case 'C':
        o.constraint = value;
        break;
      case 'd':
        o.dependency = value;
        break;
      case 'D':
        o.workdir = value;
        break;
      case 'e':
        o.error = value;
        break;
      case 'G':
        o.gpus = value;
        break;
      case 'h':
        o.help = true;
        break;
      case 'H':
        o.hold = true;
        break;
      case 'i':
        o.input = value;
        break;
      case 'I':
        o.immediate = true;
        break;
      case 'J':
        o.job_name = value;
        break;
      case 'k': {
        const std::string v = core::to_lower(value);
        if (value_opt && v != "off" && v != "set")
          throw RunUsageError("Invalid --no-kill specification", false, 255);
        o.no_kill = v != "off";
        break;
      }
      case 'K':
        if (!is_srun)
          throw RunUsageError(refused_name(refused("kill-command")) + " is not supported by drover",
                              false);
        o.kill_on_bad_exit = !value_opt || value != "0";
        break;
      case 'E':
        o.preserve_env = true;
        break;
      case 'r':
      case 'Z':
      case 'L':
      case 'F': {
        static const std::map<int, const char*> names = {
            {'r', "relative"}, {'Z', "no-allocate"}, {'L', "licenses"}, {'F', "nodefile"}};
        throw RunUsageError(refused_name(refused(names.at(id))) + " is not supported by drover",
                            false);
      }
      case 'b':
        o.begin = value;
        break;
      case 'B':
      case 'T':
        break;  // the node layout wanted, srun's fan-out: nothing to change here
      case 'M':
      case kClusters: {
        // Slurm's two lines, each "program: error: ..."; the first prefix is added when printed.
        std::string text = cluster_unreachable(program, value);
        text = text.substr(program.size() + 9);
        text.pop_back();
        throw RunUsageError(text, false);
      }
      case 'l':
        o.label = true;
        break;
      case 'm':
        o.distribution = value;
        break;
      case 'n':
        o.ntasks = positive(value, "--ntasks");
        o.ntasks_cli = true;
        break;
      case 'N':
        nodes_range(value, o);
        o.nodes_cli = true;
        break;
      case 'o':
        o.output = value;
        break;
      case 'O':
        o.overcommit = true;
        break;
      case 's':
      case 'S':
        break;
      case 'p':
        o.partition = value;
        break;
      case 'q':
        o.qos = value;
        break;
      case 'Q':
        o.quiet = true;
        break;
      case 't':
        try {
          o.time_limit_min = core::parse_time_limit_minutes(value);
        } catch (const core::ParseError&) {
          throw RunUsageError("Invalid --time specification", false, 255);
        }
        break;
      case 'u':
        o.unbuffered = true;
        break;
      case 'v':
        ++o.verbose;
        break;
      case 'V':
        o.version = true;
        break;
      case 'w':
        o.nodelist = value;
        break;
      case 'W':
        o.wait_s = positive(value, "--wait");
        break;
      case 'x':
        o.exclude = value;
        break;
      case 'X':
        o.disable_status = true;
        break;
      case kMem:
        o.mem_mb = core::parse_mem_mb(value, "--mem");
        break;
      case kQuitOnInterrupt:
        o.quit_on_interrupt = true;
        break;
      case kMinCpus:
        o.min_cpus = positive(value, "--mincpus");
        break;
      case kTmp:
        o.tmp_mb = core::parse_mem_mb(value, "--tmp");
        break;
      case kMemPerCpu:
        o.mem_per_cpu_mb = core::parse_mem_mb(value, "--mem-per-cpu");
        break;
      case kNtasksPerNode:
        o.ntasks_per_node = positive(value, "--ntasks-per-node");
        break;
      case kExclusive:
        o.exclusive = true;
        break;
      case kOverlap:
        o.overlap = true;
        break;
      case kExact:
        o.exact = true;
        break;
      case kMultiProg:
        o.multi_prog = true;
        break;
      case kGres:
        o.gres = value;
        break;
      case kGpusPerNode:
        o.gpus_per_node = value;
        break;
      case kGpusPerTask:
        o.gpus_per_task = value;
        break;
      case kExport:
        o.export_env = value;
        break;
      case kJobid:
        o.jobid = value;
        break;
      case kComment:
        o.comment = value;
        break;
      case kReservation:
        o.reservation = value;
        break;
      case kBegin:
        o.begin = value;
        break;
      case kSignal:
        // srun and salloc take R: but not B: (no batch shell).
        try {
          if (core::parse_signal_spec(value).batch_only) throw core::ParseError("");
        } catch (const core::ParseError&) {
          throw RunUsageError("Invalid --signal specification", false, 255);
        }
        o.signal = value;
        break;
      case kOpenMode:
        o.open_mode = value;
        break;
      case kPty:
        o.pty = true;
        break;
      case kTestOnly:
        o.test_only = true;
        break;
      case kTaskProlog:
        o.task_prolog = value;
        break;
      case kTaskEpilog:
        o.task_epilog = value;
        break;
      case kPropagate:
        try {
          core::parse_rlimit_list(value.empty() ? "ALL" : value);
        } catch (const core::ParseError& e) {
          // Slurm's two lines, each "program: error: ..."; the first prefix is added when printed.
          throw RunUsageError(std::string(e.what()) + "\n" + program +
                                  ": error: --propagate=" + value + " is not valid.",
                              false);
        }
        o.propagate = value;
        break;
      case kNoShell:
        o.no_shell = true;
        break;
      case kUsage:
        o.usage = true;
        break;
      default:
        if (id >= kRefusedBase)
          throw RunUsageError(refused_name(id) + " is not supported by drover", false);
        break;  // kMpi, kCpuBind, kIgnored, kGetUserEnv
    }
  }
  o.command = parsed.operands;
  if (o.nodes_min && o.nodes_max && *o.nodes_max < *o.nodes_min)
    throw RunUsageError("Invalid node count specification", false);
  if (o.distribution) {
    const std::string d = o.distribution->substr(0, o.distribution->find_first_of(":,"));
    if (d != "block" && d != "cyclic" && d != "arbitrary" && d != "plane" && d != "*")
      throw RunUsageError("Invalid --distribution specification", false);
  }
  return o;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string item = *e;
    if (auto eq = item.find('='); eq != std::string::npos)
      env[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return env;
}

std::optional<RunOptions> parse_run_options_or_report(const std::string& program,
                                                      const std::vector<std::string>& args,
                                                      const std::map<std::string, std::string>& env,
                                                      int& exit_code) {
  try {
    return parse_run_options(program, args, env);
  } catch (const RunUsageError& e) {
    if (e.getopt)
      std::cerr << e.what() << "\nTry \"" << program << " --help\" for more information\n";
    else
      std::cerr << program << ": error: " << e.what() << '\n';
    exit_code = e.exit_code;
  } catch (const core::ParseError& e) {
    std::cerr << program << ": error: " << e.what() << '\n';
    exit_code = 1;
  }
  return std::nullopt;
}

core::JobSpec allocation_spec(const RunOptions& o, const std::string& program,
                              const std::map<std::string, std::string>& env) {
  core::JobSpec spec;
  spec.interactive = true;
  std::string base = o.command.empty() ? program : o.command.front();
  if (auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  // salloc's job is "interactive" whatever it runs (--no-shell: "no-shell"); srun's is named
  // after its command.
  spec.name =
      o.job_name.value_or(program == "salloc" ? (o.no_shell ? "no-shell" : "interactive") : base);
  if (o.ntasks) {
    spec.ntasks = *o.ntasks;
    spec.ntasks_set = true;
  }
  if (o.nodes_min) {
    spec.nodes_min = *o.nodes_min;
    spec.nodes_max = o.nodes_max.value_or(*o.nodes_min);
    spec.nodes_set = true;
  }
  if (o.ntasks_per_node) {
    spec.ntasks_per_node = *o.ntasks_per_node;
    if (!o.ntasks) {
      spec.ntasks = spec.ntasks_per_node * spec.nodes_min;
      spec.ntasks_set = true;
    }
  }
  if (spec.nodes_set && spec.ntasks < spec.nodes_min) spec.ntasks = spec.nodes_min;
  // -O: the nodes are allocated, not a CPU per task (the step may put more tasks on them).
  if (o.overcommit && spec.nodes_set) spec.ntasks = spec.nodes_min;
  if (o.cpus_per_task) {
    spec.cpus_per_task = *o.cpus_per_task;
    spec.cpus_per_task_set = true;
  }
  if (o.mem_mb) spec.mem_per_node_mb = *o.mem_mb;
  if (o.mem_per_cpu_mb) spec.mem_per_cpu_mb = *o.mem_per_cpu_mb;
  if (o.time_limit_min) spec.time_limit_min = *o.time_limit_min;
  spec.signal = o.signal.value_or("");
  spec.exclusive = o.exclusive;
  spec.no_kill = o.no_kill;
  if (o.partition) spec.partitions = {*o.partition};
  std::vector<char> cwd(4096);
  const std::string here = ::getcwd(cwd.data(), cwd.size()) ? cwd.data() : "/";
  spec.workdir = o.workdir.value_or(here);
  spec.submit_dir = here;
  // Slurm's account names are lower case whatever case they are given in.
  spec.account = core::to_lower(o.account.value_or(""));
  if (o.min_cpus) spec.min_cpus = *o.min_cpus;
  if (o.tmp_mb) spec.tmp_disk_mb = *o.tmp_mb;
  spec.qos = o.qos.value_or("");
  spec.nodelist = o.nodelist.value_or("");
  spec.exclude = o.exclude.value_or("");
  spec.constraint = o.constraint.value_or("");
  spec.reservation = o.reservation.value_or("");
  spec.dependency = o.dependency.value_or("");
  spec.gres = o.gres.value_or("");
  spec.gpus = o.gpus.value_or("");
  spec.gpus_per_node = o.gpus_per_node.value_or("");
  spec.gpus_per_task = o.gpus_per_task.value_or("");
  spec.comment = o.comment.value_or("");
  spec.hold = o.hold;
  spec.requeue = 0;
  spec.environment = core::exported_environment(std::nullopt, env);
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  spec.submit_host = host;
  spec.submit_sid = ::getsid(0);
  std::string line = program;
  for (const auto& a : o.command) line += " " + a;
  spec.command = o.command.empty() || program == "salloc" ? "" : o.command.front();
  spec.argv = o.command;
  return spec;
}

}  // namespace drover::cli
