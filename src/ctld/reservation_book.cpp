#include "ctld/reservation_book.hpp"

namespace drover::ctld {

const core::Reservation* ReservationBook::get(const std::string& name) const {
  auto it = resvs_.find(name);
  return it == resvs_.end() ? nullptr : &it->second;
}

void ReservationBook::put(core::Reservation r) {
  std::string name = r.name;
  resvs_.insert_or_assign(std::move(name), std::move(r));
}

std::string ReservationBook::unused_name(const std::string& base) const {
  std::string name = base + "_" + std::to_string(next_id_);
  while (contains(name)) name += "_";
  return name;
}

bool ReservationBook::started_since_last_look(int64_t now) {
  bool started = false;
  for (const auto& [name, r] : resvs_)
    if (r.start > checked_at_ && r.start <= now) started = true;
  checked_at_ = now;
  return started;
}

}  // namespace drover::ctld
