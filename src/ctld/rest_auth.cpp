#include "ctld/rest_auth.hpp"

#include <grp.h>
#include <pwd.h>

#include "net/auth.hpp"
#include "net/jwt.hpp"

namespace drover::ctld {

std::string token_key(const std::string& cluster_key) {
  return net::hmac_sha256(cluster_key, "drover-jwt-hs256|");
}

UserLookup system_users() {
  return [](const std::string& name) -> std::optional<Caller> {
    struct passwd pw {};
    struct passwd* out = nullptr;
    char buf[4096];
    if (getpwnam_r(name.c_str(), &pw, buf, sizeof buf, &out) != 0 || out == nullptr)
      return std::nullopt;
    Caller c{pw.pw_uid, pw.pw_gid, pw.pw_name, std::to_string(pw.pw_gid)};
    struct group gr {};
    struct group* g = nullptr;
    if (getgrgid_r(pw.pw_gid, &gr, buf, sizeof buf, &g) == 0 && g != nullptr) c.group = g->gr_name;
    return c;
  };
}

RestAuth rest_authenticate(const std::string& key, const std::string& user_name,
                           const std::string& token, int64_t now, const UserLookup& users) {
  RestAuth r;
  if (token.empty()) {
    r.error = "missing X-SLURM-USER-TOKEN";
    return r;
  }
  const net::JwtCheck check = net::jwt_verify(key, token, now);
  if (!check.ok) {
    r.error = check.error;
    return r;
  }
  // slurmrestd takes the name from the header; it must be the one the token was issued to.
  if (!user_name.empty() && user_name != check.user) {
    r.error = "X-SLURM-USER-NAME does not match the token's user";
    return r;
  }
  r.caller = users(check.user);
  if (!r.caller) r.error = "unknown user " + check.user;
  return r;
}

json issue_token(const proto::TokenRequest& req, const Caller& who, bool operator_caller,
                 const std::string& key, int64_t now) {
  const std::string username = req.username.value_or("");
  if (!username.empty() && username != who.user && !operator_caller)
    return error_reply(proto::Errno::kUserIdMissing);
  int64_t lifespan = req.lifespan.value_or(0);
  if (lifespan < 0) return error_reply(proto::Errno::kError, "Invalid lifespan");
  if (lifespan == 0) lifespan = kDefaultTokenLifespan;
  const std::string user = username.empty() ? who.user : username;
  return {{"ok", true},
          {"token", net::jwt_issue(key, user, now, now + lifespan)},
          {"user", user},
          {"lifespan", lifespan}};
}

}  // namespace drover::ctld
