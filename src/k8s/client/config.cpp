#include "k8s/client/config.hpp"

#include <openssl/evp.h>
#include <yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "k8s/client/error.hpp"

namespace drover::k8s {

namespace {

using json = nlohmann::json;

// YAML -> JSON with libyaml's event parser: mappings, sequences and scalars; plain true/false
// become booleans, everything else stays a string (kubeconfig has no numeric fields we read).
class YamlReader {
 public:
  explicit YamlReader(const std::string& text) {
    yaml_parser_initialize(&p_);
    yaml_parser_set_input_string(&p_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~YamlReader() { yaml_parser_delete(&p_); }
  YamlReader(const YamlReader&) = delete;
  YamlReader& operator=(const YamlReader&) = delete;

  json document() {
    for (;;) {
      Event ev = next();
      switch (ev.e.type) {
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_START_EVENT:
          continue;
        case YAML_STREAM_END_EVENT:
          return json::object();  // an empty file
        default:
          return node(ev);
      }
    }
  }

 private:
  struct Event {
    yaml_event_t e{};
    ~Event() { yaml_event_delete(&e); }
  };

  Event next() {
    Event ev;
    if (!yaml_parser_parse(&p_, &ev.e)) {
      throw ConfigError("kubeconfig: invalid YAML at line " +
                        std::to_string(p_.problem_mark.line + 1) + ": " +
                        (p_.problem ? p_.problem : "parse error"));
    }
    return ev;
  }

  json node(Event& ev) {
    switch (ev.e.type) {
      case YAML_SCALAR_EVENT: {
        std::string v(reinterpret_cast<const char*>(ev.e.data.scalar.value),
                      ev.e.data.scalar.length);
        if (ev.e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
          if (v == "true" || v == "True") return true;
          if (v == "false" || v == "False") return false;
          if (v == "null" || v == "~" || v.empty()) return nullptr;
        }
        return v;
      }
      case YAML_SEQUENCE_START_EVENT: {
        json arr = json::array();
        for (;;) {
          Event item = next();
          if (item.e.type == YAML_SEQUENCE_END_EVENT) return arr;
          arr.push_back(node(item));
        }
      }
      case YAML_MAPPING_START_EVENT: {
        json obj = json::object();
        for (;;) {
          Event k = next();
          if (k.e.type == YAML_MAPPING_END_EVENT) return obj;
          json key = node(k);
          if (!key.is_string()) throw ConfigError("kubeconfig: mapping keys must be strings");
          Event v = next();
          obj[key.get<std::string>()] = node(v);
        }
      }
      case YAML_ALIAS_EVENT:
        throw ConfigError("kubeconfig: YAML aliases are not supported");
      default:
        throw ConfigError("kubeconfig: unexpected YAML structure");
    }
  }

  yaml_parser_t p_{};
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string str(const json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains(key) || obj[key].is_null()) return "";
  if (!obj[key].is_string())
    throw ConfigError(std::string("kubeconfig: field ") + key + " must be a string");
  return obj[key].get<std::string>();
}

// The entry named `name` in a kubeconfig list such as clusters: [{name, cluster: {...}}].
json named(const json& doc, const char* list, const char* inner, const std::string& name) {
  if (doc.contains(list) && doc[list].is_array()) {
    for (const auto& e : doc[list]) {
      if (e.is_object() && e.value("name", "") == name) {
        return e.contains(inner) && e[inner].is_object() ? e[inner] : json::object();
      }
    }
  }
  throw ConfigError(std::string("kubeconfig: no ") + inner + " named \"" + name + "\"");
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).string();
}

std::string trim(std::string s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.pop_back();
  size_t b = s.find_first_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b);
}

}  // namespace

std::string base64_decode(const std::string& text) {
  std::string in;
  in.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') in += c;
  }
  if (in.size() % 4 != 0) throw ConfigError("kubeconfig: invalid base64 data");
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) throw ConfigError("kubeconfig: invalid base64 data");
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') ++pad;
  if (in.size() > 1 && in[in.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

Config parse_kubeconfig(const std::string& text, const std::string& base_dir,
                        const KubeconfigOptions& opts) {
  json doc = YamlReader(text).document();
  if (!doc.is_object()) throw ConfigError("kubeconfig: the document is not a mapping");
  std::string ctx_name = opts.context.empty() ? str(doc, "current-context") : opts.context;
  if (ctx_name.empty()) throw ConfigError("kubeconfig: no current-context and no context given");
  json ctx = named(doc, "contexts", "context", ctx_name);
  std::string cluster_name = str(ctx, "cluster");
  if (cluster_name.empty())
    throw ConfigError("kubeconfig: context \"" + ctx_name + "\" names no cluster");
  json cluster = named(doc, "clusters", "cluster", cluster_name);
  std::string user_name = str(ctx, "user");
  json user = user_name.empty() ? json::object() : named(doc, "users", "user", user_name);

  Config c;
  c.server = str(cluster, "server");
  if (c.server.empty())
    throw ConfigError("kubeconfig: cluster \"" + cluster_name + "\" has no server");
  while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
  if (c.server.rfind("https://", 0) != 0 && c.server.rfind("http://", 0) != 0) {
    throw ConfigError("kubeconfig: server \"" + c.server + "\" is not an http(s) URL");
  }
  c.ca_file = resolve(str(cluster, "certificate-authority"), base_dir);
  if (std::string d = str(cluster, "certificate-authority-data"); !d.empty())
    c.ca_data = base64_decode(d);
  if (cluster.contains("insecure-skip-tls-verify") && cluster["insecure-skip-tls-verify"] == true) {
    if (!opts.allow_insecure) {
      throw ConfigError(
          "kubeconfig: cluster \"" + cluster_name +
          "\" sets insecure-skip-tls-verify, which is refused unless explicitly allowed");
    }
    c.insecure_skip_tls_verify = true;
  }
  c.token = str(user, "token");
  c.token_file = resolve(str(user, "tokenFile"), base_dir);
  c.client_cert_file = resolve(str(user, "client-certificate"), base_dir);
  if (std::string d = str(user, "client-certificate-data"); !d.empty())
    c.client_cert_data = base64_decode(d);
  c.client_key_file = resolve(str(user, "client-key"), base_dir);
  if (std::string d = str(user, "client-key-data"); !d.empty())
    c.client_key_data = base64_decode(d);
  if (user.contains("exec") || user.contains("auth-provider")) {
    throw ConfigError("kubeconfig: user \"" + user_name +
                      "\" uses exec/auth-provider plugins, which are not supported");
  }
  bool has_cert = !c.client_cert_file.empty() || !c.client_cert_data.empty();
  bool has_key = !c.client_key_file.empty() || !c.client_key_data.empty();
  if (has_cert != has_key)
    throw ConfigError("kubeconfig: user \"" + user_name +
                      "\" has a client certificate without its key or the reverse");
  if (std::string ns = str(ctx, "namespace"); !ns.empty()) c.ns = ns;
  return c;
}

Config load_kubeconfig(const std::string& path, const KubeconfigOptions& opts) {
  std::string text = read_file(path);
  try {
    return parse_kubeconfig(text, std::filesystem::path(path).parent_path().string(), opts);
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

Config in_cluster_config(const std::string& dir, const std::string& server) {
  Config c;
  if (!server.empty()) {
    c.server = server;
  } else {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port) {
      throw ConfigError(
          "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
    }
    std::string h = host;
    if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
    c.server = "https://" + h + ":" + port;
  }
  c.token_file = dir + "/token";
  c.ca_file = dir + "/ca.crt";
  // Fail now, with a clear message, rather than on the first request.
  if (!std::filesystem::exists(c.token_file))
    throw ConfigError("in-cluster: " + c.token_file + " does not exist");
  if (!std::filesystem::exists(c.ca_file))
    throw ConfigError("in-cluster: " + c.ca_file + " does not exist");
  if (std::filesystem::exists(dir + "/namespace")) {
    std::string ns = trim(read_file(dir + "/namespace"));
    if (!ns.empty()) c.ns = ns;
  }
  return c;
}

Config default_config(const std::string& explicit_path, const KubeconfigOptions& opts) {
  if (!explicit_path.empty()) return load_kubeconfig(explicit_path, opts);
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string list = env;
    size_t start = 0;
    for (;;) {
      size_t colon = list.find(':', start);
      std::string p =
          list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!p.empty() && std::filesystem::exists(p)) return load_kubeconfig(p, opts);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* host = std::getenv("KUBERNETES_SERVICE_HOST"); host && *host)
    return in_cluster_config();
  const char* home = std::getenv("HOME");
  std::string p = std::string(home ? home : "") + "/.kube/config";
  if (!home || !std::filesystem::exists(p)) {
    throw ConfigError(
        "no Kubernetes configuration: no --kubeconfig, $KUBECONFIG, in-cluster environment or "
        "~/.kube/config");
  }
  return load_kubeconfig(p, opts);
}

}  // namespace drover::k8s
