#include "net/admission.hpp"

#include <spdlog/spdlog.h>

namespace drover::net {

Admission::Admission(std::string listener, size_t max_total, size_t max_per_peer)
    : state_(std::make_shared<State>()) {
  state_->listener = std::move(listener);
  state_->max_total = max_total;
  state_->max_per_peer = max_per_peer;
}

Admission::~Admission() = default;

std::shared_ptr<void> Admission::admit(uint64_t peer) {
  State& s = *state_;
  const bool peer_full = peer != 0 && s.per_peer[peer] >= s.max_per_peer;
  if (s.total >= s.max_total || peer_full) {
    if (s.per_peer[peer] == 0) s.per_peer.erase(peer);
    ++s.refused;
    const auto now = std::chrono::steady_clock::now();
    if (now - s.last_log >= std::chrono::seconds(10)) {
      spdlog::warn("{}: refused {} connection(s): {} open (limits {} in all, {} per peer)",
                   s.listener, s.refused, s.total, s.max_total, s.max_per_peer);
      s.refused = 0;
      s.last_log = now;
    }
    return nullptr;
  }
  ++s.total;
  ++s.per_peer[peer];
  // The ticket keeps the state alive: a connection may outlive its listener. (It points at the
  // state only to be non-null; the deleter frees nothing but the slot.)
  return std::shared_ptr<void>(static_cast<void*>(state_.get()), [st = state_, peer](void*) {
    --st->total;
    auto it = st->per_peer.find(peer);
    if (it != st->per_peer.end() && --it->second == 0) st->per_peer.erase(it);
  });
}

}  // namespace drover::net
