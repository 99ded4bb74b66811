#pragma once
// An immutable, interned string handle: one pointer wide, with equal texts sharing one copy.
// For the many text fields of a job (core::JobSpec) that are mostly empty or the same across
// jobs (user, account, working directory, output pattern): the controller keeps every pending
// job in memory, and a std::string per field cost more than the rest of the job together.
// Reads go through a const std::string&, so it reads like a string; writes replace the whole
// value (there is no mutable access to the characters). Safe to use from several threads.
#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace drover::core {

class IString {
 public:
  IString() noexcept = default;
  IString(std::string_view s) : e_(intern(s)) {}  // NOLINT: implicit, as a string
  IString(const std::string& s) : e_(intern(s)) {}
  IString(const char* s) : e_(intern(s)) {}
  IString(const IString& o) noexcept : e_(o.e_) { retain(e_); }
  IString(IString&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  ~IString() { release(e_); }
  IString& operator=(const IString& o) noexcept {
    if (e_ != o.e_) {
      retain(o.e_);
      release(e_);
      e_ = o.e_;
    }
    return *this;
  }
  IString& operator=(IString&& o) noexcept {
    if (this != &o) {
      release(e_);
      e_ = o.e_;
      o.e_ = nullptr;
    }
    return *this;
  }
  // Setting the value it has already (a pending reason, pass after pass) takes no lock.
  IString& operator=(std::string_view s) { return str() == s ? *this : *this = IString(s); }
  IString& operator=(const std::string& s) { return *this = std::string_view(s); }
  IString& operator=(const char* s) { return *this = std::string_view(s); }

  const std::string& str() const noexcept;
  operator const std::string&() const noexcept { return str(); }
  operator std::string_view() const noexcept { return str(); }

  bool empty() const noexcept { return e_ == nullptr; }
  size_t size() const noexcept { return str().size(); }
  size_t length() const noexcept { return str().size(); }
  const char* c_str() const noexcept { return str().c_str(); }
  const char* data() const noexcept { return str().data(); }
  std::string::const_iterator begin() const noexcept { return str().begin(); }
  std::string::const_iterator end() const noexcept { return str().end(); }
  char front() const { return str().front(); }
  char back() const { return str().back(); }
  char operator[](size_t i) const { return str()[i]; }
  size_t find(std::string_view s, size_t pos = 0) const noexcept { return str().find(s, pos); }
  size_t find(char c, size_t pos = 0) const noexcept { return str().find(c, pos); }
  size_t rfind(char c, size_t pos = std::string::npos) const noexcept {
    return str().rfind(c, pos);
  }
  size_t rfind(std::string_view s, size_t pos = std::string::npos) const noexcept {
    return str().rfind(s, pos);
  }
  size_t find_first_of(std::string_view s, size_t pos = 0) const noexcept {
    return str().find_first_of(s, pos);
  }
  std::string substr(size_t pos = 0, size_t n = std::string::npos) const {
    return str().substr(pos, n);
  }
  bool starts_with(std::string_view s) const noexcept { return str().starts_with(s); }
  bool starts_with(char c) const noexcept { return str().starts_with(c); }
  bool ends_with(std::string_view s) const noexcept { return str().ends_with(s); }
  bool ends_with(char c) const noexcept { return str().ends_with(c); }
  void clear() noexcept {
    release(e_);
    e_ = nullptr;
  }
  IString& operator+=(std::string_view s) { return *this = str() + std::string(s); }
  void pop_back() { *this = std::string_view(str()).substr(0, size() - 1); }

  // Interned: equal texts are the same entry.
  friend bool operator==(const IString& a, const IString& b) noexcept { return a.e_ == b.e_; }
  friend bool operator==(const IString& a, std::string_view b) noexcept { return a.str() == b; }
  friend bool operator==(const IString& a, const std::string& b) noexcept { return a.str() == b; }
  friend bool operator==(const IString& a, const char* b) noexcept { return a.str() == b; }
  friend std::strong_ordering operator<=>(const IString& a, const IString& b) noexcept {
    return a.str() <=> b.str();
  }
  friend std::strong_ordering operator<=>(const IString& a, std::string_view b) noexcept {
    return std::string_view(a.str()) <=> b;
  }
  friend std::strong_ordering operator<=>(const IString& a, const std::string& b) noexcept {
    return a.str() <=> b;
  }
  friend std::strong_ordering operator<=>(const IString& a, const char* b) noexcept {
    return std::string_view(a.str()) <=> std::string_view(b);
  }
  friend std::string operator+(const IString& a, std::string_view b) {
    return a.str() + std::string(b);
  }
  friend std::string operator+(const IString& a, const std::string& b) { return a.str() + b; }
  friend std::string operator+(const IString& a, const char* b) { return a.str() + b; }
  friend std::string operator+(const IString& a, char b) { return a.str() + b; }
  friend std::string operator+(const std::string& a, const IString& b) { return a + b.str(); }
  friend std::string operator+(std::string&& a, const IString& b) { return std::move(a) + b.str(); }
  friend std::string operator+(const char* a, const IString& b) { return a + b.str(); }
  friend std::string operator+(char a, const IString& b) { return a + b.str(); }
  friend std::ostream& operator<<(std::ostream& os, const IString& s);

  // How many distinct non-empty texts are interned now (for tests and figures).
  static size_t interned_count();

  struct Entry;  // the shared text and its reference count (istring.cpp)

 private:
  static Entry* intern(std::string_view s);
  static void retain(Entry* e) noexcept;
  static void release(Entry* e) noexcept;
  Entry* e_ = nullptr;
};

// As a json string ("" when empty).
void to_json(nlohmann::json& j, const IString& s);
void from_json(const nlohmann::json& j, IString& s);

}  // namespace drover::core

template <>
struct std::hash<drover::core::IString> {
  size_t operator()(const drover::core::IString& s) const noexcept {
    return std::hash<std::string_view>()(s);
  }
};
