#include "net/keys.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "net/auth.hpp"
#include "net/fd_io.hpp"

namespace drover::net {
namespace {
using PKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

PKey signing_key(std::string_view master) {
  const std::string seed = hmac_sha256(master, "step-sign|");
  PKey k(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr,
                                      reinterpret_cast<const unsigned char*>(seed.data()),
                                      seed.size()),
         EVP_PKEY_free);
  if (!k) throw std::runtime_error("cannot make the Ed25519 step-signing key");
  return k;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) return {};
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return {};
    out += static_cast<char>(hi * 16 + lo);
  }
  return out;
}

std::string node_key(std::string_view master, std::string_view node) {
  return to_hex(hmac_sha256(master, std::string("node-key|") + std::string(node)));
}

std::string step_key(std::string_view node_key, std::string_view cred_sig) {
  return to_hex(hmac_sha256(node_key, std::string("step-key|") + std::string(cred_sig)));
}

std::string load_key(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0)
    throw std::runtime_error("key file " + path +
                             " is missing (the controller's administrator makes it: "
                             "drover node-key NAME)");
  return load_or_create_key(path);
}

void write_key(const std::string& path, const std::string& key) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot create key file " + path + ": " + std::strerror(errno));
  const std::string text = key + "\n";
  const bool ok = write_fully(fd, text) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write key file " + path);
}

std::string step_public_key(std::string_view master) {
  PKey k = signing_key(master);
  unsigned char pub[32];
  size_t len = sizeof pub;
  if (EVP_PKEY_get_raw_public_key(k.get(), pub, &len) != 1)
    throw std::runtime_error("cannot read the Ed25519 public key");
  return to_hex(std::string_view(reinterpret_cast<char*>(pub), len));
}

std::string step_sign(std::string_view master, std::string_view message) {
  PKey k = signing_key(master);
  MdCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  unsigned char sig[64];
  size_t len = sizeof sig;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, k.get()) != 1 ||
      EVP_DigestSign(ctx.get(), sig, &len, reinterpret_cast<const unsigned char*>(message.data()),
                     message.size()) != 1)
    throw std::runtime_error("Ed25519 signing failed");
  return to_hex(std::string_view(reinterpret_cast<char*>(sig), len));
}

bool step_verify(std::string_view public_key_hex, std::string_view message,
                 std::string_view signature_hex) {
  const std::string pub = from_hex(public_key_hex), sig = from_hex(signature_hex);
  if (pub.size() != 32 || sig.size() != 64) return false;
  PKey k(
      EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                  reinterpret_cast<const unsigned char*>(pub.data()), pub.size()),
      EVP_PKEY_free);
  MdCtx ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!k || !ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, k.get()) != 1)
    return false;
  return EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                          reinterpret_cast<const unsigned char*>(message.data()),
                          message.size()) == 1;
}

}  // namespace drover::net
