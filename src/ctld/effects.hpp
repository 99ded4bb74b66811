#pragma once
// What applying a batch of requests asks the I/O side to do once the state thread commits it:
// journal writes, accounting records, orders for agents, and notices (a scheduling pass to
// run, a line for the log). Each is a typed value; the commit loop (Server::state_loop)
// dispatches on the type. The rules only add; nothing here does I/O.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "proto/agent_msg.hpp"
#include "store/accounting.hpp"

namespace drover::ctld {

// Journal writes. A record named by its key is written as it is when the batch commits, once
// however often it changed; a record's "...Gone" drops any earlier write of it in the batch.
namespace journal {
struct Job {  // the job's current form
  uint64_t id = 0;
  bool operator==(const Job&) const = default;
};
struct JobGone {  // purged (MinJobAge)
  uint64_t id = 0;
  bool operator==(const JobGone&) const = default;
};
struct NextJobId {  // the id counter (JobTable::next_id)
  bool operator==(const NextJobId&) const = default;
};
// A submission's request id ("<uid>:<id>" -> {"job_id", "at"}), kept with its job so that a
// retried sbatch is answered with the same job (JobTable::submit_ids).
struct SubmitId {
  std::string key;
  nlohmann::json record;
  bool operator==(const SubmitId&) const = default;
};
struct SubmitIdGone {
  std::string key;
  bool operator==(const SubmitIdGone&) const = default;
};
struct Reservation {
  std::string name;
  bool operator==(const Reservation&) const = default;
};
struct ReservationGone {
  std::string name;
  bool operator==(const ReservationGone&) const = default;
};
struct NextResvId {  // the counter naming unnamed reservations
  bool operator==(const NextResvId&) const = default;
};
struct Node {  // what scontrol set on it; a dynamic node's definition (node_admin_record)
  std::string name;
  bool operator==(const Node&) const = default;
};
struct NodeGone {
  std::string name;
  bool operator==(const NodeGone&) const = default;
};
struct Partition {  // what scontrol update changed (partition_admin_record)
  std::string name;
  bool operator==(const Partition&) const = default;
};
// A new submission's script and environment ({"script", "environment"}), kept out of memory.
struct Payload {
  uint64_t id = 0;
  nlohmann::json payload;
  bool operator==(const Payload&) const = default;
};
struct PayloadGone {  // no job refers to it any more
  uint64_t id = 0;
  bool operator==(const PayloadGone&) const = default;
};
struct Usage {  // fair-share usage (StateMachine::usage_record)
  bool operator==(const Usage&) const = default;
};
struct Accounting {  // the accounting entities (the journal keeps a copy of the store's)
  bool operator==(const Accounting&) const = default;
};
}  // namespace journal

using JournalWrite =
    std::variant<std::monostate, journal::Job, journal::JobGone, journal::NextJobId,
                 journal::SubmitId, journal::SubmitIdGone, journal::Reservation,
                 journal::ReservationGone, journal::NextResvId, journal::Node, journal::NodeGone,
                 journal::Partition, journal::Payload, journal::PayloadGone, journal::Usage,
                 journal::Accounting>;

// Records for the accounting store, posted after the commit.
namespace acct {
struct Job {  // the job's record as it is at the commit
  uint64_t id = 0;
  bool operator==(const Job&) const = default;
};
// A run that a requeue ended (state REQUEUED): kept beside the job's record, which goes on
// with its next run; the journal holds it until the store has it.
struct RequeuedRun {
  store::JobRecord run;
};
}  // namespace acct
using AcctRecord = std::variant<acct::Job, acct::RequeuedRun>;

// A message for a node's agent, sent once the batch is committed (encoded there).
struct AgentOrder {
  std::string node;
  proto::ToAgent msg;
};

// Wakeups and notifications for the state thread itself.
namespace notice {
struct Reschedule {  // something changed that a scheduling pass should look at
  bool operator==(const Reschedule&) const = default;
};
struct Warning {  // for the controller's log
  std::string text;
  bool operator==(const Warning&) const = default;
};
}  // namespace notice
using Notice = std::variant<notice::Reschedule, notice::Warning>;

// std::visit over lambdas, one per type.
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
// Clang before 17 deduces no aggregate's template arguments without a guide.
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

class Effects {
 public:
  void journal(JournalWrite w);
  // The job changed: its journal record and its accounting record.
  void job_changed(uint64_t id) {
    journal(journal::Job{id});
    account(acct::Job{id});
  }
  void account(AcctRecord r);
  void order(std::string node, proto::ToAgent msg) {
    orders_.push_back({std::move(node), std::move(msg)});
  }
  void notify(Notice n);

  // The writes in the order first made (a dropped one is std::monostate).
  const std::vector<JournalWrite>& journal_writes() const { return journal_; }
  const std::vector<AcctRecord>& acct_records() const { return acct_; }
  const std::vector<AgentOrder>& orders() const { return orders_; }
  std::vector<AgentOrder>& orders() { return orders_; }
  const std::vector<Notice>& notices() const { return notices_; }
  bool reschedule() const { return reschedule_; }

  // Whether a write of this record with this content is pending.
  bool journals(const JournalWrite& w) const;
  // The pending writes of one kind.
  template <class T>
  std::vector<T> writes() const {
    std::vector<T> out;
    for (const auto& w : journal_)
      if (const T* t = std::get_if<T>(&w)) out.push_back(*t);
    return out;
  }
  template <class T>
  bool any() const {
    return (kinds_ >> JournalWrite(T{}).index()) & 1u;
  }

 private:
  // A record's identity: its kind (a write and its "Gone" share one) and its id or name.
  struct Key {
    int kind = 0;
    uint64_t id = 0;
    std::string name;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<std::string>{}(k.name) ^ (k.id * 0x9e3779b97f4a7c15ull) ^
             static_cast<size_t>(k.kind);
    }
  };
  static Key key_of(const JournalWrite& w, bool& gone);

  std::vector<JournalWrite> journal_;
  std::unordered_map<Key, size_t, KeyHash> written_;  // record -> its write in journal_
  uint32_t kinds_ = 0;                                // bit per JournalWrite index written
  std::vector<AcctRecord> acct_;
  std::unordered_set<uint64_t> acct_jobs_;  // jobs with an acct::Job already
  std::vector<AgentOrder> orders_;
  std::vector<Notice> notices_;
  bool reschedule_ = false;
};

}  // namespace drover::ctld
