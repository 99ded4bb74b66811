#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace drover::net {

// Bounds one listener's open connections: at most `max_total`, and at most `max_per_peer` from
// one peer (a uid on the Unix socket). Refusals are logged at most once every 10 seconds, with
// how many there were, so a flood does not become a flood of log lines.
// Not thread-safe: use it from the listener's I/O thread (tickets too).
class Admission {
 public:
  Admission(std::string listener, size_t max_total, size_t max_per_peer = SIZE_MAX);
  ~Admission();
  // A ticket held while the connection is open (its release frees the slot); null when the
  // listener is full. `peer` 0 is exempt from the per-peer bound (root).
  std::shared_ptr<void> admit(uint64_t peer = 0);
  size_t open() const { return state_->total; }

  struct State {
    std::string listener;
    size_t max_total = 0, max_per_peer = 0;
    size_t total = 0;
    std::map<uint64_t, size_t> per_peer;
    uint64_t refused = 0;  // since the last log line
    std::chrono::steady_clock::time_point last_log{};
  };

 private:
  std::shared_ptr<State> state_;
};

}  // namespace drover::net
