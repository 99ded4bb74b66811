// libFuzzer entry for the decode step every server runs on a frame (proto/decode.hpp): it
// refuses only with BadMessage; what it accepts is an object no deeper than the bound, and
// what it refuses as too deep really is (the depth is checked on the text, before parsing);
// the typed getters refuse ill-typed members with BadMessage only; dump() never throws.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proto/decode.hpp"

using nlohmann::json;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Whether `j` nests more than `n` deep; recurses at most n + 1 levels (a refused document
// may be thousands deep).
bool deeper_than(const json& j, int n) {
  if (!j.is_structured()) return false;
  if (n == 0) return true;
  for (const auto& v : j)
    if (deeper_than(v, n - 1)) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  json msg;
  try {
    msg = drover::proto::decode_object(in);
  } catch (const drover::proto::BadMessage& e) {
    if (std::string_view(e.what()) == "request nested too deeply") {
      const json j = json::parse(in, nullptr, false);
      check(j.is_discarded() || deeper_than(j, drover::proto::kMaxDepth));
    }
    return 0;
  }
  check(msg.is_object() && !deeper_than(msg, drover::proto::kMaxDepth));
  for (const auto& [key, value] : msg.items()) {
    (void)value;
    try {
      (void)drover::proto::get_string(msg, key.c_str());
    } catch (const drover::proto::BadMessage&) {
    }
    try {
      (void)drover::proto::get_int(msg, key.c_str());
    } catch (const drover::proto::BadMessage&) {
    }
    try {
      (void)drover::proto::get_uint(msg, key.c_str());
    } catch (const drover::proto::BadMessage&) {
    }
    try {
      (void)drover::proto::get_bool(msg, key.c_str());
    } catch (const drover::proto::BadMessage&) {
    }
  }
  (void)drover::proto::dump(msg);
  return 0;
}
