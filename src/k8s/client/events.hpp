#pragma once
// Kubernetes Events (events.k8s.io/v1) about objects drover acts on, so that
// `kubectl describe pod` and `kubectl events` show what the operator did and why.
//
// Threads: record() is thread-safe and synchronous: it makes the API call on the calling
// thread (an Event is one small request) and throws ApiError if it fails; the caller decides
// whether a lost Event matters (the operator logs it and goes on).

#include <chrono>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "k8s/client/client.hpp"

namespace drover::k8s {

enum class EventType { kNormal, kWarning };

struct EventRecorderOptions {
  std::string reporting_controller = "drover.io/operator";
  std::string reporting_instance;  // "" = this host's name
  // A repeat within this time of the last one is counted on the same Event (series.count)
  // instead of creating another.
  std::chrono::seconds aggregate_window{600};
  // The first repeat is written at once; later ones only if the last write of that Event is
  // this old, so a hot loop cannot flood the API server. Between writes the count is kept
  // here, and the next repeat written carries the whole count.
  std::chrono::milliseconds series_interval{10000};
  size_t max_tracked = 4096;  // distinct (object, type, reason, action, note) remembered
};

class EventRecorder {
 public:
  explicit EventRecorder(Client& client, EventRecorderOptions opts = {});

  // One occurrence of (type, reason, action, note) about `regarding` (a Pod, Node, NodeSet:
  // anything with apiVersion, kind, metadata.name, and metadata.namespace unless
  // cluster-scoped). The first occurrence creates an Event; repeats count in its series
  // (written per series_interval). Returns the Event with the current count.
  json record(const json& regarding, EventType type, const std::string& reason,
              const std::string& action, const std::string& note);

  // RFC 3339 with microseconds, as Kubernetes' MicroTime.
  static std::string micro_time(std::chrono::system_clock::time_point t);

 private:
  struct Seen {
    std::string ns, name;  // the Event object
    long count = 1;
    std::chrono::steady_clock::time_point last;        // the last occurrence
    std::chrono::steady_clock::time_point last_patch;  // the last write to the server
    json event;                                        // as the server last returned it
    std::list<std::string>::iterator lru;
  };

  Client& client_;
  EventRecorderOptions opts_;
  std::mutex mu_;
  std::unordered_map<std::string, Seen> seen_;
  std::list<std::string> lru_;  // most recently used first
};

}  // namespace drover::k8s
