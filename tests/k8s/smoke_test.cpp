// Smoke test against a real kube-apiserver (tests/k8s/env/up), using only
// libcurl and nlohmann-json: the seed of drover's own Kubernetes client.
//
// It needs DROVER_K8S_SERVER, DROVER_K8S_TOKEN and DROVER_K8S_CA (written by
// env/up into DIR/env; tests/k8s/run-smoke sets them). Without them every test
// is skipped, unless DROVER_K8S_REQUIRED=1, in which case they fail.

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Response {
  long status = 0;
  std::string body;

  json js() const { return json::parse(body, nullptr, /*allow_exceptions=*/false); }
};

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A deliberately small HTTPS client for the Kubernetes REST API.
class Kube {
 public:
  Kube(std::string server, std::string token, std::string ca)
      : server_(std::move(server)), auth_("Authorization: Bearer " + std::move(token)), ca_(std::move(ca)) {}

  Response request(const std::string& method, const std::string& path, const json* body = nullptr,
                   const std::string& content_type = "application/json") const {
    Response r;
    std::string payload = body ? body->dump() : std::string();
    CURL* h = setup(path, &r.body, &append_cb);
    curl_slist* hdrs = headers(content_type);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    if (body) {
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.c_str());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
    }
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 30L);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK) {
      throw std::runtime_error(method + " " + path + ": " + curl_easy_strerror(rc));
    }
    return r;
  }

  Response get(const std::string& path) const { return request("GET", path); }
  Response post(const std::string& path, const json& body) const { return request("POST", path, &body); }
  Response put(const std::string& path, const json& body) const { return request("PUT", path, &body); }
  Response del(const std::string& path) const { return request("DELETE", path); }

  // Streams a watch (one JSON event per line) and hands each event to on_event
  // until it returns false, the server ends the stream, or timeout passes.
  // Returns the HTTP status; non-JSON lines and error bodies end up in *rest.
  long watch(const std::string& path, const std::function<bool(const json&)>& on_event,
             std::chrono::seconds timeout, std::string* rest = nullptr) const {
    WatchState st{on_event, {}, false};
    CURL* h = setup(path, &st, &watch_cb);
    curl_slist* hdrs = headers("application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, static_cast<long>(timeout.count()));
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    if (rest) *rest = st.buf;
    if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && st.stopped) && rc != CURLE_OPERATION_TIMEDOUT) {
      throw std::runtime_error("watch " + path + ": " + curl_easy_strerror(rc));
    }
    return status;
  }

 private:
  struct WatchState {
    const std::function<bool(const json&)>& on_event;
    std::string buf;
    bool stopped;
  };

  static size_t append_cb(char* data, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
  }

  static size_t watch_cb(char* data, size_t size, size_t n, void* p) {
    auto* st = static_cast<WatchState*>(p);
    st->buf.append(data, size * n);
    for (size_t nl; (nl = st->buf.find('\n')) != std::string::npos;) {
      std::string line = st->buf.substr(0, nl);
      st->buf.erase(0, nl + 1);
      json ev = json::parse(line, nullptr, false);
      if (ev.is_discarded()) continue;
      if (!st->on_event(ev)) {
        st->stopped = true;
        return 0;  // abort the transfer
      }
    }
    return size * n;
  }

  CURL* setup(const std::string& path, void* sink, size_t (*cb)(char*, size_t, size_t, void*)) const {
    CURL* h = curl_easy_init();
    if (!h) throw std::runtime_error("curl_easy_init failed");
    std::string url = server_ + path;
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_CAINFO, ca_.c_str());
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
    return h;
  }

  curl_slist* headers(const std::string& content_type) const {
    curl_slist* l = nullptr;
    l = curl_slist_append(l, auth_.c_str());
    l = curl_slist_append(l, "Accept: application/json");
    l = curl_slist_append(l, ("Content-Type: " + content_type).c_str());
    return l;
  }

  std::string server_, auth_, ca_;
};

std::string random_suffix() {
  static std::mt19937_64 rng{std::random_device{}()};
  static const char* alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 6; ++i) s += alphabet[rng() % 36];
  return s;
}

// Polls fn until it returns true or the deadline passes.
bool eventually(const std::function<bool()>& fn, std::chrono::milliseconds timeout = 30s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return fn();
}

// The HTTP status of an expired watch: either the response itself, or (the
// usual case once the request has been admitted) a Status object in an ERROR event.
long expired_watch_code(const Kube& kube, const std::string& path, std::string* message) {
  long code = 0;
  std::string rest;
  long http = kube.watch(
      path,
      [&](const json& ev) {
        if (ev.value("type", "") == "ERROR") {
          code = ev["object"].value("code", 0L);
          *message = ev["object"].value("message", "");
        }
        return false;  // the first event decides
      },
      15s, &rest);
  if (http != 200) {
    json st = json::parse(rest, nullptr, false);
    if (!st.is_discarded()) *message = st.value("message", "");
    return http;
  }
  return code;
}

class K8sSmoke : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string server = env_or_empty("DROVER_K8S_SERVER");
    std::string token = env_or_empty("DROVER_K8S_TOKEN");
    std::string ca = env_or_empty("DROVER_K8S_CA");
    if (server.empty() || token.empty() || ca.empty()) {
      if (env_or_empty("DROVER_K8S_REQUIRED") == "1") {
        FAIL() << "DROVER_K8S_SERVER/_TOKEN/_CA are not set but DROVER_K8S_REQUIRED=1";
      }
      GTEST_SKIP() << "no Kubernetes test environment (run tests/k8s/run-smoke, or source DIR/env "
                      "after tests/k8s/env/up DIR)";
    }
    kube_ = std::make_unique<Kube>(server, token, ca);
    ns_ = "drover-smoke-" + random_suffix();
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}};
    Response r = kube_->post("/api/v1/namespaces", ns);
    ASSERT_EQ(r.status, 201) << r.body;
    // Pods need the namespace's default ServiceAccount (kube-controller-manager
    // creates it) unless the environment runs without it.
    eventually([&] { return kube_->get(nspath() + "/serviceaccounts/default").status == 200; }, 30s);
  }

  void TearDown() override {
    if (kube_ && !ns_.empty()) {
      kube_->del("/api/v1/namespaces/" + ns_);
      if (!cleanup_nodes_.empty()) {
        // Let the fakelet finish the namespace's pods before their node goes;
        // otherwise only the pod garbage collector (after ~40s) can.
        eventually([&] { return kube_->get("/api/v1/namespaces/" + ns_).status == 404; }, 30s);
      }
      for (const auto& n : cleanup_nodes_) kube_->del("/api/v1/nodes/" + n);
    }
  }

  std::string nspath() const { return "/api/v1/namespaces/" + ns_; }

  // A fake Node the fakelet acts for (it manages Nodes with this label).
  std::string create_fake_node() {
    std::string name = "smoke-" + random_suffix();
    json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{"fakelet.drover.test/managed", "true"}}}}},
                 {"status",
                  {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "4"}}},
                   {"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}, {"nvidia.com/gpu", "4"}}},
                   {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
    Response r = kube_->post("/api/v1/nodes", node);
    EXPECT_EQ(r.status, 201) << r.body;
    cleanup_nodes_.push_back(name);
    return name;
  }

  std::unique_ptr<Kube> kube_;
  std::string ns_;
  std::vector<std::string> cleanup_nodes_;
};

TEST_F(K8sSmoke, ServerIsRealKubernetes) {
  Response r = kube_->get("/version");
  ASSERT_EQ(r.status, 200) << r.body;
  json v = r.js();
  EXPECT_EQ(v.value("major", ""), "1");
  EXPECT_EQ(v.value("gitVersion", "").rfind("v1.", 0), 0u) << r.body;
  EXPECT_EQ(kube_->get("/readyz").status, 200);
}

TEST_F(K8sSmoke, CustomResourceDefinitionLifecycle) {
  const std::string group = "smoke.drover.test";
  const std::string plural = "jobs" + random_suffix();
  const std::string crd_name = plural + "." + group;
  json schema = {
      {"type", "object"},
      {"properties",
       {{"spec",
         {{"type", "object"},
          {"required", {"replicas"}},
          {"properties", {{"replicas", {{"type", "integer"}, {"minimum", 1}}}, {"cmd", {{"type", "string"}}}}}}},
        {"status", {{"type", "object"}, {"properties", {{"state", {{"type", "string"}}}}}}}}}};
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", crd_name}}},
              {"spec",
               {{"group", group},
                {"scope", "Namespaced"},
                {"names", {{"plural", plural}, {"singular", plural.substr(0, plural.size() - 1)}, {"kind", "SmokeJob"}}},
                {"versions",
                 {{{"name", "v1"},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", json::object()}}},
                   {"schema", {{"openAPIV3Schema", schema}}}}}}}}};

  // An RV from before the CRD exists: the custom resource's watch cache will
  // start after it, so a watch from here must be answered with 410 Gone.
  Response before = kube_->get(nspath());
  ASSERT_EQ(before.status, 200);
  std::string old_rv = before.js()["metadata"]["resourceVersion"];

  const std::string crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  Response r = kube_->post(crd_path, crd);
  ASSERT_EQ(r.status, 201) << r.body;
  struct DeleteCrd {
    const Kube& k;
    std::string p;
    ~DeleteCrd() { k.del(p); }
  } delete_crd{*kube_, crd_path + "/" + crd_name};

  // Wait for Established by watching the CRD itself.
  bool established = false;
  kube_->watch(
      crd_path + "?watch=1&fieldSelector=metadata.name%3D" + crd_name,
      [&](const json& ev) {
        for (const auto& c : ev["object"]["status"].value("conditions", json::array())) {
          if (c.value("type", "") == "Established" && c.value("status", "") == "True") established = true;
        }
        return !established;
      },
      60s);
  ASSERT_TRUE(established) << "CRD " << crd_name << " never became Established";

  const std::string cr_path = "/apis/" + group + "/v1/namespaces/" + ns_ + "/" + plural;
  auto cr = [&](const std::string& name, json spec) {
    return json{{"apiVersion", group + "/v1"}, {"kind", "SmokeJob"}, {"metadata", {{"name", name}}}, {"spec", spec}};
  };
  // The discovery of a just-established CRD can lag a little.
  ASSERT_TRUE(eventually([&] { return kube_->get(cr_path).status == 200; }, 30s));

  // Schema validation happens in the apiserver: 422 with a field error.
  r = kube_->post(cr_path, cr("bad", {{"replicas", 0}}));
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("spec.replicas"), std::string::npos) << r.body;
  r = kube_->post(cr_path, cr("bad2", {{"cmd", "x"}}));
  EXPECT_EQ(r.status, 422) << r.body;

  r = kube_->post(cr_path, cr("good", {{"replicas", 2}, {"cmd", "sleep 1"}}));
  ASSERT_EQ(r.status, 201) << r.body;
  json obj = r.js();

  // Status subresource: status written through the main resource is dropped,
  // through /status it sticks (and spec written through /status is dropped).
  obj["status"] = {{"state", "Running"}};
  r = kube_->put(cr_path + "/good", obj);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(r.js().contains("status")) << r.body;
  obj = r.js();
  obj["status"] = {{"state", "Running"}};
  obj["spec"]["replicas"] = 5;
  r = kube_->put(cr_path + "/good/status", obj);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.js()["status"]["state"], "Running");
  EXPECT_EQ(r.js()["spec"]["replicas"], 2);

  // Expired watch: 410 Gone ("too old resource version").
  std::string msg;
  long code = expired_watch_code(*kube_, cr_path + "?watch=1&resourceVersion=" + old_rv, &msg);
  EXPECT_EQ(code, 410) << msg;
}

TEST_F(K8sSmoke, PodsWatchConflictAndKubeletStandIn) {
  std::string node = create_fake_node();

  // Cordon the node, as an operator would; the spec change sticks.
  json cordon = {{"spec", {{"unschedulable", true}}}};
  Response r = kube_->request("PATCH", "/api/v1/nodes/" + node, &cordon, "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.js()["spec"]["unschedulable"], true);
  EXPECT_EQ(r.js()["status"]["capacity"]["nvidia.com/gpu"], "4");

  // List, then watch from the list's resourceVersion: nothing is missed.
  r = kube_->get(nspath() + "/pods");
  ASSERT_EQ(r.status, 200) << r.body;
  std::string list_rv = r.js()["metadata"]["resourceVersion"];

  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "job-1"}, {"annotations", {{"fakelet.drover.test/run-for", "1s"}}}}},
              {"spec",
               {{"nodeName", node},
                {"restartPolicy", "Never"},
                {"containers", {{{"name", "main"}, {"image", "drover/test"}, {"command", {"true"}}}}}}}};
  r = kube_->post(nspath() + "/pods", pod);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.js()["status"]["phase"], "Pending");

  std::vector<std::string> phases;
  std::string last_rv;
  kube_->watch(
      nspath() + "/pods?watch=1&allowWatchBookmarks=true&resourceVersion=" + list_rv,
      [&](const json& ev) {
        const std::string type = ev.value("type", "");
        if (type == "BOOKMARK") return true;
        const json& obj = ev["object"];
        if (obj["metadata"].value("name", "") != "job-1") return true;
        last_rv = obj["metadata"].value("resourceVersion", "");
        std::string phase = obj["status"].value("phase", "");
        if (phases.empty() || phases.back() != phase) phases.push_back(phase);
        return phase != "Succeeded" && phase != "Failed";
      },
      60s);
  ASSERT_FALSE(phases.empty());
  EXPECT_EQ(phases.front(), "Pending");  // the ADDED event
  EXPECT_NE(std::find(phases.begin(), phases.end(), "Running"), phases.end());
  EXPECT_EQ(phases.back(), "Succeeded");

  // Optimistic concurrency: an update with a stale resourceVersion is a 409.
  r = kube_->get(nspath() + "/pods/job-1");
  ASSERT_EQ(r.status, 200);
  json current = r.js();
  json stale = current;
  current["metadata"]["labels"]["drover.test/step"] = "1";
  r = kube_->put(nspath() + "/pods/job-1", current);
  ASSERT_EQ(r.status, 200) << r.body;
  stale["metadata"]["labels"]["drover.test/step"] = "2";
  r = kube_->put(nspath() + "/pods/job-1", stale);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(r.js().value("reason", ""), "Conflict") << r.body;

  // Graceful deletion of a running pod is finished by the kubelet stand-in.
  pod["metadata"] = {{"name", "job-2"}};
  r = kube_->post(nspath() + "/pods", pod);
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_TRUE(eventually([&] {
    return kube_->get(nspath() + "/pods/job-2").js()["status"].value("phase", "") == "Running";
  }));
  r = kube_->del(nspath() + "/pods/job-2");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(eventually([&] { return kube_->get(nspath() + "/pods/job-2").status == 404; }))
      << "graceful pod deletion was not completed";
}

TEST_F(K8sSmoke, AdmissionRejectsPodsInMissingNamespace) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  Response r = kube_->post("/api/v1/namespaces/no-such-ns-" + random_suffix() + "/pods", pod);
  EXPECT_EQ(r.status, 404) << r.body;
  // And the pod spec itself is validated.
  pod["spec"]["containers"][0].erase("image");
  r = kube_->post(nspath() + "/pods", pod);
  EXPECT_EQ(r.status, 422) << r.body;
}

}  // namespace

int main(int argc, char** argv) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  ::testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  curl_global_cleanup();
  return rc;
}
