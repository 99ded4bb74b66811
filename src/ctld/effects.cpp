#include "ctld/effects.hpp"

namespace drover::ctld {

Effects::Key Effects::key_of(const JournalWrite& w, bool& gone) {
  // Kinds: 1 jobs, 2 the job id counter, 3 submission ids, 4 reservations, 5 the reservation
  // counter, 6 nodes, 7 partitions, 8 payloads, 9 usage, 10 the accounting entities.
  gone = false;
  return std::visit(Overloaded{
                        [](const std::monostate&) { return Key{}; },
                        [](const journal::Job& r) {
                          return Key{1, r.id, {}};
                        },
                        [&](const journal::JobGone& r) {
                          return gone = true, Key{1, r.id, {}};
                        },
                        [](const journal::NextJobId&) {
                          return Key{2, 0, {}};
                        },
                        [](const journal::SubmitId& r) {
                          return Key{3, 0, r.key};
                        },
                        [&](const journal::SubmitIdGone& r) {
                          return gone = true, Key{3, 0, r.key};
                        },
                        [](const journal::Reservation& r) {
                          return Key{4, 0, r.name};
                        },
                        [&](const journal::ReservationGone& r) {
                          return gone = true, Key{4, 0, r.name};
                        },
                        [](const journal::NextResvId&) {
                          return Key{5, 0, {}};
                        },
                        [](const journal::Node& r) {
                          return Key{6, 0, r.name};
                        },
                        [&](const journal::NodeGone& r) {
                          return gone = true, Key{6, 0, r.name};
                        },
                        [](const journal::Partition& r) {
                          return Key{7, 0, r.name};
                        },
                        [](const journal::Payload& r) {
                          return Key{8, r.id, {}};
                        },
                        [&](const journal::PayloadGone& r) {
                          return gone = true, Key{8, r.id, {}};
                        },
                        [](const journal::Usage&) {
                          return Key{9, 0, {}};
                        },
                        [](const journal::Accounting&) {
                          return Key{10, 0, {}};
                        },
                    },
                    w);
}

void Effects::journal(JournalWrite w) {
  if (std::holds_alternative<std::monostate>(w)) return;
  bool gone = false;
  Key key = key_of(w, gone);
  kinds_ |= 1u << w.index();
  auto it = written_.find(key);
  if (gone) {
    // The record goes: a write of it earlier in the batch is dropped.
    if (it != written_.end()) {
      journal_[it->second] = std::monostate{};
      written_.erase(it);
    }
    journal_.push_back(std::move(w));
    return;
  }
  if (it != written_.end()) {
    journal_[it->second] = std::move(w);  // the last content wins, where it was first written
    return;
  }
  written_.emplace(std::move(key), journal_.size());
  journal_.push_back(std::move(w));
}

bool Effects::journals(const JournalWrite& w) const {
  for (const auto& x : journal_)
    if (x == w) return true;
  return false;
}

void Effects::account(AcctRecord r) {
  if (const auto* j = std::get_if<acct::Job>(&r))
    if (!acct_jobs_.insert(j->id).second) return;  // read once, at the commit
  acct_.push_back(std::move(r));
}

void Effects::notify(Notice n) {
  if (std::holds_alternative<notice::Reschedule>(n)) {
    reschedule_ = true;
    return;
  }
  notices_.push_back(std::move(n));
}

}  // namespace drover::ctld
