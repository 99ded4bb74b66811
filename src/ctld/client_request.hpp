#pragma once
// The commands' requests that the state machine answers by itself: the dispatch of the
// controller's sockets (Server::handle adds the ones that need the accounting store or the
// server's own state), of the Kubernetes operator's commands and of the request fuzzer. The
// request was decoded once, where it arrived (proto::decode_request).
#include <optional>
#include <string>

#include "ctld/state_machine.hpp"
#include "proto/request.hpp"

namespace drover::ctld {

// Its reply, or nullopt when `req` is not one of them. A job list (a query) comes back as
// text (StateMachine::query_text) in `text`.
std::optional<json> apply_client_request(StateMachine& m, const proto::Request& req,
                                         const Caller& who, int64_t now, Effects& fx,
                                         std::string& text, const json& job_list_extras = {});

}  // namespace drover::ctld
