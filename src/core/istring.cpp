#include "core/istring.hpp"

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <ostream>
#include <unordered_map>

namespace drover::core {

struct IString::Entry {
  explicit Entry(std::string_view s) : text(s) {}
  std::string text;
  std::atomic<uint32_t> refs{1};
};

namespace {

// Keys view the entry's own text, which never moves (entries are allocated one by one).
struct Pool {
  std::mutex mu;
  std::unordered_map<std::string_view, IString::Entry*> entries;
};

Pool& pool() {
  // Never destroyed: handles in static objects may outlive any destruction order.
  static Pool* p = new Pool;
  return *p;
}

const std::string& empty_text() {
  static const std::string* s = new std::string;
  return *s;
}

}  // namespace

const std::string& IString::str() const noexcept { return e_ ? e_->text : empty_text(); }

IString::Entry* IString::intern(std::string_view s) {
  if (s.empty()) return nullptr;
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  if (auto it = p.entries.find(s); it != p.entries.end()) {
    it->second->refs.fetch_add(1, std::memory_order_relaxed);
    return it->second;
  }
  auto* e = new Entry(s);
  p.entries.emplace(std::string_view(e->text), e);
  return e;
}

void IString::retain(Entry* e) noexcept {
  // The caller holds a reference, so the count cannot be at zero: no lock needed.
  if (e) e->refs.fetch_add(1, std::memory_order_relaxed);
}

void IString::release(Entry* e) noexcept {
  if (!e) return;
  Pool& p = pool();
  // Under the lock, so that intern() cannot hand out an entry whose count just reached zero.
  std::lock_guard lock(p.mu);
  if (e->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    p.entries.erase(std::string_view(e->text));
    delete e;
  }
}

size_t IString::interned_count() {
  Pool& p = pool();
  std::lock_guard lock(p.mu);
  return p.entries.size();
}

std::ostream& operator<<(std::ostream& os, const IString& s) { return os << s.str(); }

void to_json(nlohmann::json& j, const IString& s) { j = s.str(); }
void from_json(const nlohmann::json& j, IString& s) { s = j.get<std::string>(); }

}  // namespace drover::core
