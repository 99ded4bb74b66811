#pragma once
// Leader election on a coordination.k8s.io/v1 Lease, for two controller replicas: the one
// holding the Lease leads; the other waits until the Lease is released or not renewed for
// lease_duration.
//
// Threads: start() spawns a thread that calls try_acquire_or_renew() every retry_period and
// calls the callbacks (on that thread). A leader that has not renewed for renew_deadline (or
// sees another holder) stops leading: on_stopped_leading is called, and the owner must stop
// acting as leader at once. stop() (any thread but a callback's) releases a held Lease so the
// other replica takes over without waiting, and joins. is_leader()/leader() are thread-safe.
//
// Each round is one or two requests on the Client, within its rate limit: with the default
// 5 qps, a retry_period under a second leaves little for anything else on that Client.
//
// Expiry is judged by this process's own clock from when it last saw the Lease change, not
// from the renewTime written by another host, so clock skew between hosts does not matter.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "k8s/client/client.hpp"

namespace drover::k8s {

struct LeaderElectionOptions {
  std::string ns;
  std::string name;      // the Lease
  std::string identity;  // this replica (unique: pod name)
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

struct LeaderCallbacks {
  std::function<void()> on_started_leading;
  std::function<void()> on_stopped_leading;
  std::function<void(const std::string& identity)> on_new_leader;  // a change of holder seen
};

class LeaderElector {
 public:
  LeaderElector(Client& client, LeaderElectionOptions opts, LeaderCallbacks cb = {});
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  // One round: create the Lease, renew it, or take it over if it expired or was released.
  // Returns whether this replica holds it now. Throws ApiError on failures other than a lost
  // race (a conflict, which returns false).
  bool try_acquire_or_renew();

  void start();
  void stop();

  bool is_leader() const { return leading_.load(); }
  std::string leader() const;

 private:
  void run();
  void release();
  void observe(const json& lease);

  Client& client_;
  const LeaderElectionOptions opts_;
  const LeaderCallbacks cb_;

  mutable std::mutex mu_;
  std::string observed_holder_;
  std::string observed_renew_;
  std::chrono::steady_clock::time_point observed_at_{};

  std::atomic<bool> leading_{false};
  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::thread thread_;
};

}  // namespace drover::k8s
