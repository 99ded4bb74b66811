#pragma once
// data_parser v0.0.44's slurmdb job, with its steps, from an accounting record in the form the
// controller sends it to sacct (ctld/acct_record.hpp, acct_record_json): one entry of "jobs"
// in slurmrestd's GET /slurmdb/v0.0.44/jobs and in sacct --json.
#include <nlohmann/json.hpp>
#include <string>

namespace drover::proto::data_parser {

nlohmann::json db_job(const nlohmann::json& record, const std::string& cluster);

}  // namespace drover::proto::data_parser
