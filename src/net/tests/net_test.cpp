#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/connect_pair.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "net/admission.hpp"
#include "net/auth.hpp"
#include "net/connection.hpp"
#include "net/fd_io.hpp"
#include "net/peercred.hpp"

using namespace drover;

TEST(Auth, HmacMatchesRfc4231Vector) {
  EXPECT_EQ(net::to_hex(net::hmac_sha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Auth, ProofsBindBothNoncesAndRole) {
  auto a = net::agent_proof("k", "c", "a", "node1");
  EXPECT_NE(a, net::agent_proof("k", "c", "a", "node2"));
  EXPECT_NE(a, net::agent_proof("k2", "c", "a", "node1"));
  EXPECT_NE(net::controller_proof("k", "a", "c", "p"), net::controller_proof("k", "c", "a", "p"));
}

TEST(Auth, KeyFileIsCreatedPrivateAndReloaded) {
  auto dir = std::filesystem::temp_directory_path() / ("drover-key-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / "cluster.key").string();
  std::string k1 = net::load_or_create_key(path);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(net::load_or_create_key(path), k1);
  chmod(path.c_str(), 0644);
  EXPECT_THROW(net::load_or_create_key(path), std::runtime_error);
  std::filesystem::remove_all(dir);
}

TEST(FdIo, WriteFullyWritesPastAFullPipeAndReportsABrokenOne) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  // More than a pipe holds: the writer is short-written and must go on once the reader drains.
  const std::string data(256 * 1024, 'x');
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;)
      got.append(buf, static_cast<size_t>(n));
  });
  EXPECT_TRUE(net::write_fully(p[1], data));
  ::close(p[1]);
  reader.join();
  EXPECT_EQ(got, data);

  ASSERT_EQ(::pipe(p), 0);
  ::close(p[0]);
  auto* old = ::signal(SIGPIPE, SIG_IGN);
  errno = 0;
  EXPECT_FALSE(net::write_fully(p[1], "lost"));
  EXPECT_EQ(errno, EPIPE);
  ::signal(SIGPIPE, old);
  ::close(p[1]);
}

TEST(PeerCred, ReportsOwnIdentityOnSocketPair) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  auto cred = net::peer_credentials(fds[0]);
  ASSERT_TRUE(cred.has_value());
  EXPECT_EQ(cred->uid, getuid());
  EXPECT_EQ(cred->pid, getpid());
  close(fds[0]);
  close(fds[1]);
}

namespace {
using Local = boost::asio::local::stream_protocol;
std::pair<std::shared_ptr<net::Connection>, std::shared_ptr<net::Connection>> pair_on(
    boost::asio::io_context& io) {
  Local::socket a(io), b(io);
  boost::asio::local::connect_pair(a, b);
  return {std::make_shared<net::Connection>(net::Connection::Socket(std::move(a))),
          std::make_shared<net::Connection>(net::Connection::Socket(std::move(b)))};
}
}  // namespace

TEST(Connection, AuthenticatedFramesArriveInOrder) {
  boost::asio::io_context io;
  auto [ctld, agent] = pair_on(io);
  ctld->set_session_key("secret", true);
  agent->set_session_key("secret", false);
  std::vector<std::string> got;
  agent->start([&](std::string m) { got.push_back(m); }, [](const std::string&) {});
  ctld->start([](std::string) {}, [](const std::string&) {});
  ctld->send("one");
  ctld->send(std::string(100000, 'x'));
  ctld->send("three");
  io.run_for(std::chrono::milliseconds(500));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "one");
  EXPECT_EQ(got[1].size(), 100000u);
  EXPECT_EQ(got[2], "three");
}

// srun's link handed from the agent to a step's supervisor: the session goes on on the other
// side with its key and sequence numbers, and the peer notices nothing; the old side neither
// reads on nor shuts the socket down.
TEST(Connection, AHandedOverSessionGoesOnWhereItWas) {
  boost::asio::io_context io;
  auto [srun, agent] = pair_on(io);
  srun->set_session_key("step", true);
  agent->set_session_key("step", false);
  std::vector<std::string> at_srun, at_agent, at_supervisor;
  bool agent_closed = false;
  int fd = -1;
  net::Connection::SessionState state;
  agent->start(
      // A raw pointer: clang 14 captures no structured binding, and a shared_ptr in its own
      // handler would never be freed.
      [&, a = agent.get()](std::string m) {
        at_agent.push_back(m);
        fd = a->hand_over(state);
      },
      [&](const std::string&) { agent_closed = true; });
  srun->start([&](std::string m) { at_srun.push_back(m); }, [](const std::string&) {});
  agent->send("accept");
  io.run_for(std::chrono::milliseconds(200));
  srun->send("launch");
  srun->send("stdin");  // already on its way while the link changes hands
  io.run_for(std::chrono::milliseconds(200));
  ASSERT_EQ(at_agent, std::vector<std::string>{"launch"});
  ASSERT_GE(fd, 0);
  EXPECT_EQ(state.key, "step");
  EXPECT_EQ(state.recv_seq, 1u);
  EXPECT_EQ(state.send_seq, 1u);
  auto supervisor = std::make_shared<net::Connection>(
      net::Connection::Socket(io, boost::asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), fd));
  supervisor->resume(state);
  supervisor->start([&](std::string m) { at_supervisor.push_back(m); }, [](const std::string&) {});
  supervisor->send("launched");
  io.run_for(std::chrono::milliseconds(200));
  EXPECT_EQ(at_supervisor, std::vector<std::string>{"stdin"});
  EXPECT_EQ(at_srun, (std::vector<std::string>{"accept", "launched"}));
  EXPECT_FALSE(agent_closed);
  // While a frame is still being written the link cannot change hands.
  auto [x, y] = pair_on(io);  // y never reads: the write cannot finish
  x->start([](std::string) {}, [](const std::string&) {});
  x->send(std::string(1 << 22, 'z'));
  io.poll();
  net::Connection::SessionState ignored;
  EXPECT_EQ(x->hand_over(ignored), -1);
}

TEST(Connection, WrongKeyClosesTheLink) {
  boost::asio::io_context io;
  auto [ctld, agent] = pair_on(io);
  ctld->set_session_key("secret", true);
  agent->set_session_key("forged", false);
  std::vector<std::string> got;
  std::string closed;
  agent->start([&](std::string m) { got.push_back(m); },
               [&](const std::string& why) { closed = why; });
  ctld->start([](std::string) {}, [](const std::string&) {});
  ctld->send("launch");
  io.run_for(std::chrono::milliseconds(500));
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(closed, "bad message authentication code");
}

TEST(Connection, ReflectedFrameIsRejected) {
  // A frame the controller sent must not be accepted by the controller (direction is bound).
  boost::asio::io_context io;
  auto [left, right] = pair_on(io);
  left->set_session_key("secret", true);
  right->set_session_key("secret", true);  // both think they are the controller
  std::string closed;
  right->start([](std::string) {}, [&](const std::string& why) { closed = why; });
  left->start([](std::string) {}, [](const std::string&) {});
  left->send("x");
  io.run_for(std::chrono::milliseconds(500));
  EXPECT_EQ(closed, "bad message authentication code");
}

// A write that completed is still waiting for its handler when the connection is closed
// (refusing a peer: an error frame, then close()). The handler must not touch the queue that
// close() emptied; before the fix it popped an empty deque (free(): double free).
TEST(Connection, CloseWhileAWriteIsInFlight) {
  for (int round = 0; round < 200; ++round) {
    boost::asio::io_context io;
    auto [server, client] = pair_on(io);
    int closes = 0;
    server->start([](std::string) {}, [&](const std::string&) { ++closes; });
    client->start([](std::string) {}, [](const std::string&) {});
    server->send("error frame", false);
    server->close();
    server->send("after close", false);
    io.run_for(std::chrono::milliseconds(20));
    EXPECT_EQ(closes, 1);
  }
}

// The same with a frame too large for the socket's buffer, so the write is still in progress
// (its buffer in use) when the peer goes away.
TEST(Connection, PeerLeavesDuringALongWrite) {
  boost::asio::io_context io;
  auto [server, client] = pair_on(io);
  std::string why;
  server->start([](std::string) {}, [&](const std::string& w) { why = w; });
  server->send(std::string(8 << 20, 'x'), false);
  server->send("queued behind it", false);
  client->start([](std::string) {}, [](const std::string&) {});
  io.run_for(std::chrono::milliseconds(5));
  client->close();
  io.run_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(why.empty());
}

TEST(Connection, LargeFrameBeforeAuthenticationCloses) {
  boost::asio::io_context io;
  auto [server, client] = pair_on(io);
  net::Connection::Limits limits;
  limits.max_frame_unauthenticated = 1024;
  server->set_limits(limits);
  std::vector<std::string> got;
  std::string why;
  server->start([&](std::string m) { got.push_back(m); }, [&](const std::string& w) { why = w; });
  client->start([](std::string) {}, [](const std::string&) {});
  client->send(std::string(1000, 'a'), false);
  client->send(std::string(2000, 'b'), false);
  io.run_for(std::chrono::milliseconds(300));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(why, "frame too large");
}

TEST(Connection, HandshakeAndIdleTimeoutsClose) {
  boost::asio::io_context io;
  auto [server, client] = pair_on(io);
  net::Connection::Limits limits;
  limits.handshake_timeout = std::chrono::milliseconds(100);
  server->set_limits(limits);
  std::string why;
  server->start([](std::string) {}, [&](const std::string& w) { why = w; });
  client->start([](std::string) {}, [](const std::string&) {});
  io.run_for(std::chrono::milliseconds(1000));
  EXPECT_EQ(why, "no handshake in time");

  boost::asio::io_context io2;
  auto [quiet, talker] = pair_on(io2);
  limits = {};
  limits.idle_timeout = std::chrono::milliseconds(300);
  quiet->set_limits(limits);
  std::string idle_why;
  quiet->start([](std::string) {}, [&](const std::string& w) { idle_why = w; });
  talker->start([](std::string) {}, [](const std::string&) {});
  // Frames keep it open past the timeout; silence closes it.
  for (int i = 0; i < 4; ++i) {
    talker->send("ping", false);
    io2.run_for(std::chrono::milliseconds(150));
  }
  EXPECT_EQ(idle_why, "");
  io2.run_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(idle_why, "idle timeout");
}

TEST(Admission, BoundsTotalAndPerPeerAndFreesOnRelease) {
  net::Admission a("test", 3, 2);
  auto t1 = a.admit(1000), t2 = a.admit(1000);
  EXPECT_TRUE(t1 && t2);
  EXPECT_FALSE(a.admit(1000));  // that uid's share is taken
  auto t3 = a.admit(0);         // root is not bound per peer
  EXPECT_TRUE(t3);
  EXPECT_FALSE(a.admit(1001));  // full
  EXPECT_EQ(a.open(), 3u);
  t1.reset();
  EXPECT_EQ(a.open(), 2u);
  EXPECT_TRUE(a.admit(1000));  // the released slot, released again at once
  EXPECT_EQ(a.open(), 2u);
}

// The body is read in growing pieces (memory follows what arrived, not the announced length):
// a frame written in parts, with pauses, still arrives whole.
TEST(Connection, FrameInPiecesArrivesWhole) {
  boost::asio::io_context io;
  Local::socket raw(io), other(io);
  boost::asio::local::connect_pair(raw, other);
  auto server = std::make_shared<net::Connection>(net::Connection::Socket(std::move(other)));
  std::vector<std::string> got;
  server->start([&](std::string m) { got.push_back(std::move(m)); }, [](const std::string&) {});
  std::string body(300000, 'z');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
  const std::string frame = proto::encode_length(static_cast<uint32_t>(body.size())) + body;
  for (size_t off = 0; off < frame.size(); off += 70000) {
    boost::asio::write(
        raw, boost::asio::buffer(frame.data() + off, std::min<size_t>(70000, frame.size() - off)));
    io.run_for(std::chrono::milliseconds(20));
  }
  io.run_for(std::chrono::milliseconds(100));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], body);
}

TEST(LogLimiter, OneLinePerIntervalWithTheCountHeldBack) {
  net::LogLimiter limiter(std::chrono::seconds(1));
  uint64_t more = 99;
  EXPECT_TRUE(limiter.allow(more));
  EXPECT_EQ(more, 0u);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(limiter.allow(more));
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  EXPECT_TRUE(limiter.allow(more));
  EXPECT_EQ(more, 5u);
}
