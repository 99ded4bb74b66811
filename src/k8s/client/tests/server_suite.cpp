// drover_k8s_client against a real kube-apiserver (tests/k8s/env/up). CTest label k8s:
// tests/k8s/run-smoke starts the environment, runs this binary, and stops it. Without
// DROVER_K8S_DIR every test is skipped, unless DROVER_K8S_REQUIRED=1 (then they fail).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "k8s/client/client.hpp"
#include "k8s/client/events.hpp"
#include "k8s/client/informer.hpp"
#include "k8s/client/leader.hpp"

namespace drover::k8s {
namespace {

using namespace std::chrono_literals;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string random_suffix() {
  static std::mt19937_64 rng{std::random_device{}()};
  std::string s;
  for (int i = 0; i < 6; ++i) s += "abcdefghijklmnopqrstuvwxyz0123456789"[rng() % 36];
  return s;
}

bool eventually(const std::function<bool()>& fn, std::chrono::milliseconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return fn();
}

json pod_object(const std::string& name) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"labels", {{"app", "drover-test"}}}}},
      {"spec",
       {{"containers", {{{"name", "main"}, {"image", "drover/test"}, {"command", {"true"}}}}}}}};
}

json configmap(const std::string& name, json data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}}},
          {"data", std::move(data)}};
}

std::string who_am_i(Client& c) {
  json review = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "SelfSubjectReview"}};
  Response r =
      c.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review.dump());
  return r.js()["status"]["userInfo"].value("username", "");
}

class ClientServer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = env("DROVER_K8S_DIR");
    if (dir_.empty()) {
      if (env("DROVER_K8S_REQUIRED") == "1")
        FAIL() << "DROVER_K8S_DIR is not set but DROVER_K8S_REQUIRED=1";
      GTEST_SKIP() << "no Kubernetes test environment (tests/k8s/run-smoke, or source DIR/env "
                      "after env/up DIR)";
    }
    client_ = std::make_unique<Client>(load_kubeconfig(dir_ + "/kubeconfig"));
    ns_ = "drover-client-" + random_suffix();
    client_->create(resources::kNamespaces, "",
                    {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns_}}}});
  }

  void TearDown() override {
    if (client_ && !ns_.empty()) {
      try {
        client_->remove(resources::kNamespaces, "", ns_);
      } catch (const ApiError&) {
      }
    }
  }

  // Pods need the namespace's default ServiceAccount, which kube-controller-manager creates.
  void wait_for_service_account() {
    ASSERT_TRUE(eventually([&] {
      try {
        client_->get({"", "v1", "serviceaccounts"}, ns_, "default");
        return true;
      } catch (const ApiError&) {
        return false;
      }
    }));
  }

  std::string dir_;
  std::unique_ptr<Client> client_;
  std::string ns_;
};

TEST_F(ClientServer, KubeconfigFromTheEnvironmentWorks) {
  // run-smoke exports KUBECONFIG=$DIR/kubeconfig: default_config() finds it.
  Client c(default_config());
  Response r = c.request("GET", "/version");
  EXPECT_EQ(r.js().value("gitVersion", "").rfind("v1.", 0), 0u) << r.body;
  EXPECT_EQ(who_am_i(c), "drover-admin");
  try {
    c.get(resources::kPods, ns_, "no-such-pod");
    FAIL() << "expected 404";
  } catch (const ApiError& e) {
    EXPECT_TRUE(is_not_found(e)) << e.what();
    EXPECT_EQ(e.reason(), "NotFound");
  }
}

TEST_F(ClientServer, InformerSeesCreateUpdateDeleteAndStopsPromptly) {
  wait_for_service_account();
  std::mutex mu;
  std::vector<std::string> seen;  // "add p1", "update p1 <label>", "delete p1"
  InformerOptions io;
  io.resource = resources::kPods;
  io.ns = ns_;
  io.label_selector = "app=drover-test";
  InformerHandlers h;
  h.on_add = [&](const json& o) {
    std::lock_guard l(mu);
    seen.push_back("add " + o["metadata"].value("name", ""));
  };
  h.on_update = [&](const json&, const json& o) {
    std::lock_guard l(mu);
    std::string step = o["metadata"].value("labels", json::object()).value("step", "");
    if (seen.empty() || seen.back() != "update " + step) seen.push_back("update " + step);
  };
  h.on_delete = [&](const json& o) {
    std::lock_guard l(mu);
    seen.push_back("delete " + o["metadata"].value("name", ""));
  };
  h.on_error = [](const ApiError& e) { std::cerr << "informer: " << e.what() << "\n"; };
  Informer inf(*client_, io, h);
  client_->create(resources::kPods, ns_, pod_object("before"));
  inf.start();
  ASSERT_TRUE(eventually([&] { return inf.synced(); }));
  EXPECT_TRUE(inf.get(ns_, "before"));

  client_->create(resources::kPods, ns_, pod_object("p1"));
  // Three kinds of patch, each visible through the watch.
  client_->patch(resources::kPods, ns_, "p1", PatchType::kMerge,
                 {{"metadata", {{"labels", {{"step", "merge"}}}}}});
  ASSERT_TRUE(eventually([&] {
    auto p = inf.get(ns_, "p1");
    return p && (*p)["metadata"]["labels"].value("step", "") == "merge";
  }));
  client_->patch(resources::kPods, ns_, "p1", PatchType::kStrategicMerge,
                 {{"metadata", {{"labels", {{"step", "strategic"}}}}}});
  client_->patch(
      resources::kPods, ns_, "p1", PatchType::kJson,
      json::array(
          {{{"op", "replace"}, {"path", "/metadata/labels/step"}, {"value", "jsonpatch"}}}));
  // The status subresource.
  json st = client_->patch(resources::kPods, ns_, "p1", PatchType::kMerge,
                           {{"status", {{"message", "drover was here"}}}}, "status");
  EXPECT_EQ(st["status"].value("message", ""), "drover was here");
  DeleteOptions now;
  now.grace_period_seconds = 0;
  client_->remove(resources::kPods, ns_, "p1", now);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard l(mu);
    return !seen.empty() && seen.back() == "delete p1";
  })) << ::testing::PrintToString(seen);
  {
    std::lock_guard l(mu);
    std::vector<std::string> want = {"add before",       "add p1",           "update merge",
                                     "update strategic", "update jsonpatch", "delete p1"};
    // The status patch shows as one more update with the last label.
    EXPECT_EQ(seen, want);
  }
  EXPECT_FALSE(inf.get(ns_, "p1"));
  EXPECT_EQ(inf.lists(), 1);

  // Stopping from another thread while the watch is idle ends it promptly.
  auto t0 = std::chrono::steady_clock::now();
  inf.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
}

TEST_F(ClientServer, ListPagesAndSelectors) {
  for (int i = 0; i < 5; ++i) {
    json cm = configmap("cm-" + std::to_string(i), {{"i", std::to_string(i)}});
    cm["metadata"]["labels"] = {{"parity", i % 2 ? "odd" : "even"}};
    client_->create(resources::kConfigMaps, ns_, cm);
  }
  ListOptions lo;
  lo.label_selector = "parity";
  lo.limit = 2;
  json page = client_->list(resources::kConfigMaps, ns_, lo);
  EXPECT_EQ(page["items"].size(), 2u);
  EXPECT_FALSE(page["metadata"].value("continue", "").empty());
  json all = client_->list_all(resources::kConfigMaps, ns_, lo);
  EXPECT_EQ(all["items"].size(), 5u);
  EXPECT_FALSE(all["metadata"].value("resourceVersion", "").empty());
  lo.label_selector = "parity=odd";
  EXPECT_EQ(client_->list_all(resources::kConfigMaps, ns_, lo)["items"].size(), 2u);
  ListOptions by_field;
  by_field.field_selector = "metadata.name=cm-3";
  EXPECT_EQ(client_->list(resources::kConfigMaps, ns_, by_field)["items"].size(), 1u);
}

// A watch from a version older than the watch cache holds gets 410 Gone; the informer then
// re-lists and delivers the difference: the object it knew that is gone is deleted, the one
// it did not know is added.
TEST_F(ClientServer, InformerRelistsAfterGoneAndConverges) {
  const std::string group = "client.drover.test";
  const std::string plural = "widgets" + random_suffix();
  std::string old_rv =
      client_->get(resources::kNamespaces, "", ns_)["metadata"].value("resourceVersion", "");
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", plural + "." + group}}},
              {"spec",
               {{"group", group},
                {"scope", "Namespaced"},
                {"names", {{"plural", plural}, {"kind", "Widget"}}},
                {"versions",
                 {{{"name", "v1"},
                   {"served", true},
                   {"storage", true},
                   {"schema",
                    {{"openAPIV3Schema",
                      {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  client_->create(resources::kCustomResourceDefinitions, "", crd);
  struct DropCrd {
    Client& c;
    std::string name;
    ~DropCrd() {
      try {
        c.remove(resources::kCustomResourceDefinitions, "", name);
      } catch (const ApiError&) {
      }
    }
  } drop{*client_, plural + "." + group};
  Resource widgets{group, "v1", plural};
  auto widget = [&](const std::string& name) {
    return json{{"apiVersion", group + "/v1"},
                {"kind", "Widget"},
                {"metadata", {{"name", name}, {"namespace", ns_}}}};
  };
  ASSERT_TRUE(eventually([&] {
    try {
      client_->create(widgets, ns_, widget("real"));
      return true;
    } catch (const ApiError&) {
      return false;  // discovery of a new CRD lags a little
    }
  }));

  std::mutex mu;
  std::vector<std::string> seen;
  InformerHandlers h;
  h.on_add = [&](const json& o) {
    std::lock_guard l(mu);
    seen.push_back("add " + o["metadata"].value("name", ""));
  };
  h.on_delete = [&](const json& o) {
    std::lock_guard l(mu);
    seen.push_back("delete " + o["metadata"].value("name", ""));
  };
  std::atomic<int> errors410{0};
  h.on_error = [&](const ApiError& e) {
    if (is_gone(e)) ++errors410;
    std::cerr << "informer: " << e.what() << "\n";
  };
  InformerOptions io;
  io.resource = widgets;
  io.ns = ns_;
  Informer inf(*client_, io, h);
  json ghost = widget("ghost");
  ghost["metadata"]["resourceVersion"] = old_rv;
  inf.seed({ghost}, old_rv);
  inf.start();
  ASSERT_TRUE(eventually([&] { return inf.synced(); }));
  EXPECT_GE(inf.gone(), 1);
  EXPECT_GE(errors410.load(), 1);
  EXPECT_EQ(inf.lists(), 1);
  {
    std::lock_guard l(mu);
    EXPECT_EQ(seen, (std::vector<std::string>{"delete ghost", "add real"}));
  }
  EXPECT_FALSE(inf.get(ns_, "ghost"));
  ASSERT_TRUE(inf.get(ns_, "real"));
  EXPECT_EQ((*inf.get(ns_, "real"))["kind"], "Widget");  // list items get their kind back

  // And after the re-list the watch goes on from the new version.
  client_->create(widgets, ns_, widget("later"));
  EXPECT_TRUE(eventually([&] { return inf.get(ns_, "later").has_value(); }));
}

TEST_F(ClientServer, ServerSideApplyOwnsFieldsAndConflictsUnlessForced) {
  json created = client_->apply(resources::kConfigMaps, ns_, configmap("ssa", {{"a", "1"}}));
  EXPECT_EQ(created["data"]["a"], "1");
  json updated =
      client_->apply(resources::kConfigMaps, ns_, configmap("ssa", {{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(updated["data"]["b"], "2");
  bool drover_applies = false;
  for (const auto& mf : updated["metadata"]["managedFields"]) {
    if (mf.value("manager", "") == "drover" && mf.value("operation", "") == "Apply")
      drover_applies = true;
  }
  EXPECT_TRUE(drover_applies) << updated["metadata"]["managedFields"].dump();

  ApplyOptions other;
  other.field_manager = "someone-else";
  try {
    client_->apply(resources::kConfigMaps, ns_, configmap("ssa", {{"a", "x"}}), other);
    FAIL() << "a conflicting apply by another manager must be refused";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 409) << e.what();
    EXPECT_TRUE(is_conflict(e));
  }
  other.force = true;
  json forced = client_->apply(resources::kConfigMaps, ns_, configmap("ssa", {{"a", "x"}}), other);
  EXPECT_EQ(forced["data"]["a"], "x");
  EXPECT_EQ(forced["data"]["b"], "2");  // still drover's
  bool other_owns = false;
  for (const auto& mf : forced["metadata"]["managedFields"]) {
    if (mf.value("manager", "") == "someone-else")
      other_owns = mf["fieldsV1"]["f:data"].contains("f:a");
  }
  EXPECT_TRUE(other_owns) << forced["metadata"]["managedFields"].dump();
}

TEST_F(ClientServer, StaleReplaceConflictsAndRetryOnConflictResolves) {
  json cm = client_->create(resources::kConfigMaps, ns_, configmap("cas", {{"n", "0"}}));
  json stale = cm;
  cm["data"]["n"] = "1";
  client_->replace(resources::kConfigMaps, ns_, cm);
  stale["data"]["n"] = "2";
  try {
    client_->replace(resources::kConfigMaps, ns_, stale);
    FAIL() << "a stale resourceVersion must conflict";
  } catch (const ApiError& e) {
    EXPECT_TRUE(is_conflict(e)) << e.what();
  }

  // The first try uses the stale copy (as a concurrent writer would leave it); the retry re-reads.
  int tries = 0;
  json done = retry_on_conflict([&] {
    json cur = ++tries == 1 ? stale : client_->get(resources::kConfigMaps, ns_, "cas");
    cur["data"]["n"] = std::to_string(std::stoi(cur["data"].value("n", "0")) + 10);
    return client_->replace(resources::kConfigMaps, ns_, cur);
  });
  EXPECT_EQ(tries, 2);
  EXPECT_EQ(done["data"]["n"], "11");

  // Delete preconditions: a wrong UID conflicts, the right one deletes.
  DeleteOptions wrong;
  wrong.precondition_uid = "00000000-0000-0000-0000-000000000000";
  try {
    client_->remove(resources::kConfigMaps, ns_, "cas", wrong);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(is_conflict(e)) << e.what();
  }
  DeleteOptions right;
  right.precondition_uid = done["metadata"].value("uid", "");
  right.propagation_policy = "Background";
  client_->remove(resources::kConfigMaps, ns_, "cas", right);
  EXPECT_THROW(client_->get(resources::kConfigMaps, ns_, "cas"), ApiError);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A kubeconfig with a client certificate (signed by the environment's CA, which the API
// server trusts for client certificates), once inline (*-data) and once as relative paths.
TEST_F(ClientServer, KubeconfigWithClientCertificate) {
  char tmpl[] = "/tmp/drover-kc.XXXXXX";
  std::string d = mkdtemp(tmpl);
  struct Rm {
    std::string p;
    ~Rm() { std::filesystem::remove_all(p); }
  } rm{d};
  std::string pki = dir_ + "/pki";
  std::string cmd =
      "cd " + d +
      " && openssl req -newkey rsa:2048 -nodes -keyout user.key -out user.csr -subj "
      "'/CN=drover-cert-user/O=system:masters' 2>/dev/null && openssl x509 -req -in user.csr -CA " +
      pki + "/ca.crt -CAkey " + pki +
      "/ca.key -CAcreateserial -CAserial ca.srl -out user.crt -days 1 2>/dev/null && base64 -w0 " +
      pki + "/ca.crt > ca.b64 && base64 -w0 user.crt > crt.b64 && base64 -w0 user.key > key.b64";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string server = env("DROVER_K8S_SERVER");
  std::string inline_cfg =
      "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context:\n    "
      "cluster: k\n    user: u\n    namespace: " +
      ns_ + "\nclusters:\n- name: k\n  cluster:\n    server: " + server +
      "\n    certificate-authority-data: " + read_all(d + "/ca.b64") +
      "\nusers:\n- name: u\n  user:\n    client-certificate-data: " + read_all(d + "/crt.b64") +
      "\n    client-key-data: " + read_all(d + "/key.b64") + "\n";
  std::ofstream(d + "/inline.yaml") << inline_cfg;
  Client a(load_kubeconfig(d + "/inline.yaml"));
  EXPECT_EQ(who_am_i(a), "drover-cert-user");
  EXPECT_EQ(a.default_namespace(), ns_);

  std::filesystem::copy_file(pki + "/ca.crt", d + "/ca.crt");
  std::string files_cfg =
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nclusters:\n- "
      "name: k\n  cluster:\n    server: " +
      server +
      "\n    certificate-authority: ca.crt\nusers:\n- name: u\n  user:\n    client-certificate: "
      "user.crt\n    client-key: user.key\n";
  std::ofstream(d + "/files.yaml") << files_cfg;
  Client b(load_kubeconfig(d + "/files.yaml"));
  EXPECT_EQ(who_am_i(b), "drover-cert-user");

  // A CA that did not sign the server's certificate: the TLS handshake fails, no request is made.
  Config wrong = load_kubeconfig(d + "/files.yaml");
  wrong.ca_file = d + "/user.crt";
  wrong.max_retries = 0;
  Client w(wrong);
  try {
    who_am_i(w);
    FAIL() << "an untrusted server certificate must be refused";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 0) << e.what();
  }
}

TEST_F(ClientServer, InClusterConfigAndTokenRotation) {
  char tmpl[] = "/tmp/drover-sa.XXXXXX";
  std::string sa = mkdtemp(tmpl);
  struct Rm {
    std::string p;
    ~Rm() { std::filesystem::remove_all(p); }
  } rm{sa};
  auto write = [&](const std::string& name, const std::string& text) {
    // Atomically, as the kubelet's projected volume does.
    std::ofstream(sa + "/." + name + ".tmp") << text;
    std::filesystem::rename(sa + "/." + name + ".tmp", sa + "/" + name);
  };
  std::string fakelet_token;
  std::ifstream tokens(dir_ + "/pki/tokens.csv");
  for (std::string line; std::getline(tokens, line);) {
    if (line.find(",fakelet,") != std::string::npos) fakelet_token = line.substr(0, line.find(','));
  }
  ASSERT_FALSE(fakelet_token.empty());
  write("token", env("DROVER_K8S_TOKEN") + "\n");
  std::filesystem::copy_file(env("DROVER_K8S_CA"), sa + "/ca.crt");
  write("namespace", ns_);
  std::string server = env("DROVER_K8S_SERVER");  // https://127.0.0.1:PORT
  ::setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  ::setenv("KUBERNETES_SERVICE_PORT", server.substr(server.rfind(':') + 1).c_str(), 1);
  Config cfg = in_cluster_config(sa);
  ::unsetenv("KUBERNETES_SERVICE_HOST");
  ::unsetenv("KUBERNETES_SERVICE_PORT");
  EXPECT_EQ(cfg.ns, ns_);
  Client c(cfg);
  EXPECT_EQ(who_am_i(c), "drover-admin");
  c.list(resources::kConfigMaps, c.default_namespace());

  write("token", fakelet_token);
  EXPECT_EQ(who_am_i(c), "fakelet");
  write("token", "not-a-valid-token");
  try {
    who_am_i(c);
    FAIL() << "an invalid token must be refused";
  } catch (const ApiError& e) {
    EXPECT_TRUE(is_unauthorized(e)) << e.what();
  }
  write("token", env("DROVER_K8S_TOKEN"));
  EXPECT_EQ(who_am_i(c), "drover-admin");
}

TEST_F(ClientServer, EventsAreCreatedAndRepeatsAggregated) {
  wait_for_service_account();
  json pod = client_->create(resources::kPods, ns_, pod_object("ev"));
  EventRecorder rec(*client_);
  json last;
  for (int i = 0; i < 3; ++i)
    last = rec.record(pod, EventType::kNormal, "Draining", "Drain", "draining for scale-in");
  // The first repeat is written at once, the next is only counted (within series_interval).
  EXPECT_EQ(last["series"].value("count", 0), 3);
  rec.record(pod, EventType::kWarning, "NotRegistered", "Replace", "replaced: never registered");
  json list = client_->list(resources::kEvents, ns_);
  int draining = 0, warnings = 0;
  for (const auto& e : list["items"]) {
    EXPECT_EQ(e["regarding"].value("name", ""), "ev");
    EXPECT_EQ(e["regarding"].value("uid", ""), pod["metadata"].value("uid", ""));
    EXPECT_EQ(e.value("reportingController", ""), "drover.io/operator");
    if (e.value("reason", "") == "Draining") {
      ++draining;
      EXPECT_EQ(e["series"].value("count", 0), 2) << e.dump();
      EXPECT_EQ(e.value("note", ""), "draining for scale-in");
    }
    if (e.value("type", "") == "Warning") ++warnings;
  }
  EXPECT_EQ(draining, 1) << list.dump();
  EXPECT_EQ(warnings, 1);
  // kubectl describe reads the core/v1 view of the same Events.
  ListOptions lo;
  lo.field_selector = "involvedObject.name=ev";
  EXPECT_EQ(client_->list(resources::kCoreEvents, ns_, lo)["items"].size(), 2u);
}

TEST_F(ClientServer, EvictionDeletesAPod) {
  wait_for_service_account();
  client_->create(resources::kPods, ns_, pod_object("victim"));
  client_->evict(ns_, "victim");
  EXPECT_TRUE(eventually([&] {
    try {
      client_->get(resources::kPods, ns_, "victim");
      return false;
    } catch (const ApiError& e) {
      return is_not_found(e);
    }
  }));
  try {
    client_->evict(ns_, "no-such-pod");
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_TRUE(is_not_found(e)) << e.what();
  }
}

TEST_F(ClientServer, ClientSideRateLimit) {
  Config cfg = load_kubeconfig(dir_ + "/kubeconfig");
  cfg.qps = 20;
  cfg.burst = 1;
  Client c(cfg);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 11; ++i) c.request("GET", "/version");
  // 1 from the burst, then 10 at 20/s.
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 450ms);
  EXPECT_EQ(c.requests_sent(), 11);
}

TEST_F(ClientServer, LeaderElectionOnALease) {
  LeaderElectionOptions o;
  o.ns = ns_;
  o.name = "drover-controller";
  o.lease_duration = 2s;
  o.renew_deadline = 1500ms;
  o.retry_period = 100ms;
  o.identity = "replica-a";
  // Rounds every 100 ms from two electors would exceed the default 5 qps.
  Config fast = client_->config();
  fast.qps = 200;
  fast.burst = 100;
  Client kube(fast);
  std::atomic<int> a_started{0}, a_stopped{0}, b_started{0};
  LeaderElector a(kube, o, {[&] { ++a_started; }, [&] { ++a_stopped; }, nullptr});
  o.identity = "replica-b";
  std::atomic<int> b_stopped{0};
  LeaderElector b(kube, o, {[&] { ++b_started; }, [&] { ++b_stopped; }, nullptr});
  a.start();
  ASSERT_TRUE(eventually([&] { return a.is_leader(); }, 10s));
  b.start();
  std::this_thread::sleep_for(2500ms);  // longer than the lease: a keeps renewing it
  EXPECT_TRUE(a.is_leader());
  EXPECT_FALSE(b.is_leader());
  EXPECT_EQ(b.leader(), "replica-a");
  json lease = client_->get(resources::kLeases, ns_, "drover-controller");
  EXPECT_EQ(lease["spec"].value("holderIdentity", ""), "replica-a");

  a.stop();  // releases the Lease: b takes over without waiting for it to expire
  EXPECT_EQ(a_stopped.load(), 1);
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(eventually([&] { return b.is_leader(); }, 10s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(a_started.load(), 1);
  EXPECT_EQ(b_started.load(), 1);
  lease = client_->get(resources::kLeases, ns_, "drover-controller");
  EXPECT_EQ(lease["spec"].value("holderIdentity", ""), "replica-b");
  EXPECT_EQ(lease["spec"].value("leaseTransitions", 0), 1);

  // Someone else takes the Lease over: b stops leading at its next round.
  // (b renews every 100 ms, so the write races with it: re-read and retry.)
  retry_on_conflict([&] {
    json cur = client_->get(resources::kLeases, ns_, "drover-controller");
    cur["spec"]["holderIdentity"] = "intruder";
    return client_->replace(resources::kLeases, ns_, cur);
  });
  EXPECT_TRUE(eventually([&] { return !b.is_leader(); }, 2s));
  EXPECT_EQ(b_stopped.load(), 1);
}

}  // namespace
}  // namespace drover::k8s
