#pragma once
// JSON forms of the accounting entities (core/acct_data.hpp) and of sacctmgr's requests
// (core/acct_admin.hpp): what sacctmgr sends and reads, and the journal's copy. Association
// settings and QOS fields travel as accounts.cfg options text, as the accounting store keeps
// them.
#include <nlohmann/json.hpp>

#include "core/acct_admin.hpp"
#include "core/acct_data.hpp"
#include "core/usage_report.hpp"

namespace drover::core {
void to_json(nlohmann::json& j, const AcctData& d);
// Throws nlohmann::json::exception or core::ParseError for what does not make the data.
void from_json(const nlohmann::json& j, AcctData& d);
void to_json(nlohmann::json& j, const AcctRequest& r);
void from_json(const nlohmann::json& j, AcctRequest& r);
// sreport's sums: TRES-seconds by TRES name.
void to_json(nlohmann::json& j, const UsageReport& r);
void from_json(const nlohmann::json& j, UsageReport& r);
}  // namespace drover::core
