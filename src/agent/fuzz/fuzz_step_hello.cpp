// libFuzzer entry for the agent's srun port (StepServer): one connection per input, whose
// first frame is the input, as anyone who can reach the node may send it. An input that starts
// with 'C' is instead a step credential, which the harness signs with the controller's key and
// wraps in a valid hello, so the credential's decoding (nodes, expiry, ids) is reached too.
// The agent must answer (accept or refuse) or close, and never crash; nothing is launched (a
// launch needs a second frame under the session key, which the harness never sends).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/steps.hpp"
#include "net/auth.hpp"
#include "net/keys.hpp"
#include "proto/frame.hpp"

using namespace drover;

namespace {

struct Agent {
  boost::asio::io_context io;
  agent::StepServer steps{io, "node1", net::node_key("fuzz-master-key", "node1")};
  boost::asio::ip::tcp::endpoint at;
  Agent() {
    spdlog::set_level(spdlog::level::off);
    steps.set_step_public_key(net::step_public_key("fuzz-master-key"));
    steps.listen("127.0.0.1");
    const std::string addr = steps.launch_addr();
    const auto colon = addr.rfind(':');
    at = {boost::asio::ip::make_address(addr.substr(0, colon)),
          static_cast<unsigned short>(std::stoi(addr.substr(colon + 1)))};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return 0;
  static Agent* agent = new Agent;
  std::string payload(reinterpret_cast<const char*>(data), size);
  if (!payload.empty() && payload[0] == 'C') {
    const std::string cred = payload.substr(1);
    payload = nlohmann::json{{"type", "hello"},
                             {"cred", cred},
                             {"sig", net::step_sign("fuzz-master-key", "step-cred|" + cred)},
                             {"nonce", "0123456789abcdef0123"}}
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  boost::asio::ip::tcp::socket client(agent->io);
  client.connect(agent->at);
  const std::string frame = proto::encode_length(static_cast<uint32_t>(payload.size())) + payload;
  boost::system::error_code ec;
  client.non_blocking(true);
  size_t sent = 0;
  std::string got;
  char buf[4096];
  // Until the agent answered or closed (a bounded number of turns: a frame it waits on the rest
  // of, a length beyond the input, is left).
  for (int turn = 0; turn < 2000; ++turn) {
    if (sent < frame.size()) {
      sent += client.write_some(boost::asio::buffer(frame.data() + sent, frame.size() - sent), ec);
      if (ec == boost::asio::error::would_block) ec = {};
      if (ec) break;
    }
    agent->io.poll();
    const size_t n = client.read_some(boost::asio::buffer(buf), ec);
    if (ec == boost::asio::error::would_block) continue;
    if (ec) break;  // closed
    got.append(buf, n);
    if (got.size() >= 4 &&
        got.size() >= 4 + proto::decode_length(reinterpret_cast<const unsigned char*>(got.data())))
      break;
  }
  client.close();
  for (int i = 0; i < 10; ++i) agent->io.poll();  // the close reaches the agent
  return 0;
}
