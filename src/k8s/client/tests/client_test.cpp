// Client retry, rate-limit and watch behaviour against a scripted local HTTP server (plain
// HTTP on loopback): no Kubernetes needed.

#include "k8s/client/client.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "k8s/client/events.hpp"
#include "k8s/client/informer.hpp"

namespace drover::k8s {
namespace {

using namespace std::chrono_literals;

void send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string reply(int status, const std::string& body, const std::string& extra_headers = "") {
  return "HTTP/1.1 " + std::to_string(status) +
         " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n" + extra_headers + "\r\n" + body;
}

std::string chunk(const std::string& s) {
  char len[32];
  std::snprintf(len, sizeof len, "%zx\r\n", s.size());
  return len + s + "\r\n";
}

// Answers each connection's one request with the next scripted handler, then closes it.
class ScriptedServer {
 public:
  using Handler = std::function<void(int fd, const std::string& request)>;
  explicit ScriptedServer(std::vector<Handler> script) : script_(std::move(script)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedServer() {
    done_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int served() const { return served_.load(); }
  std::vector<std::string> requests() {
    std::lock_guard l(mu_);
    return requests_;
  }

 private:
  void serve() {
    while (!done_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string req;
      char buf[4096];
      while (req.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        req.append(buf, static_cast<size_t>(n));
      }
      {
        std::lock_guard l(mu_);
        requests_.push_back(req.substr(0, req.find("\r\n")));
      }
      size_t i = served_++;
      if (i < script_.size()) {
        script_[i](c, req);
      } else {
        send_all(c, reply(500, "{}"));
      }
      ::close(c);
    }
  }

  std::vector<Handler> script_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> done_{false};
  std::atomic<int> served_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

ScriptedServer::Handler respond(int status, const std::string& body,
                                const std::string& headers = "") {
  return [=](int fd, const std::string&) { send_all(fd, reply(status, body, headers)); };
}

Config local(const ScriptedServer& s) {
  Config c;
  c.server = s.url();
  c.qps = 0;  // not limited, unless a test says so
  return c;
}

const std::string kOk = R"({"kind":"ConfigMap","metadata":{"name":"x"}})";

TEST(ClientRetries, HonoursRetryAfterOn429) {
  ScriptedServer srv(
      {respond(429, R"({"kind":"Status","reason":"TooManyRequests"})", "Retry-After: 1\r\n"),
       respond(200, kOk)});
  Client c(local(srv));
  auto t0 = std::chrono::steady_clock::now();
  json got = c.get(resources::kConfigMaps, "ns", "x");
  EXPECT_EQ(got["metadata"]["name"], "x");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(srv.served(), 2);
  EXPECT_EQ(srv.requests()[0], "GET /api/v1/namespaces/ns/configmaps/x HTTP/1.1");
}

TEST(ClientRetries, BacksOffOn5xxThenGivesUp) {
  ScriptedServer srv({respond(503, "busy"), respond(502, "bad gateway"), respond(200, kOk)});
  Client c(local(srv));
  auto t0 = std::chrono::steady_clock::now();
  c.get(resources::kConfigMaps, "ns", "x");
  // Two waits: 200 ms and 400 ms, each with up to 20% jitter.
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 600ms);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(srv.served(), 3);

  ScriptedServer down({respond(503, "a"), respond(503, "b"), respond(503, "c"), respond(200, kOk)});
  Config cfg = local(down);
  cfg.max_retries = 2;
  Client c2(cfg);
  try {
    c2.get(resources::kConfigMaps, "ns", "x");
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_EQ(e.message(), "c");
  }
  EXPECT_EQ(down.served(), 3);
}

TEST(ClientRetries, ClientErrorsAreNotRetried) {
  ScriptedServer srv(
      {respond(422, R"({"kind":"Status","reason":"Invalid","message":"spec.x: Required value"})"),
       respond(200, kOk)});
  Client c(local(srv));
  try {
    c.create(resources::kConfigMaps, "ns", json::parse(kOk));
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 422);
    EXPECT_EQ(e.reason(), "Invalid");
  }
  EXPECT_EQ(srv.served(), 1);
  EXPECT_EQ(srv.requests()[0],
            "POST /api/v1/namespaces/ns/configmaps?fieldManager=drover HTTP/1.1");
}

TEST(ClientRetries, ConnectionRefusedIsATransportErrorAfterRetries) {
  int port;
  {
    ScriptedServer gone({});
    port = std::stoi(gone.url().substr(gone.url().rfind(':') + 1));
  }
  Config cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(port);
  cfg.qps = 0;
  cfg.max_retries = 1;
  Client c(cfg);
  try {
    c.request("POST", "/api/v1/namespaces", "{}");
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 0);
    EXPECT_TRUE(retriable(e));
  }
  EXPECT_EQ(c.requests_sent(), 2);  // a create that never connected may be repeated
}

TEST(ClientRateLimit, BurstThenQps) {
  std::vector<ScriptedServer::Handler> script(6, respond(200, kOk));
  ScriptedServer srv(script);
  Config cfg = local(srv);
  cfg.qps = 10;
  cfg.burst = 2;
  Client c(cfg);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) c.request("GET", "/version");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 350ms);  // 4 beyond the burst at 10/s
}

TEST(ClientWatch, EventsAcrossChunksThenGone) {
  std::string ev1 = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"5"}}})";
  std::string ev2 = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";
  std::string err =
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})";
  ScriptedServer srv({[&](int fd, const std::string&) {
    send_all(
        fd,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    std::string all = ev1 + "\n" + ev2 + "\n" + err + "\n";
    // Chunk boundaries inside the lines.
    send_all(fd, chunk(all.substr(0, 10)));
    std::this_thread::sleep_for(20ms);
    send_all(fd, chunk(all.substr(10, 80)));
    std::this_thread::sleep_for(20ms);
    send_all(fd, chunk(all.substr(90)));
    send_all(fd, "0\r\n\r\n");
  }});
  Client c(local(srv));
  std::vector<std::string> types;
  WatchOptions wo;
  wo.resource_version = "4";
  try {
    c.watch(resources::kPods, "ns", wo, [&](const json& ev) {
      types.push_back(ev.value("type", ""));
      return true;
    });
    FAIL() << "the ERROR event must end the watch with an ApiError";
  } catch (const ApiError& e) {
    EXPECT_TRUE(is_gone(e)) << e.what();
  }
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "BOOKMARK"}));
  EXPECT_EQ(srv.requests()[0],
            "GET /api/v1/namespaces/ns/pods?watch=true&resourceVersion=4&allowWatchBookmarks=true "
            "HTTP/1.1");
}

TEST(ClientWatch, HttpGoneAndNormalEnd) {
  ScriptedServer srv(
      {respond(
           410,
           R"({"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"})"),
       [](int fd, const std::string&) {
         send_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                          chunk(R"({"type":"MODIFIED","object":{"metadata":{"name":"a"}}})"
                                "\n") +
                          "0\r\n\r\n");
       }});
  Client c(local(srv));
  auto count = [](const json&) { return true; };
  try {
    c.watch(resources::kPods, "", {}, count);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 410);
    EXPECT_TRUE(is_gone(e));
  }
  EXPECT_EQ(c.watch(resources::kPods, "", {}, count), Client::WatchEnd::kClosed);
}

TEST(ClientWatch, StopFromAnotherThreadIsPrompt) {
  std::atomic<bool> release{false};
  ScriptedServer srv({[&](int fd, const std::string&) {
    send_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 100 && !release; ++i) std::this_thread::sleep_for(50ms);
  }});
  Client c(local(srv));
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto end = c.watch(
      resources::kPods, "", {}, [](const json&) { return true; }, &stop);
  auto took = std::chrono::steady_clock::now() - t0;
  release = true;
  stopper.join();
  EXPECT_EQ(end, Client::WatchEnd::kStopped);
  EXPECT_LT(took, 2s);
}

// The informer's whole protocol against a scripted server: list, watch, a dropped connection
// (resume from the last version seen), a 410 (re-list, deliver the difference), and stop.
TEST(InformerProtocol, ResumesAfterDropAndRelistsAfterGone) {
  auto obj = [](const std::string& name, const std::string& rv) {
    return json{{"metadata", {{"name", name}, {"namespace", "ns"}, {"resourceVersion", rv}}}};
  };
  auto list = [&](const std::string& rv, std::vector<json> items) {
    return json{{"kind", "PodList"},
                {"apiVersion", "v1"},
                {"metadata", {{"resourceVersion", rv}}},
                {"items", items}}
        .dump();
  };
  auto stream_head =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  std::atomic<bool> release{false};
  ScriptedServer srv({
      respond(200, list("10", {obj("a", "5"), obj("b", "6")})),
      [&](int fd, const std::string&) {
        send_all(fd, stream_head);
        send_all(fd, chunk(json{{"type", "MODIFIED"}, {"object", obj("a", "11")}}.dump() + "\n"));
        // ... and the connection drops mid-stream (no last chunk).
      },
      [&](int fd, const std::string&) {
        send_all(fd, stream_head);
        json gone = {
            {"type", "ERROR"},
            {"object",
             {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}, {"message", "too old"}}}};
        send_all(fd, chunk(gone.dump() + "\n") + "0\r\n\r\n");
      },
      respond(200, list("12", {obj("a", "11"), obj("c", "12")})),
      [&](int fd, const std::string&) {
        send_all(fd, stream_head);
        send_all(fd, chunk(json{{"type", "BOOKMARK"},
                                {"object", {{"metadata", {{"resourceVersion", "15"}}}}}}
                               .dump() +
                           "\n"));
        for (int i = 0; i < 200 && !release; ++i) std::this_thread::sleep_for(10ms);
      },
  });
  std::mutex mu;
  std::vector<std::string> seen;
  InformerHandlers h;
  h.on_add = [&](const json& o) {
    std::lock_guard l(mu);
    seen.push_back("add " + o["metadata"].value("name", "") + "@" +
                   o["metadata"].value("resourceVersion", ""));
  };
  h.on_update = [&](const json& old, const json& o) {
    std::lock_guard l(mu);
    seen.push_back("update " + o["metadata"].value("name", "") + "@" +
                   old["metadata"].value("resourceVersion", "") + "->" +
                   o["metadata"].value("resourceVersion", ""));
  };
  h.on_delete = [&](const json& o) {
    std::lock_guard l(mu);
    seen.push_back("delete " + o["metadata"].value("name", ""));
  };
  // Handlers may read the cache, the error handler included.
  Informer* self = nullptr;
  std::atomic<int> errors{0};
  h.on_error = [&](const ApiError&) {
    if (self) (void)self->get("ns", "a");
    ++errors;
  };
  InformerOptions io;
  io.resource = resources::kPods;
  io.ns = "ns";
  io.watch_timeout_seconds = 60;
  io.backoff = Backoff{10ms, 2.0, 0.0, 100ms};
  Client client(local(srv));
  Informer inf(client, io, h);
  self = &inf;
  inf.start();
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (inf.resource_version() != "15" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(inf.resource_version(), "15");  // from the bookmark
  auto t0 = std::chrono::steady_clock::now();
  inf.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  release = true;

  std::lock_guard l(mu);
  EXPECT_EQ(seen, (std::vector<std::string>{"add a@5", "add b@6", "update a@5->11", "delete b",
                                            "add c@12"}));
  EXPECT_EQ(inf.lists(), 2);
  EXPECT_EQ(inf.gone(), 1);
  EXPECT_EQ(errors.load(), 2);  // the drop and the 410
  EXPECT_FALSE(inf.get("ns", "b"));
  EXPECT_EQ((*inf.get("ns", "a"))["kind"], "Pod");  // list items get their kind back
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_EQ(reqs[0], "GET /api/v1/namespaces/ns/pods?limit=500 HTTP/1.1");
  EXPECT_NE(
      reqs[1].find("watch=true&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=60"),
      std::string::npos);
  EXPECT_NE(reqs[2].find("resourceVersion=11&"), std::string::npos)
      << reqs[2];  // resumed after the drop
  EXPECT_EQ(reqs[3], "GET /api/v1/namespaces/ns/pods?limit=500 HTTP/1.1");
  EXPECT_NE(reqs[4].find("resourceVersion=12&"), std::string::npos) << reqs[4];
}

TEST(EventRecorderSeries, RepeatsPatchTheSeriesAndAreThrottled) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u1"}}}};
  std::string stored = R"({"kind":"Event","metadata":{"name":"p.1","namespace":"ns"}})";
  ScriptedServer srv({respond(201, stored), respond(200, stored),
                      respond(404, R"({"kind":"Status","reason":"NotFound"})"),
                      respond(201, stored)});
  EventRecorderOptions o;
  o.series_interval = 0ms;
  o.reporting_instance = "ctl-0";
  Client c(local(srv));
  EventRecorder rec(c, o);
  for (int i = 0; i < 3; ++i)
    rec.record(pod, EventType::kWarning, "NotRegistered", "Replace", "never registered");
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0],
            "POST /apis/events.k8s.io/v1/namespaces/ns/events?fieldManager=drover HTTP/1.1");
  EXPECT_EQ(reqs[1],
            "PATCH /apis/events.k8s.io/v1/namespaces/ns/events/p.1?fieldManager=drover HTTP/1.1");
  EXPECT_EQ(reqs[2],
            "PATCH /apis/events.k8s.io/v1/namespaces/ns/events/p.1?fieldManager=drover HTTP/1.1");
  EXPECT_EQ(
      reqs[3],
      "POST /apis/events.k8s.io/v1/namespaces/ns/events?fieldManager=drover HTTP/1.1");  // expired
  EXPECT_EQ(c.requests_sent(), 4);

  // With the default interval a burst of repeats costs one write after the create.
  ScriptedServer srv2({respond(201, stored), respond(200, stored)});
  Client c2(local(srv2));
  EventRecorder rec2(c2);
  json last;
  for (int i = 0; i < 50; ++i)
    last = rec2.record(pod, EventType::kNormal, "Draining", "Drain", "scale-in");
  EXPECT_EQ(srv2.served(), 2);
  EXPECT_EQ(last["series"]["count"], 50);
}

TEST(RetryOnConflict, RetriesConflictsOnlyAndIsBounded) {
  int calls = 0;
  int v = retry_on_conflict([&] {
    if (++calls < 3) throw ApiError(409, "Conflict", "modified");
    return 7;
  });
  EXPECT_EQ(v, 7);
  EXPECT_EQ(calls, 3);

  calls = 0;
  EXPECT_THROW(retry_on_conflict(
                   [&]() -> int {
                     ++calls;
                     throw ApiError(409, "Conflict", "again");
                   },
                   4),
               ApiError);
  EXPECT_EQ(calls, 4);

  calls = 0;
  EXPECT_THROW(retry_on_conflict([&]() -> int {
                 ++calls;
                 throw ApiError(409, "AlreadyExists", "x");
               }),
               ApiError);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace drover::k8s
