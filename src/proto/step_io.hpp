#pragma once
// srun <-> agent links. Control messages are JSON objects; task I/O travels as binary frames
// so output need not be valid UTF-8: one kind byte, the task's global id (4 bytes, big
// endian), then the bytes. An empty stdin frame closes that task's stdin.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace drover::proto {

enum class StepIo : char { Stdout = 'o', Stderr = 'e', Stdin = 'i' };
inline constexpr uint32_t kAllTasks = 0xffffffff;  // stdin for every task of the node

inline std::string encode_step_io(StepIo kind, uint32_t task, std::string_view data) {
  std::string f;
  f.reserve(5 + data.size());
  f += static_cast<char>(kind);
  for (int shift = 24; shift >= 0; shift -= 8) f += static_cast<char>((task >> shift) & 0xff);
  f.append(data);
  return f;
}

struct StepIoFrame {
  StepIo kind;
  uint32_t task;
  std::string_view data;
};

// A binary I/O frame, or nothing for a JSON control message (or garbage).
inline std::optional<StepIoFrame> decode_step_io(std::string_view payload) {
  if (payload.size() < 5) return std::nullopt;
  const char k = payload[0];
  if (k != 'o' && k != 'e' && k != 'i') return std::nullopt;
  uint32_t task = 0;
  for (int i = 1; i <= 4; ++i) task = (task << 8) | static_cast<unsigned char>(payload[i]);
  return StepIoFrame{static_cast<StepIo>(k), task, payload.substr(5)};
}

}  // namespace drover::proto
