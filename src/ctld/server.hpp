#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/thread_annotations.hpp"
#include "ctld/accounting_worker.hpp"
#include "ctld/k8s_operator.hpp"
#include "ctld/metrics.hpp"
#include "ctld/rest_api.hpp"
#include "ctld/state_machine.hpp"
#include "net/connection.hpp"
#include "net/http_server.hpp"
#include "proto/agent_msg.hpp"
#include "proto/request.hpp"
#include "store/accounting.hpp"
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
    // Task: work handed back to the state thread (the accounting worker's results).
    enum Kind { Client, AgentRegister, AgentMessage, AgentClosed, Rest, Task } kind;
    std::shared_ptr<net::Connection> conn;
    // Client: the command's request, decoded where it arrived (proto/request.hpp).
    std::optional<proto::Request> request;
    Caller caller;
    std::string node;
    // Client: the host that vouched for the caller of a command that came over TCP (empty:
    // the Unix socket, whose peer credentials named the caller).
    std::string via_host = {};
    // Rest, Task: runs in the batch; what it returns (if anything) runs after the batch is
    // committed (the answer).
    std::function<std::function<void()>(Effects&)> apply = {};
    // AgentRegister, AgentMessage: the agent's message, decoded where it arrived.
    std::optional<proto::FromAgent> from_agent = {};
  };
  void post(Event ev);
  void state_loop();
  // Replies are kept as the text to send (a big one as a json document costs far more).
  using Replies = std::vector<std::pair<std::shared_ptr<net::Connection>, std::string>>;
  void handle(Event& ev, Effects& fx, Replies& replies);
  // After the commit: the batch's job records to the accounting worker (`seq`: the batch's).
  void record_accounting(const Effects& fx, uint64_t seq);
  // One of the batch's journal writes, into the open transaction (the record as it is now).
  void write_journal(const JournalWrite& w);
  // The worker has written every record up to `seq` (a Task).
  void accounting_written(uint64_t seq);
  // sacct: answered on the accounting worker.
  void acct_query(const proto::QueryRequest& req, const Caller& who,
                  std::shared_ptr<net::Connection> conn);
  // The accounts, users, associations and QOS at startup: the store's; accounts.cfg's when
  // the store has none yet or the file changed since it was last loaded (then stored); the
  // journal's copy when the store cannot be reached; a new cluster's when accounts are
  // enforced and there are none anywhere.
  // Returns whether the store could be read.
  bool load_accounting_data(std::optional<AccountsFile> file, const store::Journal::Loaded& loaded);
  // sacctmgr's changes (`ev` holds an AcctChangeRequest): previewed by the state machine,
  // stored by the accounting worker, then installed (on the state thread again) and answered.
  // Returns the reply when there is one now (previews, refusals), nullopt when the answer
  // comes later.
  std::optional<json> acct_change(Event& ev, Effects& fx);
  // A command's frame decoded once, at the boundary: its request, or the error reply to send.
  static std::variant<proto::Request, std::string> decode_command(const std::string& payload);
  // sreport: usage in a window from the job records and the cluster's registered TRES,
  // answered on the accounting worker.
  void usage_query(const proto::QueryRequest& req, std::shared_ptr<net::Connection> conn);
  // Nodes out of service as sreport counts them (ctld/usage.hpp node_service_state): an event
  // opens in the accounting store when one goes out and is closed when it comes back. Checked
  // once a second; writes the store could not take are tried again.
  void record_node_events(int64_t now);
  // scontrol reconfigure (`who`: its caller, operators only) and SIGHUP (no caller): slurm.conf
  // read again and handed to StateMachine::reconfigure; the reply says why not, if refused.
  json reconfigure(const Caller* who, Effects& fx);
  // SIGHUP: a reconfigure on the state thread; the handler is set again for the next one.
  void await_sighup();
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
  // The web dashboard (server_rest.cpp, ui_*.cpp): its files under /ui/, its JSON under
  // /ui/api/ with the REST API's authentication, and its event stream.
  void start_ui(net::HttpServer& http);
  // A REST request that reads job records (rest_reads_accounting), answered on the accounting
  // worker (server_rest.cpp).
  void answer_from_accounting(const RestRequest& req, const Caller& caller, int64_t now,
                              std::function<void(const RestResponse&)> send);
  // The Kubernetes operator (DroverK8sNamespace=), on its own thread: its snapshots and
  // commands are state-thread tasks (server_k8s.cpp).
  void start_k8s_operator();
  class K8sHost;

  struct Impl;
  std::unique_ptr<Impl> impl_;
  // slurm.conf as read at startup: its listeners, storage and cluster identity are what a
  // reconfigure may not change, so the I/O thread reads them here unguarded. The configuration
  // in force is machine_.config().
  Config config_;
  std::string state_dir_;
  std::string key_;       // the controller's master secret (net/keys.hpp); no other host has it
  std::string step_pub_;  // the public half of the step-credential key, sent to agents
  StateMachine machine_;
  store::Journal journal_;
  // Job accounting (AccountingStorageType: SQLite, by default <state dir>/accounting.db, or
  // PostgreSQL) on a thread of its own: records go there after each journal commit, and sacct,
  // sreport, REST and sacctmgr's writes run there, so the database never stalls this thread.
  std::unique_ptr<AccountingWorker> acct_;
  // State thread only: the sequence number of the last batch of records posted, and the last
  // record of each job the worker has not yet said is written (in posting order), so that a
  // job purged before its record is in the store leaves that record in the journal.
  uint64_t acct_seq_ = 0;
  std::unordered_map<uint64_t, std::pair<uint64_t, store::JobRecord>> acct_unwritten_;
  std::deque<std::pair<uint64_t, uint64_t>> acct_unwritten_order_;  // (seq, job id)
  // Records the journal keeps ("acct_pending", by key) until the store has them, with the
  // batch after which they are written: the last record of a job purged while unwritten (key:
  // the job id), and the runs requeues ended (key: "<job id>.<submit time>"), which no
  // journaled job holds any more.
  std::vector<std::pair<uint64_t, std::string>> acct_journaled_;
  std::vector<std::string> acct_unjournal_;  // written since: their journal records can go
  std::string acct_seeded_from_;       // digest of the accounts.cfg the store's data came from
  bool acct_journal_pending_ = false;  // the journal's copy of the accounting data is behind
  // A sacctmgr change being stored: further sacctmgr requests wait for it (parked), so that
  // none is previewed on data about to change.
  bool acct_change_busy_ = false;
  std::vector<Event> acct_change_parked_;
  std::map<std::string, store::NodeEventRecord> node_events_open_;  // by node

  // The hand-over from the I/O (and worker) threads to the state thread.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> queue_ DROVER_GUARDED_BY(mu_);
  // Run on the state thread (metrics).
  std::vector<std::function<void()>> tasks_ DROVER_GUARDED_BY(mu_);
  SchedStats sched_stats_;  // state thread only
  // For the REST API (state thread only): answers to send once their batch is committed, when
  // the controller started, when a job last changed and when the queue was last planned whole.
  std::vector<std::function<void()>> after_commit_;
  // The dashboard's change feed, told after each batch which jobs it touched (start_ui).
  std::function<void(const Effects&, const std::vector<uint64_t>& plan_changed)> ui_after_batch_;
  int64_t started_at_ = 0, last_job_change_ = 0, last_full_pass_at_ = 0;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<K8sOperatorHost> k8s_host_;
  std::unique_ptr<K8sOperator> k8s_operator_;
  // The operator once started, for the dashboard's threads (k8s_operator_ is set on the main
  // thread after they run); it lives as long as the server.
  std::atomic<const K8sOperator*> k8s_ui_{nullptr};
  std::unordered_map<std::string, std::shared_ptr<net::Connection>> agents_;  // state thread only
};

}  // namespace drover::ctld
