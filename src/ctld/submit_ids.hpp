#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace drover::ctld {

// Idempotent submission: the client names each submission (a random request id, the same on
// every retry), so a retry after a lost reply gets the job the first attempt created. Keyed
// by the submitter's uid and the id: one user's id never finds another user's job. The
// journal keys a record "<uid>:<id>" (journal_key).
//
// Sized for one entry per held job: the ids the commands make (32 lowercase hex digits) are
// kept as 16 bytes in a flat open-addressing table (32 bytes a slot); any other id (REST
// clients choose their own), or a time beyond 32 bits, is kept by its journal key in an
// ordinary map.
class SubmitIds {
 public:
  struct Entry {
    uint64_t job_id = 0;
    int64_t at = 0;  // when it was submitted
  };
  static std::string journal_key(uint32_t uid, std::string_view id);

  std::optional<Entry> find(uint32_t uid, std::string_view id) const;
  void put(uint32_t uid, std::string_view id, Entry e);
  // A journal record's key; one not of the form "<uid>:<id>" is kept as it is (found by no
  // submission, forgotten as the others).
  void put_journaled(std::string_view key, Entry e);
  size_t size() const { return count_ + others_.size(); }

  // Forgets the ids whose job is gone (`job_exists` false) and that are `window` seconds old,
  // then, beyond `cap`, the oldest ids of jobs gone. Adds the journal keys forgotten to
  // `erased`.
  template <class JobExists>
  void forget(int64_t now, int64_t window, size_t cap, JobExists&& job_exists,
              std::set<std::string>& erased);

 private:
  struct Slot {
    uint64_t job_id = 0;  // 0: empty
    uint32_t uid = 0;
    uint32_t at = 0;  // seconds since the epoch
    uint8_t id[16] = {};
  };
  static_assert(sizeof(Slot) == 32);
  // The id as 16 bytes when it is 32 lowercase hex digits.
  static bool pack(std::string_view id, uint8_t out[16]);
  static std::string unpack(const uint8_t id[16]);
  static size_t hash(uint32_t uid, const uint8_t id[16]);
  // The slot holding (uid, id), else the empty slot where it would go.
  size_t probe(uint32_t uid, const uint8_t id[16]) const;
  void grow();
  void erase_slot(size_t i);
  bool erase_packed(uint32_t uid, const uint8_t id[16]);

  std::vector<Slot> slots_;  // a power of two long, at most 7/8 full; linear probing
  size_t count_ = 0;
  std::unordered_map<std::string, Entry> others_;  // by journal key
};

template <class JobExists>
void SubmitIds::forget(int64_t now, int64_t window, size_t cap, JobExists&& job_exists,
                       std::set<std::string>& erased) {
  struct Gone {
    uint32_t uid;
    uint8_t id[16];
  };
  std::vector<Gone> expired;
  // Ids of jobs gone, still in the window: the first to go beyond the cap (oldest first).
  std::vector<std::pair<int64_t, std::string>> kept;
  for (const Slot& s : slots_) {
    if (s.job_id == 0 || job_exists(s.job_id)) continue;
    if (now - s.at >= window) {
      Gone g{s.uid, {}};
      std::copy(std::begin(s.id), std::end(s.id), g.id);
      expired.push_back(g);
    } else {
      kept.emplace_back(s.at, journal_key(s.uid, unpack(s.id)));
    }
  }
  for (const Gone& g : expired) {
    erased.insert(journal_key(g.uid, unpack(g.id)));
    erase_packed(g.uid, g.id);
  }
  for (auto it = others_.begin(); it != others_.end();) {
    if (job_exists(it->second.job_id)) {
      ++it;
    } else if (now - it->second.at >= window) {
      erased.insert(it->first);
      it = others_.erase(it);
    } else {
      kept.emplace_back(it->second.at, it->first);
      ++it;
    }
  }
  if (size() <= cap) return;
  std::sort(kept.begin(), kept.end());
  for (const auto& [at, key] : kept) {
    if (size() <= cap) break;
    erased.insert(key);
    if (others_.erase(key)) continue;
    const size_t colon = key.find(':');
    uint8_t id[16];
    pack(std::string_view(key).substr(colon + 1), id);
    erase_packed(static_cast<uint32_t>(std::stoul(key.substr(0, colon))), id);
  }
}

}  // namespace drover::ctld
