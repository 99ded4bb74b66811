#pragma once
// Flow control and framing for the client: the watch stream's line splitter, the client-side
// rate limiter and the retry backoff. Pure logic with the clock and randomness passed in, so
// they are unit-tested without a server or sleeps.

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

namespace drover::k8s {

// Splits a watch response (one JSON object per line, delivered in chunks that may end
// anywhere, mid-line included) into whole lines. Not thread-safe: one per stream.
class LineSplitter {
 public:
  explicit LineSplitter(size_t max_line = 64 << 20) : max_line_(max_line) {}
  // Calls on_line for each complete line in buf + chunk (without the '\n'; a trailing '\r' is
  // dropped, empty lines skipped) and keeps the rest. Returns false, without calling on_line
  // again, as soon as on_line returns false; throws std::length_error if a line exceeds max_line.
  bool feed(std::string_view chunk, const std::function<bool(std::string_view)>& on_line);
  const std::string& pending() const { return buf_; }

 private:
  std::string buf_;
  size_t max_line_;
};

// Token bucket: `qps` tokens a second, at most `burst` stored, starts full (client-go's
// flowcontrol defaults are qps 5, burst 10). Thread-safe. qps <= 0 disables limiting.
class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;
  TokenBucket(double qps, int burst, Clock::time_point now = Clock::now());
  // Takes a token, returning how long the caller must wait before using it (zero when one was
  // available). Waiting callers queue up: each reservation pushes the next one further out.
  Clock::duration reserve(Clock::time_point now);
  // reserve() + sleep.
  void acquire();

 private:
  std::mutex mu_;
  double qps_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

// Exponential backoff with jitter: attempt n (from 0) waits min(cap, base * factor^n) times
// (1 + jitter * U[0,1)), capped at `cap` again.
struct Backoff {
  std::chrono::milliseconds base{200};
  double factor = 2.0;
  double jitter = 0.2;
  std::chrono::milliseconds cap{10000};
  std::chrono::milliseconds delay(int attempt, std::mt19937_64& rng) const;
};

// retry_on_conflict's defaults, as client-go's DefaultRetry: 5 tries, 10 ms apart, 10% jitter.
inline constexpr Backoff kConflictBackoff{std::chrono::milliseconds(10), 1.0, 0.1,
                                          std::chrono::milliseconds(1000)};

}  // namespace drover::k8s
