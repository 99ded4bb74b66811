#pragma once
// drover's Kubernetes API client: HTTPS + JSON straight to the API server (libcurl), objects as
// nlohmann::json. See src/k8s/README.md.
//
// Threads: a Client is thread-safe; every call blocks its calling thread until the answer (or
// the last retry) and runs no thread of its own. Calls share a small pool of curl handles, so
// connections (and TLS sessions) are reused across calls and threads. watch() blocks for the
// life of the stream and calls on_event on the calling thread; another thread ends it through
// the `stop` flag (within about a second: libcurl's progress callback polls it).
//
// Errors: every failure is an ApiError (see error.hpp). Requests are rate-limited on the client
// (a token bucket, Config::qps/burst) and retried with exponential backoff and jitter on 429
// (honouring Retry-After), 5xx and transport errors, at most Config::max_retries times; a
// create (POST) is retried on a transport error only when the connection was never made.

#include <atomic>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "k8s/client/config.hpp"
#include "k8s/client/error.hpp"
#include "k8s/client/flow.hpp"
#include "k8s/client/resource.hpp"

namespace drover::k8s {

using json = nlohmann::json;

struct Response {
  long status = 0;
  std::string body;
  json js() const { return json::parse(body, nullptr, /*allow_exceptions=*/false); }
};

class Client {
 public:
  explicit Client(Config cfg);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const { return cfg_; }
  const std::string& default_namespace() const { return cfg_.ns; }

  // ns is "" for cluster-scoped resources (and for list/watch across all namespaces).
  json get(const Resource& r, const std::string& ns, const std::string& name,
           const std::string& sub = "");
  // One page (opts.limit/continue_token page through it).
  json list(const Resource& r, const std::string& ns, const ListOptions& opts = {});
  // Every page, followed through metadata.continue: a List whose items are all of them and
  // whose metadata.resourceVersion is the snapshot's (if the continue token expires midway,
  // the whole list is fetched again without paging).
  json list_all(const Resource& r, const std::string& ns, ListOptions opts = {});
  json create(const Resource& r, const std::string& ns, const json& obj,
              const WriteOptions& w = {});
  // PUT of the whole object; with metadata.resourceVersion set, a stale object gets a 409
  // conflict (see retry_on_conflict).
  json replace(const Resource& r, const std::string& ns, const json& obj,
               const WriteOptions& w = {});
  json replace_status(const Resource& r, const std::string& ns, const json& obj,
                      const WriteOptions& w = {});
  json patch(const Resource& r, const std::string& ns, const std::string& name, PatchType type,
             const json& patch, const std::string& sub = "", const WriteOptions& w = {});
  // Server-side apply: PATCH application/apply-patch+yaml (a JSON body is valid YAML) with
  // fieldManager (default "drover"). obj needs apiVersion, kind and metadata.name. A field
  // owned by another manager with another value is a 409 conflict unless opts.force.
  json apply(const Resource& r, const std::string& ns, const json& obj,
             const ApplyOptions& opts = {}, const std::string& sub = "");
  json apply_status(const Resource& r, const std::string& ns, const json& obj,
                    const ApplyOptions& opts = {}) {
    return apply(r, ns, obj, opts, "status");
  }
  // Returns what the server answers: the deleted object, the object with its
  // deletionTimestamp (graceful deletion) or a Status.
  json remove(const Resource& r, const std::string& ns, const std::string& name,
              const DeleteOptions& opts = {});
  // The eviction subresource (policy/v1): deletes the pod unless a PodDisruptionBudget
  // forbids it (then 429 TooManyRequests, not retried here: the caller decides).
  json evict(const std::string& ns, const std::string& pod, const DeleteOptions& opts = {});

  enum class WatchEnd {
    kClosed,   // the server ended the stream (timeoutSeconds passed): watch again from the last RV
    kStopped,  // *stop became true
    kHandled,  // on_event returned false
  };
  // Streams watch events ({"type": ADDED|MODIFIED|DELETED|BOOKMARK, "object": ...}) to
  // on_event, on this thread, until one of WatchEnd happens. An ERROR event, an HTTP error
  // (410 Gone: watch from a newer resourceVersion, or re-list) or a dropped connection throws
  // ApiError. Not retried: the caller resumes from the last resourceVersion it saw.
  WatchEnd watch(const Resource& r, const std::string& ns, const WatchOptions& opts,
                 const std::function<bool(const json& event)>& on_event,
                 const std::atomic<bool>* stop = nullptr);

  // Any request (path with query string); throws ApiError for non-2xx. Retried as above.
  Response request(const std::string& method, const std::string& path, const std::string& body = "",
                   const std::string& content_type = "application/json");

  // Requests sent, retries included (for tests and metrics).
  long requests_sent() const { return sent_.load(); }

 private:
  struct Impl;
  Config cfg_;
  std::unique_ptr<Impl> impl_;
  std::atomic<long> sent_{0};
};

// Calls fn until it does not throw a conflict (409 other than AlreadyExists), at most `tries`
// times, sleeping per `backoff` in between; fn must re-read the object each time (that is the
// point). The last conflict, and any other error, propagates.
template <typename Fn>
auto retry_on_conflict(Fn&& fn, int tries = 5, const Backoff& backoff = kConflictBackoff)
    -> decltype(fn());

void sleep_for_retry(std::chrono::milliseconds d);  // defined in client.cpp
std::mt19937_64& retry_rng();                       // thread-local

template <typename Fn>
auto retry_on_conflict(Fn&& fn, int tries, const Backoff& backoff) -> decltype(fn()) {
  for (int attempt = 0;; ++attempt) {
    try {
      return fn();
    } catch (const ApiError& e) {
      if (!is_conflict(e) || attempt + 1 >= tries) throw;
      sleep_for_retry(backoff.delay(attempt, retry_rng()));
    }
  }
}

}  // namespace drover::k8s
