#pragma once
// The one decode step every server runs on a frame before using it: the JSON must parse, be an
// object and nest no deeper than a bound, and every member read has the type the protocol
// says. Anything else throws BadMessage, which the servers answer with an error reply (or a
// closed connection), so no hostile frame reaches the code behind them as a surprise.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace drover::proto {

struct BadMessage : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Deeper than any message of ours; bounds the recursion of dump() and of the code behind.
inline constexpr int kMaxDepth = 64;

// The frame's JSON object. Throws BadMessage: not JSON, not an object, nested too deep.
nlohmann::json decode_object(std::string_view payload, int max_depth = kMaxDepth);

// Member `key` of `msg` (an object), `fallback` when absent or null. Throws BadMessage when it
// has another type (or, for the integers, does not fit).
std::string get_string(const nlohmann::json& msg, const char* key, std::string fallback = "");
int64_t get_int(const nlohmann::json& msg, const char* key, int64_t fallback = 0);
uint64_t get_uint(const nlohmann::json& msg, const char* key, uint64_t fallback = 0);
bool get_bool(const nlohmann::json& msg, const char* key, bool fallback = false);
int32_t get_int32(const nlohmann::json& msg, const char* key, int32_t fallback = 0);
uint32_t get_uint32(const nlohmann::json& msg, const char* key, uint32_t fallback = 0);
double get_number(const nlohmann::json& msg, const char* key, double fallback = 0);
// An array of strings (empty when absent), an object of strings (empty when absent).
std::vector<std::string> get_strings(const nlohmann::json& msg, const char* key);
std::map<std::string, std::string> get_string_map(const nlohmann::json& msg, const char* key);
// Whether member `key` is there and not null.
bool has(const nlohmann::json& msg, const char* key);
// An optional member: as the getter above reads it, or nullopt when absent or null.
std::optional<std::string> opt_string(const nlohmann::json& msg, const char* key);
std::optional<bool> opt_bool(const nlohmann::json& msg, const char* key);
std::optional<int64_t> opt_int(const nlohmann::json& msg, const char* key);
std::optional<uint64_t> opt_uint(const nlohmann::json& msg, const char* key);
std::optional<int32_t> opt_int32(const nlohmann::json& msg, const char* key);
std::optional<uint32_t> opt_uint32(const nlohmann::json& msg, const char* key);
std::optional<double> opt_number(const nlohmann::json& msg, const char* key);
std::optional<std::vector<std::string>> opt_strings(const nlohmann::json& msg, const char* key);
// Member `key` that must be there: an unsigned integer (ids).
uint64_t need_uint(const nlohmann::json& msg, const char* key);

// Text for the wire that never throws: strings that are not valid UTF-8 (a user's job name)
// have the bad bytes replaced by U+FFFD rather than failing the whole reply.
std::string dump(const nlohmann::json& j);

}  // namespace drover::proto
