#pragma once
// Who a REST request comes from: X-SLURM-USER-NAME and X-SLURM-USER-TOKEN, a JWT signed with
// the cluster's token key (net/jwt.hpp) whose `sun` must be that user. And the tokens
// `scontrol token` asks for over the Unix socket, where the peer's credentials say who asks.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ctld/state_machine.hpp"

namespace drover::ctld {

// The key tokens are signed with, derived from the cluster key (so neither reveals the other
// and agents' link keys never sign tokens).
std::string token_key(const std::string& cluster_key);

// Resolves a user name to ids and group name (getpwnam); nullopt for an unknown user.
using UserLookup = std::function<std::optional<Caller>(const std::string& user)>;
UserLookup system_users();

struct RestAuth {
  std::optional<Caller> caller;  // set when the request is authenticated
  std::string error;             // why not
};
// `user_name` and `token` are the two headers ("" when absent).
RestAuth rest_authenticate(const std::string& key, const std::string& user_name,
                           const std::string& token, int64_t now, const UserLookup& users);

// {"op": "token", "lifespan": seconds (0: the default, 1800), "username": optional}: a token
// for the caller, or for `username` when the caller is an operator (root, SlurmUser); others
// naming someone else get Slurm's "Invalid user id". Reply {"ok", "token"} or {"ok": false,
// "error"}.
json issue_token(const proto::TokenRequest& req, const Caller& who, bool operator_caller,
                 const std::string& key, int64_t now);

inline constexpr int64_t kDefaultTokenLifespan = 1800;  // Slurm's DEFAULT_AUTH_TOKEN_LIFESPAN

}  // namespace drover::ctld
