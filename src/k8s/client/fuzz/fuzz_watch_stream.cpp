// libFuzzer entry for a watch stream: the bytes are split into chunks at fuzzer-chosen points
// and fed to the LineSplitter; the lines must be the same however the stream was chunked.
// Each line also goes through the error parser, as a watch ERROR event's body would.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "k8s/client/error.hpp"
#include "k8s/client/flow.hpp"

namespace {
std::vector<std::string> split(std::string_view text, size_t step) {
  drover::k8s::LineSplitter s(1 << 20);
  std::vector<std::string> lines;
  for (size_t off = 0; off < text.size(); off += step) {
    s.feed(text.substr(off, step), [&](std::string_view l) {
      lines.emplace_back(l);
      return true;
    });
  }
  return lines;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t step = data[0] % 17 + 1;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> whole = split(text, text.size() + 1);
  if (split(text, step) != whole) std::abort();
  for (const auto& line : whole) {
    drover::k8s::ApiError e = drover::k8s::ApiError::from_response(500, line);
    (void)drover::k8s::retriable(e);
  }
  return 0;
}
