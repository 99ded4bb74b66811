#include "proto/decode.hpp"

namespace drover::proto {
using nlohmann::json;

namespace {
// Checked on the text before parsing, so a deep document is refused before a tree is built.
bool nests_deeper_than(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

const json* member(const json& msg, const char* key) {
  if (!msg.is_object()) throw BadMessage("request is not a JSON object");
  auto it = msg.find(key);
  if (it == msg.end() || it->is_null()) return nullptr;
  return &*it;
}

[[noreturn]] void ill_typed(const char* key, const char* want) {
  throw BadMessage(std::string("field \"") + key + "\" is not " + want);
}
}  // namespace

json decode_object(std::string_view payload, int max_depth) {
  // nlohmann's parser stops at a NUL byte and takes what came before: a frame with anything
  // after one would be half read. No valid document has one (in strings it is \u0000).
  if (payload.find('\0') != std::string_view::npos) throw BadMessage("malformed request");
  if (nests_deeper_than(payload, max_depth)) throw BadMessage("request nested too deeply");
  json msg = json::parse(payload.begin(), payload.end(), nullptr, false);
  if (msg.is_discarded()) throw BadMessage("malformed request");
  if (!msg.is_object()) throw BadMessage("request is not a JSON object");
  return msg;
}

std::string get_string(const json& msg, const char* key, std::string fallback) {
  const json* v = member(msg, key);
  if (!v) return fallback;
  if (!v->is_string()) ill_typed(key, "a string");
  return v->get<std::string>();
}

int64_t get_int(const json& msg, const char* key, int64_t fallback) {
  const json* v = member(msg, key);
  if (!v) return fallback;
  if (v->is_number_integer() && (!v->is_number_unsigned() || v->get<uint64_t>() <= INT64_MAX))
    return v->get<int64_t>();
  ill_typed(key, "an integer");
}

uint64_t get_uint(const json& msg, const char* key, uint64_t fallback) {
  const json* v = member(msg, key);
  if (!v) return fallback;
  if (v->is_number_unsigned()) return v->get<uint64_t>();
  // Parsed text is unsigned when not negative; a document built in memory may hold it signed.
  if (v->is_number_integer() && v->get<int64_t>() >= 0) return v->get<uint64_t>();
  ill_typed(key, "an unsigned integer");
}

bool get_bool(const json& msg, const char* key, bool fallback) {
  const json* v = member(msg, key);
  if (!v) return fallback;
  if (!v->is_boolean()) ill_typed(key, "a boolean");
  return v->get<bool>();
}

int32_t get_int32(const json& msg, const char* key, int32_t fallback) {
  const int64_t v = get_int(msg, key, fallback);
  if (v < INT32_MIN || v > INT32_MAX) ill_typed(key, "a 32-bit integer");
  return static_cast<int32_t>(v);
}

uint32_t get_uint32(const json& msg, const char* key, uint32_t fallback) {
  const uint64_t v = get_uint(msg, key, fallback);
  if (v > UINT32_MAX) ill_typed(key, "a 32-bit unsigned integer");
  return static_cast<uint32_t>(v);
}

double get_number(const json& msg, const char* key, double fallback) {
  const json* v = member(msg, key);
  if (!v) return fallback;
  if (!v->is_number()) ill_typed(key, "a number");
  return v->get<double>();
}

std::vector<std::string> get_strings(const json& msg, const char* key) {
  std::vector<std::string> out;
  const json* a = member(msg, key);
  if (!a) return out;
  if (!a->is_array()) ill_typed(key, "an array");
  for (const auto& s : *a) {
    if (!s.is_string()) ill_typed(key, "an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> get_string_map(const json& msg, const char* key) {
  std::map<std::string, std::string> out;
  const json* o = member(msg, key);
  if (!o) return out;
  if (!o->is_object()) ill_typed(key, "an object");
  for (const auto& [k, v] : o->items()) {
    if (!v.is_string()) ill_typed(key, "an object of strings");
    out[k] = v.get<std::string>();
  }
  return out;
}

bool has(const json& msg, const char* key) { return member(msg, key) != nullptr; }

std::optional<std::string> opt_string(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_string(msg, key);
}
std::optional<bool> opt_bool(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_bool(msg, key);
}
std::optional<int64_t> opt_int(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_int(msg, key);
}
std::optional<uint64_t> opt_uint(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_uint(msg, key);
}
std::optional<int32_t> opt_int32(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_int32(msg, key);
}
std::optional<uint32_t> opt_uint32(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_uint32(msg, key);
}
std::optional<double> opt_number(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_number(msg, key);
}
std::optional<std::vector<std::string>> opt_strings(const json& msg, const char* key) {
  if (!has(msg, key)) return std::nullopt;
  return get_strings(msg, key);
}

uint64_t need_uint(const json& msg, const char* key) {
  if (!member(msg, key)) throw BadMessage(std::string("field \"") + key + "\" is missing");
  return get_uint(msg, key);
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace drover::proto
