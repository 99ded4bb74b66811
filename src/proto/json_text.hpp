#pragma once
// Writing a JSON object straight into text, without building a json tree first: for long job
// lists (squeue over 100,000 jobs), where the tree cost most of the controller's time. Values
// are written as nlohmann's dump() writes them; keys come in the order written, not sorted.
#include <algorithm>
#include <charconv>
#include <concepts>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/istring.hpp"

namespace drover::proto {

class JsonObjectText {
 public:
  // `only`: when given (sorted), put() writes just these keys and drops the others.
  explicit JsonObjectText(std::string& out, const std::vector<std::string>* only = nullptr)
      : out_(out), only_(only) {
    out_ += '{';
  }
  JsonObjectText(const JsonObjectText&) = delete;
  JsonObjectText& operator=(const JsonObjectText&) = delete;
  ~JsonObjectText() { out_ += '}'; }

  // `"name":`, after a comma unless first. Names are ours: plain ASCII, nothing to escape.
  std::string& key(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += name;
    out_ += "\":";
    return out_;
  }
  template <class T>
  void put(std::string_view name, const T& value) {
    if (wants(name)) write(key(name), value);
  }
  bool wants(std::string_view name) const {
    return only_ == nullptr || std::binary_search(only_->begin(), only_->end(), name);
  }

  static void write(std::string& out, bool v) { out += v ? "true" : "false"; }
  template <std::integral T>
  static void write(std::string& out, T v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
  }
  static void write(std::string& out, std::string_view s) {
    // Printable ASCII without quotes or backslashes is written as it is; anything else the way
    // nlohmann writes it (escapes; bytes that are not UTF-8 replaced, never thrown: one such
    // name must not fail every job list).
    for (const char c : s)
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
        out += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
    out += '"';
    out += s;
    out += '"';
  }
  static void write(std::string& out, const std::string& s) { write(out, std::string_view(s)); }
  static void write(std::string& out, const char* s) { write(out, std::string_view(s)); }
  static void write(std::string& out, const core::IString& s) { write(out, std::string_view(s)); }
  static void write(std::string& out, const std::vector<std::string>& v) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ',';
      write(out, v[i]);
    }
    out += ']';
  }
  // Anything else (nested records, rare or small): through its json form.
  template <class T>
  static void write(std::string& out,
                    const T& v) requires(!std::integral<T> &&
                                         !std::convertible_to<T, std::string_view>) {
    out += nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }

 private:
  std::string& out_;
  const std::vector<std::string>* only_;
  bool first_ = true;
};

}  // namespace drover::proto
