#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/slurm_conf.hpp"
#include "proto/reply.hpp"
#include "proto/request.hpp"

namespace drover::cli {

using nlohmann::json;

// Where the controller's socket is: $DROVER_SOCKET, else $DROVER_STATE_DIR/ctld.sock,
// else /run/drover/ctld.sock.
std::string controller_socket();

// This host's slurm.conf ($SLURM_CONF, else $DROVER_STATE_DIR/slurm.conf, else
// /etc/slurm/slurm.conf); nothing if it cannot be read or parsed (the caller then uses
// Slurm's defaults).
std::optional<core::SlurmConf> local_slurm_conf();

// SLURM_RLIMIT_* for the job's environment: this process's soft limits that the tasks are to
// get, those of `propagate` (--propagate; "" is ALL) or else slurm.conf's
// PropagateResourceLimits less PropagateResourceLimitsExcept (the caller has checked `propagate`
// with core::parse_rlimit_list).
std::map<std::string, std::string> propagated_limits(const std::optional<std::string>& propagate);

// A controller on another host, reached over TCP with a credential from this host's vouching
// socket ($DROVER_AUTH_SOCKET, else /run/drover/auth.sock; docs/security.md): named by
// $DROVER_CONTROLLER (host:port), or, when neither $DROVER_SOCKET nor $DROVER_STATE_DIR is set
// and the controller's socket is not on this host, by slurm.conf ($SLURM_CONF, else
// /etc/slurm/slurm.conf: SlurmctldHost, SlurmctldPort). Empty: the Unix socket.
struct RemoteController {
  std::string host;
  int port = 6817;
};
std::optional<RemoteController> remote_controller();

// One request to the controller. Throws ControllerUnreachable when it cannot be contacted;
// `maybe_received`: the request was on its way (connected), so it may have been acted on.
struct ControllerUnreachable : std::runtime_error {
  explicit ControllerUnreachable(const std::string& what, bool maybe_received = false)
      : std::runtime_error(what), maybe_received(maybe_received) {}
  bool maybe_received = false;
};
json call_controller(const json& request);
// A typed request (proto/request.hpp), the way every command builds one.
json call_controller(const proto::Request& request);
// A typed request and its reply, decoded here once (proto/reply.hpp); a reply that does not
// read is a refusal ("malformed reply: ..."). Throws ControllerUnreachable.
template <class Req>
proto::Outcome<proto::reply_t<Req>> ask(const Req& request) {
  return proto::decode_reply<proto::reply_t<Req>>(call_controller(proto::Request(request)));
}
// The same, the reply as the controller wrote it (for a reader that does not build a tree:
// squeue over 100,000 jobs).
std::string call_controller_text(const json& request);
std::string call_controller_text(const proto::Request& request);

// A submission (sbatch, salloc, srun): sent with a request id (`request_id`, else a new
// random one) and sent again with the same id while the controller cannot be reached or the
// reply is lost (a controller restarting), backing off, for up to $DROVER_SUBMIT_RETRY_S
// seconds (default 60, MessageTimeout's scale). The controller answers a retry with the job
// the first attempt created, so a retry never makes a second job. Throws SubmitUnanswered
// when the time is up.
struct SubmitUnanswered : ControllerUnreachable {
  SubmitUnanswered(const std::string& what, bool maybe_received, std::string request_id)
      : ControllerUnreachable(what, maybe_received), request_id(std::move(request_id)) {}
  std::string request_id;
};
proto::Outcome<proto::SubmitReply> submit_to_controller(proto::SubmitRequest request,
                                                        std::string request_id = "");
// The line a command prints after `prefix` ("Batch job submission failed: ") when a submission
// went unanswered: Slurm's connect failure when it never reached the controller, else that
// the job may exist, with the request id that finds it.
std::string unanswered_submission(const SubmitUnanswered& e);

}  // namespace drover::cli
