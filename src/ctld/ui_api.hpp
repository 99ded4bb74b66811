#pragma once
// The web dashboard's JSON (served under /ui/api/ beside the REST API, same JWT): the queue as
// pages filtered and sorted in the controller, a job's detail, the nodes, and the change feed
// its Server-Sent Events carry. Pure functions of the state machine, run on the state thread.
// Nothing here ever carries a job's script or environment.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ctld/state_machine.hpp"

namespace drover::ctld {

// Who is asking and what PrivateData lets them see.
struct UiViewer {
  Caller who;
  bool is_operator = false;
  bool private_jobs = false;  // PrivateData=jobs: only their own jobs (operators see all)
  bool may_see(const core::Job& job) const {
    return is_operator || !private_jobs || job.uid == who.uid;
  }
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

// Slurm's pending reason code in plain words, with the job's own figures where they help
// ("Resources" -> "waiting for 2 GPUs (a100) and 4 CPUs to be free").
std::string ui_reason_text(const core::Job& job);

// What changed since the last look, for the event stream: job ids whose state, reason,
// priority, plan or nodes moved (and those gone), and whether any node did. Kept on the state
// thread; a look costs one pass over the jobs only when some job changed.
class UiChangeTracker {
 public:
  struct Changes {
    std::vector<std::pair<uint64_t, uint32_t>> jobs;  // (job id, owner uid)
    bool nodes = false;
    uint64_t node_version = 0;
  };
  // `job_version`: when a job last changed (the server's stamp); the job pass is skipped when
  // it has not moved since the last call.
  Changes look(const StateMachine& machine, int64_t job_version);
  uint64_t node_version() const { return node_version_; }
  bool primed() const { return primed_; }

 private:
  bool primed_ = false;
  int64_t job_version_ = -1;
  std::unordered_map<uint64_t, std::pair<uint64_t, uint32_t>> jobs_;  // id -> (digest, uid)
  uint64_t node_digest_ = 0, node_version_ = 0;
};

}  // namespace drover::ctld
