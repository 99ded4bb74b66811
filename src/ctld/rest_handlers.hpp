#pragma once
// Inside the REST API: one request being answered, and the handlers per area
// (rest_jobs.cpp, rest_cluster.cpp, rest_slurmdb.cpp) that the router (rest_api.cpp) calls.
#include <string>
#include <vector>

#include "ctld/rest_api.hpp"

namespace drover::ctld::rest {

using nlohmann::json;

struct Call {
  const RestRequest& req;
  RestContext& ctx;
  json body;  // starts as the envelope; handlers add their keys
  int status = 200;
  // Adds one of Slurm's errors to "errors" and sets the HTTP status.
  void error(int http_status, int number, const std::string& description,
             const std::string& source) {
    status = http_status;
    body["errors"].push_back(rest_error(number, description, source));
  }
  void warning(const std::string& description, const std::string& source) {
    body["warnings"].push_back(proto::data_parser::warning_entry(description, source));
  }
  // A query parameter, "" when absent.
  std::string param(const std::string& key) const {
    auto it = req.query.find(key);
    return it == req.query.end() ? "" : it->second;
  }
};

// The routers (rest_api.cpp): false for a path they do not know.
bool route_slurm(const std::vector<std::string>& parts, Call& call);
bool route_slurmdb(const std::vector<std::string>& parts, Call& call);

// /slurm/v0.0.44/: jobs, job/{id}, job/submit (rest_jobs.cpp).
void get_jobs(Call& call);
void get_job(Call& call, const std::string& id);
void delete_job(Call& call, const std::string& id);
void submit_job(Call& call);
// ping, diag, nodes, partitions, reservations, shares (rest_cluster.cpp). `name` "" for all.
void get_ping(Call& call);
void get_diag(Call& call);
void get_nodes(Call& call, const std::string& name);
void get_partitions(Call& call, const std::string& name);
void get_reservations(Call& call, const std::string& name);
void get_shares(Call& call);
// /slurmdb/v0.0.44/ (rest_slurmdb.cpp).
void get_db_jobs(Call& call, const std::string& id);
void get_db_accounts(Call& call);
void get_db_users(Call& call);
void get_db_associations(Call& call);
void get_db_qos(Call& call);

// A JobSpec (as sbatch sends it) from a v0.0.44 job_desc_msg and the script; "" or why not.
std::string job_spec_from_desc(const json& desc, const std::string& script, json& spec);

}  // namespace drover::ctld::rest
