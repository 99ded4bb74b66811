#pragma once
// The web dashboard's JSON (served under /ui/api/ beside the REST API, same JWT): the queue as
// pages filtered and sorted in the controller, a job's detail, the nodes, and the change feed
// its Server-Sent Events carry. Pure functions of the state machine, run on the state thread.
// Nothing here ever carries a job's script or environment.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ctld/state_machine.hpp"
#include "store/accounting.hpp"

namespace drover::ctld {

// Who is asking and what PrivateData lets them see.
struct UiViewer {
  Caller who;
  bool is_operator = false;
  bool private_jobs = false;          // PrivateData=jobs: only their own jobs (operators see all)
  bool private_usage = false;         // PrivateData=usage: only their own usage and shares
  bool private_reservations = false;  // PrivateData=reservations: only those naming them
  bool may_see(const core::Job& job) const {
    return is_operator || !private_jobs || job.uid == who.uid;
  }
  bool may_see(const store::JobRecord& r) const {
    return is_operator || !private_jobs || r.uid == who.uid;
  }
  // A job's output: its owner and operators only, whatever PrivateData says.
  bool may_read_output(uint32_t owner) const { return is_operator || owner == who.uid; }
};
UiViewer ui_viewer(const StateMachine& machine, const Caller& who);

// GET /ui/api/jobs?user=&account=&partition=&state=&name=&sort=&order=&offset=&limit=
struct UiJobQuery {
  std::string user, account, partition, name;  // exact, exact, exact, substring
  std::vector<std::string> states;             // "PENDING", "RUNNING", ...; empty: any
  std::string sort = "id";                     // a column: id, name, user, account, ...
  bool descending = false;
  size_t offset = 0;
  size_t limit = 100;
};
inline constexpr size_t kUiMaxPage = 1000;
// From the query parameters; "" or why not (an unknown sort key, a bad number).
std::string ui_parse_job_query(const std::map<std::string, std::string>& params, UiJobQuery& q);

// {"total", "offset", "jobs": [row...], "now", "version"}: one page of the jobs the viewer may
// see that match, each row the queue's columns.
nlohmann::json ui_job_page(const StateMachine& machine, const UiJobQuery& q, const UiViewer& v,
                           int64_t now, int64_t version);
// One job (the controller's own job view) with its plain-words reason, without its script or
// environment; nullopt when it does not exist or the viewer may not see it.
std::optional<nlohmann::json> ui_job_detail(const StateMachine& machine, uint64_t id,
                                            const UiViewer& v, int64_t now);
// {"nodes": [...], "partitions": [...]}: every node's state, reason and allocation.
nlohmann::json ui_nodes(const StateMachine& machine);

// ---- Ended jobs, from the accounting store (answered on its worker thread) ----

// GET /ui/api/history?user=&account=&partition=&state=&name=&start=&end=&offset=&limit=
// Jobs that ended within [start, end) (default: the last 7 days), newest end first.
struct UiHistoryQuery {
  std::string user, account, partition, name;  // exact, exact, exact, substring
  std::vector<std::string> states;             // long names; empty: every ended state
  int64_t start = 0, end = 0;
  size_t offset = 0;
  size_t limit = 100;
};
// The longest period one history request covers: a longer one is refused with a message
// (choose a shorter one), so one request cannot make the store read years of jobs.
inline constexpr int64_t kUiMaxHistoryDays = 93;
std::string ui_parse_history_query(const std::map<std::string, std::string>& params,
                                   UiHistoryQuery& q, int64_t now);
// What to ask the store for: the window, the states, and only the viewer's own jobs under
// PrivateData=jobs.
store::JobFilter ui_history_filter(const UiHistoryQuery& q, const UiViewer& v);
// {"total", "offset", "limit", "start", "end", "jobs": [row...]}: rows as the queue's, with
// `elapsed`, `exit_code` and `signal`.
nlohmann::json ui_history_page(const std::vector<store::JobRecord>& records,
                               const UiHistoryQuery& q, const UiViewer& v);

// A period is read from the store a slice at a time (a day), each slice a piece of work of its
// own on the accounting worker, so that sacct, the REST API and the records' writes run
// between the slices of a long request instead of after all of it, and only one slice's
// records are in memory at once. The slices of [start, end), `len` long (the last one
// shorter), oldest first.
inline constexpr int64_t kUiScanSlice = 86400;
std::vector<std::pair<int64_t, int64_t>> ui_slices(int64_t start, int64_t end, int64_t len);

// The history page, made slice by slice, newest slice first: it counts every match and keeps
// only the rows of the page asked for.
class UiHistoryScan {
 public:
  UiHistoryScan(UiHistoryQuery q, UiViewer v) : q_(std::move(q)), v_(std::move(v)) {}
  // The slices to read, newest first.
  std::vector<std::pair<int64_t, int64_t>> slices() const;
  // What to ask the store for one slice.
  store::JobFilter filter(int64_t from, int64_t to) const;
  // One slice's records (the jobs that ended in [from, to) are taken; the store's window also
  // holds jobs that ended later).
  void add(const std::vector<store::JobRecord>& records, int64_t from, int64_t to);
  nlohmann::json page() const;

 private:
  UiHistoryQuery q_;
  UiViewer v_;
  size_t total_ = 0;
  nlohmann::json rows_ = nlohmann::json::array();
};
// A job's accounting record (sacct's fields and its steps), when the viewer may see it.
std::optional<nlohmann::json> ui_job_accounting(const std::vector<store::JobRecord>& records,
                                                uint64_t id, const UiViewer& v);

// ---- Usage over time (sreport's numbers per period) ----

// GET /ui/api/usage?start=&end=&step=hour|day
struct UiUsageQuery {
  int64_t start = 0, end = 0;
  int64_t step = 86400;  // seconds per bucket
};
inline constexpr size_t kUiMaxUsageBuckets = 400;
std::string ui_parse_usage_query(const std::map<std::string, std::string>& params, UiUsageQuery& q,
                                 int64_t now);
// {"start", "end", "step", "buckets": [t...], "series": [{"account", "user", "cpu_s": [...],
// "gpu_s": [...], "cpu_total_s", "gpu_total_s"}...]}: what each (account, user) held per
// bucket, in CPU- and GPU-seconds, from the jobs' allocations (sreport's Allocated). Under
// PrivateData=usage a user gets only their own rows.
nlohmann::json ui_usage(const std::vector<store::JobRecord>& records, const UiUsageQuery& q,
                        const UiViewer& v, int64_t now);

// The same, slice by slice (see UiHistoryScan): a job that spans slices is read with each and
// counted in each only for its time within that slice.
class UiUsageScan {
 public:
  UiUsageScan(UiUsageQuery q, UiViewer v, int64_t now);
  // Whole buckets, oldest first.
  std::vector<std::pair<int64_t, int64_t>> slices() const;
  store::JobFilter filter(int64_t from, int64_t to) const;
  void add(const std::vector<store::JobRecord>& records, int64_t from, int64_t to);
  nlohmann::json result() const;

 private:
  struct Series {
    std::vector<int64_t> cpu, gpu;
    int64_t cpu_total = 0, gpu_total = 0;
  };
  UiUsageQuery q_;
  UiViewer v_;
  int64_t now_;
  size_t buckets_;
  std::map<std::pair<std::string, std::string>, Series> by_;  // (account, user)
};

// ---- Fair share and reservations (state thread) ----

// {"rows": [sshare's rows: account, user, parent, shares, usage, fair-share factor...]};
// under PrivateData=usage a user sees the accounts and only their own user rows.
nlohmann::json ui_fairshare(const StateMachine& machine, const UiViewer& v, int64_t now);
// {"now", "reservations": [...]}: scontrol show reservation's fields; under
// PrivateData=reservations a user sees only those that name them or their accounts.
nlohmann::json ui_reservations(const StateMachine& machine, const UiViewer& v, int64_t now);

// ---- A job's output ----

// Where a job's stdout and stderr are, as the batch step opens them (the controller's view of
// the paths: %N is the batch node's NodeName).
struct UiOutputFile {
  std::string path;
  uint32_t uid = 0;      // the job's owner: the file must belong to them
  std::string node;      // where the batch step runs or ran ("" before it starts)
  bool started = false;  // the batch step has been launched
};
// Why a job's output file is not where the controller looks, in words for its owner: not
// started yet, or written where only its node sees it (a node's local disk). The controller
// does not fetch files from nodes: output is shown from a shared file system only.
std::string ui_output_missing(const UiOutputFile& f);
// nullopt when there is no such job, the viewer may not read it, or it has no batch output
// (an interactive job's output goes to srun).
std::optional<UiOutputFile> ui_output_file(const StateMachine& machine, uint64_t id,
                                           bool stderr_stream, const UiViewer& v);

// Slurm's pending reason code in plain words, with the job's own figures where they help
// ("Resources" -> "waiting for 2 GPUs (a100) and 4 CPUs to be free").
std::string ui_reason_text(const core::Job& job);

// What changed since the last look, for the event stream: job ids whose state, reason,
// priority, plan or nodes moved (and those gone), and whether any node did. Kept on the state
// thread. It is told which jobs each batch touched (those journaled, and those whose plan
// alone moved: StateMachine::take_plan_changes), so a look costs a pass over those jobs only,
// not over the queue; the one full pass is when the first stream opens (prime).
class UiChangeTracker {
 public:
  struct Changes {
    std::vector<std::pair<uint64_t, uint32_t>> jobs;  // (job id, owner uid)
    bool nodes = false;
    uint64_t node_version = 0;
  };
  // Digests every job and node: changes are reported from here on.
  void prime(const StateMachine& machine);
  // Forgets everything (no stream is open): nothing is noted until the next prime.
  void reset();
  bool primed() const { return primed_; }
  // After each batch: the jobs it touched. Ignored until primed.
  void note(const std::set<uint64_t>& dirty, const std::set<uint64_t>& erased,
            const std::vector<uint64_t>& plan_changed);
  // The same from a batch's effects: the jobs it writes to the journal or purges.
  void note(const Effects& fx, const std::vector<uint64_t>& plan_changed);
  // The noted jobs whose digest moved (or that are gone), and the nodes.
  Changes look(const StateMachine& machine);
  uint64_t node_version() const { return node_version_; }
  size_t noted() const { return noted_.size(); }

 private:
  bool look_nodes(const StateMachine& machine);
  bool primed_ = false;
  std::unordered_set<uint64_t> noted_;
  std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> jobs_;  // id -> (digest, uid)
  uint64_t node_digest_ = 0, node_version_ = 0;
};

}  // namespace drover::ctld
