#include "core/slurm_conf.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"

namespace drover::core {
namespace {

// Global keys documented in slurm.conf(5) for Slurm 22.05 (names only).
constexpr std::string_view kGlobalKeys[] = {
    "AccountingStorageBackupHost",
    "AccountingStorageEnforce",
    "AccountingStorageExternalHost",
    "AccountingStorageHost",
    "AccountingStorageLoc",  // drover: the PostgreSQL database, or the SQLite file
    "AccountingStorageParameters",
    "AccountingStoragePass",
    "AccountingStoragePassFile",  // drover's own: the PostgreSQL password, in a file
    "AccountingStoragePort",
    "AccountingStorageTRES",
    "AccountingStorageType",
    "AccountingStorageUser",
    "AccountingStoreFlags",
    "AcctGatherEnergyType",
    "AcctGatherFilesystemType",
    "AcctGatherInterconnectType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AllowSpecResourcesUsage",
    "AuthAltParameters",
    "AuthAltTypes",
    "AuthInfo",
    "AuthType",
    "BackupAddr",
    "BackupController",
    "BatchStartTimeout",
    "BcastExclude",
    "BcastParameters",
    "BurstBufferType",
    "CliFilterPlugins",
    "ClusterName",
    "CommunicationParameters",
    "CompleteWait",
    "ControlAddr",
    "ControlMachine",
    "CoreSpecPlugin",
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "DebugFlags",
    "DefCpuPerGPU",
    "DefMemPerCPU",
    "DefMemPerGPU",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "DroverHttpAddress",  // drover's own: the HTTP listener (docs/metrics.md)
    "DroverHttpPort",
    "DroverK8sKubeconfig",  // drover's own: the Kubernetes operator (docs/operators.md)
    "DroverK8sNamespace",
    "DroverMetricsTokenFile",
    "DroverWebRoot",  // the dashboard's built files (docs/web.md)
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "ExtSensorsFreq",
    "ExtSensorsType",
    "FairShareDampeningFactor",
    "FederationParameters",
    "FirstJobId",
    "GetEnvTimeout",
    "GpuFreqDef",
    "GresTypes",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "InactiveLimit",
    "InteractiveStepOptions",
    "JobAcctGatherFrequency",
    "JobAcctGatherParams",
    "JobAcctGatherType",
    "JobCompHost",
    "JobCompLoc",
    "JobCompParams",
    "JobCompPass",
    "JobCompPort",
    "JobCompType",
    "JobCompUser",
    "JobContainerType",
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KillOnBadExit",
    "KillWait",
    "LaunchParameters",
    "LaunchType",
    "Licenses",
    "LogTimeFormat",
    "MCSParameters",
    "MCSPlugin",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxJobId",
    "MaxMemPerCPU",
    "MaxMemPerNode",
    "MaxNodeCount",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MessageTimeout",
    "MinJobAge",
    "MpiDefault",
    "MpiParams",
    "NodeFeaturesPlugins",
    "OverTimeLimit",
    "PlugStackConfig",
    "PluginDir",
    "PowerParameters",
    "PowerPlugin",
    "PrEpParameters",
    "PrEpPlugins",
    "PreemptExemptTime",
    "PreemptMode",
    "PreemptType",
    "PriorityCalcPeriod",
    "PriorityDecayHalfLife",
    "PriorityFavorSmall",
    "PriorityFlags",
    "PriorityMaxAge",
    "PriorityParameters",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityType",
    "PriorityUsageResetPeriod",
    "PriorityWeightAge",
    "PriorityWeightAssoc",
    "PriorityWeightFairshare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "PriorityWeightTRES",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologEpilogTimeout",
    "PrologFlags",
    "PrologSlurmctld",
    "PropagatePrioProcess",
    "PropagateResourceLimits",
    "PropagateResourceLimitsExcept",
    "RebootProgram",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SchedulerParameters",
    "SchedulerTimeSlice",
    "SchedulerType",
    "ScronParameters",
    "SelectType",
    "SelectTypeParameters",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SlurmUser",
    "SlurmctldAddr",
    "SlurmctldDebug",
    "SlurmctldHost",
    "SlurmctldLogFile",
    "SlurmctldParameters",
    "SlurmctldPidFile",
    "SlurmctldPlugstack",
    "SlurmctldPort",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldSyslogDebug",
    "SlurmctldTimeout",
    "SlurmdDebug",
    "SlurmdLogFile",
    "SlurmdParameters",
    "SlurmdPidFile",
    "SlurmdPort",
    "SlurmdSpoolDir",
    "SlurmdSyslogDebug",
    "SlurmdTimeout",
    "SlurmdUser",
    "SrunEpilog",
    "SrunPortRange",
    "SrunProlog",
    "StateSaveLocation",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TCPTimeout",
    "TaskEpilog",
    "TaskPlugin",
    "TaskPluginParam",
    "TaskProlog",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TrackWCKey",
    "TreeWidth",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "UsePAM",
    "VSizeFactor",
    "WaitTime",
    "X11Parameters",
};

constexpr std::string_view kNodeKeys[] = {"NodeName",          "NodeHostname",   "NodeAddr",
                                          "BcastAddr",         "Boards",         "CoreSpecCount",
                                          "CoresPerSocket",    "CpuBind",        "CPUs",
                                          "CpuSpecList",       "Features",       "Feature",
                                          "AvailableFeatures", "ActiveFeatures", "Gres",
                                          "MemSpecLimit",      "Port",           "Procs",
                                          "RealMemory",        "Reason",         "Sockets",
                                          "SocketsPerBoard",   "State",          "ThreadsPerCore",
                                          "TmpDisk",           "Weight"};

constexpr std::string_view kPartitionKeys[] = {"PartitionName",
                                               "AllocNodes",
                                               "AllowAccounts",
                                               "AllowGroups",
                                               "AllowQos",
                                               "Alternate",
                                               "CpuBind",
                                               "Default",
                                               "DefaultTime",
                                               "DefCpuPerGPU",
                                               "DefMemPerCPU",
                                               "DefMemPerGPU",
                                               "DefMemPerNode",
                                               "DenyAccounts",
                                               "DenyQos",
                                               "DisableRootJobs",
                                               "ExclusiveUser",
                                               "GraceTime",
                                               "Hidden",
                                               "LLN",
                                               "MaxCPUsPerNode",
                                               "MaxMemPerCPU",
                                               "MaxMemPerNode",
                                               "MaxNodes",
                                               "MaxTime",
                                               "MinNodes",
                                               "Nodes",
                                               "OverSubscribe",
                                               "OverTimeLimit",
                                               "PreemptMode",
                                               "PriorityJobFactor",
                                               "PriorityTier",
                                               "QOS",
                                               "ReqResv",
                                               "ResumeTimeout",
                                               "RootOnly",
                                               "SelectTypeParameters",
                                               "Shared",
                                               "State",
                                               "SuspendTime",
                                               "SuspendTimeout",
                                               "TRESBillingWeights"};

constexpr std::string_view kDownNodesKeys[] = {"DownNodes", "Reason", "State"};
constexpr std::string_view kFrontendKeys[] = {"FrontendName", "FrontendAddr", "AllowGroups",
                                              "AllowUsers",   "DenyGroups",   "DenyUsers",
                                              "Port",         "Reason",       "State"};
constexpr std::string_view kNodeSetKeys[] = {"NodeSet", "Feature", "Nodes"};

constexpr int kMaxIncludeDepth = 16;

using KeyTable = std::unordered_map<std::string, std::string_view>;

template <std::size_t N>
KeyTable make_table(const std::string_view (&keys)[N]) {
  KeyTable t;
  for (auto k : keys) t.emplace(to_lower(k), k);
  return t;
}

const KeyTable& global_table() {
  static const KeyTable t = make_table(kGlobalKeys);
  return t;
}

std::optional<std::string_view> lookup(const KeyTable& t, std::string_view key) {
  auto it = t.find(to_lower(key));
  if (it == t.end()) return std::nullopt;
  return it->second;
}

struct Pair {
  std::string key, value;
};

// Attributes of one record, canonical key -> value, in first-seen order of keys.
using Attrs = std::map<std::string, std::string>;

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t c = s.find(',', pos);
    if (c == std::string_view::npos) c = s.size();
    if (c > pos) out.emplace_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

struct PendingPartition {
  PartitionConf conf;
  std::string nodes_expr;
  std::string where;  // "slurm.conf:12"
};

class Parser {
 public:
  explicit Parser(const IncludeResolver* resolver) : resolver_(resolver) {}

  void parse(std::string_view text, std::string_view source, int depth) {
    std::string logical;
    int logical_line = 0;
    int line_no = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view raw = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++line_no;
      if (logical.empty()) logical_line = line_no;
      std::string line = strip_comment(raw);
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
        line.pop_back();
      if (!line.empty() && line.back() == '\\') {
        line.pop_back();
        logical += line;
        continue;
      }
      logical += line;
      std::string where = std::string(source) + ":" + std::to_string(logical_line);
      handle_line(logical, where, depth);
      logical.clear();
    }
    if (!logical.empty()) {
      handle_line(logical, std::string(source) + ":" + std::to_string(logical_line), depth);
    }
  }

  SlurmConf finish() {
    resolve_partitions();
    apply_down_nodes();
    return std::move(conf_);
  }

 private:
  static std::string strip_comment(std::string_view raw) {
    std::string out;
    bool quoted = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      char c = raw[i];
      if (c == '\r') continue;
      if (c == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
        out += '#';
        ++i;
        continue;
      }
      if (c == '"') quoted = !quoted;
      if (c == '#' && !quoted) break;
      out += c;
    }
    return out;
  }

  [[noreturn]] static void fail(const std::string& where, const std::string& msg) {
    throw ParseError(where + ": " + msg);
  }

  void warn(const std::string& where, const std::string& msg) {
    conf_.warnings.push_back(where + ": " + msg);
  }

  static std::vector<Pair> tokenize(std::string_view line, const std::string& where) {
    std::vector<Pair> out;
    std::size_t i = 0;
    auto space = [&](std::size_t k) {
      return std::isspace(static_cast<unsigned char>(line[k])) != 0;
    };
    while (true) {
      while (i < line.size() && space(i)) ++i;
      if (i >= line.size()) break;
      std::size_t start = i;
      while (i < line.size() && line[i] != '=' && !space(i)) ++i;
      if (i >= line.size() || line[i] != '=') {
        fail(where, "expected Key=Value, got '" + std::string(line.substr(start, i - start)) + "'");
      }
      Pair p;
      p.key = std::string(line.substr(start, i - start));
      if (p.key.empty()) fail(where, "missing key before '='");
      ++i;  // '='
      while (i < line.size() && !space(i)) {
        if (line[i] == '"') {
          std::size_t close = line.find('"', i + 1);
          if (close == std::string_view::npos) fail(where, "unterminated quote in " + p.key);
          p.value += line.substr(i + 1, close - i - 1);
          i = close + 1;
        } else {
          p.value += line[i++];
        }
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  void handle_line(std::string_view line, const std::string& where, int depth) {
    std::size_t first = 0;
    while (first < line.size() && std::isspace(static_cast<unsigned char>(line[first]))) ++first;
    if (first == line.size()) return;
    std::string_view rest = line.substr(first);
    // "Include <file>": a keyword followed by blanks, not a Key=Value pair.
    if (rest.size() > 8 && to_lower(rest.substr(0, 7)) == "include" &&
        std::isspace(static_cast<unsigned char>(rest[7]))) {
      std::string_view path = rest.substr(8);
      while (!path.empty() && std::isspace(static_cast<unsigned char>(path.front())))
        path.remove_prefix(1);
      handle_include(path, where, depth);
      return;
    }
    std::vector<Pair> pairs = tokenize(rest, where);
    std::string head = to_lower(pairs.front().key);
    if (head == "nodename") return node_line(pairs, where);
    if (head == "partitionname") return partition_line(pairs, where);
    if (head == "downnodes") return down_nodes_line(pairs, where);
    if (head == "nodeset") return node_set_line(pairs, where);
    if (head == "frontendname") {
      check_attrs(pairs, make_table(kFrontendKeys), where, "frontend");
      warn(where, "FrontendName records are not supported and were ignored");
      return;
    }
    for (const auto& p : pairs) {
      auto canon = lookup(global_table(), p.key);
      if (!canon) {
        warn(where, "unknown key '" + p.key + "'");
        continue;
      }
      std::string k(*canon);
      if (conf_.options.count(k)) warn(where, k + " given more than once, last value used");
      conf_.options[k] = p.value;
      if (k == "ClusterName") conf_.cluster_name = p.value;
    }
  }

  void handle_include(std::string_view path_in, const std::string& where, int depth) {
    std::string path;
    for (std::size_t i = 0; i < path_in.size(); ++i) {
      if (path_in[i] == '%' && i + 1 < path_in.size() && path_in[i + 1] == 'c') {
        path += conf_.cluster_name;
        ++i;
      } else {
        path += path_in[i];
      }
    }
    if (path.empty()) fail(where, "Include without a file name");
    if (resolver_ == nullptr || !*resolver_) {
      warn(where, "Include '" + path + "' not followed");
      return;
    }
    if (depth >= kMaxIncludeDepth) fail(where, "Include nested too deeply: '" + path + "'");
    std::optional<std::string> text = (*resolver_)(path);
    if (!text) fail(where, "cannot read included file '" + path + "'");
    parse(*text, path, depth + 1);
  }

  // Canonicalises record attributes, reporting unknown ones.
  Attrs check_attrs(const std::vector<Pair>& pairs, const KeyTable& table, const std::string& where,
                    std::string_view what) {
    Attrs out;
    for (const auto& p : pairs) {
      auto canon = lookup(table, p.key);
      if (!canon) {
        warn(where, "unknown " + std::string(what) + " attribute '" + p.key + "'");
        continue;
      }
      out[std::string(*canon)] = p.value;
    }
    return out;
  }

  static int64_t to_int(const std::string& v, const std::string& key, const std::string& where,
                        int64_t min, int64_t max) {
    int64_t n = 0;
    bool ok = !v.empty();
    for (char c : v) {
      if (c < '0' || c > '9' || n > max) {
        ok = false;
        break;
      }
      n = n * 10 + (c - '0');
    }
    if (!ok || n < min || n > max) fail(where, "invalid value '" + v + "' for " + key);
    return n;
  }

  static bool to_bool(const std::string& v, const std::string& key, const std::string& where) {
    std::string l = to_lower(v);
    if (l == "yes" || l == "true" || l == "1") return true;
    if (l == "no" || l == "false" || l == "0") return false;
    fail(where, "invalid value '" + v + "' for " + key + " (expected YES or NO)");
  }

  static int64_t to_minutes(const std::string& v, const std::string& key,
                            const std::string& where) {
    try {
      return parse_time_limit_minutes(v);
    } catch (const ParseError&) {
      fail(where, "invalid time '" + v + "' for " + key);
    }
  }

  static std::vector<std::string> expand(const std::string& v, const std::string& key,
                                         const std::string& where) {
    try {
      return expand_hostlist(v);
    } catch (const ParseError& e) {
      fail(where, key + ": " + e.what());
    }
  }

  void node_line(const std::vector<Pair>& pairs, const std::string& where) {
    static const KeyTable table = make_table(kNodeKeys);
    Attrs own = check_attrs(pairs, table, where, "node");
    const std::string& name_expr = own["NodeName"];
    if (to_lower(name_expr) == "default") {
      own.erase("NodeName");
      for (auto& [k, v] : own) node_defaults_[k] = v;
      return;
    }
    Attrs a = node_defaults_;
    for (auto& [k, v] : own) a[k] = v;

    std::vector<std::string> names = expand(name_expr, "NodeName", where);
    if (names.empty()) fail(where, "NodeName without a node name");

    NodeConf base;
    auto has = [&](const char* k) { return a.count(k) != 0; };
    auto num = [&](const char* k, int64_t max) { return to_int(a[k], k, where, 1, max); };
    constexpr int64_t kIntMax = 0x7fffffff;
    int64_t threads = has("ThreadsPerCore") ? num("ThreadsPerCore", 1 << 16) : 1;
    int64_t cores = has("CoresPerSocket") ? num("CoresPerSocket", 1 << 16) : 1;
    int64_t boards = has("Boards") ? num("Boards", 1 << 16) : 1;
    int64_t per_board = 1;
    if (has("SocketsPerBoard") && has("Sockets"))
      fail(where, "Sockets and SocketsPerBoard are mutually exclusive");
    if (has("SocketsPerBoard")) per_board = num("SocketsPerBoard", 1 << 16);
    // With Boards, Sockets means sockets per board.
    if (has("Sockets")) per_board = num("Sockets", 1 << 16);
    int64_t sockets = boards * per_board;
    if (has("CPUs") && has("Procs")) fail(where, "CPUs and Procs are the same attribute");
    const char* cpu_key = has("CPUs") ? "CPUs" : "Procs";
    int64_t cpus = 0;
    if (has(cpu_key)) {
      cpus = num(cpu_key, kIntMax);
      // Sockets omitted: inferred from CPUs, cores and threads.
      if (!has("Sockets") && !has("SocketsPerBoard")) {
        sockets = std::max<int64_t>(1, cpus / (cores * threads));
      }
    } else {
      cpus = sockets * cores * threads;
      if (cpus > kIntMax) fail(where, "node has too many CPUs");
    }
    base.cpus = static_cast<int>(cpus);
    base.boards = static_cast<int>(boards);
    base.sockets = static_cast<int>(sockets);
    base.cores_per_socket = static_cast<int>(cores);
    base.threads_per_core = static_cast<int>(threads);
    if (has("RealMemory"))
      base.real_memory_mb = to_int(a["RealMemory"], "RealMemory", where, 0, int64_t{1} << 50);
    if (has("Weight"))
      base.weight = static_cast<int>(to_int(a["Weight"], "Weight", where, 0, kIntMax));
    if (has("Gres")) base.gres = a["Gres"];
    for (const char* k : {"Features", "Feature", "AvailableFeatures"}) {
      if (has(k)) base.features = split_list(a[k]);
    }
    if (has("State")) base.state = to_upper(a["State"]);
    for (const auto& [k, v] : a) {
      static const std::set<std::string> typed = {"NodeName",
                                                  "NodeAddr",
                                                  "NodeHostname",
                                                  "Port",
                                                  "CPUs",
                                                  "Procs",
                                                  "Boards",
                                                  "Sockets",
                                                  "SocketsPerBoard",
                                                  "CoresPerSocket",
                                                  "ThreadsPerCore",
                                                  "RealMemory",
                                                  "Weight",
                                                  "Gres",
                                                  "Features",
                                                  "Feature",
                                                  "AvailableFeatures",
                                                  "State"};
      if (!typed.count(k)) base.other[k] = v;
    }

    // One value for the whole range, or one per node, as Slurm (built with multiple-slurmd)
    // takes them; the messages are Slurm's own, typo included.
    auto per_node = [&](const char* key, const char* slurm_key) {
      std::vector<std::string> vals;
      if (!has(key)) return vals;
      vals = expand(a[key], key, where);
      if (vals.size() != 1 && vals.size() != names.size()) {
        fail(where, std::string(slurm_key) +
                        " count must equal that of NodeName records of there must be no more "
                        "than one");
      }
      return vals;
    };
    // NodeAddr defaults to NodeHostname, so Slurm names NodeAddr when only NodeHostname is off.
    std::vector<std::string> hosts =
        per_node("NodeHostname", has("NodeAddr") ? "NodeHostname" : "NodeAddr");
    std::vector<std::string> addrs = per_node("NodeAddr", "NodeAddr");
    if (addrs.empty()) addrs = hosts;
    std::vector<std::string> ports;
    if (has("Port")) {
      ports = expand(a["Port"], "Port", where);
      if (ports.size() != 1 && ports.size() != names.size()) {
        fail(where,
             "Port count must equal that of NodeName records or there must be no more than one (" +
                 std::to_string(ports.size()) + " != " + std::to_string(names.size()) + ")");
      }
    }
    auto pick = [](const std::vector<std::string>& v, std::size_t i) -> const std::string& {
      return v.size() == 1 ? v[0] : v[i];
    };

    for (std::size_t i = 0; i < names.size(); ++i) {
      NodeConf n = base;
      n.name = names[i];
      n.node_addr = addrs.empty() ? n.name : pick(addrs, i);
      n.node_hostname = hosts.empty() ? n.name : pick(hosts, i);
      if (!ports.empty())
        n.port = static_cast<int>(to_int(pick(ports, i), "Port", where, 0, 65535));
      if (!node_index_.emplace(n.name, conf_.nodes.size()).second)
        fail(where, "duplicate node '" + n.name + "'");
      conf_.nodes.push_back(std::move(n));
    }
  }

  void partition_line(const std::vector<Pair>& pairs, const std::string& where) {
    static const KeyTable table = make_table(kPartitionKeys);
    Attrs own = check_attrs(pairs, table, where, "partition");
    const std::string name = own["PartitionName"];
    if (to_lower(name) == "default") {
      own.erase("PartitionName");
      for (auto& [k, v] : own) part_defaults_[k] = v;
      return;
    }
    if (name.empty()) fail(where, "PartitionName without a name");
    for (const auto& p : parts_) {
      if (p.conf.name == name) {
        warn(where, "duplicate partition '" + name + "' ignored");
        return;
      }
    }
    Attrs a = part_defaults_;
    for (auto& [k, v] : own) a[k] = v;
    auto has = [&](const char* k) { return a.count(k) != 0; };
    constexpr int64_t kIntMax = 0x7fffffff;

    PendingPartition pp;
    pp.where = where;
    PartitionConf& p = pp.conf;
    p.name = name;
    if (has("Nodes")) pp.nodes_expr = a["Nodes"];
    if (has("Default")) p.is_default = to_bool(a["Default"], "Default", where);
    if (has("MaxTime")) p.max_time_min = to_minutes(a["MaxTime"], "MaxTime", where);
    if (has("DefaultTime")) p.default_time_min = to_minutes(a["DefaultTime"], "DefaultTime", where);
    if (has("State")) {
      p.state = to_upper(a["State"]);
      if (p.state != "UP" && p.state != "DOWN" && p.state != "DRAIN" && p.state != "INACTIVE")
        fail(where, "invalid partition State '" + a["State"] + "'");
    }
    if (has("MaxNodes")) {
      std::string u = to_upper(a["MaxNodes"]);
      p.max_nodes = (u == "UNLIMITED" || u == "INFINITE")
                        ? -1
                        : static_cast<int>(to_int(a["MaxNodes"], "MaxNodes", where, 0, kIntMax));
    }
    if (has("MinNodes"))
      p.min_nodes = static_cast<int>(to_int(a["MinNodes"], "MinNodes", where, 0, kIntMax));
    if (has("PriorityTier"))
      p.priority_tier =
          static_cast<int>(to_int(a["PriorityTier"], "PriorityTier", where, 0, 65533));
    if (has("PriorityJobFactor")) {
      p.priority_job_factor =
          static_cast<int>(to_int(a["PriorityJobFactor"], "PriorityJobFactor", where, 0, 65533));
    }
    auto list_or_all = [&](const char* k) {
      std::vector<std::string> v;
      if (has(k) && to_upper(a[k]) != "ALL") v = split_list(a[k]);
      return v;
    };
    p.allow_accounts = list_or_all("AllowAccounts");
    p.allow_qos = list_or_all("AllowQos");
    // Shared is the old name of OverSubscribe.
    for (const char* k : {"Shared", "OverSubscribe"}) {
      if (!has(k)) continue;
      p.over_subscribe = to_upper(a[k]);
      std::string mode = p.over_subscribe.substr(0, p.over_subscribe.find(':'));
      if (mode != "NO" && mode != "YES" && mode != "EXCLUSIVE" && mode != "FORCE")
        fail(where, "invalid value '" + a[k] + "' for " + k);
    }
    if (has("RootOnly")) p.root_only = to_bool(a["RootOnly"], "RootOnly", where);
    if (has("Hidden")) p.hidden = to_bool(a["Hidden"], "Hidden", where);
    for (const auto& [k, v] : a) {
      static const std::set<std::string> typed = {
          "PartitionName", "Nodes",    "Default",  "MaxTime",       "DefaultTime",
          "State",         "MaxNodes", "MinNodes", "PriorityTier",  "PriorityJobFactor",
          "AllowAccounts", "AllowQos", "Shared",   "OverSubscribe", "RootOnly",
          "Hidden"};
      if (!typed.count(k)) p.other[k] = v;
    }
    if (p.is_default) {
      // Slurm keeps the last Default=YES partition.
      for (auto& other : parts_) {
        if (other.conf.is_default) {
          warn(where, "partition '" + other.conf.name + "' is no longer the default");
          other.conf.is_default = false;
        }
      }
    }
    parts_.push_back(std::move(pp));
  }

  void down_nodes_line(const std::vector<Pair>& pairs, const std::string& where) {
    static const KeyTable table = make_table(kDownNodesKeys);
    Attrs a = check_attrs(pairs, table, where, "DownNodes");
    down_.push_back({a, where});
  }

  void node_set_line(const std::vector<Pair>& pairs, const std::string& where) {
    static const KeyTable table = make_table(kNodeSetKeys);
    Attrs a = check_attrs(pairs, table, where, "NodeSet");
    NodeSet s;
    s.where = where;
    s.feature = a["Feature"];
    s.nodes_expr = a["Nodes"];
    node_sets_[a["NodeSet"]] = s;
  }

  struct NodeSet {
    std::string feature, nodes_expr, where;
  };

  std::vector<std::string> node_set_members(const NodeSet& s) {
    std::vector<std::string> out;
    if (!s.nodes_expr.empty()) out = node_names(s.nodes_expr, s.where, "NodeSet");
    if (!s.feature.empty()) {
      for (const auto& n : conf_.nodes) {
        if (std::find(n.features.begin(), n.features.end(), s.feature) != n.features.end())
          out.push_back(n.name);
      }
    }
    return out;
  }

  // Expands a Nodes= value whose items may be hostlists, "ALL" or NodeSet names.
  std::vector<std::string> node_names(const std::string& expr, const std::string& where,
                                      const std::string& owner) {
    std::vector<std::string> out;
    if (to_upper(expr) == "ALL") {
      for (const auto& n : conf_.nodes) out.push_back(n.name);
      return out;
    }
    for (const auto& item : expand(expr, "Nodes", where)) {
      if (node_index_.count(item)) {
        out.push_back(item);
        continue;
      }
      auto set = node_sets_.find(item);
      if (set != node_sets_.end() && owner != "NodeSet") {
        for (auto& m : node_set_members(set->second)) out.push_back(std::move(m));
        continue;
      }
      fail(where, owner + " names undefined node '" + item + "'");
    }
    return out;
  }

  void resolve_partitions() {
    for (auto& pp : parts_) {
      if (to_upper(pp.nodes_expr) == "ALL") pp.conf.all_nodes = true;
      for (const auto& item : split_list(pp.nodes_expr)) {
        auto set = node_sets_.find(item);
        if (set != node_sets_.end() && !set->second.feature.empty() && !node_index_.count(item))
          pp.conf.node_set_features.push_back(set->second.feature);
      }
      if (!pp.nodes_expr.empty()) {
        std::vector<std::string> names =
            node_names(pp.nodes_expr, pp.where, "partition '" + pp.conf.name + "'");
        std::set<std::string> seen;
        for (auto& n : names)
          if (seen.insert(n).second) pp.conf.nodes.push_back(std::move(n));
      }
      conf_.partitions.push_back(std::move(pp.conf));
    }
  }

  void apply_down_nodes() {
    for (auto& [a, where] : down_) {
      std::string state = a.count("State") ? to_upper(a["State"]) : "DOWN";
      for (const auto& name : node_names(a["DownNodes"], where, "DownNodes")) {
        NodeConf& n = conf_.nodes[node_index_.at(name)];
        n.state = state;
        if (a.count("Reason")) n.other["Reason"] = a["Reason"];
      }
    }
  }

  const IncludeResolver* resolver_;
  SlurmConf conf_;
  Attrs node_defaults_, part_defaults_;
  std::unordered_map<std::string, std::size_t> node_index_;
  std::vector<PendingPartition> parts_;
  std::vector<std::pair<Attrs, std::string>> down_;
  std::map<std::string, NodeSet> node_sets_;
};

}  // namespace

std::optional<std::string> canonical_slurm_conf_key(std::string_view key) {
  auto c = lookup(global_table(), key);
  if (!c) return std::nullopt;
  return std::string(*c);
}

int64_t SlurmConf::get_int(std::string_view key, int64_t dflt) const {
  std::string k = canonical_slurm_conf_key(key).value_or(std::string(key));
  auto it = options.find(k);
  if (it == options.end()) return dflt;
  const std::string& v = it->second;
  std::size_t i = (!v.empty() && v[0] == '-') ? 1 : 0;
  int64_t n = 0;
  bool ok = i < v.size() && v.size() - i <= 18;
  for (; ok && i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9')
      ok = false;
    else
      n = n * 10 + (v[i] - '0');
  }
  if (!ok) throw ParseError("slurm.conf: " + k + "=" + v + " is not a number");
  return (!v.empty() && v[0] == '-') ? -n : n;
}

std::string SlurmConf::get(std::string_view key, std::string_view dflt) const {
  std::string k = canonical_slurm_conf_key(key).value_or(std::string(key));
  auto it = options.find(k);
  return it == options.end() ? std::string(dflt) : it->second;
}

const NodeConf* SlurmConf::find_node(std::string_view name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const PartitionConf* SlurmConf::find_partition(std::string_view name) const {
  for (const auto& p : partitions)
    if (p.name == name) return &p;
  return nullptr;
}

const PartitionConf* SlurmConf::default_partition() const {
  for (const auto& p : partitions)
    if (p.is_default) return &p;
  return nullptr;
}

SlurmConf parse_slurm_conf(std::string_view text, std::string_view source_name) {
  Parser p(nullptr);
  p.parse(text, source_name, 0);
  return p.finish();
}

SlurmConf parse_slurm_conf(std::string_view text, std::string_view source_name,
                           const IncludeResolver& resolver) {
  Parser p(&resolver);
  p.parse(text, source_name, 0);
  return p.finish();
}

}  // namespace drover::core
