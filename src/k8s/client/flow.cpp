#include "k8s/client/flow.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace drover::k8s {

bool LineSplitter::feed(std::string_view chunk,
                        const std::function<bool(std::string_view)>& on_line) {
  buf_.append(chunk);
  size_t start = 0;
  bool go_on = true;
  for (size_t nl; go_on && (nl = buf_.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(buf_.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) go_on = on_line(line);
  }
  buf_.erase(0, start);
  if (buf_.size() > max_line_) {
    buf_.clear();
    throw std::length_error("watch: an event line exceeds " + std::to_string(max_line_) + " bytes");
  }
  return go_on;
}

TokenBucket::TokenBucket(double qps, int burst, Clock::time_point now)
    : qps_(qps), burst_(std::max(1, burst)), tokens_(std::max(1, burst)), last_(now) {}

TokenBucket::Clock::duration TokenBucket::reserve(Clock::time_point now) {
  if (qps_ <= 0) return Clock::duration::zero();
  std::lock_guard lock(mu_);
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  tokens_ -= 1;  // may go negative: the debt is what later callers wait for
  if (tokens_ >= 0) return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(-tokens_ / qps_));
}

void TokenBucket::acquire() {
  auto wait = reserve(Clock::now());
  if (wait > Clock::duration::zero()) std::this_thread::sleep_for(wait);
}

std::chrono::milliseconds Backoff::delay(int attempt, std::mt19937_64& rng) const {
  double capped = static_cast<double>(cap.count());
  double d =
      static_cast<double>(base.count()) * std::pow(factor, std::max(0, std::min(attempt, 62)));
  d = std::min(d, capped);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  d = std::min(capped, d * (1.0 + jitter * u(rng)));
  return std::chrono::milliseconds(static_cast<long long>(d));
}

}  // namespace drover::k8s
