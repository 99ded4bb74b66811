// scontrol show config, as Slurm 22.05 prints it (key order, units and defaults observed on the
// oracle, tests/compat; defaults from slurm.conf(5)).
#include "ctld/config_report.hpp"

#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "core/duration.hpp"

namespace drover::ctld {

namespace {

// How a value written in slurm.conf is shown.
enum class Unit : uint8_t { Text, Sec, Min, Usec, NodesPerMin, Percent, Upper };

struct Key {
  const char* name;  // as printed
  Unit unit;
  const char* dflt;  // Slurm's default, as printed
};

// Slurm 22.05's list, in its order. Keys drover sets from its own state are overridden below.
constexpr Key kKeys[] = {
    {"AccountingStorageBackupHost", Unit::Text, "(null)"},
    {"AccountingStorageEnforce", Unit::Text, "none"},
    {"AccountingStorageHost", Unit::Text, "localhost"},
    {"AccountingStorageExternalHost", Unit::Text, "(null)"},
    {"AccountingStorageParameters", Unit::Text, "(null)"},
    {"AccountingStoragePort", Unit::Text, "0"},
    {"AccountingStorageTRES", Unit::Text, "cpu,mem,energy,node,billing,fs/disk,vmem,pages"},
    {"AccountingStorageType", Unit::Text, "accounting_storage/none"},
    {"AccountingStorageUser", Unit::Text, "root"},
    {"AccountingStoreFlags", Unit::Text, "(null)"},
    {"AcctGatherEnergyType", Unit::Text, "acct_gather_energy/none"},
    {"AcctGatherFilesystemType", Unit::Text, "acct_gather_filesystem/none"},
    {"AcctGatherInterconnectType", Unit::Text, "acct_gather_interconnect/none"},
    {"AcctGatherNodeFreq", Unit::Sec, "0 sec"},
    {"AcctGatherProfileType", Unit::Text, "acct_gather_profile/none"},
    {"AllowSpecResourcesUsage", Unit::Text, "No"},
    {"AuthAltTypes", Unit::Text, "(null)"},
    {"AuthAltParameters", Unit::Text, "(null)"},
    {"AuthInfo", Unit::Text, "(null)"},
    {"AuthType", Unit::Text, "auth/munge"},
    {"BatchStartTimeout", Unit::Sec, "10 sec"},
    {"BcastExclude", Unit::Text, "/lib,/usr/lib,/lib64,/usr/lib64"},
    {"BcastParameters", Unit::Text, "(null)"},
    {"BOOT_TIME", Unit::Text, ""},
    {"BurstBufferType", Unit::Text, "(null)"},
    {"CliFilterPlugins", Unit::Text, "(null)"},
    {"ClusterName", Unit::Text, ""},
    {"CommunicationParameters", Unit::Text, "(null)"},
    {"CompleteWait", Unit::Sec, "0 sec"},
    {"CoreSpecPlugin", Unit::Text, "core_spec/none"},
    {"CpuFreqDef", Unit::Text, "Unknown"},
    {"CpuFreqGovernors", Unit::Text, "OnDemand,Performance,UserSpace"},
    {"CredType", Unit::Text, "cred/munge"},
    {"DebugFlags", Unit::Text, "(null)"},
    {"DefMemPerNode", Unit::Text, "UNLIMITED"},
    {"DependencyParameters", Unit::Text, "(null)"},
    {"DisableRootJobs", Unit::Text, "No"},
    {"EioTimeout", Unit::Text, "60"},
    {"EnforcePartLimits", Unit::Upper, "NO"},
    {"Epilog", Unit::Text, "(null)"},
    {"EpilogMsgTime", Unit::Usec, "2000 usec"},
    {"EpilogSlurmctld", Unit::Text, "(null)"},
    {"ExtSensorsType", Unit::Text, "ext_sensors/none"},
    {"ExtSensorsFreq", Unit::Sec, "0 sec"},
    {"FairShareDampeningFactor", Unit::Text, ""},  // multifactor only
    {"FederationParameters", Unit::Text, "(null)"},
    {"FirstJobId", Unit::Text, "1"},
    {"GetEnvTimeout", Unit::Sec, "2 sec"},
    {"GresTypes", Unit::Text, "(null)"},
    {"GpuFreqDef", Unit::Text, "high,memory=high"},
    {"GroupUpdateForce", Unit::Text, "1"},
    {"GroupUpdateTime", Unit::Sec, "600 sec"},
    {"HASH_VAL", Unit::Text, "Match"},
    {"HealthCheckInterval", Unit::Sec, "0 sec"},
    {"HealthCheckNodeState", Unit::Upper, "ANY"},
    {"HealthCheckProgram", Unit::Text, "(null)"},
    {"InactiveLimit", Unit::Sec, "0 sec"},
    {"InteractiveStepOptions", Unit::Text, "--interactive --preserve-env --pty $SHELL"},
    {"JobAcctGatherFrequency", Unit::Text, "30"},
    {"JobAcctGatherType", Unit::Text, "jobacct_gather/none"},
    {"JobAcctGatherParams", Unit::Text, "(null)"},
    {"JobCompHost", Unit::Text, "localhost"},
    {"JobCompLoc", Unit::Text, "/var/log/slurm_jobcomp.log"},
    {"JobCompPort", Unit::Text, "0"},
    {"JobCompType", Unit::Text, "jobcomp/none"},
    {"JobCompUser", Unit::Text, "root"},
    {"JobContainerType", Unit::Text, "job_container/none"},
    {"JobCredentialPrivateKey", Unit::Text, "(null)"},
    {"JobCredentialPublicCertificate", Unit::Text, "(null)"},
    {"JobDefaults", Unit::Text, "(null)"},
    {"JobFileAppend", Unit::Text, "0"},
    {"JobRequeue", Unit::Text, "1"},
    {"JobSubmitPlugins", Unit::Text, "(null)"},
    {"KillOnBadExit", Unit::Text, "0"},
    {"KillWait", Unit::Sec, "30 sec"},
    {"LaunchParameters", Unit::Text, "(null)"},
    {"LaunchType", Unit::Text, "launch/slurm"},
    {"Licenses", Unit::Text, "(null)"},
    {"LogTimeFormat", Unit::Text, "iso8601_ms"},
    {"MailDomain", Unit::Text, "(null)"},
    {"MailProg", Unit::Text, "/bin/mail"},
    {"MaxArraySize", Unit::Text, "1001"},
    {"MaxDBDMsgs", Unit::Text, "0"},
    {"MaxJobCount", Unit::Text, "10000"},
    {"MaxJobId", Unit::Text, "67043328"},
    {"MaxMemPerNode", Unit::Text, "UNLIMITED"},
    {"MaxNodeCount", Unit::Text, ""},
    {"MaxStepCount", Unit::Text, "40000"},
    {"MaxTasksPerNode", Unit::Text, "512"},
    {"MCSPlugin", Unit::Text, "mcs/none"},
    {"MCSParameters", Unit::Text, "(null)"},
    {"MessageTimeout", Unit::Sec, "10 sec"},
    {"MinJobAge", Unit::Sec, "300 sec"},
    {"MpiDefault", Unit::Text, "none"},
    {"MpiParams", Unit::Text, "(null)"},
    {"MULTIPLE_SLURMD", Unit::Text, "Yes"},
    {"NEXT_JOB_ID", Unit::Text, ""},
    {"NodeFeaturesPlugins", Unit::Text, "(null)"},
    {"OverTimeLimit", Unit::Min, "0 min"},
    {"PluginDir", Unit::Text, "(null)"},
    {"PlugStackConfig", Unit::Text, "(null)"},
    {"PowerParameters", Unit::Text, "(null)"},
    {"PowerPlugin", Unit::Text, ""},
    {"PreemptMode", Unit::Upper, "OFF"},
    {"PreemptType", Unit::Text, "preempt/none"},
    {"PreemptExemptTime", Unit::Text, "00:00:00"},
    {"PrEpParameters", Unit::Text, "(null)"},
    {"PrEpPlugins", Unit::Text, "prep/script"},
    {"PriorityParameters", Unit::Text, "(null)"},
    {"PrioritySiteFactorParameters", Unit::Text, "(null)"},
    {"PrioritySiteFactorPlugin", Unit::Text, "(null)"},
    {"PriorityDecayHalfLife", Unit::Text, ""},     // multifactor only
    {"PriorityCalcPeriod", Unit::Text, ""},        // multifactor only
    {"PriorityFavorSmall", Unit::Text, ""},        // multifactor only
    {"PriorityFlags", Unit::Text, ""},             // multifactor only
    {"PriorityMaxAge", Unit::Text, ""},            // multifactor only
    {"PriorityUsageResetPeriod", Unit::Text, ""},  // multifactor only
    {"PriorityType", Unit::Text, "priority/basic"},
    {"PriorityWeightAge", Unit::Text, ""},        // multifactor only
    {"PriorityWeightAssoc", Unit::Text, ""},      // multifactor only
    {"PriorityWeightFairShare", Unit::Text, ""},  // multifactor only
    {"PriorityWeightJobSize", Unit::Text, ""},    // multifactor only
    {"PriorityWeightPartition", Unit::Text, ""},  // multifactor only
    {"PriorityWeightQOS", Unit::Text, ""},        // multifactor only
    {"PriorityWeightTRES", Unit::Text, ""},       // multifactor only
    {"PrivateData", Unit::Text, "none"},
    {"ProctrackType", Unit::Text, "proctrack/cgroup"},
    {"Prolog", Unit::Text, "(null)"},
    {"PrologEpilogTimeout", Unit::Text, "65534"},
    {"PrologSlurmctld", Unit::Text, "(null)"},
    {"PrologFlags", Unit::Text, "(null)"},
    {"PropagatePrioProcess", Unit::Text, "0"},
    {"PropagateResourceLimits", Unit::Text, "ALL"},
    {"PropagateResourceLimitsExcept", Unit::Text, "(null)"},
    {"RebootProgram", Unit::Text, "(null)"},
    {"ReconfigFlags", Unit::Text, "(null)"},
    {"RequeueExit", Unit::Text, "(null)"},
    {"RequeueExitHold", Unit::Text, "(null)"},
    {"ResumeFailProgram", Unit::Text, "(null)"},
    {"ResumeProgram", Unit::Text, "(null)"},
    {"ResumeRate", Unit::NodesPerMin, "300 nodes/min"},
    {"ResumeTimeout", Unit::Sec, "60 sec"},
    {"ResvEpilog", Unit::Text, "(null)"},
    {"ResvOverRun", Unit::Min, "0 min"},
    {"ResvProlog", Unit::Text, "(null)"},
    {"ReturnToService", Unit::Text, "0"},
    {"RoutePlugin", Unit::Text, "route/default"},
    {"SchedulerParameters", Unit::Text, "(null)"},
    {"SchedulerTimeSlice", Unit::Sec, "30 sec"},
    {"SchedulerType", Unit::Text, "sched/backfill"},
    {"ScronParameters", Unit::Text, "(null)"},
    {"SelectType", Unit::Text, "select/cons_tres"},
    {"SelectTypeParameters", Unit::Upper, "CR_CORE_MEMORY"},
    {"SlurmUser", Unit::Text, ""},
    {"SlurmctldAddr", Unit::Text, "(null)"},
    {"SlurmctldDebug", Unit::Text, "info"},
    {"SlurmctldHost[0]", Unit::Text, ""},
    {"SlurmctldLogFile", Unit::Text, "(null)"},
    {"SlurmctldPort", Unit::Text, "6817"},
    {"SlurmctldSyslogDebug", Unit::Text, "(null)"},
    {"SlurmctldPrimaryOffProg", Unit::Text, "(null)"},
    {"SlurmctldPrimaryOnProg", Unit::Text, "(null)"},
    {"SlurmctldTimeout", Unit::Sec, "120 sec"},
    {"SlurmctldParameters", Unit::Text, "(null)"},
    {"SlurmdDebug", Unit::Text, "info"},
    {"SlurmdLogFile", Unit::Text, "(null)"},
    {"SlurmdParameters", Unit::Text, "(null)"},
    {"SlurmdPidFile", Unit::Text, "/var/run/slurmd.pid"},
    {"SlurmdPort", Unit::Text, "6818"},
    {"SlurmdSpoolDir", Unit::Text, "/var/spool/slurmd"},
    {"SlurmdSyslogDebug", Unit::Text, "(null)"},
    {"SlurmdTimeout", Unit::Sec, "300 sec"},
    {"SlurmdUser", Unit::Text, "root(0)"},
    {"SlurmSchedLogFile", Unit::Text, "(null)"},
    {"SlurmSchedLogLevel", Unit::Text, "0"},
    {"SlurmctldPidFile", Unit::Text, "/var/run/slurmctld.pid"},
    {"SlurmctldPlugstack", Unit::Text, "(null)"},
    {"SLURM_CONF", Unit::Text, ""},
    {"SLURM_VERSION", Unit::Text, ""},
    {"SrunEpilog", Unit::Text, "(null)"},
    {"SrunPortRange", Unit::Text, "0-0"},
    {"SrunProlog", Unit::Text, "(null)"},
    {"StateSaveLocation", Unit::Text, "/var/spool"},
    {"SuspendExcNodes", Unit::Text, "(null)"},
    {"SuspendExcParts", Unit::Text, "(null)"},
    {"SuspendProgram", Unit::Text, "(null)"},
    {"SuspendRate", Unit::NodesPerMin, "60 nodes/min"},
    {"SuspendTime", Unit::Sec, "INFINITE"},
    {"SuspendTimeout", Unit::Sec, "30 sec"},
    {"SwitchParameters", Unit::Text, "(null)"},
    {"SwitchType", Unit::Text, "switch/none"},
    {"TaskEpilog", Unit::Text, "(null)"},
    {"TaskPlugin", Unit::Text, "task/none"},
    {"TaskPluginParam", Unit::Text, "(null type)"},
    {"TaskProlog", Unit::Text, "(null)"},
    {"TCPTimeout", Unit::Sec, "2 sec"},
    {"TmpFS", Unit::Text, "/tmp"},
    {"TopologyParam", Unit::Text, "(null)"},
    {"TopologyPlugin", Unit::Text, "topology/none"},
    {"TrackWCKey", Unit::Text, "No"},
    {"TreeWidth", Unit::Text, "50"},
    {"UsePam", Unit::Text, "No"},
    {"UnkillableStepProgram", Unit::Text, "(null)"},
    {"UnkillableStepTimeout", Unit::Sec, "60 sec"},
    {"VSizeFactor", Unit::Percent, "0 percent"},
    {"WaitTime", Unit::Sec, "0 sec"},
    {"X11Parameters", Unit::Text, "(null)"},
};

// The MPI plugins' section: drover starts no PMIx server, so these are Slurm's defaults.
constexpr std::pair<const char*, const char*> kMpiKeys[] = {
    {"PMIxCliTmpDirBase", "(null)"}, {"PMIxCollFence", "(null)"},   {"PMIxDebug", "0"},
    {"PMIxDirectConn", "yes"},       {"PMIxDirectConnEarly", "no"}, {"PMIxDirectConnUCX", "no"},
    {"PMIxDirectSameArch", "no"},    {"PMIxEnv", "(null)"},         {"PMIxFenceBarrier", "no"},
    {"PMIxNetDevicesUCX", "(null)"}, {"PMIxTimeout", "300"},        {"PMIxTlsUCX", "(null)"},
};

bool multifactor_only(std::string_view key) {
  return key == "FairShareDampeningFactor" || key == "PriorityDecayHalfLife" ||
         key == "PriorityCalcPeriod" || key == "PriorityFavorSmall" || key == "PriorityFlags" ||
         key == "PriorityMaxAge" || key == "PriorityUsageResetPeriod" ||
         key.starts_with("PriorityWeight");
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// A value as slurm.conf wrote it, in the key's unit.
std::string shown(Unit unit, const std::string& raw) {
  const bool number = !raw.empty() && std::all_of(raw.begin(), raw.end(),
                                                  [](unsigned char c) { return std::isdigit(c); });
  switch (unit) {
    case Unit::Text:
      return raw;
    case Unit::Upper:
      return upper(raw);
    case Unit::Sec:
      return number ? raw + " sec" : upper(raw);
    case Unit::Min:
      return number ? raw + " min" : upper(raw);
    case Unit::Usec:
      return number ? raw + " usec" : raw;
    case Unit::NodesPerMin:
      return number ? raw + " nodes/min" : raw;
    case Unit::Percent:
      return number ? raw + " percent" : raw;
  }
  return raw;
}

std::string user_with_uid(const std::string& name, uint32_t uid) {
  return name + "(" + std::to_string(uid) + ")";
}

// Slurm's time strings for the priority block: "7-00:00:00", "00:05:00".
std::string day_hms(int64_t seconds) { return core::format_hms(seconds); }

std::string enforce_text(const sched::Enforce& e) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(e.associations, "associations");
  add(e.limits, "limits");
  add(e.qos, "qos");
  add(e.safe, "safe");
  add(e.wckeys, "wckeys");
  return out.empty() ? "none" : out;
}

std::string priority_flags_text(const sched::PriorityFlags& f) {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (on) out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(f.accrue_always, "ACCRUE_ALWAYS");
  add(f.small_relative_to_time, "SMALL_RELATIVE_TO_TIME");
  add(f.calculate_running, "CALCULATE_RUNNING");
  add(f.depth_oblivious, "DEPTH_OBLIVIOUS");
  add(f.no_fair_tree && !f.depth_oblivious, "NO_FAIR_TREE");
  add(f.incr_only, "INCR_ONLY");
  add(f.max_tres, "MAX_TRES");
  add(f.no_normal_assoc, "NO_NORMAL_ASSOC");
  add(f.no_normal_part, "NO_NORMAL_PART");
  add(f.no_normal_qos, "NO_NORMAL_QOS");
  add(f.no_normal_tres, "NO_NORMAL_TRES");
  return out;
}

const char* reset_period_text(sched::UsageResetPeriod p) {
  switch (p) {
    case sched::UsageResetPeriod::None:
      return "NONE";
    case sched::UsageResetPeriod::Now:
      return "NOW";
    case sched::UsageResetPeriod::Daily:
      return "DAILY";
    case sched::UsageResetPeriod::Weekly:
      return "WEEKLY";
    case sched::UsageResetPeriod::Monthly:
      return "MONTHLY";
    case sched::UsageResetPeriod::Quarterly:
      return "QUARTERLY";
    case sched::UsageResetPeriod::Yearly:
      return "YEARLY";
  }
  return "NONE";
}

// The values drover decides, whatever slurm.conf says or leaves out.
std::map<std::string, std::string> effective(const Config& c, const ConfigFacts& facts) {
  std::map<std::string, std::string> v;
  v["AccountingStorageEnforce"] = enforce_text(c.enforce);
  const auto& acct = c.accounting_storage;
  if (acct.type == store::AccountingStorage::Type::Pgsql) {
    v["AccountingStorageType"] = "accounting_storage/pgsql";
    v["AccountingStorageHost"] = acct.pgsql.host;
    v["AccountingStoragePort"] = std::to_string(acct.pgsql.port);
    if (!acct.pgsql.user.empty()) v["AccountingStorageUser"] = acct.pgsql.user;
  } else {
    v["AccountingStorageType"] = "accounting_storage/sqlite";
  }
  // Commands authenticate by their Unix socket's peer credentials or a host's credential,
  // agents by their node's key (docs/security.md).
  v["AuthType"] = "auth/drover";
  v["CredType"] = "cred/drover";
  v["BOOT_TIME"] = core::format_timestamp(facts.boot_time);
  v["ClusterName"] = c.cluster_name;
  if (c.def_mem_per_cpu_mb > 0)
    v["DefMemPerNode"] = "";  // replaced by DefMemPerCPU below
  else if (c.def_mem_per_node_mb > 0)
    v["DefMemPerNode"] = std::to_string(c.def_mem_per_node_mb);
  if (!c.gres_types.empty()) {
    std::string g;
    for (const auto& t : c.gres_types) g += (g.empty() ? "" : ",") + t;
    v["GresTypes"] = g;
  }
  v["JobRequeue"] = c.job_requeue ? "1" : "0";
  v["KillWait"] = std::to_string(c.kill_wait_s) + " sec";
  v["MaxArraySize"] = std::to_string(c.max_array_size);
  v["MaxNodeCount"] = std::to_string(facts.node_count);
  v["MinJobAge"] = std::to_string(c.min_job_age_s) + " sec";
  v["NEXT_JOB_ID"] = std::to_string(facts.next_job_id);
  switch (c.preemption.type) {
    case sched::PreemptionView::Type::None:
      v["PreemptType"] = "preempt/none";
      break;
    case sched::PreemptionView::Type::PartitionPrio:
      v["PreemptType"] = "preempt/partition_prio";
      break;
    case sched::PreemptionView::Type::Qos:
      v["PreemptType"] = "preempt/qos";
      break;
  }
  v["PreemptMode"] = preempt_mode_name(c.preemption.mode);
  v["PreemptExemptTime"] = core::format_hms(std::max<int64_t>(0, c.preemption.exempt_time_s));
  const sched::PriorityConfig& p = c.priority;
  if (p.multifactor()) {
    v["PriorityType"] = "priority/multifactor";
    v["FairShareDampeningFactor"] = std::to_string(p.fairshare_dampening_factor);
    v["PriorityDecayHalfLife"] = day_hms(p.decay_half_life_s);
    v["PriorityCalcPeriod"] = day_hms(p.calc_period_s);
    v["PriorityFavorSmall"] = p.favor_small ? "Yes" : "No";
    v["PriorityFlags"] = priority_flags_text(p.flags);
    v["PriorityMaxAge"] = day_hms(p.max_age_s);
    v["PriorityUsageResetPeriod"] = reset_period_text(p.usage_reset_period);
    v["PriorityWeightAge"] = std::to_string(p.weight_age);
    v["PriorityWeightAssoc"] = std::to_string(p.weight_assoc);
    v["PriorityWeightFairShare"] = std::to_string(p.weight_fairshare);
    v["PriorityWeightJobSize"] = std::to_string(p.weight_job_size);
    v["PriorityWeightPartition"] = std::to_string(p.weight_partition);
    v["PriorityWeightQOS"] = std::to_string(p.weight_qos);
    v["PriorityWeightTRES"] = p.weight_tres_text.empty() ? "(null)" : p.weight_tres_text;
  } else {
    v["PriorityType"] = "priority/basic";
  }
  v["SchedulerType"] =
      c.sched_params.policy == sched::Policy::Fifo ? "sched/builtin" : "sched/backfill";
  v["SlurmUser"] = user_with_uid(c.slurm_user, c.slurm_user_uid);
  v["SlurmctldHost[0]"] = c.control_host;
  v["SlurmctldPort"] = std::to_string(c.port);
  v["SlurmdTimeout"] = std::to_string(c.slurmd_timeout_s) + " sec";
  v["SLURM_CONF"] = c.source_path.empty() ? "(null)" : c.source_path;
  v["SLURM_VERSION"] = facts.version;
  if (!c.state_dir.empty()) v["StateSaveLocation"] = c.state_dir;
  return v;
}

}  // namespace

ConfigReport config_report(const Config& config, const ConfigFacts& facts) {
  ConfigReport out;
  const auto v = effective(config, facts);
  const bool mf = config.priority.multifactor();
  for (const Key& k : kKeys) {
    const std::string name = k.name;
    if (multifactor_only(name) && !mf) continue;
    if (name == "DefMemPerNode" && config.def_mem_per_cpu_mb > 0) {
      out.main.emplace_back("DefMemPerCPU", std::to_string(config.def_mem_per_cpu_mb));
      continue;
    }
    // MaxMemPerCPU takes MaxMemPerNode's line when set, as DefMemPerCPU does DefMemPerNode's.
    if (name == "MaxMemPerNode")
      if (auto it = config.conf.options.find("MaxMemPerCPU"); it != config.conf.options.end()) {
        out.main.emplace_back("MaxMemPerCPU", it->second);
        continue;
      }
    if (auto it = v.find(name); it != v.end()) {
      out.main.emplace_back(name, it->second);
      continue;
    }
    const std::string conf_key = name == "SlurmctldHost[0]" ? "SlurmctldHost" : name;
    if (auto it = config.conf.options.find(conf_key); it != config.conf.options.end()) {
      std::string value = shown(k.unit, it->second);
      if (name == "SlurmdUser")
        if (const passwd* pw = ::getpwnam(it->second.c_str()))
          value = user_with_uid(it->second, pw->pw_uid);
      out.main.emplace_back(name, value);
      continue;
    }
    out.main.emplace_back(name, k.dflt);
  }
  for (const auto& [key, dflt] : kMpiKeys) out.mpi.emplace_back(key, dflt);
  return out;
}

}  // namespace drover::ctld
