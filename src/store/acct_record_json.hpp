#pragma once
// An accounting record as JSON: as the controller sends it to sacct, as its journal keeps
// records not yet in the store, and as the store keeps the earlier runs of requeued jobs.
#include <nlohmann/json.hpp>

#include "store/accounting.hpp"

namespace drover::store {

nlohmann::json record_json(const JobRecord& r);
// The inverse. Throws nlohmann::json::exception for a malformed document.
JobRecord record_from_json(const nlohmann::json& j);

}  // namespace drover::store
