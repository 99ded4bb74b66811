#include "net/jwt.hpp"

#include <array>
#include <nlohmann/json.hpp>

#include "net/auth.hpp"

namespace drover::net {
namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

constexpr std::array<int8_t, 256> decode_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr auto kDecode = decode_table();

std::string signing_input(std::string_view header, std::string_view payload) {
  std::string s(header);
  s += '.';
  s += payload;
  return s;
}
}  // namespace

std::string base64url_encode(std::string_view raw) {
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(raw[k]));
  };
  for (; i + 3 <= raw.size(); i += 3) {
    const uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (raw.size() - i == 1) {
    const uint32_t v = byte(i) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (raw.size() - i == 2) {
    const uint32_t v = byte(i) << 16 | byte(i + 1) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

std::optional<std::string> base64url_decode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = kDecode[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    acc = acc << 6 | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string jwt_issue(std::string_view key, std::string_view user, int64_t issued_at,
                      int64_t expires_at) {
  const nlohmann::json header = {{"alg", "HS256"}, {"typ", "JWT"}};
  const nlohmann::json claims = {{"exp", expires_at}, {"iat", issued_at}, {"sun", user}};
  const std::string h = base64url_encode(header.dump()), p = base64url_encode(claims.dump());
  return h + "." + p + "." + base64url_encode(hmac_sha256(key, signing_input(h, p)));
}

JwtCheck jwt_verify(std::string_view key, std::string_view token, int64_t now) {
  JwtCheck r;
  const auto dot1 = token.find('.');
  const auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    r.error = "malformed token";
    return r;
  }
  const auto h = token.substr(0, dot1), p = token.substr(dot1 + 1, dot2 - dot1 - 1),
             s = token.substr(dot2 + 1);
  const auto header_text = base64url_decode(h), claims_text = base64url_decode(p),
             sig = base64url_decode(s);
  if (!header_text || !claims_text || !sig) {
    r.error = "malformed token";
    return r;
  }
  const auto header = nlohmann::json::parse(*header_text, nullptr, false);
  const auto claims = nlohmann::json::parse(*claims_text, nullptr, false);
  if (!header.is_object() || !claims.is_object()) {
    r.error = "malformed token";
    return r;
  }
  // Only the algorithm we sign with: a token naming "none" or an RSA algorithm is not ours.
  if (header.value("alg", "") != "HS256") {
    r.error = "unsupported algorithm";
    return r;
  }
  if (!constant_time_equal(*sig, hmac_sha256(key, signing_input(h, p)))) {
    r.error = "bad signature";
    return r;
  }
  const auto exp = claims.find("exp");
  const auto sun = claims.find("sun");
  if (exp == claims.end() || !exp->is_number_integer()) {
    r.error = "token has no expiry";
    return r;
  }
  if (sun == claims.end() || !sun->is_string() || sun->get<std::string>().empty()) {
    r.error = "token names no user";
    return r;
  }
  r.expires = exp->get<int64_t>();
  if (r.expires <= now) {
    r.error = "token expired";
    return r;
  }
  r.user = sun->get<std::string>();
  r.ok = true;
  return r;
}

}  // namespace drover::net
