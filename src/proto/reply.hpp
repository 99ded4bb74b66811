#pragma once
// The controller's replies to the commands' requests (request.hpp), one struct per family. The
// controller builds a reply only through its struct's to_json; a command decodes the frame
// once (Outcome<T>::from_json, through cli's ask()) and reads typed fields. The JSON is the one
// the controller sent before these structs existed (object members in name order, optional
// members left out when unset), so a command reads the replies of its own and the previous
// release alike. The job listing (query "jobs") is squeue's and not here yet.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "proto/error.hpp"
#include "proto/request.hpp"

namespace drover::proto {

// A request refused: {"ok": false, "error", "errno"} and what some refusals add.
struct ErrorReply {
  Error error = {};
  // The partition a submission named that does not exist (sbatch prints it first).
  std::optional<std::string> bad_partition = {};
  // A second line of explanation (submit, node_create).
  std::optional<std::string> detail = {};
  // A check real sbatch makes before submitting: printed without "submission failed".
  std::optional<bool> local = {};

  nlohmann::json to_json() const;
  // Any reply that is not ok is read as one (an older controller's: by its message).
  static ErrorReply from_json(const nlohmann::json& j);
};

// {"ok": true}: node_update, node_create, node_delete, partition_update.
struct Ack {
  [[no_unique_address]] NamedOnly named_only = {};
  nlohmann::json to_json() const;
  static Ack from_json(const nlohmann::json& j);
};

// sbatch, salloc, srun, REST: the job made, or (test_only) when and where it would start.
struct SubmitReply {
  [[no_unique_address]] NamedOnly named_only = {};
  uint64_t job_id = 0;
  // A retry of a submission already made: its job.
  std::optional<bool> retried = {};
  // --test-only: the plan.
  std::optional<bool> test_only = {};
  std::optional<int64_t> start = {};
  std::optional<int64_t> cpus = {};
  std::optional<std::string> nodes = {}, partition = {};

  nlohmann::json to_json() const;
  static SubmitReply from_json(const nlohmann::json& j);
};

// One job's refusal in a reply about several jobs (`job` as the command named it: "36_5").
struct JobError {
  std::string job = {};
  Error error = {};
};

// scancel, scontrol hold|release|requeue|update JobId=: each job that was refused; ok when
// none was. `matched`: how many jobs scancel's filters matched.
struct JobsReply {
  [[no_unique_address]] NamedOnly named_only = {};
  std::vector<JobError> errors = {};
  std::optional<uint64_t> matched = {};

  bool ok() const { return errors.empty(); }
  nlohmann::json to_json() const;
  static JobsReply from_json(const nlohmann::json& j);
};

// scontrol create|update|delete reservation: the name of the one created.
struct ReservationReply {
  [[no_unique_address]] NamedOnly named_only = {};
  std::optional<std::string> name = {};
  nlohmann::json to_json() const;
  static ReservationReply from_json(const nlohmann::json& j);
};

// A reply or the refusal of the request. A reply with a per-job "errors" list (JobsReply) is
// a reply even when not ok; any other reply that is not ok is a ErrorReply.
template <class T>
class Outcome {
 public:
  Outcome(T reply) : v_(std::move(reply)) {}  // NOLINT: a handler returns either
  Outcome(ErrorReply refusal) : v_(std::move(refusal)) {}
  Outcome(Error error) : v_(ErrorReply{.error = std::move(error)}) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& reply() const { return std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  const ErrorReply* refusal() const { return std::get_if<ErrorReply>(&v_); }

  nlohmann::json to_json() const {
    return std::visit([](const auto& x) { return x.to_json(); }, v_);
  }
  // Throws BadMessage when a reply's members have the wrong types.
  static Outcome from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw BadMessage("the reply is not an object");
    const auto ok = j.find("ok");
    const bool succeeded = ok != j.end() && ok->is_boolean() && ok->get<bool>();
    if (!succeeded && !j.contains("errors")) return ErrorReply::from_json(j);
    return T::from_json(j);
  }

 private:
  std::variant<T, ErrorReply> v_;
};

// A reply as a command reads it: one that does not read (a member of the wrong type) is a
// refusal, "malformed reply: ...", rather than an exception.
template <class T>
Outcome<T> decode_reply(const nlohmann::json& j) {
  try {
    return Outcome<T>::from_json(j);
  } catch (const BadMessage& e) {
    return Error(Errno::kError, std::string("malformed reply: ") + e.what());
  }
}

// The reply type of each request.
template <class R>
struct ReplyOf;
template <>
struct ReplyOf<SubmitRequest> {
  using type = SubmitReply;
};
template <>
struct ReplyOf<CancelRequest> {
  using type = JobsReply;
};
template <>
struct ReplyOf<ControlRequest> {
  using type = JobsReply;
};
template <>
struct ReplyOf<JobUpdateRequest> {
  using type = JobsReply;
};
template <>
struct ReplyOf<NodeUpdateRequest> {
  using type = Ack;
};
template <>
struct ReplyOf<NodeCreateRequest> {
  using type = Ack;
};
template <>
struct ReplyOf<NodeDeleteRequest> {
  using type = Ack;
};
template <>
struct ReplyOf<PartitionUpdateRequest> {
  using type = Ack;
};
template <>
struct ReplyOf<ReservationRequest> {
  using type = ReservationReply;
};
template <class R>
using reply_t = typename ReplyOf<R>::type;

}  // namespace drover::proto
