// libFuzzer entry for the controller<->agent messages (proto/agent_msg.hpp): a frame is
// refused only with BadMessage, and one that decodes encodes to a message that decodes to
// the same thing again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/agent_msg.hpp"
#include "proto/decode.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  nlohmann::json msg;
  try {
    msg = drover::proto::decode_object(in);
  } catch (const drover::proto::BadMessage&) {
    return 0;
  }
  try {
    const auto m = drover::proto::decode_to_agent(msg);
    const auto j = drover::proto::to_json(m);
    check(drover::proto::to_json(drover::proto::decode_to_agent(j)) == j);
  } catch (const drover::proto::BadMessage&) {
  }
  try {
    const auto m = drover::proto::decode_from_agent(msg);
    const auto j = drover::proto::to_json(m);
    check(drover::proto::to_json(drover::proto::decode_from_agent(j)) == j);
  } catch (const drover::proto::BadMessage&) {
  }
  return 0;
}
