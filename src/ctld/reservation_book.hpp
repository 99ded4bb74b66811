#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "core/reservation.hpp"

namespace drover::ctld {

// The controller's reservations by name (Slurm's order for listings), the counter that names
// unnamed ones, and when their starts were last looked at. What a reservation may be (nodes,
// overlaps, users) is the rules' (reservations.cpp); this keeps the book.
class ReservationBook {
 public:
  using Map = std::map<std::string, core::Reservation>;
  using iterator = Map::iterator;
  using const_iterator = Map::const_iterator;

  // Reads as of a map (names cannot be changed through the iterators).
  iterator find(const std::string& name) { return resvs_.find(name); }
  const_iterator find(const std::string& name) const { return resvs_.find(name); }
  const core::Reservation* get(const std::string& name) const;
  bool contains(const std::string& name) const { return resvs_.count(name) > 0; }
  size_t size() const { return resvs_.size(); }
  iterator begin() { return resvs_.begin(); }
  iterator end() { return resvs_.end(); }
  const_iterator begin() const { return resvs_.begin(); }
  const_iterator end() const { return resvs_.end(); }

  // Adds a reservation, or replaces the one of the same name.
  void put(core::Reservation r);
  iterator erase(iterator it) { return resvs_.erase(it); }

  // The counter unnamed reservations are named by (journaled); each one created takes a step.
  int64_t next_id() const { return next_id_; }
  void set_next_id(int64_t id) { next_id_ = id < 1 ? 1 : id; }
  void count_created() { ++next_id_; }
  // A name for a reservation created without one: "<base>_<counter>", as Slurm names them,
  // made unique if an operator took that name already.
  std::string unused_name(const std::string& base) const;

  // Whether a reservation has begun since the last call (its members may start now); the
  // next call looks from `now` on.
  bool started_since_last_look(int64_t now);

 private:
  Map resvs_;
  int64_t next_id_ = 1;
  int64_t checked_at_ = 0;
};

}  // namespace drover::ctld
