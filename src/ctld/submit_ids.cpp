#include "ctld/submit_ids.hpp"

#include <cstring>

namespace drover::ctld {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // uppercase too: unpack must give back the same text
}

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string SubmitIds::journal_key(uint32_t uid, std::string_view id) {
  std::string key = std::to_string(uid);
  key += ':';
  key += id;
  return key;
}

bool SubmitIds::pack(std::string_view id, uint8_t out[16]) {
  if (id.size() != 32) return false;
  for (size_t i = 0; i < 16; ++i) {
    const int hi = hex_value(id[2 * i]), lo = hex_value(id[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

std::string SubmitIds::unpack(const uint8_t id[16]) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (size_t i = 0; i < 16; ++i) {
    out[2 * i] = kDigits[id[i] >> 4];
    out[2 * i + 1] = kDigits[id[i] & 15];
  }
  return out;
}

size_t SubmitIds::hash(uint32_t uid, const uint8_t id[16]) {
  uint64_t a, b;
  std::memcpy(&a, id, 8);
  std::memcpy(&b, id + 8, 8);
  return static_cast<size_t>(mix(a ^ mix(b ^ mix(uid))));
}

size_t SubmitIds::probe(uint32_t uid, const uint8_t id[16]) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash(uid, id) & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.job_id == 0 || (s.uid == uid && std::memcmp(s.id, id, 16) == 0)) return i;
  }
}

std::optional<SubmitIds::Entry> SubmitIds::find(uint32_t uid, std::string_view id) const {
  uint8_t packed[16];
  if (pack(id, packed) && !slots_.empty()) {
    const Slot& s = slots_[probe(uid, packed)];
    if (s.job_id != 0) return Entry{s.job_id, s.at};
  }
  if (others_.empty()) return std::nullopt;
  auto it = others_.find(journal_key(uid, id));
  if (it == others_.end()) return std::nullopt;
  return it->second;
}

void SubmitIds::put(uint32_t uid, std::string_view id, Entry e) {
  uint8_t packed[16];
  // Job id 0 marks a free slot.
  if (e.job_id == 0 || e.at < 0 || e.at > int64_t{UINT32_MAX} || !pack(id, packed)) {
    if (pack(id, packed)) erase_packed(uid, packed);
    others_[journal_key(uid, id)] = e;
    return;
  }
  if (!others_.empty()) others_.erase(journal_key(uid, id));
  if ((count_ + 1) * 8 > slots_.size() * 7) grow();
  Slot& s = slots_[probe(uid, packed)];
  if (s.job_id == 0) {
    ++count_;
    s.uid = uid;
    std::memcpy(s.id, packed, 16);
  }
  s.job_id = e.job_id;
  s.at = static_cast<uint32_t>(e.at);
}

void SubmitIds::put_journaled(std::string_view key, Entry e) {
  const size_t colon = key.find(':');
  if (colon != std::string_view::npos && colon > 0 && colon <= 10) {
    const std::string_view digits = key.substr(0, colon);
    uint64_t uid = 0;
    bool ok = true;
    for (char c : digits) {
      if (c < '0' || c > '9') ok = false;
      uid = uid * 10 + static_cast<uint64_t>(c - '0');
    }
    // Only the form journal_key writes, so that forgetting it erases the same record.
    if (ok && uid <= UINT32_MAX && std::to_string(uid) == digits) {
      put(static_cast<uint32_t>(uid), key.substr(colon + 1), e);
      return;
    }
  }
  others_[std::string(key)] = e;
}

void SubmitIds::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
  for (const Slot& s : old)
    if (s.job_id != 0) slots_[probe(s.uid, s.id)] = s;
}

bool SubmitIds::erase_packed(uint32_t uid, const uint8_t id[16]) {
  if (slots_.empty()) return false;
  const size_t i = probe(uid, id);
  if (slots_[i].job_id == 0) return false;
  erase_slot(i);
  return true;
}

void SubmitIds::erase_slot(size_t i) {
  // Backward shift: later slots of the same run move into the hole when their home is not
  // between the hole and them, so every entry stays reachable from its home without
  // tombstones.
  const size_t mask = slots_.size() - 1;
  for (size_t j = (i + 1) & mask; slots_[j].job_id != 0; j = (j + 1) & mask) {
    const size_t home = hash(slots_[j].uid, slots_[j].id) & mask;
    if (((j - home) & mask) >= ((j - i) & mask)) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
  --count_;
}

}  // namespace drover::ctld
