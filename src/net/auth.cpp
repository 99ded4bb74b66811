#include "net/auth.hpp"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "net/fd_io.hpp"

namespace drover::net {

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &len) == nullptr)
    throw std::runtime_error("HMAC-SHA256 failed");
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1)
    throw std::runtime_error("no randomness available");
  return out;
}

std::string to_hex(std::string_view raw) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string load_or_create_key(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string key = to_hex(random_bytes(32));
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot create key file " + path);
    bool ok = write_fully(fd, key) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) throw std::runtime_error("cannot write key file " + path);
    return key;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (st.st_mode & 077) != 0) {
    ::close(fd);
    throw std::runtime_error("key file " + path + " must not be accessible to others (mode 0600)");
  }
  std::string key(256, '\0');
  ssize_t n = ::read(fd, key.data(), key.size());
  ::close(fd);
  if (n <= 0) throw std::runtime_error("key file " + path + " is empty");
  key.resize(static_cast<size_t>(n));
  while (!key.empty() && (key.back() == '\n' || key.back() == ' ')) key.pop_back();
  if (key.size() < 16) throw std::runtime_error("key file " + path + " holds too short a key");
  return key;
}

namespace {
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (auto p : parts) {
    s += p;
    s += '|';
  }
  return s;
}
}  // namespace

std::string agent_proof(std::string_view key, std::string_view nonce_c, std::string_view nonce_a,
                        std::string_view node) {
  return to_hex(hmac_sha256(key, joined({"agent", nonce_c, nonce_a, node})));
}

std::string controller_proof(std::string_view key, std::string_view nonce_a,
                             std::string_view nonce_c, std::string_view step_pub) {
  return to_hex(hmac_sha256(key, joined({"ctld", nonce_a, nonce_c, step_pub})));
}

std::string session_key(std::string_view key, std::string_view nonce_c, std::string_view nonce_a) {
  return hmac_sha256(key, joined({"session", nonce_c, nonce_a}));
}

std::string frame_mac(std::string_view key, char direction, uint64_t seq,
                      std::string_view payload) {
  std::string s;
  s.reserve(9 + payload.size());
  s += direction;
  for (int i = 7; i >= 0; --i) s += static_cast<char>(seq >> (i * 8));
  s += payload;
  return hmac_sha256(key, s);
}

}  // namespace drover::net
