#pragma once
// The version of the controller's TCP protocol (agents' hello and registration, commands'
// credential frame). A controller speaks its own version and the one before it, so agents and
// login hosts can be upgraded after it; anything else is refused with protocol_refusal's
// message. A peer that sends no version predates versions (and the per-node keys): 0.
#include <string>

namespace drover::net {

constexpr int kProtocolVersion = 1;
constexpr int kOldestProtocolVersion = kProtocolVersion > 1 ? kProtocolVersion - 1 : 1;

// Empty when `version` is spoken here, else why not.
inline std::string protocol_refusal(int version) {
  if (version >= kOldestProtocolVersion && version <= kProtocolVersion) return {};
  return "protocol version " + std::to_string(version) +
         " is not supported (this controller speaks " +
         (kOldestProtocolVersion == kProtocolVersion
              ? std::to_string(kProtocolVersion)
              : std::to_string(kOldestProtocolVersion) + " to " +
                    std::to_string(kProtocolVersion)) +
         "); upgrade the " + (version < kOldestProtocolVersion ? "peer" : "controller");
}

}  // namespace drover::net
