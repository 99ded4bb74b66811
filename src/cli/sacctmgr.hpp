#pragma once
// sacctmgr as a function of its arguments, what the controller answers and what is typed at its
// prompt (tests run it against canned replies and answers); sacctmgr_main runs it for real.
//
// Accounts, users, associations and QOS live in the controller (core/acct_data.hpp): `show`
// fetches them and lists them here with sacctmgr's formats; `add`, `modify` and `delete` send a
// core::AcctRequest, which the controller first previews (the text sacctmgr prints) and, once
// confirmed ("Would you like to commit changes?", or -i), commits.
#include <string>
#include <vector>

#include "cli/print_fields.hpp"
#include "cli/report_cmds.hpp"
#include "core/acct_data.hpp"

namespace drover::cli {

CommandResult run_sacctmgr(const std::vector<std::string>& args, const CommandEnv& env);

// sacctmgr's listings (sacctmgr_show.cpp).
struct ShowRequest {
  std::string entity;  // "account", "user", "qos", "association"
  std::vector<std::pair<std::string, std::string>> where;  // canonical key -> comma list
  std::vector<std::string> names;
  std::string format;  // Format= as given ("" for the default)
  bool with_assoc = false, tree = false;
};
// The table, or an error in `res` ("Unknown field 'x'").
void show_entities(const core::AcctData& data, const ShowRequest& req, const PrintOptions& print,
                   CommandResult& res);

}  // namespace drover::cli
