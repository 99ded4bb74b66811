#pragma once
// The dashboard's files and its event stream on the controller's HTTP port (docs/web.md).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ctld/state_machine.hpp"
#include "net/http_server.hpp"

namespace drover::ctld {

// Where the built dashboard is: slurm.conf's DroverWebRoot, else beside the binary
// (<bin>/../share/drover/web, installed or in the build tree). "" when neither has an
// index.html: /ui/ then says how to build it.
std::string ui_find_web_root(const std::string& configured, const std::string& exe_path);

// GET /ui/<path> from `root`: the file, index.html for the app's own paths, 404 for a missing
// asset. Never a file outside `root`.
net::HttpResponse ui_static_file(const std::string& root, const std::string& path);

// The open event streams (GET /ui/api/events): who is on each and what they may see. The
// state thread publishes changes; sends go to the I/O thread through each stream.
class UiEventHub {
 public:
  struct Subscriber {
    std::shared_ptr<net::HttpStream> stream;
    uint32_t uid = 0;
    bool all_jobs = true;  // false under PrivateData=jobs for a non-operator: own jobs only
    int64_t expires = 0;   // when its token expires: the stream is closed then (0: never)
  };
  void add(Subscriber s);
  size_t size();
  // One "jobs" event per subscriber with the ids it may see ("ids" left out when there are
  // many: the page refetches what it shows), and a "nodes" event when nodes changed. Drops
  // streams that closed.
  void publish(const std::vector<std::pair<uint64_t, uint32_t>>& jobs, int64_t job_version,
               bool nodes, uint64_t node_version);
  // A "k8s" event ({"version"}) on every stream: the Kubernetes view changed.
  void publish_k8s(uint64_t version);
  // A comment line on every stream, so that proxies keep it open and dead peers are found.
  void heartbeat();

 private:
  // Under mu_: drops closed streams and closes those whose token has expired.
  void prune();
  std::mutex mu_;
  std::vector<Subscriber> subs_;
};

// The last `max_bytes` of a job's output file, read as the controller sees the path (a shared
// file system, as Open OnDemand and slurm-web read it): {"path", "size", "offset", "text",
// "truncated"} or {"error"} (with "missing": true when there is no such file). Only a regular file
// that belongs to `owner` is read (no symbolic link at the end, no device or pipe), so a job cannot
// point its output at a file its owner could not read and have the controller show it. Text that is
// not UTF-8 is replaced.
nlohmann::json ui_read_tail(const std::string& path, uint32_t owner, size_t max_bytes);
inline constexpr size_t kUiTailDefault = 64 * 1024, kUiTailMax = 1024 * 1024;

// One thread for the dashboard's file reads, so that a slow or hung file system (NFS) never
// holds up the state thread or the I/O thread. A bounded queue: post() refuses (false) when
// it is full.
class UiFileReader {
 public:
  static constexpr size_t kMaxQueued = 32;
  UiFileReader();
  ~UiFileReader();  // ends the thread after the read under way; reads not begun are dropped
  UiFileReader(const UiFileReader&) = delete;
  UiFileReader& operator=(const UiFileReader&) = delete;
  bool post(std::function<void()> read);

 private:
  // Shared with the thread, which may outlive this object (detached in a hung read).
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;  // guarded by mu
    bool stopping = false;                    // guarded by mu
  };
  static void loop(std::shared_ptr<State> state);
  std::shared_ptr<State> state_ = std::make_shared<State>();
  std::thread thread_;
};

// The first event on a new stream: the versions the page starts from (k8s: the Kubernetes
// view's, 0 when the operator is off).
std::string ui_hello_event(int64_t job_version, uint64_t node_version, uint64_t k8s_version = 0);

}  // namespace drover::ctld
