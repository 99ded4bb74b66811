#pragma once
// A host's word on who runs a command there, for a command that reaches the controller over TCP
// (from a login host or a compute node). The vouching daemon on the host reads the caller's
// uid and gid from its Unix socket (SO_PEERCRED) and signs
//
//   text = {"v":1,"uid":U,"gid":G,"host":H,"nonce":N,"expires":T}   (JSON)
//   sig  = hex HMAC(node key(H), "user-cred|" text)
//
// with its node key (net/keys.hpp), which the controller derives from H. The credential lasts
// kUserCredLifetime seconds and is good for one connection: the controller remembers every
// (host, nonce) it took until it expires. Both sides key the connection's frames with
// session = HMAC(node key(H), "user-session|" sig), which only the vouched caller learns: the
// controller's first authenticated frame ("accepted") shows the command it is talking to its
// controller, and the request and its reply cannot be altered or answered by a third party on
// the network (they are not encrypted).
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace drover::net {

constexpr int64_t kUserCredLifetime = 60;
// A credential claiming to outlive this is refused (it would also outlive the replay cache).
constexpr int64_t kUserCredMaxLifetime = 300;
// Clocks of hosts and controller may differ by this much.
constexpr int64_t kUserCredClockSkew = 30;

struct UserCred {
  uint32_t uid = 0, gid = 0;
  std::string host, nonce;
  int64_t expires = 0;
};

struct SignedUserCred {
  std::string text, sig, session_key;  // session_key: raw bytes
};

SignedUserCred issue_user_cred(std::string_view node_key, const UserCred& cred);
std::string user_session_key(std::string_view node_key, std::string_view sig);

// The (host, nonce) pairs taken, each kept until its credential expires; bounded (a flood of
// valid credentials fills it, and then credentials are refused, never let through twice).
class ReplayCache {
 public:
  // The default holds about 2,900 credentials a second at the usual 60 s lifetime (each is
  // kept until it expires, plus the clock skew), in some 80 MB at most.
  explicit ReplayCache(size_t max_entries = 1 << 18) : max_(max_entries) {}
  enum Result { Taken, Replayed, Full };
  Result take(const std::string& host, const std::string& nonce, int64_t expires, int64_t now);
  size_t size() const { return by_key_.size(); }

 private:
  void prune(int64_t now);
  size_t max_;
  std::map<std::pair<std::string, std::string>, int64_t> by_key_;
  std::multimap<int64_t, std::pair<std::string, std::string>> by_expiry_;
};

struct UserCredCheck {
  std::optional<UserCred> cred;  // set when it passed
  std::string error;
  std::string session_key;
};

// Checks the signature against the node key the master derives for the claimed host, then the
// expiry, then single use. `master` is the controller's secret.
UserCredCheck verify_user_cred(std::string_view master, std::string_view text, std::string_view sig,
                               int64_t now, ReplayCache& replays);

}  // namespace drover::net
