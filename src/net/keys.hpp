#pragma once
// The cluster's key hierarchy. The controller alone holds the master secret (its state dir's
// cluster.key); everything else is derived from it with domain-separated HMAC-SHA256:
//
//   node key(N)    = hex HMAC(master, "node-key|" N)    the one secret host N holds; it proves
//                                                       N's agent and vouches for N's users
//   step signer    = Ed25519 key pair, seed HMAC(master, "step-sign|")
//                                                       signs srun's step credentials; agents
//                                                       get only its public key (in welcome)
//   step key(N, s) = hex HMAC(node key(N), "step-key|" s) srun's link to N for the step whose
//                                                       credential signature is s
//   JWT key        = HMAC(master, "drover-jwt-hs256|")  (ctld/rest_auth.cpp)
//
// So a node's secret lets it be that node and nothing more: it cannot derive another node's
// key, sign a step credential, or mint a token.
#include <string>
#include <string_view>

namespace drover::net {

std::string node_key(std::string_view master, std::string_view node);
std::string step_key(std::string_view node_key, std::string_view cred_sig);

// Reads a key file (mode 0600, as load_or_create_key) that must exist: a node's key is
// issued by the controller's administrator (`drover node-key NAME`), never made up.
std::string load_key(const std::string& path);
// Writes `key` to `path` (mode 0600), refusing to replace a file that is there.
void write_key(const std::string& path, const std::string& key);

// Ed25519 over OpenSSL's EVP interface; keys and signatures travel as hex.
std::string step_public_key(std::string_view master);
std::string step_sign(std::string_view master, std::string_view message);
bool step_verify(std::string_view public_key_hex, std::string_view message,
                 std::string_view signature_hex);

std::string from_hex(std::string_view hex);  // empty for text that is not hex

}  // namespace drover::net
