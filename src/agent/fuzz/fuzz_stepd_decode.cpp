// libFuzzer entry for the supervisor link's decoder (agent/stepd_proto.hpp): any frame either
// decodes to one of the typed messages, which encodes and decodes back to the same frame, or is
// refused with proto::BadMessage; nothing else escapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "agent/stepd_proto.hpp"
#include "proto/decode.hpp"

using namespace drover;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return 0;
  const std::string payload(reinterpret_cast<const char*>(data), size);
  try {
    const agent::stepd::Message m = agent::stepd::decode(payload);
    const std::string again = agent::stepd::encode(m);
    if (agent::stepd::encode(agent::stepd::decode(again)) != again) std::abort();
  } catch (const proto::BadMessage&) {
  }
  return 0;
}
