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

// A warning that a flood could repeat once per connection (a failed handshake, a garbage
// frame): allow() says yes at most once per interval, with how many it said no to since.
class LogLimiter {
 public:
  explicit LogLimiter(std::chrono::seconds interval = std::chrono::seconds(10))
      : interval_(interval) {}
  bool allow(uint64_t& held_back) {
    const auto now = std::chrono::steady_clock::now();
    if (logged_ && now - last_ < interval_) {
      ++held_back_;
      return false;
    }
    held_back = held_back_;
    held_back_ = 0;
    last_ = now;
    logged_ = true;
    return true;
  }
  // What to append to the line allow() let through: how many were held back before it.
  static std::string held_back_suffix(uint64_t held_back) {
    return held_back == 0
               ? ""
               : " (and " + std::to_string(held_back) + " more since the last such line)";
  }

 private:
  std::chrono::seconds interval_;
  std::chrono::steady_clock::time_point last_{};
  bool logged_ = false;
  uint64_t held_back_ = 0;
};

}  // namespace drover::net
