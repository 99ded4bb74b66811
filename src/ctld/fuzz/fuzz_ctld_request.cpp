// libFuzzer entry for the controller's client requests: each line of the input is one frame as
// it comes off ctld.sock, decoded (proto/request.hpp) and dispatched (apply_client_request) to a
// fresh two-node state machine, alternately as an ordinary user and as root, with a scheduling
// pass after each. A std::exception from the request is its refusal (the server answers it
// with an error); a crash, a sanitizer report, an exception out of the scheduling pass or a
// reply that cannot be written is a bug (the controller's state thread would have died).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ctld/client_request.hpp"
#include "ctld/tests/two_node_config.hpp"
#include "proto/decode.hpp"
#include "proto/request.hpp"

using namespace drover;
using namespace drover::ctld;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // per-input work stays small
  static const Config config = testing::two_node_config();
  StateMachine m(config, sched::make_scheduler());
  int64_t now = 1000;
  m.restore(1, {}, now);
  {
    Effects fx;
    for (const char* n : {"node1", "node2"}) m.agent_register(n, proto::Register{}, now, fx);
  }
  const Caller users[] = {{1000, 1000, "alice", "alice"}, {0, 0, "root", "root"}};
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 8 && !in.empty(); ++i) {
    const size_t eol = in.find('\n');
    const std::string_view frame = in.substr(0, eol);
    in = eol == std::string_view::npos ? std::string_view() : in.substr(eol + 1);
    Effects fx;
    std::string text;
    nlohmann::json reply;
    try {
      const proto::Request req = proto::decode_request(proto::decode_object(frame));
      auto r = apply_client_request(m, req, users[i % 2], now, fx, text);
      if (r) reply = std::move(*r);
    } catch (const std::exception&) {
      // Refused as the server refuses it: an error reply.
      continue;
    }
    (void)proto::dump(reply);  // never throws
    m.schedule(now, fx);
    now += 7;
  }
  return 0;
}
