#pragma once
// The commands' requests to the controller, one struct each, named on the wire by "op". A
// command builds its request only through the struct's to_json; the controller decodes a frame
// once, at its boundary (decode_request), so the handlers read typed fields. The JSON is the
// one the commands sent before these structs existed: optional members are left out when
// unset, so a controller reads the requests of its own and the previous release alike.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/acct_admin.hpp"
#include "core/job.hpp"
#include "core/reservation.hpp"
#include "proto/decode.hpp"
#include "proto/error.hpp"

namespace drover::proto {

// The first member of every request struct. A request is built by its members' names
// (designated initializers) or member by member, never from a list of values: a JSON brace
// list such as `QueryRequest{{"what", "shares"}}` would otherwise compile as the struct's
// members in order (a string from two pointers); this makes it a compile error.
struct NamedOnly {
  NamedOnly() = default;
  template <class A, class... R>
  requires(!std::is_same_v<std::remove_cvref_t<A>, NamedOnly>) NamedOnly(A&&, R&&...)
  = delete;
  bool operator==(const NamedOnly&) const = default;
};

// A request the controller refuses with this error as its reply (not the generic "Invalid
// request: ..." of a BadMessage).
struct BadRequest : BadMessage {
  explicit BadRequest(Error e) : BadMessage(e.message), error(std::move(e)) {}
  Error error;
};

// sbatch, salloc, srun (an allocation), the REST API: a job. `request_id` makes a retry
// idempotent (cli/client.hpp submit_to_controller).
struct SubmitRequest {
  static constexpr const char* kOp = "submit";
  [[no_unique_address]] NamedOnly named_only = {};
  core::JobSpec spec = {};
  std::optional<bool> test_only = {};
  std::optional<std::string> request_id = {};
  nlohmann::json to_json() const;
  static SubmitRequest from_json(const nlohmann::json& j);
  // From a job spec in its JSON form and a request id (null when none) that came some other
  // way (the REST API's body); nothing when from_json would refuse them (invalid()).
  static std::optional<SubmitRequest> from_parts(const nlohmann::json& spec,
                                                 const nlohmann::json* request_id);
  // The controller's own wording for a submission it cannot read.
  static Error invalid();
};

// One step named by scancel ("36.0").
struct StepRef {
  std::string ref = {};
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  bool operator==(const StepRef&) const = default;
};

// scancel: jobs by reference ("36", "36_5", "36_[1-3]"), steps, or every active job that
// matches the filters; a signal other than 0 (cancel) or 9 signals instead.
struct CancelRequest {
  static constexpr const char* kOp = "cancel";
  [[no_unique_address]] NamedOnly named_only = {};
  std::optional<std::vector<std::string>> jobs = {};
  std::optional<std::vector<StepRef>> steps = {};
  std::optional<int32_t> signal = {};
  std::optional<bool> batch = {}, full = {};
  std::optional<uint32_t> uid = {};
  std::optional<std::string> name = {}, partition = {};
  std::optional<std::vector<std::string>> states = {};
  nlohmann::json to_json() const;
  static CancelRequest from_json(const nlohmann::json& j);
};

// scontrol hold|uhold|release|requeue|requeuehold|suspend|resume ... on jobs.
struct ControlRequest {
  static constexpr const char* kOp = "control";
  [[no_unique_address]] NamedOnly named_only = {};
  std::string action = {};
  std::vector<std::string> jobs = {};
  nlohmann::json to_json() const;
  static ControlRequest from_json(const nlohmann::json& j);
};

// scontrol update JobId=... Key=Value...: the keys as typed (any case), the values as text.
struct JobUpdateRequest {
  static constexpr const char* kOp = "update";
  [[no_unique_address]] NamedOnly named_only = {};
  std::vector<std::string> jobs = {};
  std::map<std::string, std::string> set = {};
  nlohmann::json to_json() const;
  static JobUpdateRequest from_json(const nlohmann::json& j);
};

// scontrol update NodeName=... State=... Reason=...; the Kubernetes operator's features.
struct NodeUpdateRequest {
  static constexpr const char* kOp = "node_update";
  [[no_unique_address]] NamedOnly named_only = {};
  std::optional<std::string> nodes = {}, state = {}, reason = {}, features = {},
                             features_act = {};  // AvailableFeatures, ActiveFeatures
  nlohmann::json to_json() const;
  static NodeUpdateRequest from_json(const nlohmann::json& j);
};

// scontrol create NodeName=...: the words as a slurm.conf line.
struct NodeCreateRequest {
  static constexpr const char* kOp = "node_create";
  [[no_unique_address]] NamedOnly named_only = {};
  std::string line = {};
  nlohmann::json to_json() const;
  static NodeCreateRequest from_json(const nlohmann::json& j);
};

// scontrol delete NodeName=LIST.
struct NodeDeleteRequest {
  static constexpr const char* kOp = "node_delete";
  [[no_unique_address]] NamedOnly named_only = {};
  std::string nodes = {};
  nlohmann::json to_json() const;
  static NodeDeleteRequest from_json(const nlohmann::json& j);
};

// What scontrol update PartitionName= changes (each member: set when given).
struct PartitionSettings {
  std::optional<std::string> state = {};
  std::optional<int64_t> max_time_min = {}, default_time_min = {}, max_nodes = {}, min_nodes = {};
  std::optional<int64_t> priority_tier = {}, priority_job_factor = {};
  std::optional<bool> is_default = {}, hidden = {};
  std::optional<std::vector<std::string>> nodes = {};
  bool operator==(const PartitionSettings&) const = default;
  nlohmann::json to_json() const;
  static PartitionSettings from_json(const nlohmann::json& j);
};

struct PartitionUpdateRequest {
  static constexpr const char* kOp = "partition_update";
  [[no_unique_address]] NamedOnly named_only = {};
  std::string name = {};
  PartitionSettings set = {};
  nlohmann::json to_json() const;
  static PartitionUpdateRequest from_json(const nlohmann::json& j);
};

// scontrol create|update|delete reservation: `request` for create and update, `name` for
// delete.
struct ReservationRequest {
  static constexpr const char* kOp = "reservation";
  [[no_unique_address]] NamedOnly named_only = {};
  std::string action = {};
  std::optional<std::string> name = {};
  std::optional<core::ResvRequest> request = {};
  nlohmann::json to_json() const;
  static ReservationRequest from_json(const nlohmann::json& j);
};

// scontrol reconfigure.
struct ReconfigureRequest {
  static constexpr const char* kOp = "reconfigure";
  [[no_unique_address]] NamedOnly named_only = {};
  nlohmann::json to_json() const;
  static ReconfigureRequest from_json(const nlohmann::json& j);
};

// scontrol token [username=] [lifespan=].
struct TokenRequest {
  static constexpr const char* kOp = "token";
  [[no_unique_address]] NamedOnly named_only = {};
  std::optional<std::string> username = {};
  std::optional<int64_t> lifespan = {};
  nlohmann::json to_json() const;
  static TokenRequest from_json(const nlohmann::json& j);
};

// Every listing: `what` names it ("jobs", "nodes", "partitions", "reservations", "config",
// "ping", "priority_factors", "shares", "acct_jobs", "usage"); the other members are the
// query parameters of those that take them (left out when not given).
struct QueryRequest {
  static constexpr const char* kOp = "query";
  [[no_unique_address]] NamedOnly named_only = {};
  std::string what = {};
  // jobs: one job (or array), the detailed view, active jobs only, only these fields.
  std::optional<uint64_t> job_id = {};
  std::optional<bool> detail = {}, active_only = {};
  std::optional<std::vector<std::string>> keys = {}, spec_keys = {};
  // jobs: "rows" asks for the compact form (proto/job_list.hpp); unset: objects.
  std::optional<std::string> form = {};
  // jobs (squeue -u -p -n -A -q), shares (users, accounts), sacct (partitions, accounts).
  std::optional<std::vector<std::string>> users = {}, partitions = {}, names = {}, accounts = {},
                                          qos = {};
  // nodes: FUTURE nodes too.
  std::optional<bool> future = {};
  // priority_factors, acct_jobs.
  std::optional<std::vector<uint64_t>> job_ids = {};
  std::optional<std::vector<uint32_t>> uids = {};
  // acct_jobs (sacct), usage (sreport: start and end).
  std::optional<std::vector<uint32_t>> gids = {};
  std::optional<std::vector<std::string>> states = {}, nodes = {};
  std::optional<int64_t> start = {}, end = {};
  std::optional<bool> include_ineligible = {}, all_users = {};
  nlohmann::json to_json() const;
  static QueryRequest from_json(const nlohmann::json& j);
};

// srun: a step in an allocation.
struct StepCreateRequest {
  static constexpr const char* kOp = "step_create";
  [[no_unique_address]] NamedOnly named_only = {};
  uint64_t job_id = 0;
  std::optional<int32_t> ntasks = {}, nodes_min = {}, nodes_max = {}, cpus_per_task = {},
                         ntasks_per_node = {};
  std::optional<bool> exact = {}, overcommit = {}, overlap = {};
  std::optional<std::string> nodelist = {}, exclude = {}, distribution = {};
  std::optional<int64_t> mem_mb = {};
  std::optional<std::string> name = {}, command = {}, srun_host = {};
  std::optional<int64_t> srun_pid = {}, time_limit_min = {};
  nlohmann::json to_json() const;
  static StepCreateRequest from_json(const nlohmann::json& j);
};

// srun: its step ended.
struct StepCompleteRequest {
  static constexpr const char* kOp = "step_complete";
  [[no_unique_address]] NamedOnly named_only = {};
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::optional<int32_t> exit_code = {}, exit_signal = {};
  std::optional<bool> cancelled = {}, timeout = {};
  nlohmann::json to_json() const;
  static StepCompleteRequest from_json(const nlohmann::json& j);
};

// salloc, srun: the allocation's state and nodes.
struct AllocationInfoRequest {
  static constexpr const char* kOp = "allocation_info";
  [[no_unique_address]] NamedOnly named_only = {};
  uint64_t job_id = 0;
  nlohmann::json to_json() const;
  static AllocationInfoRequest from_json(const nlohmann::json& j);
};

// salloc, srun: the allocation is given back (`status`: the command's wait status).
struct AllocationCompleteRequest {
  static constexpr const char* kOp = "allocation_complete";
  [[no_unique_address]] NamedOnly named_only = {};
  uint64_t job_id = 0;
  std::optional<int32_t> status = {};
  nlohmann::json to_json() const;
  static AllocationCompleteRequest from_json(const nlohmann::json& j);
};

// sacctmgr show: the accounting data.
struct AcctShowRequest {
  static constexpr const char* kOp = "acct_show";
  [[no_unique_address]] NamedOnly named_only = {};
  nlohmann::json to_json() const;
  static AcctShowRequest from_json(const nlohmann::json& j);
};

// sacctmgr add|modify|delete: previewed (commit false), then committed on the data of that
// preview (`generation`).
struct AcctChangeRequest {
  static constexpr const char* kOp = "acct_change";
  [[no_unique_address]] NamedOnly named_only = {};
  core::AcctRequest request = {};
  std::optional<bool> commit = {};
  std::optional<uint64_t> generation = {};
  nlohmann::json to_json() const;
  static AcctChangeRequest from_json(const nlohmann::json& j);
};

using Request =
    std::variant<SubmitRequest, CancelRequest, ControlRequest, JobUpdateRequest, NodeUpdateRequest,
                 NodeCreateRequest, NodeDeleteRequest, PartitionUpdateRequest, ReservationRequest,
                 ReconfigureRequest, TokenRequest, QueryRequest, StepCreateRequest,
                 StepCompleteRequest, AllocationInfoRequest, AllocationCompleteRequest,
                 AcctShowRequest, AcctChangeRequest>;

// The request in a decoded frame (decode_object): its "op" names the struct. Throws BadMessage
// for an unknown op, a member of the wrong type, a required one missing; BadRequest where the
// controller answers with its own error.
Request decode_request(const nlohmann::json& j);
// The frame's JSON, "op" included.
nlohmann::json to_json(const Request& r);
// Its "op".
const char* op_of(const Request& r);

}  // namespace drover::proto
