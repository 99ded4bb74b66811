#pragma once
// The slurmrestd-shaped REST API (data_parser v0.0.44): /slurm/v0.0.44/... and
// /slurmdb/v0.0.44/... answered from the controller's own requests (query, submit, cancel) and
// the accounting store, so the rules stay in one place. Pure: requests in, JSON out; the
// server runs it on the state thread with the caller the token named (rest_auth.hpp).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctld/config.hpp"
#include "ctld/metrics.hpp"
#include "ctld/state_machine.hpp"
#include "proto/data_parser/envelope.hpp"
#include "proto/request.hpp"
#include "store/accounting.hpp"

namespace drover::ctld {

inline constexpr const char* kRestVersion = proto::data_parser::kVersion;

struct RestRequest {
  std::string method;                        // "GET", "POST", "DELETE"
  std::string path;                          // "/slurm/v0.0.44/job/12"
  std::map<std::string, std::string> query;  // decoded ?key=value pairs
  std::string body;
  std::string client;  // the peer, for meta.client.source
};

struct RestResponse {
  int status = 200;
  nlohmann::json body;
};

// What the API asks of the controller: the same requests the CLI sends over its socket.
class RestBackend {
 public:
  virtual ~RestBackend() = default;
  virtual nlohmann::json query(const proto::QueryRequest& req) = 0;
  virtual nlohmann::json submit(const proto::SubmitRequest& req, const Caller& who) = 0;
  virtual nlohmann::json cancel(const proto::CancelRequest& req, const Caller& who) = 0;
  virtual std::vector<store::JobRecord> acct_jobs(const store::JobFilter& filter) = 0;
  virtual SchedStats sched_stats() = 0;
};

struct RestContext {
  const Config& config;
  RestBackend& backend;
  Caller who;
  int64_t now = 0;
  int64_t started = 0;          // when the controller started (diag)
  int64_t last_job_change = 0;  // when a job last changed (jobs?update_time=)
  int64_t last_sched_pass = 0;  // when the scheduler last planned the whole queue
};

RestResponse rest_handle(const RestRequest& req, RestContext& ctx);
// Whether answering `req` reads the accounting store's job records (GET /slurmdb/.../jobs and
// .../job/ID): the server answers those on its accounting thread, with a backend whose only
// use is acct_jobs.
bool rest_reads_accounting(const RestRequest& req);

// The envelope every answer carries: meta (plugin, client, command, slurm version and
// cluster), errors and warnings. `slurmdb` picks the plugin that slurmrestd names.
nlohmann::json rest_envelope(const Config& config, const Caller& who, const std::string& client,
                             bool slurmdb);
// One entry of "errors", with Slurm's error number and its text.
inline nlohmann::json rest_error(int number, const std::string& description,
                                 const std::string& source) {
  return proto::data_parser::error_entry(number, description, source);
}
// A whole failed answer: the envelope with one error.
RestResponse rest_failure(int status, int number, const std::string& description,
                          const std::string& source, const Config& config, const Caller& who,
                          const std::string& client, bool slurmdb);

// "a=1&b=x%20y" -> {a: 1, b: "x y"} ('+' is a space, as forms encode it).
std::map<std::string, std::string> parse_query_string(const std::string& text);

// Slurm's error numbers and their texts, shared with the commands' --json output.
namespace rest_errno = proto::data_parser::errnum;
inline std::string rest_error_text(int number) { return proto::data_parser::error_text(number); }

}  // namespace drover::ctld
