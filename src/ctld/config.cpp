#include "ctld/config.hpp"

#include <pwd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/duration.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace drover::ctld {

Config load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw core::ParseError("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  Config c = load_config_text(text.str(), path);
  // cgroup.conf is always beside slurm.conf; slurmd reads it when a plugin needs it.
  const std::string cgroup_path =
      (std::filesystem::path(path).parent_path() / "cgroup.conf").string();
  if (std::ifstream cg(cgroup_path); cg && c.task_cgroup) {
    std::stringstream cg_text;
    cg_text << cg.rdbuf();
    c.cgroup = core::parse_cgroup_conf(cg_text.str(), cgroup_path);
    for (const auto& w : c.cgroup.warnings) c.conf.warnings.push_back(cgroup_path + ": " + w);
    if (c.cgroup.plugin != "autodetect" && c.cgroup.plugin != "cgroup/v1" &&
        c.cgroup.plugin != "cgroup/v2")
      throw core::ParseError(cgroup_path + ": cannot find cgroup plugin for " + c.cgroup.plugin);
  }
  const std::string gres_path = (std::filesystem::path(path).parent_path() / "gres.conf").string();
  if (std::ifstream gres(gres_path); gres && c.task_cgroup && c.cgroup.constrain_devices) {
    std::stringstream gres_text;
    gres_text << gres.rdbuf();
    c.gres_conf = gres_text.str();
    for (const auto& n : c.conf.nodes) core::gres_gpu_files(c.gres_conf, n.name);  // checked
  }
  return c;
}

std::vector<std::string> restart_only_changes(const core::SlurmConf& running,
                                              const core::SlurmConf& next) {
  // slurm.conf(5) says these need a restart (or drover reads them only at startup).
  static const char* const kKeys[] = {"AccountingStorageEnforce",
                                      "AccountingStorageHost",
                                      "AccountingStorageLoc",
                                      "AccountingStoragePassFile",
                                      "AccountingStoragePort",
                                      "AccountingStorageType",
                                      "AccountingStorageUser",
                                      "AuthType",
                                      "ClusterName",
                                      "ControlMachine",
                                      "DroverHttpAddress",
                                      "DroverHttpPort",
                                      "DroverMetricsTokenFile",
                                      "GresTypes",
                                      "MaxJobCount",
                                      "MaxNodeCount",
                                      "SchedulerType",
                                      "SelectType",
                                      "SelectTypeParameters",
                                      "SlurmctldAddr",
                                      "SlurmctldHost",
                                      "SlurmctldPort",
                                      "SlurmUser",
                                      "StateSaveLocation"};
  std::vector<std::string> changed;
  for (const char* key : kKeys)
    if (running.get(key, "") != next.get(key, "")) changed.emplace_back(key);
  return changed;
}

namespace {

// A value found wrong after parsing (SlurmConf::get_int: "slurm.conf: Key=value ...") is
// named by its key alone: its line is the last one that sets the key.
std::string with_line(const std::string& message, const std::string& text,
                      const std::string& source_name) {
  const std::string prefix = "slurm.conf: ";
  if (message.rfind(prefix, 0) != 0) return message;
  const std::string rest = message.substr(prefix.size());
  const std::string key = core::to_lower(rest.substr(0, rest.find('='))) + "=";
  if (key.size() == 1 || key.size() > rest.size()) return message;
  std::istringstream in(text);
  std::string line;
  int number = 0, found = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string low = core::to_lower(line.substr(0, line.find('#')));
    for (size_t at = low.find(key); at != std::string::npos; at = low.find(key, at + 1))
      if (at == 0 || std::isspace(static_cast<unsigned char>(low[at - 1]))) found = number;
  }
  if (found == 0) return message;
  return (source_name.empty() ? std::string("slurm.conf") : source_name) + ":" +
         std::to_string(found) + ": " + rest;
}

Config read_config_values(const std::string& text, const std::string& source_name);

}  // namespace

Config load_config_text(const std::string& text, const std::string& source_name) {
  try {
    return read_config_values(text, source_name);
  } catch (const core::ParseError& e) {
    throw core::ParseError(with_line(e.what(), text, source_name));
  }
}

namespace {

Config read_config_values(const std::string& text, const std::string& source_name) {
  Config c;
  c.conf = core::parse_slurm_conf(text, source_name);
  if (!source_name.empty() && source_name.front() == '/') c.source_path = source_name;
  const auto& s = c.conf;
  if (!s.cluster_name.empty()) c.cluster_name = s.cluster_name;
  std::string host = s.get("SlurmctldHost", s.get("ControlMachine", "localhost"));
  // SlurmctldHost=name(address): the address part says where to listen.
  if (auto open = host.find('('); open != std::string::npos) {
    auto close = host.find(')', open);
    c.bind_address =
        host.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
    host = host.substr(0, open);
  }
  c.control_host = host;
  c.bind_address = s.get("SlurmctldAddr", c.bind_address);
  c.port = static_cast<int>(s.get_int("SlurmctldPort", 6817));
  c.http_port = static_cast<int>(s.get_int("DroverHttpPort", 0));
  c.http_address = s.get("DroverHttpAddress", "127.0.0.1");
  c.kill_wait_s = s.get_int("KillWait", 30);
  c.slurmd_timeout_s = s.get_int("SlurmdTimeout", 300);
  c.min_job_age_s = s.get_int("MinJobAge", 300);
  c.def_mem_per_cpu_mb = s.get_int("DefMemPerCPU", 0);
  c.def_mem_per_node_mb = s.get_int("DefMemPerNode", 0);
  c.gres_types = core::split_list(s.get("GresTypes", ""), ',');
  c.max_array_size = static_cast<uint32_t>(s.get_int("MaxArraySize", 1001));
  {
    const std::string proctrack = s.get("ProctrackType", "");
    const std::string task = s.get("TaskPlugin", "");
    c.confine_set = !proctrack.empty() || !task.empty();
    // proctrack/cgroup and proctrack/linuxproc both find a job's processes through its cgroup
    // here; proctrack/pgid only by process group.
    if (!proctrack.empty() && proctrack != "proctrack/cgroup" &&
        proctrack != "proctrack/linuxproc" && proctrack != "proctrack/pgid")
      throw core::ParseError(source_name + ": ProctrackType=" + proctrack +
                             " is not supported (proctrack/cgroup, proctrack/linuxproc or "
                             "proctrack/pgid)");
    c.proctrack_pgid = proctrack == "proctrack/pgid";
    for (const auto& t : core::split_list(task, ',')) {
      if (t == "task/cgroup")
        c.task_cgroup = true;
      else if (t != "task/affinity" && t != "task/none")
        throw core::ParseError(source_name + ": TaskPlugin=" + task +
                               " is not supported (task/cgroup, task/affinity, task/none)");
    }
    if (c.task_cgroup && c.proctrack_pgid)
      c.conf.warnings.push_back(source_name +
                                ": TaskPlugin=task/cgroup with ProctrackType=proctrack/pgid: "
                                "jobs get no cgroups, so nothing is confined");
  }
  c.job_requeue = s.get_int("JobRequeue", 1) != 0;
  c.priority = sched::parse_priority_config(s);
  const std::string sched_type = s.get("SchedulerType", "sched/backfill");
  if (sched_type == "sched/backfill")
    c.sched_params.policy = sched::Policy::Conservative;
  else if (sched_type == "sched/builtin")
    c.sched_params.policy = sched::Policy::Fifo;
  else
    throw core::ParseError(source_name + ": SchedulerType=" + sched_type +
                           " is not supported (sched/backfill or sched/builtin)");
  for (const auto& p : core::split_list(s.get("SchedulerParameters", ""), ',')) {
    const auto eq = p.find('=');
    const std::string key = p.substr(0, eq);
    auto number = [&]() -> int64_t {
      try {
        size_t used = 0;
        const int64_t v = std::stoll(p.substr(eq + 1), &used);
        if (eq == std::string::npos || used != p.size() - eq - 1 || v < 0) throw 0;
        return v;
      } catch (...) {
        throw core::ParseError(source_name + ": SchedulerParameters: invalid value in '" + p + "'");
      }
    };
    if (key == "kill_invalid_depend")
      c.kill_invalid_depend = true;
    else if (key == "bf_resolution")
      c.sched_params.bf_resolution_s = std::max<int64_t>(1, number());
    else if (key == "bf_window")
      c.sched_params.bf_window_s = number() * 60;
    else if (key == "bf_max_job_test")
      c.sched_params.bf_max_job_test = static_cast<int>(number());
    else if (key == "bf_max_job_user")
      c.sched_params.bf_max_job_user = static_cast<int>(number());
    else if (key == "bf_interval")
      c.bf_interval_s = std::max<int64_t>(1, number());
    else if (key == "max_script_size")
      c.max_script_size = number();
    else if (key == "bf_max_time")
      c.bf_max_time_s = std::max<int64_t>(1, number());
  }
  if (c.bf_max_time_s <= 0) c.bf_max_time_s = c.bf_interval_s;  // Slurm's default
  const std::string preempt_type = s.get("PreemptType", "preempt/none");
  if (preempt_type == "preempt/partition_prio")
    c.preemption.type = sched::PreemptionView::Type::PartitionPrio;
  else if (preempt_type == "preempt/qos")
    c.preemption.type = sched::PreemptionView::Type::Qos;
  else if (preempt_type != "preempt/none")
    throw core::ParseError(source_name + ": PreemptType=" + preempt_type +
                           " is not supported (preempt/none, preempt/partition_prio, preempt/qos)");
  c.preemption.mode = parse_preempt_mode(s.get("PreemptMode", "OFF"), source_name);
  if (const std::string exempt = s.get("PreemptExemptTime", ""); !exempt.empty()) {
    const int64_t min = core::parse_time_limit_minutes(exempt, "PreemptExemptTime");
    c.preemption.exempt_time_s = min < 0 ? -1 : min * 60;
  }
  for (auto& p : c.conf.partitions) {
    // Checked here so that a bad value stops the controller with the file's name.
    if (auto it = p.other.find("PreemptMode"); it != p.other.end())
      parse_preempt_mode(it->second, source_name + ": partition " + p.name);
    if (auto it = p.other.find("GraceTime"); it != p.other.end()) {
      try {
        size_t used = 0;
        if (std::stoll(it->second, &used) < 0 || used != it->second.size()) throw 0;
      } catch (...) {
        throw core::ParseError(source_name + ": partition " + p.name + ": invalid GraceTime '" +
                               it->second + "'");
      }
    }
  }
  try {
    c.enforce = sched::parse_enforce(s.get("AccountingStorageEnforce", ""));
  } catch (const core::ParseError& e) {
    throw core::ParseError(source_name + ": " + e.what());
  }
  c.accounting_storage = parse_accounting_storage(s, source_name);
  c.slurm_user = s.get("SlurmUser", "root");
  // Name lookup is configuration loading, not part of the state machine.
  if (struct passwd* pw = getpwnam(c.slurm_user.c_str())) c.slurm_user_uid = pw->pw_uid;
  return c;
}

}  // namespace

const char* preempt_mode_name(sched::PreemptMode mode) {
  switch (mode) {
    case sched::PreemptMode::Cancel:
      return "CANCEL";
    case sched::PreemptMode::Requeue:
      return "REQUEUE";
    case sched::PreemptMode::Off:
      break;
  }
  return "OFF";
}

sched::PreemptMode parse_preempt_mode(const std::string& text, const std::string& where) {
  sched::PreemptMode mode = sched::PreemptMode::Off;
  for (const auto& word : core::split_list(text, ',')) {
    const std::string w = core::to_upper(word);
    if (w == "OFF")
      mode = sched::PreemptMode::Off;
    else if (w == "CANCEL")
      mode = sched::PreemptMode::Cancel;
    else if (w == "REQUEUE")
      mode = sched::PreemptMode::Requeue;
    else if (w == "GANG" || w == "WITHIN")
      continue;  // gang scheduling only matters with SUSPEND
    else if (w == "SUSPEND")
      throw core::ParseError(where +
                             ": PreemptMode=SUSPEND is not supported yet (CANCEL or "
                             "REQUEUE)");
    else
      throw core::ParseError(where + ": invalid PreemptMode '" + word + "'");
  }
  return mode;
}

std::string accounting_path(const std::string& slurm_conf_path) {
  return (std::filesystem::path(slurm_conf_path).parent_path() / "accounts.cfg").string();
}

void load_accounting(Config& c, const std::string& text, const std::string& source_name) {
  apply_accounting(c, core::parse_acct_dump(text, source_name));
}

void apply_accounting(Config& c, core::AcctDump dump) {
  const std::string source_name = dump.source;
  std::map<std::string, std::string> partition_qos;
  for (const auto& p : c.conf.partitions)
    if (auto it = p.other.find("QOS"); it != p.other.end() && !it->second.empty())
      partition_qos.emplace(p.name, it->second);
  c.limits = std::make_shared<const sched::Limits>(std::move(dump), c.enforce, partition_qos);
  // preempt/qos reads the QOS' Preempt lists, modes, GraceTime and PreemptExemptTime.
  c.preemption.qos.clear();
  for (const auto& q : c.limits->qos()) {
    sched::PreemptionView::Qos& pq = c.preemption.qos[q.name];
    pq.preempts = q.preempt;
    if (!q.preempt_mode.empty()) {
      std::string words;
      for (const auto& w : q.preempt_mode) words += (words.empty() ? "" : ",") + w;
      pq.mode = parse_preempt_mode(words, source_name + ": QOS " + q.name);
    }
    pq.grace_time_s = q.grace_time_s;
    pq.exempt_time_s = q.preempt_exempt_time_s;
  }
}

std::optional<AccountsFile> read_accounts_file(const std::string& slurm_conf_path) {
  const std::string path = accounting_path(slurm_conf_path);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  // FNV-1a: tells an edited file from the one last loaded (not a security check).
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : body) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return AccountsFile{path, std::string("fnv1a64:") + hex, core::parse_acct_dump(body, path)};
}

}  // namespace drover::ctld
