#include "agent/vouch.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <thread>

#include "net/auth.hpp"
#include "net/connection.hpp"
#include "net/peercred.hpp"
#include "net/user_cred.hpp"
#include "proto/decode.hpp"
#include "proto/error.hpp"

namespace drover::agent {
namespace asio = boost::asio;
using nlohmann::json;

namespace {
json invalid_request(const char* why) {
  return proto::Error(proto::Errno::kError, std::string("Invalid request: ") + why).reply();
}
}  // namespace

VouchServer::VouchServer(asio::io_context& io, std::string host, std::string node_key)
    : acceptor_(io), host_(std::move(host)), key_(std::move(node_key)) {}

void VouchServer::listen(const std::string& path) {
  ::unlink(path.c_str());
  acceptor_.open(asio::local::stream_protocol());
  acceptor_.bind(asio::local::stream_protocol::endpoint(path));
  acceptor_.listen(asio::socket_base::max_listen_connections);
  ::chmod(path.c_str(), 0666);  // anyone may ask; what they get names them, not the asker's claim
  spdlog::info("vouching for {}'s users on {}", host_, path);
  accept();
}

void VouchServer::accept() {
  acceptor_.async_accept(
      [this](boost::system::error_code ec, asio::local::stream_protocol::socket sock) {
        if (!ec) {
          const auto cred = net::peer_credentials(sock.native_handle());
          std::shared_ptr<void> ticket = cred ? admission_.admit(cred->uid) : nullptr;
          if (ticket) {
            auto conn = std::make_shared<net::Connection>(net::Connection::Socket(std::move(sock)));
            net::Connection::Limits limits;
            limits.max_frame_unauthenticated = 4096;  // a request is a few bytes
            limits.idle_timeout = std::chrono::seconds(10);
            conn->set_limits(limits);
            std::weak_ptr<net::Connection> weak = conn;
            const net::PeerCred who = *cred;
            conn->start(
                [this, weak, who](std::string payload) {
                  auto c = weak.lock();
                  if (!c) return;
                  json reply;
                  try {
                    const json msg = proto::decode_object(payload);
                    if (proto::get_string(msg, "op") != "credential")
                      throw proto::BadMessage("unknown op");
                    net::UserCred uc;
                    uc.uid = who.uid;
                    uc.gid = who.gid;
                    uc.host = host_;
                    uc.nonce = net::to_hex(net::random_bytes(16));
                    uc.expires = static_cast<int64_t>(::time(nullptr)) + net::kUserCredLifetime;
                    const net::SignedUserCred s = net::issue_user_cred(key_, uc);
                    reply = {{"ok", true},
                             {"cred", s.text},
                             {"sig", s.sig},
                             {"session_key", net::to_hex(s.session_key)}};
                  } catch (const std::exception& e) {
                    reply = invalid_request(e.what());
                  }
                  c->send(reply.dump(), false);
                },
                [ticket](const std::string&) {});
          }
        }
        if (acceptor_.is_open()) accept();
      });
}

struct VouchThread::Impl {
  asio::io_context io;
  VouchServer server;
  std::thread thread;
  Impl(std::string host, std::string key) : server(io, std::move(host), std::move(key)) {}
};

VouchThread::VouchThread(std::string host, std::string node_key, const std::string& path)
    : impl_(std::make_unique<Impl>(std::move(host), std::move(node_key))) {
  impl_->server.listen(path);
  // Signals are the agent's to handle: the thread starts with all of them blocked.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  impl_->thread = std::thread([this] { impl_->io.run(); });
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

VouchThread::~VouchThread() {
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace drover::agent
