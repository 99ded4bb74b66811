#include "ctld/server.hpp"

#include <grp.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/signal_set.hpp>
#include <cctype>
#include <chrono>
#include <fstream>
#include <limits>
#include <thread>

#include "core/error.hpp"
#include "core/text.hpp"
#include "ctld/acct_record.hpp"
#include "ctld/client_request.hpp"
#include "ctld/metrics.hpp"
#include "ctld/payload.hpp"
#include "ctld/rest_auth.hpp"
#include "ctld/usage.hpp"
#include "net/admission.hpp"
#include "net/auth.hpp"
#include "net/http_server.hpp"
#include "net/keys.hpp"
#include "net/peercred.hpp"
#include "net/protocol.hpp"
#include "net/user_cred.hpp"
#include "proto/acct_json.hpp"
#include "proto/decode.hpp"

namespace drover::ctld {
namespace asio = boost::asio;

namespace {
int64_t wall_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string user_name(uid_t uid) {
  struct passwd pw {};
  struct passwd* out = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &out) == 0 && out) return out->pw_name;
  return std::to_string(uid);
}

std::string group_name(gid_t gid) {
  struct group gr {};
  struct group* out = nullptr;
  char buf[4096];
  if (getgrgid_r(gid, &gr, buf, sizeof buf, &out) == 0 && out) return out->gr_name;
  return std::to_string(gid);
}
}  // namespace

struct Server::Impl {
  asio::io_context io;
  asio::local::stream_protocol::acceptor unix_acceptor{io};
  asio::ip::tcp::acceptor tcp_acceptor{io};
  asio::signal_set signals{io, SIGTERM, SIGINT};
  asio::signal_set hangup{io, SIGHUP};
  std::unique_ptr<net::HttpServer> http;
  // Connection floods (I/O thread): each command is one short connection, so a uid holding
  // more than its share is a flood; agents are one connection per node, but anyone can open
  // the TCP port, so connections that have not authenticated yet have their own small bound
  // (a handshake takes milliseconds; room for a whole cluster's agents dialling back at once
  // after a restart, and those refused retry within 2 s).
  net::Admission unix_admission{"ctld.sock", 1024, 128};
  net::Admission tcp_admission{"controller port", 16384};
  net::Admission handshake_admission{"controller port (not authenticated)", 256};
  net::LogLimiter handshake_log;  // failed handshakes: anyone can make one per connection
  net::LogLimiter pass_time_log{
      std::chrono::seconds(60)};  // state thread: passes bf_max_time ended
  net::ReplayCache replays;       // commands' credentials taken (I/O thread)
  // Commands from other hosts, once authenticated: as on ctld.sock, a uid holding more than
  // its share is a flood (a host vouches for any number of connections).
  net::Admission remote_admission{"controller port (commands)", 1024, 128};
};

namespace {
net::Connection::Limits command_limits() {
  net::Connection::Limits l;
  l.idle_timeout = std::chrono::minutes(5);  // a command waits on one reply; none takes this long
  return l;
}

net::Connection::Limits agent_limits() {
  net::Connection::Limits l;
  l.max_frame_unauthenticated = 1u << 20;  // a registration, with its running and finished jobs
  l.handshake_timeout = std::chrono::seconds(5);
  return l;
}
}  // namespace

Server::Server(Config config, std::string state_dir, std::string cluster_key,
               std::optional<AccountsFile> accounts_file)
    : impl_(std::make_unique<Impl>()),
      config_(config),
      state_dir_(std::move(state_dir)),
      key_(std::move(cluster_key)),
      machine_(std::move(config), sched::make_scheduler()),
      journal_(state_dir_ + "/ctld-state.db") {
  machine_.set_cluster_key(key_);
  step_pub_ = net::step_public_key(key_);
  auto loaded = journal_.load();
  spdlog::info("journal: {} jobs, next job id {}", loaded.jobs.size(), loaded.next_job_id);
  // Accounting follows the journal: every journaled job is recorded again, and so are the
  // records of purged jobs the store had not taken, so a crash between the journal's commit
  // and the accounting write, or a database that was down, loses nothing.
  store::AccountingStorage storage = config_.accounting_storage;
  if (storage.type == store::AccountingStorage::Type::Sqlite && storage.sqlite_path.empty())
    storage.sqlite_path = state_dir_ + "/accounting.db";
  spdlog::info("accounting storage: {}", storage.describe());
  acct_ = std::make_unique<AccountingWorker>(store::open_accounting(storage));
  {
    const uint64_t seq = ++acct_seq_;
    std::vector<store::JobRecord> records;
    records.reserve(loaded.jobs.size());
    for (const auto& job : loaded.jobs) {
      records.push_back(acct_record(job));
      acct_unwritten_[job.id] = {seq, records.back()};
      acct_unwritten_order_.emplace_back(seq, job.id);
    }
    for (const auto& [name, data] : loaded.records["acct_pending"]) {
      try {
        records.push_back(acct_record_from_json(data));
        acct_journaled_.emplace_back(seq, name);
      } catch (const std::exception& e) {
        spdlog::error("journal: accounting record {} unreadable: {}", name, e.what());
      }
    }
    acct_->post_records(seq, std::move(records));
  }
  // A store that could not be read is not tried again here (each try may wait for a timeout).
  if (load_accounting_data(std::move(accounts_file), loaded)) {
    try {
      store::AccountingStore& store = acct_->store_before_start();
      store.register_cluster_tres({wall_now(), cluster_tres(config_)});
      for (auto& e : store.node_events(0, std::numeric_limits<int64_t>::max()))
        if (e.until == 0) node_events_open_[e.node] = std::move(e);
    } catch (const std::exception& e) {
      spdlog::error("accounting: cannot register the cluster's TRES: {}", e.what());
    }
  }
  acct_->start([this](uint64_t seq) {
    Event ev{Event::Task, nullptr, {}, {}, {}};
    ev.apply = [this, seq](Effects&) -> std::function<void()> {
      accounting_written(seq);
      return nullptr;
    };
    post(std::move(ev));
  });
  machine_.restore_dynamic_nodes(loaded.records["node"]);
  machine_.restore(loaded.next_job_id, std::move(loaded.jobs), wall_now());
  machine_.restore_submit_ids(loaded.records["submit_id"]);
  std::vector<core::Reservation> resvs;
  for (const auto& [name, data] : loaded.records["reservation"])
    resvs.push_back(data.get<core::Reservation>());
  spdlog::info("journal: {} reservations", resvs.size());
  machine_.restore_reservations(std::move(resvs), loaded.counters["next_resv_id"], wall_now());
  for (const auto& [name, data] : loaded.records["node"]) machine_.restore_node_admin(name, data);
  for (const auto& [name, data] : loaded.records["partition"])
    machine_.restore_partition_admin(name, data);
  if (auto it = loaded.records["fairshare"].find("usage"); it != loaded.records["fairshare"].end())
    machine_.restore_usage(it->second);
}

Server::~Server() = default;

bool Server::load_accounting_data(std::optional<AccountsFile> file,
                                  const store::Journal::Loaded& loaded) {
  bool reachable = true;
  std::optional<core::AcctData> data;
  auto from_file = [&] {
    core::AcctData d = core::acct_data_from_dump(file->dump);
    d.cluster = config_.cluster_name;
    return d;
  };
  auto store = [&](const core::AcctData& d, const std::string& seeded_from) {
    try {
      acct_->store_before_start().store_assoc_data({d, seeded_from});
      acct_seeded_from_ = seeded_from;
    } catch (const std::exception& e) {
      spdlog::error("accounting: cannot store the accounts, users and QOS: {}", e.what());
    }
  };
  try {
    std::optional<store::StoredAssocData> stored = acct_->store_before_start().load_assoc_data();
    if (stored && (!file || stored->seeded_from == file->digest)) {
      data = std::move(stored->data);
      acct_seeded_from_ = stored->seeded_from;
      spdlog::info("accounting: {} associations, {} QOS from the accounting store",
                   data->assocs.size(), data->qos.size());
    } else if (file) {
      data = from_file();
      spdlog::info("accounting: {} {} ({} associations, {} QOS)", file->path,
                   stored ? "changed since it was last loaded: it replaces the stored accounts, "
                            "users and QOS"
                          : "seeds the accounting store",
                   data->assocs.size(), data->qos.size());
      store(*data, file->digest);
    } else if (machine_.config().enforce.any()) {
      // Enforcement with no accounts anywhere: a new cluster's, as slurmdbd has once slurmctld
      // registers (only root's association until sacctmgr adds more).
      data = core::new_acct_data(config_.cluster_name);
      spdlog::info("accounting: no accounts yet; the cluster's root association and user root");
      store(*data, "");
    }
  } catch (const std::exception& e) {
    reachable = false;
    // The store cannot be reached: the journal keeps a copy of what was last installed.
    auto records = loaded.records.find("accounting");
    const bool cached = records != loaded.records.end() && records->second.count("data");
    spdlog::error(
        "accounting: cannot read the accounts, users and QOS from the store ({}); using {}",
        e.what(),
        cached ? "the journal's copy"
        : file ? file->path
               : "none");
    if (cached)
      data = records->second.at("data").get<core::AcctData>();
    else if (file)
      data = from_file();
    else if (machine_.config().enforce.any())
      data = core::new_acct_data(config_.cluster_name);
  }
  if (data) {
    Effects fx;
    machine_.install_accounting(std::move(*data), fx);
    acct_journal_pending_ = true;
  }
  return reachable;
}

std::optional<json> Server::acct_change(Event& ev, Effects&) {
  if (acct_change_busy_) {
    acct_change_parked_.push_back(std::move(ev));
    return std::nullopt;
  }
  std::optional<core::AcctData> to_store;
  const auto& change = std::get<proto::AcctChangeRequest>(*ev.request);
  json reply = machine_.acct_change(change, ev.caller, to_store);
  if (!to_store) return reply;
  acct_change_busy_ = true;
  // Stored on the worker; installed and answered back on this thread, after which the
  // requests parked meanwhile are handled again, in their order.
  auto data = std::make_shared<core::AcctData>(std::move(*to_store));
  acct_->post_query([this, data, seeded = acct_seeded_from_, reply = std::move(reply),
                     request = json(change.request), who = ev.caller,
                     conn = ev.conn](store::AccountingStore& store) mutable {
    std::string error;
    try {
      store.store_assoc_data({*data, seeded});
    } catch (const std::exception& e) {
      spdlog::error("sacctmgr: {}", e.what());
      error = e.what();
    }
    Event back{Event::Task, nullptr, {}, {}, {}};
    back.apply = [this, data, error, reply = std::move(reply), request, who,
                  conn](Effects& fx) -> std::function<void()> {
      json answer = reply;
      if (error.empty()) {
        machine_.install_accounting(std::move(*data), fx);
        spdlog::info("accounting: {} {} by {}", request.value("action", ""),
                     request.value("entity", ""), who.user);
      } else {
        answer = {{"ok", true},
                  {"out", ""},
                  {"err", "sacctmgr: error: Problem talking to the database: " + error + "\n"},
                  {"rc", 1}};
      }
      acct_change_busy_ = false;
      for (Event& parked : acct_change_parked_) post(std::move(parked));
      acct_change_parked_.clear();
      return [conn, text = proto::dump(answer)] { conn->send(text); };
    };
    post(std::move(back));
  });
  return std::nullopt;
}

void Server::post(Event ev) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(ev));
  }
  cv_.notify_one();
}

int Server::run() {
  // Unix socket for commands: world-connectable; identity comes from SO_PEERCRED.
  const std::string sock_path = state_dir_ + "/ctld.sock";
  ::unlink(sock_path.c_str());
  impl_->unix_acceptor.open(asio::local::stream_protocol());
  impl_->unix_acceptor.bind(asio::local::stream_protocol::endpoint(sock_path));
  impl_->unix_acceptor.listen(asio::socket_base::max_listen_connections);
  ::chmod(sock_path.c_str(), 0666);

  asio::ip::tcp::endpoint ep(asio::ip::make_address(config_.bind_address),
                             static_cast<unsigned short>(config_.port));
  impl_->tcp_acceptor.open(ep.protocol());
  impl_->tcp_acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->tcp_acceptor.bind(ep);
  impl_->tcp_acceptor.listen(asio::socket_base::max_listen_connections);
  spdlog::info("listening on {} and {}:{}", sock_path, config_.bind_address, config_.port);

  impl_->signals.async_wait([this](const boost::system::error_code&, int sig) {
    spdlog::info("signal {}: shutting down", sig);
    stopping_ = true;
    cv_.notify_all();
    impl_->io.stop();
  });
  await_sighup();
  accept_unix();
  accept_tcp();
  started_at_ = last_job_change_ = wall_now();
  if (config_.http_port > 0) start_http();

  std::thread state_thread([this] { state_loop(); });
  try {
    start_k8s_operator();
  } catch (const std::exception& e) {
    // A controller without its operator still runs the cluster's static nodes.
    spdlog::error("k8s operator not started: {}", e.what());
  }
  impl_->io.run();
  stopping_ = true;
  cv_.notify_all();
  if (k8s_operator_) k8s_operator_->stop();
  state_thread.join();
  ::unlink(sock_path.c_str());
  return 0;
}

std::variant<proto::Request, std::string> Server::decode_command(const std::string& payload) {
  try {
    return proto::decode_request(proto::decode_object(payload));
  } catch (const proto::BadRequest& e) {
    return proto::dump(e.error.reply());
  } catch (const proto::BadMessage& e) {
    return proto::dump(
        proto::Error(proto::Errno::kError, std::string("Invalid request: ") + e.what()).reply());
  }
}

void Server::accept_unix() {
  impl_->unix_acceptor.async_accept([this](boost::system::error_code ec,
                                           asio::local::stream_protocol::socket sock) {
    if (!ec) {
      auto cred = net::peer_credentials(sock.native_handle());
      std::shared_ptr<void> ticket;
      if (cred) ticket = impl_->unix_admission.admit(cred->uid);
      if (ticket) {
        auto conn = std::make_shared<net::Connection>(net::Connection::Socket(std::move(sock)));
        conn->set_limits(command_limits());
        Caller caller{cred->uid, cred->gid, user_name(cred->uid), group_name(cred->gid)};
        std::weak_ptr<net::Connection> weak = conn;
        conn->start(
            [this, weak, caller](std::string payload) {
              auto c = weak.lock();
              if (!c) return;
              // The one decode step: what reaches handle() is a typed request.
              auto decoded = decode_command(payload);
              if (auto* refusal = std::get_if<std::string>(&decoded))
                return c->send(std::move(*refusal));
              post({Event::Client, c, std::move(std::get<proto::Request>(decoded)), caller, {}});
            },
            [ticket](const std::string&) {});
      }
    }
    if (impl_->unix_acceptor.is_open()) accept_unix();
  });
}

void Server::accept_tcp() {
  impl_->tcp_acceptor.async_accept(
      [this](boost::system::error_code ec, asio::ip::tcp::socket sock) {
        if (!ec) {
          boost::system::error_code ignored;
          sock.set_option(asio::ip::tcp::no_delay(true), ignored);
          auto remote = sock.remote_endpoint(ignored);
          auto ticket = impl_->tcp_admission.admit();
          auto handshake = ticket ? impl_->handshake_admission.admit() : nullptr;
          if (handshake) {
            auto conn = std::make_shared<net::Connection>(net::Connection::Socket(std::move(sock)));
            conn->set_peer(remote.address().to_string());
            conn->set_limits(agent_limits());
            on_agent_connection(conn, std::move(ticket), std::move(handshake));
          }
        }
        if (impl_->tcp_acceptor.is_open()) accept_tcp();
      });
}

// Runs the handshake on the I/O thread (it needs only the key), then forwards messages.
void Server::on_agent_connection(std::shared_ptr<net::Connection> conn,
                                 std::shared_ptr<void> ticket, std::shared_ptr<void> handshake) {
  struct Link {
    std::string nonce_c = net::to_hex(net::random_bytes(16));
    std::string node;
    bool authenticated = false;
    std::optional<Caller> command;  // a command's link: who the credential named
    std::string via_host;
    std::shared_ptr<void> ticket, handshake;  // admission slots (handshake: until authenticated)
    std::shared_ptr<void> command_slot;       // a command's, per uid (remote_admission)
  };
  auto link = std::make_shared<Link>();
  link->ticket = std::move(ticket);
  link->handshake = std::move(handshake);
  std::weak_ptr<net::Connection> weak = conn;
  conn->start(
      [this, weak, link](std::string payload) {
        auto c = weak.lock();
        if (!c) return;
        auto refuse = [&](const std::string& why, const std::string& log, proto::Errno code) {
          if (uint64_t more = 0; impl_->handshake_log.allow(more))
            spdlog::warn("{} from {}: {}{}", log, c->peer(), why,
                         net::LogLimiter::held_back_suffix(more));
          c->send(proto::Refusal{why, static_cast<int32_t>(code)}.to_json().dump(), false);
          c->close();
        };
        if (link->command) {
          // A request on a command's link (authenticated by the session key): the caller is
          // the one its credential named.
          auto decoded = decode_command(payload);
          if (auto* refusal = std::get_if<std::string>(&decoded))
            return c->send(std::move(*refusal));
          Event ev{
              Event::Client, c, std::move(std::get<proto::Request>(decoded)), *link->command, {}};
          ev.via_host = link->via_host;
          post(std::move(ev));
          return;
        }
        // Each frame is decoded once, here: what goes on to the state thread is typed.
        json msg;
        std::string type;
        proto::Register reg;
        std::optional<proto::FromAgent> from_agent;
        try {
          msg = proto::decode_object(payload);
          type = proto::get_string(msg, "type");
          if (!link->authenticated) {
            if (type != "command") reg = proto::Register::from_json(msg);
          } else {
            from_agent = proto::decode_from_agent(msg);
          }
        } catch (const proto::BadMessage& e) {
          if (uint64_t more = 0; link->authenticated || impl_->handshake_log.allow(more))
            spdlog::warn("{} from {}: {}{}",
                         link->authenticated ? "agent " + link->node : "connection", c->peer(),
                         e.what(), net::LogLimiter::held_back_suffix(more));
          // An agent's message of a type this controller does not know is logged and dropped
          // (the link stays); anything else ill-formed ends the link.
          if (link->authenticated && msg.is_object()) return;
          return c->close();
        }
        const std::string& node = reg.node;
        if (!link->authenticated) {
          const int version =
              type == "command" ? static_cast<int>(proto::get_int(msg, "version", 0)) : reg.version;
          if (const std::string why = net::protocol_refusal(version); !why.empty())
            return refuse(why, type == "command" ? "command" : "agent " + node,
                          proto::Errno::kProtocolVersion);
          if (type == "command") {
            // A command from another host: the host's credential names the caller; its node
            // key (derived here from the host's name) signed it, once, shortly before.
            net::UserCredCheck check;
            try {
              check =
                  net::verify_user_cred(key_, proto::get_string(msg, "cred"),
                                        proto::get_string(msg, "sig"), wall_now(), impl_->replays);
            } catch (const proto::BadMessage& e) {
              check.error = e.what();
            }
            if (!check.cred)
              return refuse("Authentication failure: " + check.error, "command",
                            proto::Errno::kAuthCredInvalid);
            const net::UserCred& u = *check.cred;
            std::shared_ptr<void> slot = impl_->remote_admission.admit(u.uid);
            if (!slot)
              return refuse("too many connections from uid " + std::to_string(u.uid), "command",
                            proto::Errno::kError);
            link->command_slot = std::move(slot);
            link->command = Caller{u.uid, u.gid, user_name(u.uid), group_name(u.gid)};
            link->via_host = u.host;
            link->authenticated = true;
            link->handshake.reset();
            c->set_limits(command_limits());  // as on ctld.sock: idle ones go
            c->set_session_key(check.session_key, true);
            // Under the session key: the command learns that this is its controller (one that
            // knows its host's key) before it sends the request.
            c->send(json{{"type", "accepted"}}.dump());
            return;
          }
          // The node key is derived from the name the agent claims: only that node holds it.
          const std::string node_key = net::node_key(key_, node);
          const std::string& nonce_a = reg.nonce;
          if (type != "register" || nonce_a.size() < 16 ||
              !net::constant_time_equal(reg.mac,
                                        net::agent_proof(node_key, link->nonce_c, nonce_a, node)))
            return refuse("authentication failed", "agent", proto::Errno::kAuthentication);
          link->authenticated = true;
          link->handshake.reset();
          link->node = node;
          int interval = static_cast<int>(config_.heartbeat_interval_s());
          c->send(proto::Welcome{net::kProtocolVersion, step_pub_,
                                 net::controller_proof(node_key, nonce_a, link->nonce_c, step_pub_),
                                 interval}
                      .to_json()
                      .dump(),
                  false);
          c->set_session_key(net::session_key(node_key, link->nonce_c, nonce_a), true);
          // Where the controller sees it from, not what it might claim.
          reg.address = c->peer();
          Event ev{Event::AgentRegister, c, {}, {}, node};
          ev.from_agent = std::move(reg);
          post(std::move(ev));
          return;
        }
        Event ev{Event::AgentMessage, c, {}, {}, link->node};
        ev.from_agent = std::move(from_agent);
        post(std::move(ev));
      },
      [this, weak, link](const std::string& why) {
        if (!link->authenticated || link->command) return;
        spdlog::info("agent {} disconnected: {}", link->node, why);
        post({Event::AgentClosed, weak.lock(), {}, {}, link->node});
      });
  conn->send(proto::Hello{link->nonce_c, net::kProtocolVersion}.to_json().dump(), false);
}

void Server::await_sighup() {
  impl_->hangup.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    spdlog::info("SIGHUP: reconfiguring from {}", config_.source_path);
    Event ev{Event::Task, nullptr, {}, {}, {}};
    ev.apply = [this](Effects& fx) -> std::function<void()> {
      reconfigure(nullptr, fx);
      return nullptr;
    };
    post(std::move(ev));
    await_sighup();
  });
}

json Server::reconfigure(const Caller* who, Effects& fx) {
  if (who != nullptr && !machine_.is_operator(*who)) {
    spdlog::warn("reconfigure refused: uid {} is not an operator", who->uid);
    return error_reply(proto::Errno::kUserIdMissing);
  }
  std::string why;
  std::vector<std::string> warnings;
  // Whatever a bad file throws is a refusal (SIGHUP's has nobody else to catch it).
  try {
    Config next = load_config_file(config_.source_path);
    warnings = next.conf.warnings;
    why = machine_.reconfigure(std::move(next), wall_now(), fx);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!why.empty()) {
    spdlog::error("reconfigure refused, the configuration in force is kept: {}", why);
    return error_reply(proto::Errno::kError, why);
  }
  for (const auto& w : warnings) spdlog::warn("{}", w);
  spdlog::info("reconfigure: {} is now the configuration in force", config_.source_path);
  return {{"ok", true}};
}

void Server::handle(Event& ev, Effects& fx, Replies& replies) {
  const int64_t now = wall_now();
  switch (ev.kind) {
    case Event::Client: {
      json reply;
      std::string text;  // the reply already as text (job lists)
      const proto::Request& req = *ev.request;
      const auto* query = std::get_if<proto::QueryRequest>(&req);
      try {
        if (query && query->what == "acct_jobs") {
          acct_query(*query, ev.caller, ev.conn);
          break;  // answered by the accounting worker
        } else if (query && query->what == "usage") {
          usage_query(*query, ev.conn);
          break;
        } else if (std::holds_alternative<proto::ReconfigureRequest>(req)) {
          reply = reconfigure(&ev.caller, fx);
        } else if (std::holds_alternative<proto::AcctChangeRequest>(req)) {
          auto r = acct_change(ev, fx);
          if (!r) break;  // answered once stored
          reply = std::move(*r);
        }
        // A token is a bearer credential for anywhere: from another host, only the caller's own
        // (a host's key vouches for its users there, and should not reach further).
        else if (const auto* token = std::get_if<proto::TokenRequest>(&req))
          reply =
              issue_token(*token, ev.caller, ev.via_host.empty() && machine_.is_operator(ev.caller),
                          token_key(key_), now);
        // Job lists also say when the queue was last planned whole and when a job last changed
        // (squeue --json's last_backfill and last_update, as the REST API's).
        else if (auto r = apply_client_request(
                     machine_, req, ev.caller, now, fx, text,
                     {{"last_backfill", last_full_pass_at_}, {"last_update", last_job_change_}})) {
          reply = std::move(*r);
          if (std::holds_alternative<proto::SubmitRequest>(req) && reply.value("ok", false))
            ++sched_stats_.jobs_submitted;
        } else
          reply = proto::Error(proto::Errno::kError, "Unknown request").reply();
      } catch (const std::exception& e) {
        // The handlers refuse with a reply; an exception is a bug, answered rather than fatal.
        reply = proto::Error(proto::Errno::kInternal, std::string("Invalid request: ") + e.what())
                    .reply();
      }
      replies.emplace_back(ev.conn, text.empty() ? proto::dump(reply) : std::move(text));
      break;
    }
    case Event::AgentRegister: {
      json r;
      try {
        r = machine_.agent_register(ev.node, std::get<proto::Register>(*ev.from_agent), now, fx);
      } catch (const std::exception& e) {
        r = error_reply(proto::Errno::kError, std::string("bad registration: ") + e.what());
      }
      if (!r.value("ok", false)) {
        spdlog::warn("agent {} rejected: {}", ev.node, r.value("error", ""));
        const proto::Error refused = *proto::Error::from_reply(r);
        ev.conn->send(proto::dump(
            proto::Refusal{refused.message, static_cast<int32_t>(refused.code)}.to_json()));
        ev.conn->close();
        break;
      }
      spdlog::info("agent {} registered from {}", ev.node, ev.conn->peer());
      auto& slot = agents_[ev.node];
      if (slot && slot != ev.conn) slot->close();
      slot = ev.conn;
      break;
    }
    case Event::AgentMessage: {
      const proto::FromAgent& m = *ev.from_agent;
      if (const auto* hb = std::get_if<proto::Heartbeat>(&m))
        machine_.agent_heartbeat(ev.node, *hb, now);
      else if (const auto* e = std::get_if<proto::JobExited>(&m))
        machine_.agent_exited(ev.node, *e, now, fx);
      else if (const auto* s = std::get_if<proto::StepExited>(&m))
        machine_.agent_step_exited(ev.node, *s, now, fx);
      else if (std::holds_alternative<proto::JobStarted>(m))
        machine_.agent_heartbeat(ev.node, {}, now);
      // A second registration on an authenticated link means nothing.
      break;
    }
    case Event::Rest:
    case Event::Task:
      if (auto answer = ev.apply(fx)) after_commit_.push_back(std::move(answer));
      break;
    case Event::AgentClosed: {
      auto it = agents_.find(ev.node);
      // The node's agent is gone, not one its own reconnection replaced (a connection in
      // agents_ is alive, so one that no longer exists was not the node's current one).
      if (it != agents_.end() && ev.conn && it->second == ev.conn) {
        agents_.erase(it);
        machine_.agent_disconnected(ev.node, now);
      }
      break;
    }
  }
}

void Server::start_http() {
  net::HttpLimits limits;
  limits.max_connections = 16;  // scrapers are few; a flood must not pile work on the state thread
  limits.max_body_bytes = 64 * 1024;
  limits.timeout = std::chrono::seconds(10);
  impl_->http = std::make_unique<net::HttpServer>(impl_->io, limits);
  // GET /metrics has everything; Slurm 25.11's /metrics/<group> paths have their part.
  const std::pair<const char*, unsigned> paths[] = {
      {"/metrics", kMetricsAll},
      {"/metrics/jobs", kMetricsJobs},
      {"/metrics/nodes", kMetricsNodes},
      {"/metrics/partitions", kMetricsPartitions},
      {"/metrics/jobs-users-accts", kMetricsUsersAccounts},
      {"/metrics/scheduler", kMetricsScheduler},
  };
  // Who may scrape (docs/metrics.md): `Authorization: Bearer` with the operator's token
  // (DroverMetricsTokenFile, what Prometheus' credentials_file sends) sees everything, with a
  // user's JWT (`scontrol token`) what PrivateData lets that user see; without a token only a
  // listener on loopback answers (local users can run squeue anyway), under PrivateData.
  auto operator_token = std::make_shared<std::string>();
  if (const std::string file = config_.conf.get("DroverMetricsTokenFile", ""); !file.empty()) {
    std::ifstream in(file);
    std::getline(in, *operator_token);
    while (!operator_token->empty() &&
           std::isspace(static_cast<unsigned char>(operator_token->back())))
      operator_token->pop_back();
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
      spdlog::warn("DroverMetricsTokenFile={} is readable by other users (chmod 600)", file);
    if (operator_token->empty())
      spdlog::error("DroverMetricsTokenFile={}: no token read; scrapes need a user's token", file);
  }
  boost::system::error_code addr_ec;
  const auto bound = asio::ip::make_address(config_.http_address, addr_ec);
  const bool loopback_only = !addr_ec && bound.is_loopback();
  for (const auto& [path, groups] : paths) {
    impl_->http->route(
        "GET", path,
        [this, groups = groups, operator_token, loopback_only](const net::HttpRequest& req,
                                                               net::HttpResponder respond) {
          const MetricsFormat f = metrics_format_for(req.header("Accept"));
          auto refuse = [&respond](const std::string& why) {
            net::HttpResponse r;
            r.status = 401;
            r.body = why + "\n";
            r.headers.emplace_back("WWW-Authenticate", "Bearer");
            respond(std::move(r));
          };
          const std::string authorization = req.header("Authorization");
          std::optional<Caller> caller;
          bool full_view = false;
          if (!authorization.empty()) {
            if (authorization.size() <= 7 || !core::iequals(authorization.substr(0, 7), "Bearer "))
              return refuse("Authorization: Bearer TOKEN expected");
            const std::string token = authorization.substr(7);
            if (!operator_token->empty() && net::constant_time_equal(token, *operator_token)) {
              full_view = true;
            } else {
              RestAuth auth =
                  rest_authenticate(token_key(key_), "", token, std::time(nullptr), system_users());
              if (!auth.caller) return refuse("Authentication failed: " + auth.error);
              caller = std::move(auth.caller);
            }
          } else if (!loopback_only) {
            return refuse("a token is needed: Authorization: Bearer (scontrol token)");
          }
          auto task = [this, f, groups, full_view, caller, respond = std::move(respond)] {
            net::HttpResponse r;
            r.content_type = std::string(metrics_content_type(f));
            const MetricsAudience audience =
                metrics_audience(machine_.config().conf.get("PrivateData", ""),
                                 caller ? std::optional<std::string>(caller->user) : std::nullopt,
                                 full_view || (caller && machine_.is_operator(*caller)));
            r.body = metrics_text(machine_, sched_stats_, f, groups, audience);
            // The autoscaler's demand per NodeSet (the operator's, read under its own lock).
            if (k8s_operator_ && (groups & kMetricsScheduler) != 0) {
              const std::string demand = k8s_operator_->demand_metrics();
              const auto eof = r.body.rfind("# EOF\n");
              if (!demand.empty())
                r.body.insert(eof == std::string::npos ? r.body.size() : eof, demand);
            }
            respond(std::move(r));
          };
          {
            std::lock_guard lock(mu_);
            tasks_.push_back(std::move(task));
          }
          cv_.notify_one();
        });
  }
  start_rest(*impl_->http);
  const auto port =
      impl_->http->listen(config_.http_address, static_cast<unsigned short>(config_.http_port));
  spdlog::info("metrics on http://{}:{}/metrics, REST API under /slurm/ and /slurmdb/",
               config_.http_address, port);
}

void Server::state_loop() {
  using clock = std::chrono::steady_clock;
  auto next_tick = clock::now();
  auto last_full_pass = clock::now();
  clock::duration last_full_pass_cost{};
  std::vector<Event> batch;
  std::vector<std::function<void()>> tasks;
  while (!stopping_) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, next_tick,
                     [this] { return stopping_ || !queue_.empty() || !tasks_.empty(); });
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
      tasks.swap(tasks_);
    }
    if (stopping_) break;
    Effects fx;
    bool ticked = false;
    Replies replies;
    bool agents_changed = false;
    for (auto& ev : batch) {
      agents_changed =
          agents_changed || ev.kind == Event::AgentRegister || ev.kind == Event::AgentClosed;
      handle(ev, fx, replies);
    }
    batch.clear();
    const int64_t now = wall_now();
    if (clock::now() >= next_tick) {
      // Re-plan the whole queue every bf_interval, or every second while passes are cheap
      // (under a twentieth of the time between them).
      const auto since = clock::now() - last_full_pass;
      const bool full = since >= std::chrono::seconds(machine_.config().bf_interval_s) ||
                        (since >= std::chrono::seconds(1) && last_full_pass_cost * 20 < since);
      machine_.tick(now, fx, full);
      fx.notify(notice::Reschedule{});
      ticked = true;
      next_tick = clock::now() + std::chrono::seconds(1);
    }
    if (fx.reschedule()) {
      const bool full = machine_.full_pass_pending();
      const uint64_t backlog = pending_backlog(machine_);
      const auto started = clock::now();
      const auto deadline = started + std::chrono::seconds(machine_.config().bf_max_time_s);
      machine_.schedule(now, fx, [deadline] { return clock::now() >= deadline; });
      sched_stats_.record_pass(std::chrono::duration<double>(clock::now() - started).count(),
                               backlog);
      if (const size_t left = machine_.last_pass_not_considered()) {
        ++sched_stats_.passes_out_of_time;
        if (uint64_t more = 0; impl_->pass_time_log.allow(more))
          spdlog::warn("scheduling pass stopped at bf_max_time={}s with {} jobs not considered{}",
                       machine_.config().bf_max_time_s, left,
                       net::LogLimiter::held_back_suffix(more));
      }
      if (full) {
        last_full_pass_at_ = now;
        last_full_pass = clock::now();
        last_full_pass_cost = last_full_pass - started;
      }
    }

    // Group commit: everything this batch changed, in one transaction, before any reply.
    try {
      for (const auto& key : acct_unjournal_) journal_.erase_record("acct_pending", key);
      acct_unjournal_.clear();
      for (const JournalWrite& w : fx.journal_writes()) write_journal(w);
      // Runs a requeue ended: the job goes on with its next run, so the journal keeps them
      // until the store has them.
      for (const AcctRecord& r : fx.acct_records())
        if (const auto* run = std::get_if<acct::RequeuedRun>(&r)) {
          const std::string key =
              std::to_string(run->run.job_id) + "." + std::to_string(run->run.submit_time);
          journal_.put_record("acct_pending", key, acct_record_json(run->run));
          acct_journaled_.emplace_back(acct_seq_ + 1, key);  // posted with this batch's records
        }
      if (acct_journal_pending_ && machine_.acct_data()) {
        journal_.put_record("accounting", "data", json(*machine_.acct_data()));
        acct_journal_pending_ = false;
      }
      journal_.commit();
    } catch (const std::exception& e) {
      // Without durability we must not acknowledge anything: stop hard.
      spdlog::critical("journal commit failed: {}", e.what());
      std::_Exit(70);
    }
    // Only a batch that changed jobs posts to the accounting worker: each post is answered with
    // a task for this thread, and a batch of only that task posting again made the two
    // threads wake each other without end (a core's worth of context switches when idle).
    if (!fx.acct_records().empty() || fx.any<journal::JobGone>())
      record_accounting(fx, ++acct_seq_);
    if (ticked) record_node_events(now);
    for (const Notice& n : fx.notices())
      if (const auto* w = std::get_if<notice::Warning>(&n)) spdlog::warn("{}", w->text);
    for (auto& [conn, reply] : replies) conn->send(std::move(reply));
    if (fx.any<journal::Job>() || fx.any<journal::JobGone>()) last_job_change_ = now;
    {
      const std::vector<uint64_t> plan_changed = machine_.take_plan_changes();
      if (ui_after_batch_) ui_after_batch_(fx, plan_changed);
    }
    for (auto& answer : after_commit_) answer();
    after_commit_.clear();
    for (auto& task : tasks) task();  // reads only (metrics): after this batch's changes
    tasks.clear();
    // Pod conditions follow the nodes' states: the operator looks again when they may have
    // changed (its own resync catches the rest within a second).
    if (k8s_operator_ && (agents_changed || fx.any<journal::Node>() ||
                          fx.any<journal::NodeGone>() || fx.any<journal::Job>()))
      k8s_operator_->poke();
    for (AgentOrder& o : fx.orders()) {
      if (auto* launch = std::get_if<proto::Launch>(&o.msg)) {
        if (!launch->resent) ++sched_stats_.jobs_started;
        if (launch->payload_id != 0) {
          if (auto payload = journal_.get_payload(launch->payload_id))
            complete_launch(*launch, *payload);
          else
            spdlog::error("job {}: script and environment missing from the journal",
                          launch->job_id);
        }
      }
      // Encoded here, once, as it goes out.
      auto it = agents_.find(o.node);
      if (it != agents_.end()) it->second->send(proto::dump(proto::to_json(o.msg)));
    }
  }
}

// After the journal commit: the jobs this batch touched, and the runs requeues ended, to the
// accounting worker, which writes them with whatever earlier writes left in its backlog. A
// failure loses nothing the journal holds; the worker retries.
void Server::record_accounting(const Effects& fx, uint64_t seq) {
  std::vector<store::JobRecord> records;
  records.reserve(fx.acct_records().size());
  // The runs requeues ended first: a job's own record, with its next run, comes after.
  for (const AcctRecord& r : fx.acct_records())
    if (const auto* run = std::get_if<acct::RequeuedRun>(&r)) records.push_back(run->run);
  for (const AcctRecord& r : fx.acct_records())
    if (const auto* j = std::get_if<acct::Job>(&r))
      if (const core::Job* job = machine_.find_job(j->id)) {
        records.push_back(acct_record(*job));
        acct_unwritten_[j->id] = {seq, records.back()};
        acct_unwritten_order_.emplace_back(seq, j->id);
      }
  acct_->post_records(seq, std::move(records));
}

void Server::write_journal(const JournalWrite& w) {
  std::visit(
      Overloaded{
          [](const std::monostate&) {},
          [&](const journal::Job& r) {
            if (const core::Job* job = machine_.find_job(r.id)) journal_.put_job(*job);
          },
          [&](const journal::JobGone& r) {
            spdlog::info("job {} purged (MinJobAge)", r.id);
            journal_.erase_job(r.id);
            // Its id may be the highest used: from now on the counter row alone says so.
            journal_.set_next_job_id(machine_.next_job_id());
            // Its last record is not in the accounting store yet: the journal keeps it till
            // then.
            if (auto it = acct_unwritten_.find(r.id); it != acct_unwritten_.end()) {
              journal_.put_record("acct_pending", std::to_string(r.id),
                                  acct_record_json(it->second.second));
              acct_journaled_.emplace_back(it->second.first, std::to_string(r.id));
            }
          },
          [&](const journal::NextJobId&) {
            // load() resumes after the highest job id it finds, so while the newest id is a
            // job's (written in this same commit) the counter row need not be: a row and
            // its page less in each submission's commit. Purges write it (above).
            const uint64_t next = machine_.next_job_id();
            if (next < 2 || machine_.find_job(next - 1) == nullptr) journal_.set_next_job_id(next);
          },
          [&](const journal::SubmitId& r) { journal_.put_record("submit_id", r.key, r.record); },
          [&](const journal::SubmitIdGone& r) { journal_.erase_record("submit_id", r.key); },
          [&](const journal::Reservation& r) {
            if (const core::Reservation* resv = machine_.find_reservation(r.name))
              journal_.put_record("reservation", r.name, *resv);
          },
          [&](const journal::ReservationGone& r) { journal_.erase_record("reservation", r.name); },
          [&](const journal::NextResvId&) {
            journal_.set_counter("next_resv_id", machine_.next_resv_id());
          },
          [&](const journal::Node& r) {
            journal_.put_record("node", r.name, machine_.node_admin_record(r.name));
          },
          [&](const journal::NodeGone& r) { journal_.erase_record("node", r.name); },
          [&](const journal::Partition& r) {
            journal_.put_record("partition", r.name, machine_.partition_admin_record(r.name));
          },
          [&](const journal::Payload& r) { journal_.put_payload(r.id, r.payload); },
          [&](const journal::PayloadGone& r) { journal_.erase_payload(r.id); },
          [&](const journal::Usage&) {
            journal_.put_record("fairshare", "usage", machine_.usage_record());
          },
          [&](const journal::Accounting&) {
            if (machine_.acct_data()) {
              journal_.put_record("accounting", "data", json(*machine_.acct_data()));
              acct_journal_pending_ = false;
            }
          },
      },
      w);
}

void Server::accounting_written(uint64_t seq) {
  while (!acct_unwritten_order_.empty() && acct_unwritten_order_.front().first <= seq) {
    const auto [posted, id] = acct_unwritten_order_.front();
    acct_unwritten_order_.pop_front();
    auto it = acct_unwritten_.find(id);
    if (it != acct_unwritten_.end() && it->second.first == posted) acct_unwritten_.erase(it);
  }
  // Their journal copies go with the next commit.
  std::erase_if(acct_journaled_, [&](const auto& entry) {
    if (entry.first > seq) return false;
    acct_unjournal_.push_back(entry.second);
    return true;
  });
}

void Server::record_node_events(int64_t now) {
  std::vector<store::NodeEventRecord> events;
  for (const auto& conf : config_.conf.nodes) {
    const core::Node* n = machine_.find_node(conf.name);
    if (!n) continue;
    const std::string state = node_service_state(*n);
    auto it = node_events_open_.find(conf.name);
    if (it != node_events_open_.end() && it->second.state == state) continue;
    if (it == node_events_open_.end() && state.empty()) continue;
    if (it != node_events_open_.end()) {
      it->second.until = now;
      events.push_back(it->second);
      node_events_open_.erase(it);
    }
    if (!state.empty()) {
      store::NodeEventRecord e{conf.name, now, 0, state, n->reason, node_tres(conf)};
      events.push_back(e);
      node_events_open_[conf.name] = std::move(e);
    }
  }
  acct_->post_node_events(std::move(events));
}

void Server::usage_query(const proto::QueryRequest& req, std::shared_ptr<net::Connection> conn) {
  const int64_t start = req.start.value_or(0), end = req.end.value_or(0);
  store::JobFilter filter;
  filter.window_start = start;
  filter.window_end = end;
  auto data = std::make_shared<const core::AcctData>(
      machine_.acct_data() ? *machine_.acct_data() : core::new_acct_data(config_.cluster_name));
  acct_->post_query([cluster = config_.cluster_name, filter, data, start, end,
                     conn](store::AccountingStore& store) {
    json reply;
    try {
      const auto jobs = store.query(filter);
      const auto tres = store.cluster_tres();
      const auto events = store.node_events(start, end);
      reply = usage_reply(cluster, jobs, tres, events, *data, start, end, wall_now());
    } catch (const std::exception& e) {
      spdlog::error("sreport: {}", e.what());
      reply = error_reply(proto::Errno::kDbConnection,
                          std::string("Problem talking to the database: ") + e.what());
    }
    conn->send(proto::dump(reply));
  });
}

void Server::acct_query(const proto::QueryRequest& req, const Caller& who,
                        std::shared_ptr<net::Connection> conn) {
  const store::JobFilter filter = acct_filter(req, who.uid);
  acct_->post_query([cluster = config_.cluster_name, filter, conn](store::AccountingStore& store) {
    json reply;
    try {
      json jobs = json::array();
      for (const auto& r : store.query(filter)) jobs.push_back(acct_record_json(r));
      reply = {{"ok", true}, {"cluster_name", cluster}, {"jobs", std::move(jobs)}};
    } catch (const std::exception& e) {
      spdlog::error("sacct: {}", e.what());
      reply = error_reply(proto::Errno::kDbConnection,
                          std::string("Problem talking to the database: ") + e.what());
    }
    conn->send(proto::dump(reply));
  });
}

}  // namespace drover::ctld
