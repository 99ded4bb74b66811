#include "proto/request.hpp"

#include "proto/acct_json.hpp"
#include "proto/json.hpp"

namespace drover::proto {
using nlohmann::json;

namespace {
json with_op(const char* op) { return json{{"op", op}}; }

// An array of unsigned integers that fit in T.
template <class T>
std::optional<std::vector<T>> opt_uints(const json& j, const char* key) {
  if (!has(j, key)) return std::nullopt;
  const json& a = j.at(key);
  if (!a.is_array()) throw BadMessage(std::string("field \"") + key + "\" is not an array");
  std::vector<T> out;
  for (const json& v : a) {
    const bool ok = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!ok || v.get<uint64_t>() > std::numeric_limits<T>::max())
      throw BadMessage(std::string("field \"") + key + "\" is not an array of unsigned integers");
    out.push_back(static_cast<T>(v.get<uint64_t>()));
  }
  return out;
}
// Jobs named by Slurm's references ("36", "36_5"); a bare number is taken as its text.
std::vector<std::string> job_refs(const json& j, const char* key) {
  std::vector<std::string> out;
  if (!has(j, key)) return out;
  const json& a = j.at(key);
  if (!a.is_array()) throw BadMessage(std::string("field \"") + key + "\" is not an array");
  for (const json& v : a) {
    if (v.is_string())
      out.push_back(v.get<std::string>());
    else if (v.is_number_unsigned())
      out.push_back(std::to_string(v.get<uint64_t>()));
    else
      throw BadMessage(std::string("field \"") + key + "\" is not an array of job references");
  }
  return out;
}
const json& need_object(const json& j, const char* key) {
  if (!has(j, key)) throw BadMessage(std::string("field \"") + key + "\" is missing");
  const json& o = j.at(key);
  if (!o.is_object()) throw BadMessage(std::string("field \"") + key + "\" is not an object");
  return o;
}
template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
}  // namespace

// submit

json SubmitRequest::to_json() const {
  json j = with_op(kOp);
  j["spec"] = spec;
  put(j, "test_only", test_only);
  put(j, "request_id", request_id);
  return j;
}
Error SubmitRequest::invalid() { return Error(Errno::kError, "Invalid job request"); }

std::optional<SubmitRequest> SubmitRequest::from_parts(const json& spec, const json* request_id) {
  SubmitRequest r;
  if (request_id != nullptr && !request_id->is_null()) {
    if (!request_id->is_string() || request_id->get_ref<const std::string&>().empty() ||
        request_id->get_ref<const std::string&>().size() > 128)
      return std::nullopt;
    r.request_id = request_id->get<std::string>();
  }
  if (!spec.is_object()) return std::nullopt;
  try {
    r.spec = spec.get<core::JobSpec>();
  } catch (const BadMessage&) {
    return std::nullopt;
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return r;
}

SubmitRequest SubmitRequest::from_json(const json& j) {
  const auto test_only = opt_bool(j, "test_only");
  // A spec missing or not an object is the same refusal as one that does not read.
  const json* rid = has(j, "request_id") ? &j.at("request_id") : nullptr;
  std::optional<SubmitRequest> r = from_parts(has(j, "spec") ? j.at("spec") : json(), rid);
  if (!r) throw BadRequest(invalid());
  r->test_only = test_only;
  return std::move(*r);
}

// cancel

json CancelRequest::to_json() const {
  json j = with_op(kOp);
  put(j, "jobs", jobs);
  if (steps) {
    json a = json::array();
    for (const auto& s : *steps)
      a.push_back({{"ref", s.ref}, {"job_id", s.job_id}, {"step_id", s.step_id}});
    j["steps"] = std::move(a);
  }
  put(j, "signal", signal);
  put(j, "batch", batch);
  put(j, "full", full);
  put(j, "uid", uid);
  put(j, "name", name);
  put(j, "partition", partition);
  put(j, "states", states);
  return j;
}
CancelRequest CancelRequest::from_json(const json& j) {
  CancelRequest r;
  if (has(j, "jobs")) r.jobs = job_refs(j, "jobs");
  if (has(j, "steps")) {
    const json& a = j.at("steps");
    if (!a.is_array()) throw BadMessage("field \"steps\" is not an array");
    r.steps.emplace();
    for (const json& s : a) {
      if (!s.is_object()) throw BadMessage("field \"steps\" is not an array of objects");
      r.steps->push_back({get_string(s, "ref"), get_uint(s, "job_id"), get_uint32(s, "step_id")});
    }
  }
  r.signal = opt_int32(j, "signal");
  r.batch = opt_bool(j, "batch");
  r.full = opt_bool(j, "full");
  r.uid = opt_uint32(j, "uid");
  r.name = opt_string(j, "name");
  r.partition = opt_string(j, "partition");
  r.states = opt_strings(j, "states");
  return r;
}

// control, update

json ControlRequest::to_json() const {
  json j = with_op(kOp);
  j["action"] = action;
  j["jobs"] = jobs;
  return j;
}
ControlRequest ControlRequest::from_json(const json& j) {
  return {.action = get_string(j, "action"), .jobs = job_refs(j, "jobs")};
}

json JobUpdateRequest::to_json() const {
  json j = with_op(kOp);
  j["jobs"] = jobs;
  j["set"] = set;
  return j;
}
JobUpdateRequest JobUpdateRequest::from_json(const json& j) {
  need_object(j, "set");
  return {.jobs = job_refs(j, "jobs"), .set = get_string_map(j, "set")};
}

// nodes

json NodeUpdateRequest::to_json() const {
  json j = with_op(kOp);
  put(j, "nodes", nodes);
  put(j, "state", state);
  put(j, "reason", reason);
  put(j, "features", features);
  put(j, "features_act", features_act);
  return j;
}
NodeUpdateRequest NodeUpdateRequest::from_json(const json& j) {
  return {.nodes = opt_string(j, "nodes"),
          .state = opt_string(j, "state"),
          .reason = opt_string(j, "reason"),
          .features = opt_string(j, "features"),
          .features_act = opt_string(j, "features_act")};
}

json NodeCreateRequest::to_json() const {
  json j = with_op(kOp);
  j["line"] = line;
  return j;
}
NodeCreateRequest NodeCreateRequest::from_json(const json& j) {
  return {.line = get_string(j, "line")};
}

json NodeDeleteRequest::to_json() const {
  json j = with_op(kOp);
  j["nodes"] = nodes;
  return j;
}
NodeDeleteRequest NodeDeleteRequest::from_json(const json& j) {
  return {.nodes = get_string(j, "nodes")};
}

// partitions

json PartitionSettings::to_json() const {
  json j = json::object();
  put(j, "state", state);
  put(j, "max_time_min", max_time_min);
  put(j, "default_time_min", default_time_min);
  put(j, "max_nodes", max_nodes);
  put(j, "min_nodes", min_nodes);
  put(j, "priority_tier", priority_tier);
  put(j, "priority_job_factor", priority_job_factor);
  put(j, "is_default", is_default);
  put(j, "hidden", hidden);
  put(j, "nodes", nodes);
  return j;
}
PartitionSettings PartitionSettings::from_json(const json& j) {
  static const char* const kKnown[] = {
      "state",         "max_time_min",        "default_time_min", "max_nodes", "min_nodes",
      "priority_tier", "priority_job_factor", "is_default",       "hidden",    "nodes"};
  for (const auto& [key, value] : j.items()) {
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known) throw BadMessage("unknown partition setting \"" + key + "\"");
  }
  PartitionSettings s;
  s.state = opt_string(j, "state");
  s.max_time_min = opt_int(j, "max_time_min");
  s.default_time_min = opt_int(j, "default_time_min");
  s.max_nodes = opt_int(j, "max_nodes");
  s.min_nodes = opt_int(j, "min_nodes");
  s.priority_tier = opt_int(j, "priority_tier");
  s.priority_job_factor = opt_int(j, "priority_job_factor");
  s.is_default = opt_bool(j, "is_default");
  s.hidden = opt_bool(j, "hidden");
  s.nodes = opt_strings(j, "nodes");
  return s;
}

json PartitionUpdateRequest::to_json() const {
  json j = with_op(kOp);
  j["name"] = name;
  j["set"] = set.to_json();
  return j;
}
PartitionUpdateRequest PartitionUpdateRequest::from_json(const json& j) {
  PartitionUpdateRequest r;
  r.name = get_string(j, "name");
  if (has(j, "set")) r.set = PartitionSettings::from_json(need_object(j, "set"));
  return r;
}

// reservations

json ReservationRequest::to_json() const {
  json j = with_op(kOp);
  j["action"] = action;
  put(j, "name", name);
  if (request) j["request"] = *request;
  return j;
}
ReservationRequest ReservationRequest::from_json(const json& j) {
  ReservationRequest r;
  r.action = get_string(j, "action");
  r.name = opt_string(j, "name");
  if (has(j, "request")) {
    try {
      r.request = need_object(j, "request").get<core::ResvRequest>();
    } catch (const json::exception& e) {
      throw BadMessage(std::string("field \"request\": ") + e.what());
    }
  }
  return r;
}

// reconfigure, token

json ReconfigureRequest::to_json() const { return with_op(kOp); }
ReconfigureRequest ReconfigureRequest::from_json(const json&) { return {}; }

json TokenRequest::to_json() const {
  json j = with_op(kOp);
  put(j, "username", username);
  put(j, "lifespan", lifespan);
  return j;
}
TokenRequest TokenRequest::from_json(const json& j) {
  return {.username = opt_string(j, "username"), .lifespan = opt_int(j, "lifespan")};
}

// listings

json QueryRequest::to_json() const {
  json j = with_op(kOp);
  j["what"] = what;
  put(j, "job_id", job_id);
  put(j, "detail", detail);
  put(j, "active_only", active_only);
  put(j, "keys", keys);
  put(j, "spec_keys", spec_keys);
  put(j, "form", form);
  put(j, "users", users);
  put(j, "partitions", partitions);
  put(j, "names", names);
  put(j, "accounts", accounts);
  put(j, "qos", qos);
  put(j, "future", future);
  put(j, "job_ids", job_ids);
  put(j, "uids", uids);
  put(j, "gids", gids);
  put(j, "states", states);
  put(j, "nodes", nodes);
  put(j, "start", start);
  put(j, "end", end);
  put(j, "include_ineligible", include_ineligible);
  put(j, "all_users", all_users);
  return j;
}
QueryRequest QueryRequest::from_json(const json& j) {
  QueryRequest q;
  q.what = get_string(j, "what");
  q.job_id = opt_uint(j, "job_id");
  q.detail = opt_bool(j, "detail");
  q.active_only = opt_bool(j, "active_only");
  q.keys = opt_strings(j, "keys");
  q.spec_keys = opt_strings(j, "spec_keys");
  q.form = opt_string(j, "form");
  q.users = opt_strings(j, "users");
  q.partitions = opt_strings(j, "partitions");
  q.names = opt_strings(j, "names");
  q.accounts = opt_strings(j, "accounts");
  q.qos = opt_strings(j, "qos");
  q.future = opt_bool(j, "future");
  q.job_ids = opt_uints<uint64_t>(j, "job_ids");
  q.uids = opt_uints<uint32_t>(j, "uids");
  q.gids = opt_uints<uint32_t>(j, "gids");
  q.states = opt_strings(j, "states");
  q.nodes = opt_strings(j, "nodes");
  q.start = opt_int(j, "start");
  q.end = opt_int(j, "end");
  q.include_ineligible = opt_bool(j, "include_ineligible");
  q.all_users = opt_bool(j, "all_users");
  // sreport's window is required.
  if (q.what == "usage" && (!q.start || !q.end))
    throw BadMessage("a usage query needs \"start\" and \"end\"");
  return q;
}

// steps and allocations

json StepCreateRequest::to_json() const {
  json j = with_op(kOp);
  j["job_id"] = job_id;
  put(j, "ntasks", ntasks);
  put(j, "nodes_min", nodes_min);
  put(j, "nodes_max", nodes_max);
  put(j, "cpus_per_task", cpus_per_task);
  put(j, "ntasks_per_node", ntasks_per_node);
  put(j, "exact", exact);
  put(j, "overcommit", overcommit);
  put(j, "overlap", overlap);
  put(j, "nodelist", nodelist);
  put(j, "exclude", exclude);
  put(j, "distribution", distribution);
  put(j, "mem_mb", mem_mb);
  put(j, "name", name);
  put(j, "command", command);
  put(j, "srun_host", srun_host);
  put(j, "srun_pid", srun_pid);
  put(j, "time_limit_min", time_limit_min);
  return j;
}
StepCreateRequest StepCreateRequest::from_json(const json& j) {
  StepCreateRequest r;
  r.job_id = need_uint(j, "job_id");
  r.ntasks = opt_int32(j, "ntasks");
  r.nodes_min = opt_int32(j, "nodes_min");
  r.nodes_max = opt_int32(j, "nodes_max");
  r.cpus_per_task = opt_int32(j, "cpus_per_task");
  r.ntasks_per_node = opt_int32(j, "ntasks_per_node");
  r.exact = opt_bool(j, "exact");
  r.overcommit = opt_bool(j, "overcommit");
  r.overlap = opt_bool(j, "overlap");
  r.nodelist = opt_string(j, "nodelist");
  r.exclude = opt_string(j, "exclude");
  r.distribution = opt_string(j, "distribution");
  r.mem_mb = opt_int(j, "mem_mb");
  r.name = opt_string(j, "name");
  r.command = opt_string(j, "command");
  r.srun_host = opt_string(j, "srun_host");
  r.srun_pid = opt_int(j, "srun_pid");
  r.time_limit_min = opt_int(j, "time_limit_min");
  return r;
}

json StepCompleteRequest::to_json() const {
  json j = with_op(kOp);
  j["job_id"] = job_id;
  j["step_id"] = step_id;
  put(j, "exit_code", exit_code);
  put(j, "exit_signal", exit_signal);
  put(j, "cancelled", cancelled);
  put(j, "timeout", timeout);
  return j;
}
StepCompleteRequest StepCompleteRequest::from_json(const json& j) {
  StepCompleteRequest r;
  r.job_id = need_uint(j, "job_id");
  if (!has(j, "step_id")) throw BadMessage("field \"step_id\" is missing");
  r.step_id = get_uint32(j, "step_id");
  r.exit_code = opt_int32(j, "exit_code");
  r.exit_signal = opt_int32(j, "exit_signal");
  r.cancelled = opt_bool(j, "cancelled");
  r.timeout = opt_bool(j, "timeout");
  return r;
}

json AllocationInfoRequest::to_json() const {
  json j = with_op(kOp);
  j["job_id"] = job_id;
  return j;
}
AllocationInfoRequest AllocationInfoRequest::from_json(const json& j) {
  return {.job_id = need_uint(j, "job_id")};
}

json AllocationCompleteRequest::to_json() const {
  json j = with_op(kOp);
  j["job_id"] = job_id;
  put(j, "status", status);
  return j;
}
AllocationCompleteRequest AllocationCompleteRequest::from_json(const json& j) {
  return {.job_id = need_uint(j, "job_id"), .status = opt_int32(j, "status")};
}

// accounting

json AcctShowRequest::to_json() const { return with_op(kOp); }
AcctShowRequest AcctShowRequest::from_json(const json&) { return {}; }

json AcctChangeRequest::to_json() const {
  json j = with_op(kOp);
  j["request"] = request;
  put(j, "commit", commit);
  put(j, "generation", generation);
  return j;
}
AcctChangeRequest AcctChangeRequest::from_json(const json& j) {
  AcctChangeRequest r;
  try {
    r.request = need_object(j, "request").get<core::AcctRequest>();
  } catch (const json::exception& e) {
    throw BadMessage(std::string("field \"request\": ") + e.what());
  }
  r.commit = opt_bool(j, "commit");
  r.generation = opt_uint(j, "generation");
  return r;
}

// the union

namespace {
template <class T>
bool try_decode(const std::string& op, const json& j, std::optional<Request>& out) {
  if (op != T::kOp) return false;
  out.emplace(T::from_json(j));
  return true;
}
template <class... T>
std::optional<Request> decode_any(const std::string& op, const json& j, std::variant<T...>*) {
  std::optional<Request> out;
  (try_decode<T>(op, j, out) || ...);
  return out;
}
}  // namespace

Request decode_request(const json& j) {
  const std::string op = get_string(j, "op");
  if (op.empty()) throw BadMessage("field \"op\" is missing");
  std::optional<Request> r = decode_any(op, j, static_cast<Request*>(nullptr));
  if (!r) throw BadRequest(Error(Errno::kError, "Unknown request"));
  return std::move(*r);
}

json to_json(const Request& r) {
  return std::visit([](const auto& x) { return x.to_json(); }, r);
}

const char* op_of(const Request& r) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kOp; }, r);
}

}  // namespace drover::proto
