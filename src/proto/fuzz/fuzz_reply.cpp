// libFuzzer entry for the controller's replies (proto/reply.hpp), as a command decodes them: a
// frame that is not a reply becomes a refusal (never another exception), and what decodes
// encodes to a reply that decodes to the same thing again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/decode.hpp"
#include "proto/reply.hpp"

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
template <class T>
void round_trip(const nlohmann::json& in) {
  const auto j = drover::proto::decode_reply<T>(in).to_json();
  check(drover::proto::decode_reply<T>(j).to_json() == j);
  (void)drover::proto::dump(j);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    j = drover::proto::decode_object(in);
  } catch (const drover::proto::BadMessage&) {
    return 0;
  }
  round_trip<drover::proto::SubmitReply>(j);
  round_trip<drover::proto::JobsReply>(j);
  round_trip<drover::proto::Ack>(j);
  round_trip<drover::proto::ReservationReply>(j);
  return 0;
}
