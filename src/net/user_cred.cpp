#include "net/user_cred.hpp"

#include <nlohmann/json.hpp>

#include "net/auth.hpp"
#include "net/keys.hpp"

namespace drover::net {
namespace {
std::string cred_mac(std::string_view node_key, std::string_view text) {
  return to_hex(hmac_sha256(node_key, std::string("user-cred|") + std::string(text)));
}
}  // namespace

std::string user_session_key(std::string_view node_key, std::string_view sig) {
  return hmac_sha256(node_key, std::string("user-session|") + std::string(sig));
}

SignedUserCred issue_user_cred(std::string_view node_key, const UserCred& cred) {
  const nlohmann::json j = {{"v", 1},
                            {"uid", cred.uid},
                            {"gid", cred.gid},
                            {"host", cred.host},
                            {"nonce", cred.nonce},
                            {"expires", cred.expires}};
  SignedUserCred out;
  out.text = j.dump();
  out.sig = cred_mac(node_key, out.text);
  out.session_key = user_session_key(node_key, out.sig);
  return out;
}

void ReplayCache::prune(int64_t now) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first < now) {
    by_key_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

ReplayCache::Result ReplayCache::take(const std::string& host, const std::string& nonce,
                                      int64_t expires, int64_t now) {
  prune(now);
  auto key = std::make_pair(host, nonce);
  if (by_key_.count(key)) return Replayed;
  if (by_key_.size() >= max_) return Full;
  by_key_.emplace(key, expires);
  by_expiry_.emplace(expires, std::move(key));
  return Taken;
}

UserCredCheck verify_user_cred(std::string_view master, std::string_view text, std::string_view sig,
                               int64_t now, ReplayCache& replays) {
  UserCredCheck r;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  auto fail = [&r](std::string why) {
    r.error = std::move(why);
    return r;
  };
  if (!j.is_object() || !j.contains("host") || !j["host"].is_string() || !j.contains("nonce") ||
      !j["nonce"].is_string() || !j.contains("uid") || !j["uid"].is_number_unsigned() ||
      !j.contains("gid") || !j["gid"].is_number_unsigned() || !j.contains("expires") ||
      !j["expires"].is_number_integer() || j.value("v", 0) != 1)
    return fail("malformed credential");
  UserCred c;
  c.host = j["host"].get<std::string>();
  c.nonce = j["nonce"].get<std::string>();
  if (c.host.empty() || c.nonce.size() < 16) return fail("malformed credential");
  if (j["uid"].get<uint64_t>() > UINT32_MAX || j["gid"].get<uint64_t>() > UINT32_MAX)
    return fail("malformed credential");
  c.uid = j["uid"].get<uint32_t>();
  c.gid = j["gid"].get<uint32_t>();
  c.expires = j["expires"].get<int64_t>();
  const std::string key = node_key(master, c.host);
  if (!constant_time_equal(sig, cred_mac(key, text))) return fail("invalid credential signature");
  if (c.expires + kUserCredClockSkew < now) return fail("credential expired");
  if (c.expires > now + kUserCredMaxLifetime + kUserCredClockSkew)
    return fail("credential lifetime too long");
  // Kept while a clock-skewed check could still take it.
  switch (replays.take(c.host, c.nonce, c.expires + kUserCredClockSkew, now)) {
    case ReplayCache::Replayed:
      return fail("credential replayed");
    case ReplayCache::Full:
      return fail("too many credentials in use; try again");
    case ReplayCache::Taken:
      break;
  }
  r.session_key = user_session_key(key, sig);
  r.cred = std::move(c);
  return r;
}

}  // namespace drover::net
