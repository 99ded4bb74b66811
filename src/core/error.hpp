#pragma once
#include <stdexcept>

namespace drover::core {

// Thrown by every parser in core for malformed input. what() is user-facing text.
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace drover::core
