// libFuzzer entry for the check the controller runs on a credential from another host
// (net/user_cred.hpp), which anyone who reaches its TCP port can send. Two modes, by whether
// the input holds a NUL byte:
//  - "text NUL signature": anything at all; the check never throws and never accepts it
//    (it cannot carry the claimed host's signature);
//  - otherwise the bytes make a credential that a host signs for real: the check accepts it
//    exactly when it is well formed and live, and never twice.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "net/keys.hpp"
#include "net/user_cred.hpp"

namespace net = drover::net;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

constexpr std::string_view kMaster = "fuzz-master-secret-0123456789abcdef";
constexpr int64_t kNow = 1'800'000'000;

// Printable ASCII only: a host's own name and nonce, not the attacker's text.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) out += static_cast<char>(' ' + static_cast<unsigned char>(c) % 95);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  net::ReplayCache replays(64);
  if (const size_t cut = in.find('\0'); cut != std::string_view::npos) {
    const auto r =
        net::verify_user_cred(kMaster, in.substr(0, cut), in.substr(cut + 1), kNow, replays);
    check(!r.cred && !r.error.empty());
    return 0;
  }
  if (size < 6) return 0;
  net::UserCred c;
  c.uid = static_cast<uint32_t>(data[0]) * 1000u + data[1];
  c.gid = data[2];
  c.expires = kNow + (static_cast<int16_t>(data[3] << 8 | data[4]) % 800);
  const std::string_view rest = in.substr(6);
  const size_t split = std::min<size_t>(data[5] % 40, rest.size());
  c.host = printable(rest.substr(0, split));
  c.nonce = printable(rest.substr(split));
  const net::SignedUserCred s = net::issue_user_cred(net::node_key(kMaster, c.host), c);
  const auto r = net::verify_user_cred(kMaster, s.text, s.sig, kNow, replays);
  const bool live = c.expires + net::kUserCredClockSkew >= kNow &&
                    c.expires <= kNow + net::kUserCredMaxLifetime + net::kUserCredClockSkew;
  const bool well_formed = !c.host.empty() && c.nonce.size() >= 16;
  check(r.cred.has_value() == (live && well_formed));
  if (r.cred) {
    check(r.cred->uid == c.uid && r.cred->gid == c.gid && r.cred->host == c.host);
    check(r.session_key == s.session_key);
    check(!net::verify_user_cred(kMaster, s.text, s.sig, kNow, replays).cred);  // once
    // Another host's key does not make it pass.
    const auto other = net::issue_user_cred(net::node_key(kMaster, c.host + "x"), c);
    net::ReplayCache fresh;
    check(!net::verify_user_cred(kMaster, other.text, other.sig, kNow, fresh).cred);
  }
  return 0;
}
