#include "net/user_cred.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "net/auth.hpp"
#include "net/keys.hpp"
#include "net/protocol.hpp"

using namespace drover::net;

namespace {
const std::string kMaster = "master-secret-0123456789abcdef";

UserCred cred_for(const std::string& host, int64_t expires, uint32_t uid = 1000) {
  UserCred c;
  c.uid = uid;
  c.gid = 100;
  c.host = host;
  c.nonce = to_hex(random_bytes(16));
  c.expires = expires;
  return c;
}
}  // namespace

TEST(Keys, NodeKeysAreDerivedPerNameAndDifferFromTheMaster) {
  EXPECT_EQ(node_key(kMaster, "node1"), node_key(kMaster, "node1"));
  EXPECT_NE(node_key(kMaster, "node1"), node_key(kMaster, "node2"));
  EXPECT_NE(node_key(kMaster, "node1"), node_key("other-master-0123456789", "node1"));
  EXPECT_EQ(node_key(kMaster, "node1").size(), 64u);
  EXPECT_NE(step_key(node_key(kMaster, "node1"), "sig"),
            step_key(node_key(kMaster, "node2"), "sig"));
}

TEST(Keys, StepSignaturesVerifyWithThePublicKeyOnly) {
  const std::string pub = step_public_key(kMaster);
  EXPECT_EQ(pub.size(), 64u);
  EXPECT_EQ(pub, step_public_key(kMaster));  // derived, so a restart keeps it
  const std::string sig = step_sign(kMaster, "{\"job_id\":1}");
  EXPECT_EQ(sig.size(), 128u);
  EXPECT_TRUE(step_verify(pub, "{\"job_id\":1}", sig));
  EXPECT_FALSE(step_verify(pub, "{\"job_id\":2}", sig));
  std::string bad = sig;
  bad[0] = bad[0] == '0' ? '1' : '0';
  EXPECT_FALSE(step_verify(pub, "{\"job_id\":1}", bad));
  EXPECT_FALSE(step_verify(step_public_key("another-master-0123456789"), "{\"job_id\":1}", sig));
  // A node's key (or the old shared HMAC scheme) makes no signature the agents take.
  const std::string hmac = to_hex(hmac_sha256(node_key(kMaster, "node1"), "{\"job_id\":1}"));
  EXPECT_FALSE(step_verify(pub, "{\"job_id\":1}", hmac));
  EXPECT_FALSE(step_verify(pub, "{\"job_id\":1}", "zz"));
  EXPECT_FALSE(step_verify("not hex", "{\"job_id\":1}", sig));
}

TEST(UserCred, IssuedCredentialVerifiesOnceWithItsSessionKey) {
  ReplayCache cache;
  const int64_t now = 1'000'000;
  const SignedUserCred s =
      issue_user_cred(node_key(kMaster, "login1"), cred_for("login1", now + kUserCredLifetime));
  UserCredCheck r = verify_user_cred(kMaster, s.text, s.sig, now, cache);
  ASSERT_TRUE(r.cred) << r.error;
  EXPECT_EQ(r.cred->uid, 1000u);
  EXPECT_EQ(r.cred->gid, 100u);
  EXPECT_EQ(r.cred->host, "login1");
  EXPECT_EQ(r.session_key, s.session_key);
  r = verify_user_cred(kMaster, s.text, s.sig, now + 1, cache);
  EXPECT_FALSE(r.cred);
  EXPECT_EQ(r.error, "credential replayed");
}

TEST(UserCred, ForgedAlteredOrOtherHostsCredentialsAreRefused) {
  ReplayCache cache;
  const int64_t now = 1'000'000;
  // Signed with node1's key but claiming to come from node2.
  SignedUserCred s =
      issue_user_cred(node_key(kMaster, "node1"), cred_for("node2", now + kUserCredLifetime));
  EXPECT_EQ(verify_user_cred(kMaster, s.text, s.sig, now, cache).error,
            "invalid credential signature");
  // A uid changed after signing.
  s = issue_user_cred(node_key(kMaster, "node1"), cred_for("node1", now + 60, 1000));
  nlohmann::json j = nlohmann::json::parse(s.text);
  j["uid"] = 0;
  EXPECT_EQ(verify_user_cred(kMaster, j.dump(), s.sig, now, cache).error,
            "invalid credential signature");
  // Signed with a key not derived from this controller's master.
  s = issue_user_cred(node_key("some-other-master-0123", "node1"), cred_for("node1", now + 60));
  EXPECT_EQ(verify_user_cred(kMaster, s.text, s.sig, now, cache).error,
            "invalid credential signature");
  EXPECT_EQ(verify_user_cred(kMaster, "not json", "00", now, cache).error, "malformed credential");
  EXPECT_EQ(verify_user_cred(kMaster, R"({"v":1,"uid":-1,"gid":0,"host":"a","nonce":"x"})", "00",
                             now, cache)
                .error,
            "malformed credential");
  EXPECT_EQ(cache.size(), 0u);  // nothing refused took a place
}

TEST(UserCred, ExpiryAndLifetimeAreChecked) {
  ReplayCache cache;
  const int64_t now = 1'000'000;
  const std::string key = node_key(kMaster, "node1");
  SignedUserCred s = issue_user_cred(key, cred_for("node1", now - kUserCredClockSkew - 1));
  EXPECT_EQ(verify_user_cred(kMaster, s.text, s.sig, now, cache).error, "credential expired");
  // Within the allowed clock skew it still passes.
  s = issue_user_cred(key, cred_for("node1", now - kUserCredClockSkew + 1));
  EXPECT_TRUE(verify_user_cred(kMaster, s.text, s.sig, now, cache).cred);
  s = issue_user_cred(key, cred_for("node1", now + 3600));
  EXPECT_EQ(verify_user_cred(kMaster, s.text, s.sig, now, cache).error,
            "credential lifetime too long");
}

TEST(ReplayCache, ForgetsExpiredEntriesAndIsBounded) {
  ReplayCache cache(2);
  EXPECT_EQ(cache.take("h", "n1", 100, 50), ReplayCache::Taken);
  EXPECT_EQ(cache.take("h", "n1", 100, 60), ReplayCache::Replayed);
  EXPECT_EQ(cache.take("other", "n1", 100, 60), ReplayCache::Taken);  // nonces are per host
  EXPECT_EQ(cache.take("h", "n2", 100, 60), ReplayCache::Full);
  EXPECT_EQ(cache.size(), 2u);
  // Once expired, entries go, and the cache has room again.
  EXPECT_EQ(cache.take("h", "n2", 200, 101), ReplayCache::Taken);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(Protocol, ThisVersionAndThePreviousAreSpokenOthersRefusedSayingWhy) {
  EXPECT_EQ(protocol_refusal(kProtocolVersion), "");
  EXPECT_EQ(protocol_refusal(kOldestProtocolVersion), "");
  EXPECT_GE(kOldestProtocolVersion, kProtocolVersion - 1);
  const std::string old = protocol_refusal(0);  // a peer from before versions
  EXPECT_NE(old.find("protocol version 0 is not supported"), std::string::npos) << old;
  EXPECT_NE(old.find("upgrade the peer"), std::string::npos) << old;
  const std::string newer = protocol_refusal(kProtocolVersion + 1);
  EXPECT_NE(newer.find("upgrade the controller"), std::string::npos) << newer;
}
