#pragma once
// Cluster-key authentication for agent <-> controller links.
//
// Handshake (challenge-response both ways, so neither side trusts an impostor):
//   controller -> agent : hello   {nonce_c}
//   agent -> controller : register{nonce_a, mac = HMAC(K, "agent" | nonce_c | nonce_a | node)}
//   controller -> agent : welcome {mac = HMAC(K, "ctld" | nonce_a | nonce_c)}
// Afterwards every frame carries HMAC(S, direction | sequence | payload) with the session key
// S = HMAC(K, "session" | nonce_c | nonce_a), so frames cannot be forged, replayed or reordered.
#include <string>
#include <string_view>

namespace drover::net {

std::string hmac_sha256(std::string_view key, std::string_view data);  // 32 raw bytes
std::string random_bytes(size_t n);
std::string to_hex(std::string_view raw);
bool constant_time_equal(std::string_view a, std::string_view b);

// Reads the cluster key, creating a fresh random one (mode 0600) if the file is missing.
// Refuses a key file that others can read.
std::string load_or_create_key(const std::string& path);

std::string agent_proof(std::string_view key, std::string_view nonce_c, std::string_view nonce_a,
                        std::string_view node);
std::string controller_proof(std::string_view key, std::string_view nonce_a,
                             std::string_view nonce_c);
std::string session_key(std::string_view key, std::string_view nonce_c, std::string_view nonce_a);

}  // namespace drover::net
