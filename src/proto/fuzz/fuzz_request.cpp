// libFuzzer entry for the commands' requests (proto/request.hpp), as the controller decodes them
// at its boundary: a frame is refused only with BadMessage, and one that decodes encodes to a
// request that decodes to the same thing again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/decode.hpp"
#include "proto/request.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    const auto req = drover::proto::decode_request(drover::proto::decode_object(in));
    const auto j = drover::proto::to_json(req);
    check(drover::proto::to_json(drover::proto::decode_request(j)) == j);
    (void)drover::proto::dump(j);
  } catch (const drover::proto::BadMessage&) {
  }
  return 0;
}
