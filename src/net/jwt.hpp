#pragma once
// JSON Web Tokens as Slurm's auth/jwt issues them (RFC 7519, HS256 only): the claims `iat`
// (issued at), `exp` (expires) and `sun` (the Slurm user name). Used by the REST API's
// X-SLURM-USER-TOKEN header and `scontrol token`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drover::net {

// RFC 4648 section 5 alphabet without '=' padding, as JWTs use it.
std::string base64url_encode(std::string_view raw);
// nullopt for characters outside the alphabet or an impossible length.
std::optional<std::string> base64url_decode(std::string_view text);

// header.payload.signature, signed HMAC-SHA256 with `key`.
std::string jwt_issue(std::string_view key, std::string_view user, int64_t issued_at,
                      int64_t expires_at);

struct JwtCheck {
  bool ok = false;
  std::string user;     // `sun`
  int64_t expires = 0;  // `exp`
  std::string error;    // why not ok: "malformed token", "bad signature", "token expired", ...
};
// Checks the form, the algorithm (HS256 only: "none" and others are refused), the signature
// (constant-time), that `exp` is still ahead of `now` and that `sun` names someone.
JwtCheck jwt_verify(std::string_view key, std::string_view token, int64_t now);

}  // namespace drover::net
