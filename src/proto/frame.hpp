#pragma once
// Wire framing shared by every drover connection: a 4-byte big-endian length, then the
// payload (a JSON document, preceded by a 32-byte MAC on authenticated agent links).
#include <cstdint>
#include <string>
#include <string_view>

namespace drover::proto {

inline constexpr uint32_t kMaxFrame = 64u << 20;  // a batch script plus environment fits easily
// Replies the CLI accepts: a whole queue at depth is larger than any request.
inline constexpr uint32_t kMaxReply = 1u << 30;

inline std::string encode_length(uint32_t n) {
  std::string h(4, '\0');
  h[0] = static_cast<char>(n >> 24);
  h[1] = static_cast<char>(n >> 16);
  h[2] = static_cast<char>(n >> 8);
  h[3] = static_cast<char>(n);
  return h;
}

inline uint32_t decode_length(const unsigned char* h) {
  return (uint32_t{h[0]} << 24) | (uint32_t{h[1]} << 16) | (uint32_t{h[2]} << 8) | uint32_t{h[3]};
}

}  // namespace drover::proto
