#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ctld/metrics.hpp"
#include "ctld/state_machine.hpp"
#include "net/connection.hpp"
#include "net/http_server.hpp"
#include "store/accounting.hpp"
#include "store/accounting_backlog.hpp"
#include "store/journal.hpp"

namespace drover::ctld {

// The controller process: an I/O thread (asio) for sockets and one state thread that owns
// the StateMachine. Every request becomes an Event on the state thread's queue; the state
// thread applies a batch of events, commits their journal writes in one transaction, then
// sends replies and agent messages (group commit).
class Server {
 public:
  // `accounts_file`: accounts.cfg beside slurm.conf, if there is one (it seeds the accounting
  // store's accounts, users and QOS, see load_accounting_data).
  Server(Config config, std::string state_dir, std::string cluster_key,
         std::optional<AccountsFile> accounts_file = std::nullopt);
  ~Server();
  // Runs until SIGTERM/SIGINT. Returns the process exit code.
  int run();

 private:
  struct Event {
    enum Kind { Client, AgentRegister, AgentMessage, AgentClosed, Rest } kind;
    std::shared_ptr<net::Connection> conn;
    json msg;
    Caller caller;
    std::string node;
    // Client: the host that vouched for the caller of a command that came over TCP (empty:
    // the Unix socket, whose peer credentials named the caller).
    std::string via_host = {};
    // Rest: runs in the batch; what it returns runs after the batch is committed (the answer).
    std::function<std::function<void()>(Effects&)> apply = {};
  };
  void post(Event ev);
  void state_loop();
  // Replies are kept as the text to send (a big one as a json document costs far more).
  using Replies = std::vector<std::pair<std::shared_ptr<net::Connection>, std::string>>;
  void handle(Event& ev, Effects& fx, Replies& replies);
  void record_accounting(const Effects& fx);
  void log_accounting(const store::AccountingBacklog::Attempt& a);
  json acct_query(const json& req, const Caller& who);
  // The accounts, users, associations and QOS at startup: the store's; accounts.cfg's when
  // the store has none yet or the file changed since it was last loaded (then stored); the
  // journal's copy when the store cannot be reached; a new cluster's when accounts are
  // enforced and there are none anywhere.
  // Returns whether the store could be read.
  bool load_accounting_data(std::optional<AccountsFile> file, const store::Journal::Loaded& loaded);
  // sacctmgr's changes: previewed by the state machine, stored, then installed.
  json acct_change(const json& req, const Caller& who, Effects& fx);
  // sreport: usage in a window from the job records and the cluster's registered TRES.
  json usage_query(const json& req);
  // Nodes out of service as sreport counts them (ctld/usage.hpp node_service_state): an event
  // opens in the accounting store when one goes out and is closed when it comes back. Checked
  // once a second; writes the store could not take are tried again.
  void record_node_events(int64_t now);
  void accept_unix();
  void accept_tcp();
  // `ticket`, `handshake`: its admission slots (Impl), held while open and until authenticated.
  // The port carries agents (first frame "register") and commands from other hosts (first
  // frame "command", with a host's credential, net/user_cred.hpp).
  void on_agent_connection(std::shared_ptr<net::Connection> conn, std::shared_ptr<void> ticket,
                           std::shared_ptr<void> handshake);
  // DroverHttpPort: GET /metrics (and Slurm's /metrics/<group>), answered by the state thread.
  void start_http();
  // The REST API (server_rest.cpp) on the HTTP server: /slurm/ and /slurmdb/ requests are
  // authenticated on the I/O thread and answered in the state thread's batches.
  void start_rest(net::HttpServer& http);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  Config config_;
  std::string state_dir_;
  std::string key_;       // the controller's master secret (net/keys.hpp); no other host has it
  std::string step_pub_;  // the public half of the step-credential key, sent to agents
  StateMachine machine_;
  store::Journal journal_;
  // Job accounting (AccountingStorageType: SQLite, by default <state dir>/accounting.db, or
  // PostgreSQL), written after each journal commit through the backlog, which keeps what the
  // store did not take (a database down) and retries. State thread only.
  std::unique_ptr<store::AccountingStore> acct_;
  std::unique_ptr<store::AccountingBacklog> acct_backlog_;
  // Records the journal keeps ("acct_pending", by key) until the store has them: the last
  // record of a job purged while it was still in the backlog (key: the job id), and the runs
  // requeues ended (key: "<job id>.<submit time>"), which no journaled job holds any more.
  std::vector<std::string> acct_journaled_;
  std::vector<std::string> acct_unjournal_;  // written since: their journal records can go
  std::string acct_seeded_from_;       // digest of the accounts.cfg the store's data came from
  bool acct_journal_pending_ = false;  // the journal's copy of the accounting data is behind
  std::map<std::string, store::NodeEventRecord> node_events_open_;  // by node
  std::vector<store::NodeEventRecord> node_events_unwritten_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> queue_;
  std::vector<std::function<void()>> tasks_;  // run on the state thread (metrics); under mu_
  SchedStats sched_stats_;                    // state thread only
  // For the REST API (state thread only): answers to send once their batch is committed, when
  // the controller started, when a job last changed and when the queue was last planned whole.
  std::vector<std::function<void()>> after_commit_;
  int64_t started_at_ = 0, last_job_change_ = 0, last_full_pass_at_ = 0;
  std::atomic<bool> stopping_{false};
  std::unordered_map<std::string, std::shared_ptr<net::Connection>> agents_;  // state thread only
};

}  // namespace drover::ctld
