#pragma once
// The host's vouching socket: commands run on this host ask it for a credential to show the
// controller over TCP (net/user_cred.hpp). The caller's uid and gid are the kernel's word
// (SO_PEERCRED), the host's name and key are the daemon's; users never read the key. Runs in
// droverd beside the agent, or alone on a login host (droverd --login).
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <memory>
#include <string>

#include "net/admission.hpp"

namespace drover::agent {

class VouchServer {
 public:
  VouchServer(boost::asio::io_context& io, std::string host, std::string node_key);
  // Binds `path` (replacing a stale socket), world-connectable. Throws on failure.
  void listen(const std::string& path);

 private:
  void accept();
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::string host_, key_;
  // Each caller holds a connection for one short exchange: a uid holding many is a flood.
  net::Admission admission_{"vouching socket", 256, 32};
};

// Runs a VouchServer on its own thread and io_context (beside the agent's).
class VouchThread {
 public:
  VouchThread(std::string host, std::string node_key, const std::string& path);
  ~VouchThread();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace drover::agent
