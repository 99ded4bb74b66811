#pragma once
// Informer: a local cache of one kind of object kept current by list + watch, with callbacks.
//
// Threads: start() spawns the informer's own thread, which does all the I/O (list, watch,
// reconnects) and calls every handler, one at a time, in the order the server's changes
// happened. The cache is updated *before* the handler is called and no lock is held while it
// runs, so handlers may call get()/items(). A handler must not block for long: it holds up the
// stream (hand work to a queue of your own). stop() may be called from any thread, including
// a handler (then it only asks the thread to end; the destructor joins); from another thread
// it returns once the thread has ended, within about a second. get(), items(), synced() and
// the counters may be called from any thread at any time.
//
// Protocol: list (paginated) -> watch from the list's resourceVersion with bookmarks -> on a
// normal end of the watch, watch again from the last version seen (an event's or a bookmark's);
// on 410 Gone (HTTP or an ERROR event) re-list and deliver the difference against the cache
// (adds, updates for changed resourceVersions, deletes for objects that vanished); on a
// dropped connection or a server error, back off (exponential, jittered, capped) and resume.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "k8s/client/client.hpp"

namespace drover::k8s {

struct InformerOptions {
  Resource resource;
  std::string ns;  // "" = all namespaces (or a cluster-scoped resource)
  std::string label_selector;
  std::string field_selector;
  long page_size = 500;
  long watch_timeout_seconds = 300;  // the server ends each watch after this; we watch again
  Backoff backoff{std::chrono::milliseconds(200), 2.0, 0.2, std::chrono::milliseconds(10000)};
};

struct InformerHandlers {
  std::function<void(const json& obj)> on_add;
  std::function<void(const json& old_obj, const json& new_obj)> on_update;
  std::function<void(const json& last_known)> on_delete;
  // After each complete list (the first one and every re-list) has been delivered.
  std::function<void()> on_synced;
  // A failure the informer recovers from by itself (logged by the owner if it likes).
  std::function<void(const ApiError& e)> on_error;
};

class Informer {
 public:
  Informer(Client& client, InformerOptions opts, InformerHandlers handlers);
  ~Informer();  // stop() + join
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Starts from a cache and a resourceVersion the owner already has (say, from before a
  // restart) instead of listing first: the first watch resumes there, and if the server no
  // longer has that version (410) the re-list delivers what changed. Before start() only.
  void seed(const std::vector<json>& objects, const std::string& resource_version);

  void start();
  void stop();

  bool synced() const { return synced_.load(); }
  std::optional<json> get(const std::string& ns, const std::string& name) const;
  std::vector<json> items() const;
  std::string resource_version() const;
  long lists() const { return lists_.load(); }      // completed lists, the first included
  long watches() const { return watches_.load(); }  // watch requests started
  long gone() const { return gone_.load(); }        // 410s seen
  long events() const { return events_.load(); }    // watch events received, bookmarks included

  // "ns/name", or "name" for cluster-scoped objects.
  static std::string key_of(const json& obj);

 private:
  void run();
  void relist();
  bool watch_once();  // false when stopped
  void apply_event(const json& ev);
  bool sleep(std::chrono::milliseconds d);  // false when stopped meanwhile

  Client& client_;
  const InformerOptions opts_;
  const InformerHandlers handlers_;

  mutable std::mutex mu_;
  std::map<std::string, json> cache_;
  std::string rv_;
  bool need_list_ = true;

  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::thread thread_;
  std::atomic<bool> synced_{false};
  std::atomic<long> lists_{0}, watches_{0}, gone_{0}, events_{0};
};

}  // namespace drover::k8s
