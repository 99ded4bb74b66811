#include "net/jwt.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "net/auth.hpp"

using namespace drover;

TEST(Base64Url, RoundTripsEveryLength) {
  std::string raw;
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(net::base64url_decode(net::base64url_encode(raw)), raw);
    raw += static_cast<char>(i * 37 + 250);
  }
  // RFC 4648 test vectors (without padding) and the URL-safe alphabet.
  EXPECT_EQ(net::base64url_encode("foob"), "Zm9vYg");
  EXPECT_EQ(net::base64url_encode("fooba"), "Zm9vYmE");
  EXPECT_EQ(net::base64url_encode("\xfb\xff"), "-_8");
  EXPECT_FALSE(net::base64url_decode("Zm9v+g"));  // '+' is standard base64, not URL-safe
  EXPECT_FALSE(net::base64url_decode("Zm9vY"));   // no 6-bit tail exists
}

TEST(Jwt, IssuedTokenVerifiesWithTheSlurmClaims) {
  const std::string token = net::jwt_issue("k3y", "alice", 1000, 2800);
  auto check = net::jwt_verify("k3y", token, 1500);
  ASSERT_TRUE(check.ok) << check.error;
  EXPECT_EQ(check.user, "alice");
  EXPECT_EQ(check.expires, 2800);
  // The payload is Slurm's: iat, exp, sun.
  const auto payload = token.substr(token.find('.') + 1, token.rfind('.') - token.find('.') - 1);
  const auto claims = nlohmann::json::parse(*net::base64url_decode(payload));
  EXPECT_EQ(claims, (nlohmann::json{{"iat", 1000}, {"exp", 2800}, {"sun", "alice"}}));
}

TEST(Jwt, ExpiredTokenIsRefused) {
  const std::string token = net::jwt_issue("k3y", "alice", 1000, 2800);
  EXPECT_TRUE(net::jwt_verify("k3y", token, 2799).ok);
  auto check = net::jwt_verify("k3y", token, 2800);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.error, "token expired");
}

TEST(Jwt, TamperedOrForeignTokensAreRefused) {
  const std::string token = net::jwt_issue("k3y", "alice", 1000, 2800);
  EXPECT_EQ(net::jwt_verify("other", token, 1500).error, "bad signature");
  // Another user's name in the payload, the signature kept.
  const auto dot1 = token.find('.'), dot2 = token.rfind('.');
  const std::string forged_claims =
      net::base64url_encode(R"({"exp":2800,"iat":1000,"sun":"root"})");
  const std::string forged = token.substr(0, dot1 + 1) + forged_claims + token.substr(dot2);
  EXPECT_EQ(net::jwt_verify("k3y", forged, 1500).error, "bad signature");
  // One flipped signature character.
  std::string flipped = token;
  flipped.back() = flipped.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(net::jwt_verify("k3y", flipped, 1500).ok);
  // alg "none" with no signature.
  const std::string none =
      net::base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." + forged_claims + ".";
  EXPECT_EQ(net::jwt_verify("k3y", none, 1500).error, "unsupported algorithm");
  for (const char* junk : {"", "abc", "a.b", "a.b.c.d", "!!.??.**"})
    EXPECT_EQ(net::jwt_verify("k3y", junk, 1500).error, "malformed token") << junk;
}

TEST(Jwt, ClaimsMustNameUserAndExpiry) {
  auto sign = [](const std::string& claims) {
    const std::string h = net::base64url_encode(R"({"alg":"HS256","typ":"JWT"})");
    const std::string p = net::base64url_encode(claims);
    return h + "." + p + "." + net::base64url_encode(net::hmac_sha256("k3y", h + "." + p));
  };
  EXPECT_TRUE(net::jwt_verify("k3y", sign(R"({"exp":2000,"sun":"bob"})"), 1500).ok);
  EXPECT_EQ(net::jwt_verify("k3y", sign(R"({"sun":"bob"})"), 1500).error, "token has no expiry");
  EXPECT_EQ(net::jwt_verify("k3y", sign(R"({"exp":2000})"), 1500).error, "token names no user");
  EXPECT_EQ(net::jwt_verify("k3y", sign(R"({"exp":2000,"sun":""})"), 1500).error,
            "token names no user");
}
