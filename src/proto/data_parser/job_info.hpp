#pragma once
// data_parser v0.0.44's job_info from the controller's job view (what `query jobs` answers with
// detail): one entry of "jobs" in slurmrestd's GET /slurm/v0.0.44/jobs, squeue --json and
// scontrol show job --json.
#include <nlohmann/json.hpp>
#include <string>

namespace drover::proto::data_parser {

nlohmann::json job_info(const nlohmann::json& view, const std::string& cluster);

}  // namespace drover::proto::data_parser
