#include "k8s/client/config.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "k8s/client/error.hpp"

namespace drover::k8s {
namespace {

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443/
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
- name: devc
  cluster:
    server: "https://127.0.0.1:6443"
    certificate-authority: pki/ca.crt
users:
- name: alice
  user:
    token: secret-token
- name: bob
  user:
    tokenFile: /var/run/token
    client-certificate: certs/bob.crt
    client-key: /abs/bob.key
- name: carol
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
contexts:
- name: dev
  context: {cluster: devc, user: alice, namespace: drover}
- name: prod
  context:
    cluster: prod
    user: bob
- name: carol
  context:
    cluster: prod
    user: carol
)";

TEST(Kubeconfig, CurrentContextPicksClusterUserAndNamespace) {
  Config c = parse_kubeconfig(kTwoContexts, "/home/me/.kube");
  EXPECT_EQ(c.server, "https://127.0.0.1:6443");
  EXPECT_EQ(c.ca_file, "/home/me/.kube/pki/ca.crt");  // relative to the file's directory
  EXPECT_TRUE(c.ca_data.empty());
  EXPECT_EQ(c.token, "secret-token");
  EXPECT_EQ(c.ns, "drover");
  EXPECT_FALSE(c.insecure_skip_tls_verify);
}

TEST(Kubeconfig, ExplicitContextAndInlineData) {
  Config c = parse_kubeconfig(kTwoContexts, "/cfg", {.context = "prod"});
  EXPECT_EQ(c.server, "https://prod.example:6443");  // trailing slash dropped
  EXPECT_EQ(c.ca_data, "-----BEGIN CERTIFICATE-----\n");
  EXPECT_EQ(c.token_file, "/var/run/token");
  EXPECT_EQ(c.client_cert_file, "/cfg/certs/bob.crt");
  EXPECT_EQ(c.client_key_file, "/abs/bob.key");
  EXPECT_EQ(c.ns, "default");

  Config d = parse_kubeconfig(kTwoContexts, "/cfg", {.context = "carol"});
  EXPECT_EQ(d.client_cert_data, "cert");
  EXPECT_EQ(d.client_key_data, "key");
}

TEST(Kubeconfig, JsonIsYamlToo) {
  Config c = parse_kubeconfig(
      R"({"current-context":"a","contexts":[{"name":"a","context":{"cluster":"c","user":"u"}}],
          "clusters":[{"name":"c","cluster":{"server":"https://h:1"}}],"users":[{"name":"u","user":{"token":"t"}}]})",
      "");
  EXPECT_EQ(c.server, "https://h:1");
  EXPECT_EQ(c.token, "t");
}

void expect_config_error(const std::string& text, const std::string& needle,
                         KubeconfigOptions o = {}) {
  try {
    parse_kubeconfig(text, "/x", o);
    FAIL() << "no error; expected one mentioning " << needle;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Kubeconfig, ClearErrors) {
  expect_config_error(kTwoContexts, "no context named \"nope\"", {.context = "nope"});
  expect_config_error("clusters: []\n", "no current-context");
  expect_config_error("current-context: a\ncontexts: [\n", "invalid YAML");
  expect_config_error(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
      "name: c\n  cluster: "
      "{server: 'https://h'}\n",
      "no user named \"u\"");
  expect_config_error(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n  "
      "cluster: {server: "
      "'ftp://h'}\n",
      "not an http(s) URL");
  expect_config_error(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n  "
      "cluster: {server: "
      "'https://h', certificate-authority-data: '!!!'}\n",
      "invalid base64");
  expect_config_error(
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c, user: u}\nclusters:\n- "
      "name: c\n  cluster: "
      "{server: 'https://h'}\nusers:\n- name: u\n  user: {client-certificate: a.crt}\n",
      "without its key");
}

TEST(Kubeconfig, InsecureSkipVerifyRefusedUnlessAllowed) {
  std::string text =
      "current-context: a\ncontexts:\n- name: a\n  context: {cluster: c}\nclusters:\n- name: c\n  "
      "cluster:\n    "
      "server: https://h\n    insecure-skip-tls-verify: true\n";
  expect_config_error(text, "insecure-skip-tls-verify");
  Config c = parse_kubeconfig(text, "", {.context = "", .allow_insecure = true});
  EXPECT_TRUE(c.insecure_skip_tls_verify);
}

TEST(Kubeconfig, Base64) {
  EXPECT_EQ(base64_decode("aGVsbG8="), "hello");
  EXPECT_EQ(base64_decode("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(base64_decode("aA=="), "h");
  EXPECT_THROW(base64_decode("abc"), ConfigError);
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/k8s-config-test.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ + "/" + name) << text;
  }

 private:
  std::string path_;
};

TEST(InClusterConfig, ReadsServiceAccountFiles) {
  TempDir d;
  d.write("token", "tok\n");
  d.write("ca.crt", "pem");
  d.write("namespace", "hpc\n");
  Config c = in_cluster_config(d.path(), "https://10.0.0.1:443");
  EXPECT_EQ(c.server, "https://10.0.0.1:443");
  EXPECT_EQ(c.token_file, d.path() + "/token");
  EXPECT_EQ(c.ca_file, d.path() + "/ca.crt");
  EXPECT_EQ(c.ns, "hpc");

  ::setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
  EXPECT_EQ(in_cluster_config(d.path()).server, "https://[fd00::1]:6443");
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_THROW(in_cluster_config(d.path()), ConfigError);
  ::unsetenv("KUBERNETES_SERVICE_PORT");
}

TEST(InClusterConfig, MissingTokenIsAClearError) {
  TempDir d;
  d.write("ca.crt", "pem");
  try {
    in_cluster_config(d.path(), "https://h");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/token does not exist"), std::string::npos) << e.what();
  }
}

TEST(DefaultConfig, ExplicitPathThenKubeconfigEnv) {
  TempDir d;
  d.write("a",
          "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, "
          "cluster: {server: "
          "'https://a'}}]\n");
  d.write("b",
          "current-context: x\ncontexts: [{name: x, context: {cluster: c}}]\nclusters: [{name: c, "
          "cluster: {server: "
          "'https://b'}}]\n");
  ::setenv("KUBECONFIG", (d.path() + "/missing:" + d.path() + "/b").c_str(), 1);
  EXPECT_EQ(default_config().server, "https://b");
  EXPECT_EQ(default_config(d.path() + "/a").server, "https://a");
  ::unsetenv("KUBECONFIG");
  EXPECT_THROW(default_config(d.path() + "/none"), ConfigError);
}

}  // namespace
}  // namespace drover::k8s
