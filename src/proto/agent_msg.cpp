#include "proto/agent_msg.hpp"

#include "proto/decode.hpp"

namespace drover::proto {
using nlohmann::json;

namespace {
json typed(const char* type) { return json{{"type", type}}; }

// The elements of array member `key` (none when absent).
const json& array_of(const json& j, const char* key) {
  static const json empty = json::array();
  if (!has(j, key)) return empty;
  const json& a = j.at(key);
  if (!a.is_array()) throw BadMessage(std::string("field \"") + key + "\" is not an array");
  return a;
}
}  // namespace

json Hello::to_json() const {
  json j = typed(kType);
  j["nonce"] = nonce;
  j["version"] = version;
  return j;
}
Hello Hello::from_json(const json& j) { return {get_string(j, "nonce"), get_int32(j, "version")}; }

json Welcome::to_json() const {
  json j = typed(kType);
  j["version"] = version;
  j["step_pub"] = step_pub;
  j["mac"] = mac;
  j["heartbeat_interval"] = heartbeat_interval;
  return j;
}
Welcome Welcome::from_json(const json& j) {
  return {get_int32(j, "version"), get_string(j, "step_pub"), get_string(j, "mac"),
          get_int(j, "heartbeat_interval", 10)};
}

json Refusal::to_json() const {
  json j = typed(kType);
  j["error"] = error;
  if (code) j["errno"] = *code;
  return j;
}
Refusal Refusal::from_json(const json& j) {
  return {get_string(j, "error"), opt_int32(j, "errno")};
}

json Confine::to_json() const {
  json j = json::object();
  j["cgroup"] = cgroup;
  if (!cpus.empty()) j["cpus"] = cpus;
  if (mem_hard > 0) j["mem_hard"] = mem_hard;
  if (mem_soft > 0) j["mem_soft"] = mem_soft;
  if (memsw > 0) j["memsw"] = memsw;
  if (swappiness >= 0) j["swappiness"] = swappiness;
  if (constrain_devices) {
    j["constrain_devices"] = true;
    j["deny_devices"] = deny_devices;
  }
  return j;
}
Confine Confine::from_json(const json& j) {
  if (!j.is_object()) throw BadMessage("field \"confine\" is not an object");
  Confine c;
  c.cgroup = get_bool(j, "cgroup", true);
  if (has(j, "cpus")) {
    const json& cpus = j.at("cpus");
    if (!cpus.is_array()) throw BadMessage("field \"cpus\" is not an array");
    for (const json& v : cpus) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 65535)
        throw BadMessage("field \"cpus\" holds a bad CPU number");
      c.cpus.push_back(v.get<int>());
    }
  }
  c.mem_hard = get_int(j, "mem_hard");
  c.mem_soft = get_int(j, "mem_soft");
  c.memsw = get_int(j, "memsw");
  c.swappiness = get_int(j, "swappiness", -1);
  c.constrain_devices = get_bool(j, "constrain_devices");
  c.deny_devices = get_strings(j, "deny_devices");
  return c;
}

json Launch::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["run"] = run;
  j["uid"] = uid;
  j["gid"] = gid;
  j["user"] = user;
  j["script"] = script;
  j["payload_id"] = payload_id;
  j["argv"] = argv;
  j["env"] = env;
  j["get_user_env"] = get_user_env;
  j["workdir"] = workdir;
  j["open_mode"] = open_mode;
  j["stdout"] = std_out;
  j["stderr"] = std_err;
  j["stdin"] = std_in;
  j["mem_mb"] = mem_mb;
  if (confine) j["confine"] = confine->to_json();
  if (resent) j["resent"] = true;
  return j;
}
Launch Launch::from_json(const json& j) {
  Launch l;
  l.job_id = need_uint(j, "job_id");
  l.run = get_uint32(j, "run");
  if (!has(j, "uid") || !has(j, "gid")) throw BadMessage("field \"uid\" or \"gid\" is missing");
  l.uid = get_uint32(j, "uid");
  l.gid = get_uint32(j, "gid");
  l.user = get_string(j, "user");
  l.script = get_string(j, "script");
  l.payload_id = get_uint(j, "payload_id");
  l.argv = get_strings(j, "argv");
  l.env = get_string_map(j, "env");
  l.get_user_env = get_bool(j, "get_user_env");
  l.workdir = get_string(j, "workdir", "/");
  l.open_mode = get_string(j, "open_mode");
  l.std_out = get_string(j, "stdout", "/dev/null");
  l.std_err = get_string(j, "stderr", l.std_out);
  l.std_in = get_string(j, "stdin", "/dev/null");
  l.mem_mb = get_int(j, "mem_mb");
  if (has(j, "confine")) l.confine = Confine::from_json(j.at("confine"));
  l.resent = get_bool(j, "resent");
  return l;
}

json Terminate::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["kill_wait"] = kill_wait;
  if (notice) j["notice"] = *notice;
  if (step_notice) j["step_notice"] = *step_notice;
  return j;
}
Terminate Terminate::from_json(const json& j) {
  return {need_uint(j, "job_id"), get_int(j, "kill_wait", 30), opt_string(j, "notice"),
          opt_string(j, "step_notice")};
}

json Signal::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["signal"] = signal;
  j["batch_only"] = batch_only;
  return j;
}
Signal Signal::from_json(const json& j) {
  return {need_uint(j, "job_id"), get_int32(j, "signal", SIGTERM), get_bool(j, "batch_only")};
}

json StepSignal::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["step_id"] = step_id;
  j["signal"] = signal;
  j["terminate"] = terminate;
  if (graceful) j["graceful"] = true;
  j["kill_wait"] = kill_wait;
  j["step_notice"] = step_notice;
  return j;
}
StepSignal StepSignal::from_json(const json& j) {
  StepSignal s;
  s.job_id = need_uint(j, "job_id");
  if (!has(j, "step_id")) throw BadMessage("field \"step_id\" is missing");
  s.step_id = get_uint32(j, "step_id");
  s.signal = get_int32(j, "signal", SIGKILL);
  s.terminate = get_bool(j, "terminate");
  s.graceful = get_bool(j, "graceful");
  s.kill_wait = get_int(j, "kill_wait", 30);
  s.step_notice = get_string(j, "step_notice");
  return s;
}

json ExitAck::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  if (run) j["run"] = *run;
  return j;
}
ExitAck ExitAck::from_json(const json& j) { return {need_uint(j, "job_id"), opt_uint32(j, "run")}; }

json JobExited::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["status"] = status;
  if (run) j["run"] = *run;
  if (oom_kills > 0) j["oom_kills"] = oom_kills;
  if (max_rss) j["max_rss"] = *max_rss;
  return j;
}
JobExited JobExited::from_json(const json& j) {
  return {need_uint(j, "job_id"), get_int32(j, "status"), opt_uint32(j, "run"),
          get_int(j, "oom_kills"), opt_int(j, "max_rss")};
}

json Register::to_json() const {
  json j = typed(kType);
  j["node"] = node;
  j["version"] = version;
  j["nonce"] = nonce;
  j["mac"] = mac;
  if (cpus) j["cpus"] = *cpus;
  if (real_memory) j["real_memory"] = *real_memory;
  j["launch_addr"] = launch_addr;
  json r = json::array();
  for (const auto& job : running) {
    json e = {{"job_id", job.job_id}};
    if (job.run) e["run"] = *job.run;
    r.push_back(std::move(e));
  }
  j["running"] = std::move(r);
  json f = json::array();
  for (const auto& e : finished) f.push_back(e.to_json());
  j["finished"] = std::move(f);
  j["instance"] = instance;
  if (dynamic) {
    j["dynamic"] = true;
    j["conf"] = conf;
  }
  if (cpu_load) j["cpu_load"] = *cpu_load;
  if (free_mem) j["free_mem"] = *free_mem;
  if (boot_time) j["boot_time"] = *boot_time;
  return j;
}
Register Register::from_json(const json& j) {
  Register r;
  r.node = get_string(j, "node");
  r.version = get_int32(j, "version");
  r.nonce = get_string(j, "nonce");
  r.mac = get_string(j, "mac");
  r.cpus = opt_int(j, "cpus");
  r.real_memory = opt_int(j, "real_memory");
  r.launch_addr = get_string(j, "launch_addr");
  for (const json& e : array_of(j, "running")) {
    // Agents before runs were reported listed bare job ids.
    if (e.is_object())
      r.running.push_back({need_uint(e, "job_id"), opt_uint32(e, "run")});
    else if (e.is_number_integer() && e.get<int64_t>() >= 0)
      r.running.push_back({e.get<uint64_t>(), std::nullopt});
    else
      throw BadMessage("field \"running\" holds neither a job id nor a job");
  }
  for (const json& e : array_of(j, "finished")) {
    if (!e.is_object()) throw BadMessage("field \"finished\" holds a non-object");
    r.finished.push_back(JobExited::from_json(e));
  }
  r.instance = get_string(j, "instance");
  r.dynamic = get_bool(j, "dynamic");
  r.conf = get_string(j, "conf");
  r.cpu_load = opt_number(j, "cpu_load");
  r.free_mem = opt_int(j, "free_mem");
  r.boot_time = opt_int(j, "boot_time");
  return r;
}

json Heartbeat::to_json() const {
  json j = typed(kType);
  if (cpu_load) j["cpu_load"] = *cpu_load;
  if (free_mem) j["free_mem"] = *free_mem;
  return j;
}
Heartbeat Heartbeat::from_json(const json& j) {
  return {opt_number(j, "cpu_load"), opt_int(j, "free_mem")};
}

json JobStarted::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["pid"] = pid;
  return j;
}
JobStarted JobStarted::from_json(const json& j) {
  return {need_uint(j, "job_id"), get_int(j, "pid")};
}

json StepExited::to_json() const {
  json j = typed(kType);
  j["job_id"] = job_id;
  j["step_id"] = step_id;
  j["status"] = status;
  return j;
}
StepExited StepExited::from_json(const json& j) {
  StepExited s;
  s.job_id = need_uint(j, "job_id");
  if (!has(j, "step_id")) throw BadMessage("field \"step_id\" is missing");
  s.step_id = get_uint32(j, "step_id");
  s.status = get_int32(j, "status");
  return s;
}

json to_json(const ToAgent& m) {
  return std::visit([](const auto& v) { return v.to_json(); }, m);
}
json to_json(const FromAgent& m) {
  return std::visit([](const auto& v) { return v.to_json(); }, m);
}

namespace {
// The alternative of Variant whose kType is `type`.
template <class Variant, size_t I = 0>
Variant decode_as(const std::string& type, const json& msg) {
  if constexpr (I == std::variant_size_v<Variant>) {
    throw BadMessage("unknown message type \"" + type + "\"");
  } else {
    using T = std::variant_alternative_t<I, Variant>;
    if (type == T::kType) return T::from_json(msg);
    return decode_as<Variant, I + 1>(type, msg);
  }
}
}  // namespace

ToAgent decode_to_agent(const json& msg) {
  if (!has(msg, "type")) throw BadMessage("field \"type\" is missing");
  return decode_as<ToAgent>(get_string(msg, "type"), msg);
}
FromAgent decode_from_agent(const json& msg) {
  if (!has(msg, "type")) throw BadMessage("field \"type\" is missing");
  return decode_as<FromAgent>(get_string(msg, "type"), msg);
}

}  // namespace drover::proto
