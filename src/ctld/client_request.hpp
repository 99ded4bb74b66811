#pragma once
// The commands' requests that the state machine answers by itself, by "op": the dispatch of
// the controller's Unix socket (Server::handle adds the ones that need the accounting store or
// the server's own state), and of the request fuzzer.
#include <optional>
#include <string>

#include "ctld/state_machine.hpp"

namespace drover::ctld {

// Its reply, or nullopt when `op` is not one of them. A job list ("query") comes back as text
// (StateMachine::query_text) in `text`. Throws on a request of the wrong shape.
std::optional<json> apply_client_request(StateMachine& m, const std::string& op, const json& req,
                                         const Caller& who, int64_t now, Effects& fx,
                                         std::string& text, const json& job_list_extras = {});

}  // namespace drover::ctld
