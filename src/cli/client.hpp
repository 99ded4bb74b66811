#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace drover::cli {

using nlohmann::json;

// Where the controller's socket is: $DROVER_SOCKET, else $DROVER_STATE_DIR/ctld.sock,
// else /run/drover/ctld.sock.
std::string controller_socket();

// One request to the controller. Throws ControllerUnreachable when it cannot be contacted.
struct ControllerUnreachable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
json call_controller(const json& request);

}  // namespace drover::cli
