#pragma once
// Node-key authentication for agent <-> controller links. K is the node's own key (net/keys.hpp:
// the agent reads it from its key file, the controller derives it from the node's name), so an
// agent proves which node it is.
//
// Handshake (challenge-response both ways, so neither side trusts an impostor):
//   controller -> agent : hello   {nonce_c, version}
//   agent -> controller : register{nonce_a, node, version,
//                                  mac = HMAC(K, "agent" | nonce_c | nonce_a | node)}
//   controller -> agent : welcome {step_pub, mac = HMAC(K, "ctld" | nonce_a | nonce_c | step_pub)}
// step_pub is the public key step credentials are checked with; the MAC vouches for it.
// Afterwards every frame carries HMAC(S, direction | sequence | payload) with the session key
// S = HMAC(K, "session" | nonce_c | nonce_a), so frames cannot be forged, replayed or reordered.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace drover::net {

std::string hmac_sha256(std::string_view key, std::string_view data);  // 32 raw bytes
std::string random_bytes(size_t n);
std::string to_hex(std::string_view raw);
bool constant_time_equal(std::string_view a, std::string_view b);

// The MAC every frame of an authenticated link carries before its payload (Connection and the
// commands' FramedClient alike): HMAC(key, direction | sequence, 8 bytes big endian | payload).
inline constexpr size_t kFrameMacSize = 32;
std::string frame_mac(std::string_view key, char direction, uint64_t seq, std::string_view payload);

// Reads a key file, creating a fresh random one (mode 0600) if the file is missing.
// Refuses a key file that others can read.
std::string load_or_create_key(const std::string& path);

std::string agent_proof(std::string_view key, std::string_view nonce_c, std::string_view nonce_a,
                        std::string_view node);
std::string controller_proof(std::string_view key, std::string_view nonce_a,
                             std::string_view nonce_c, std::string_view step_pub);
std::string session_key(std::string_view key, std::string_view nonce_c, std::string_view nonce_a);

}  // namespace drover::net
