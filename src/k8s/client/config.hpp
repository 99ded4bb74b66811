#pragma once
// Where the API server is and how to authenticate to it: kubeconfig files and in-cluster
// service-account credentials.

#include <chrono>
#include <map>
#include <string>

namespace drover::k8s {

// Everything a Client needs to reach one API server. PEM material is either a file (read when
// a connection needs it) or inline data (from a kubeconfig's *-data field, base64-decoded).
struct Config {
  std::string server;  // "https://host:port", no trailing slash
  std::string ca_file;
  std::string ca_data;
  bool insecure_skip_tls_verify =
      false;               // only when the kubeconfig says so and the caller allowed it
  std::string token;       // a fixed bearer token
  std::string token_file;  // re-read whenever it changes (service-account token rotation)
  std::string client_cert_file, client_cert_data;
  std::string client_key_file, client_key_data;
  std::string ns = "default";  // the context's (or the pod's) namespace

  std::chrono::milliseconds timeout{30000};          // a whole non-watch request
  std::chrono::milliseconds connect_timeout{10000};  // TCP + TLS handshake
  double qps = 5;  // client-side rate limit (client-go's defaults)
  int burst = 10;
  int max_retries = 5;  // for 429, 5xx and transport errors; 0 = no retries
  std::string user_agent = "drover";
};

struct KubeconfigOptions {
  std::string context;          // empty: the file's current-context
  bool allow_insecure = false;  // accept insecure-skip-tls-verify: true (refused otherwise)
};

// Parses kubeconfig text (YAML or JSON). Relative file paths in it resolve against base_dir
// (the file's directory, as kubectl does). Throws ConfigError.
Config parse_kubeconfig(const std::string& text, const std::string& base_dir,
                        const KubeconfigOptions& opts = {});
Config load_kubeconfig(const std::string& path, const KubeconfigOptions& opts = {});

// The files a pod's service account gets, under `dir` (token, ca.crt, namespace), and the
// server from $KUBERNETES_SERVICE_HOST/PORT unless `server` is given. Throws ConfigError.
inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
Config in_cluster_config(const std::string& dir = kServiceAccountDir,
                         const std::string& server = "");

// What kubectl would use: the explicit path (a --kubeconfig flag) if given, else the first
// file of $KUBECONFIG (colon-separated; files are not merged), else in-cluster credentials
// when $KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
Config default_config(const std::string& explicit_path = "", const KubeconfigOptions& opts = {});

// Decodes standard base64 (the kubeconfig *-data fields); throws ConfigError on bad input.
std::string base64_decode(const std::string& text);

}  // namespace drover::k8s
